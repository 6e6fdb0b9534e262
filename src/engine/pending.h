/* Requests from their send to their one delivery (pending.c). */
#ifndef UMADFS_PENDING_H
#define UMADFS_PENDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mad_engine;
struct mad_sink;

#define EXPIRE_GRACE_MS 1000 /* past the deadline, before the engine gives up */
#define PROBE_GRACE_MS 200   /* EXPIRE_GRACE_MS of the liveness probe */

/* What a request is, beside an ordinary one (engine_send()). */
enum pending_flags {
	PENDING_PROBE = 1,   /* liveness.c's probe: sent even while down */
	PENDING_REQUEST = 2, /* engine_request()'s: ended when the receiver stops */
};

/* Sends a request of sink (flags: enum pending_flags): engine_send(). */
int pending_send(struct mad_engine *engine, struct mad_sink *sink, void *frame,
		 size_t mad_len, int timeout_ms, int retries, unsigned flags);
/* Forgets every pending request of sink, and waits out a delivery to it:
 * engine_cancel_sink(). */
void pending_cancel(struct mad_engine *engine, struct mad_sink *sink);
/* Hands an answer to the sink of its request; false when none waits for
 * it.  dispatch_lock held. */
bool pending_answer(struct mad_engine *engine, uint8_t *frame, size_t mad_len);
/* Ends the requests past their deadline and grace (all: every one, now)
 * with their timeout items; returns how many but the probe.  Receiver
 * thread. */
unsigned pending_expire(struct mad_engine *engine, bool all);
/* Ends (as timed out) every pending engine_request(), and refuses new ones
 * (-ENODEV): at the receiver's end, after the held timeouts went out. */
void pending_end_requests(struct mad_engine *engine);
/* Waits, at most max_ms, until no request is on the wire any more: each
 * answered, given back or expired by the receiver thread, the orphaned
 * ones (their sink cancelled) too.  Not while the transport is down
 * (nothing would come).  Before the agents are unregistered: an answer
 * for an agent gone is dropped by the kernel, but crashes umad2sim's
 * receiver thread. */
void pending_quiesce(struct mad_engine *engine, int max_ms);
/* Whether any request waits for its answer. */
bool pending_awaited(struct mad_engine *engine);

#endif
