/* What the engine and its callers hand each other, below every function of
 * the engine: the sink a MAD is delivered to, a registration for
 * unsolicited MADs, and the callback that hears of the transport.  The
 * engine's own modules (src/engine/) need these and nothing of engine.h. */
#ifndef UMADFS_SINK_H
#define UMADFS_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mad_sink;

struct mad_sink_ops {
	/* Called from the receiver thread, no port lock held, with one answer:
	 * a frame (64-byte umad header + mad_len bytes) whose TID is already
	 * the caller's own.  The sink copies what it keeps. */
	void (*deliver)(struct mad_sink *sink, const void *frame, size_t mad_len);
	/* Optional: when set, deliver only queues, and the receiver calls
	 * flush once after a run of deliveries (all it could read at once) to
	 * wake the sink's readers. */
	void (*flush)(struct mad_sink *sink);
};

struct mad_sink {
	const struct mad_sink_ops *ops;
};

/* An agent for unsolicited MADs (umad_register / umad_register_oui). */
struct engine_registration {
	unsigned mgmt_class, class_version;
	uint32_t oui;        /* vendor classes 0x30-0x4F only, 24 bits */
	bool rmpp;
	uint64_t methods[2]; /* bit n: method n */
};

/* Called from the receiver thread, no lock held, when the engine finds the
 * port's transport dead (err EIO) or alive again (err 0): see liveness.c. */
typedef void (*engine_transport_fn)(void *ctx, int err);

#endif
