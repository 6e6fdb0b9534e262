/* A channel: where answers and unsolicited MADs for one set of readers go.
 *
 * It is a bounded queue of received frames, the reads parked on it, the
 * poll handles of the files open on it, and its counters.  The port's own
 * send/recv files are the channel "default"; every open of a `umad` file
 * gets a private channel of its own (answers go back to the open file that
 * sent the request); agents/NAME directories are named channels.  All are
 * this one type. */
#ifndef UMADFS_CHANNEL_H
#define UMADFS_CHANNEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fuse_lowlevel.h>

#include "umadfs/engine/engine.h"
#include "umadfs/fuse/readq.h"

#define CHANNEL_QUEUE_DEFAULT 4096 /* items; -o queue_len= */
#define CHANNEL_TIMEOUT_DEFAULT 1000 /* ms, libibmad's default */
#define CHANNEL_RETRIES_DEFAULT 3

struct ca_port;
struct channel_item;

struct channel_stats {
	uint64_t sent, received, timeouts, errors, dropped;
};

struct channel {
	struct mad_sink sink; /* first: the engine delivers to &ch->sink */
	struct ca_port *pd;
	char name[64];

	struct readq q; /* readers; q.lock guards everything below too */
	struct channel_item *head, *tail;
	unsigned queued, limit;
	struct channel_item *spare; /* read items kept for reuse */
	unsigned nspare;
	struct channel_stats stats; /* but for sent: */
	uint64_t sent;              /* atomic, no lock */
	int timeout_ms, retries;  /* defaults for requests sent from here */
	char last_error[512];     /* why the last bad write failed */
	unsigned refs;   /* creator + tree nodes (atomic); freed at zero */
	unsigned nusers; /* open send/recv/umad files (atomic): rmdir EBUSY */
};

/* What one open file of a channel keeps. */
struct chan_open {
	struct readq_open ro;     /* first: readq hands this back */
	struct channel *ch;
	struct channel *user_of;  /* the directory's channel it counts in nusers */
	bool text;                /* recv (lines) vs umad (frames) */
	bool private_channel;     /* the channel lives and dies with it */
	bool privileged;          /* the opener may send SMPs and Sets */
	struct line_rest rest;    /* of a line a short read cut (q.lock) */
	char *send_frag;          /* a written line not yet ended by '\n' */
	size_t send_frag_len;
};

extern unsigned channel_queue_limit; /* for new channels; -o queue_len= */

/* The engine of the channel's port for one call (ca_port_engine()), or
 * NULL when the port has none (*err, if err, says why: -ENODEV once its
 * CA is gone); channel_engine_done() after the call. */
struct mad_engine *channel_engine(struct channel *ch, int *err);
void channel_engine_done(struct channel *ch);

/* A new channel, with one reference for its creator. */
struct channel *channel_new(struct ca_port *pd, const char *name);
void channel_get(struct channel *ch);
/* Drops a reference; the last one unregisters its agents, fails parked
 * reads, forgets pending requests and frees it. */
void channel_put(struct channel *ch);
/* Stops a channel now (rmdir): agents unregistered, reads fail with
 * ENODEV, nothing more delivered.  The memory stays until the last put. */
void channel_shut(struct channel *ch);
/* 0 once no send/recv/umad file of ch is open, or -EBUSY after
 * READQ_RELEASE_WAIT_MS (see readq.h: files closed just before rmdir). */
int channel_wait_unused(struct channel *ch);
/* The engine of pd found its transport dead (err EIO) or back (0): every
 * channel of the port fails its reads with err, or serves them again (see
 * readq_set_error).  Receiver thread. */
void channels_set_transport(struct ca_port *pd, int err);
/* pd's CA is gone (before its engine is taken away): every channel of the
 * port fails its reads with EIO and polls POLLERR for good, as the
 * kernel's umad files of a removed port, and drops what it had queued. */
void channels_port_gone(struct ca_port *pd);

void channel_set_error(struct channel *ch, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Open-file bookkeeping; chan_open_new links it for poll notifications. */
struct chan_open *chan_open_new(struct channel *ch, bool text, bool private_channel);
void chan_open_free(struct chan_open *of);

/* Sends frames written to the channel; answers come back to it. */
int channel_send(struct channel *ch, void *frame, size_t mad_len,
		 int timeout_ms, int retries);
/* What a failed channel_send() (r) says in last_error: strerror, and for
 * EIO why (the port's transport is down, or the device refused the send). */
void channel_strerror(struct channel *ch, int r, char *buf, size_t len);

/* Frames an unsolicited MAD or an answer into the channel (engine side). */
void channel_deliver(struct channel *ch, const void *frame, size_t mad_len);

#endif
