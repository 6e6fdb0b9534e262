/* The receiver thread of a port: it waits on the umad fd, reads everything
 * queued, hands each frame to the sink it belongs to, and between reads
 * runs the engine's clocks (expiry, held timeouts, the liveness probe). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/clock.h"
#include "umadfs/base/log.h"
#include "umadfs/engine/ibumad.h"
#include "umadfs/engine/sink.h"
#include "agent_table.h"
#include "delivery.h"
#include "engine_priv.h"
#include "liveness.h"
#include "pending.h"
#include "receiver.h"

#define RECV_BUF_MAX (16u << 20) /* largest RMPP message accepted */
#define DRAIN_MAX 64             /* frames received before the readers are woken */

/* The receive buffer, grown for RMPP messages.  Receiver thread only. */
struct recv_buf {
	uint8_t *frame;
	size_t cap; /* room for the MAD after the umad header */
};

static void backoff(void)
{
	const struct timespec pause = { 0, 50 * 1000 * 1000 };

	nanosleep(&pause, NULL);
}

/* An unsolicited request to the sink registered for it. */
static bool dispatch_unsolicited(struct mad_engine *engine, uint8_t *frame,
				 size_t mad_len)
{
	struct mad_sink *sink;

	pthread_mutex_lock(&engine->lock);
	sink = agent_table_sink(engine, frame + UMAD_FRAME_HDR_SIZE);
	pthread_mutex_unlock(&engine->lock);
	if (sink)
		delivery_add(engine, sink, frame, mad_len);
	return sink != NULL;
}

/* Hands one received frame to the sink of its request (answers: responses,
 * and our own requests given back with a status) or of its registration.
 * dispatch_lock held. */
static void dispatch(struct mad_engine *engine, uint8_t *frame, size_t mad_len)
{
	struct ib_user_mad *hdr = (struct ib_user_mad *)frame;
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;
	bool taken;

	if (mad_len < MAD_HDR_SIZE)
		return;
	if (hdr->status || mad_is_response(mad))
		taken = pending_answer(engine, frame, mad_len);
	else
		taken = dispatch_unsolicited(engine, frame, mad_len) ||
			agent_table_sim_answer(engine, frame);
	if (!taken)
		log_dbg("%s/%u: unmatched MAD: status %u method 0x%02x tid 0x%016llx",
			engine->ca, engine->portnum, hdr->status, mad[3],
			(unsigned long long)mad_tid(mad));
}

/* Reads one frame into b, growing it for a larger message.  Returns 0,
 * -EAGAIN when nothing is queued, or -errno. */
static int recv_frame(struct mad_engine *engine, struct recv_buf *b, size_t *mad_len)
{
	for (;;) {
		uint8_t *bigger;
		int r;

		*mad_len = b->cap;
		r = ibumad_recv(engine->fd, b->frame, mad_len);
		if (r != -ENOSPC || *mad_len <= b->cap || *mad_len > RECV_BUF_MAX)
			return r;
		bigger = realloc(b->frame, UMAD_FRAME_HDR_SIZE + *mad_len);
		if (!bigger)
			return -ENOMEM;
		b->frame = bigger;
		b->cap = *mad_len;
	}
}

/* Reads everything queued (up to DRAIN_MAX frames) and dispatches it, then
 * wakes each sink touched once for all of it.  Returns how many frames. */
static unsigned drain(struct mad_engine *engine, struct recv_buf *b)
{
	unsigned n = 0;

	pthread_mutex_lock(&engine->dispatch_lock);
	while (n < DRAIN_MAX) {
		size_t mad_len;
		int r = recv_frame(engine, b, &mad_len);

		if (r < 0) {
			/* A removed device fails every read at once: no
			 * busy loop.  (EAGAIN: all read.) */
			if (!ibumad_transient(-r)) {
				if (!engine->down)
					engine_doubt(engine, "umad_recv failed: %s",
						     strerror(-r));
				backoff();
			}
			break;
		}
		dispatch(engine, b->frame, mad_len);
		n++;
	}
	delivery_flush(engine);
	pthread_mutex_unlock(&engine->dispatch_lock);
	return n;
}

/* Answers were coming and more are awaited: let the threads bringing them
 * (umad2sim's, the simulator) run before sleeping in umad_poll, whose
 * sleep and wake-up cost more than a yield after which they are there. */
static void yield_if_awaited(struct mad_engine *engine)
{
	if (pending_awaited(engine))
		sched_yield();
}

/* Ends the requests past their deadline and grace, every RECV_POLL_MS. */
static void expire_step(struct mad_engine *engine, int64_t *next_expiry)
{
	unsigned n;

	if (clock_now_ms() < *next_expiry)
		return;
	n = pending_expire(engine, false);
	if (n && !engine->down)
		engine_doubt(engine, "%u request%s neither answered nor given back",
			     n, n > 1 ? "s" : "");
	*next_expiry = clock_now_ms() + RECV_POLL_MS;
}

void *receiver_main(void *arg)
{
	struct mad_engine *engine = arg;
	struct recv_buf b = { malloc(UMAD_FRAME_MAX), MAD_SIZE };
	int64_t next_expiry = 0;

	if (!b.frame) {
		log_err("%s/%u: no memory for the receive buffer", engine->ca, engine->portnum);
		return NULL;
	}
	while (!engine->stopping) {
		unsigned n;
		int r;

		expire_step(engine, &next_expiry);
		liveness_step(engine);
		r = ibumad_poll(engine->fd, delivery_release_held(engine, false));
		if (r == -ETIMEDOUT)
			continue;
		if (r < 0) {
			log_dbg("%s/%u: poll: %s", engine->ca, engine->portnum, strerror(-r));
			if (!ibumad_transient(-r) && !engine->down)
				engine_doubt(engine, "umad_poll failed: %s", strerror(-r));
			backoff();
			continue;
		}
		n = drain(engine, &b);
		if (n && n < DRAIN_MAX)
			yield_if_awaited(engine);
	}
	/* Timeouts held early go out now, then what is still pending of
	 * engine_request()'s callers, whose writes wait for their end. */
	delivery_release_held(engine, true);
	pending_end_requests(engine);
	free(b.frame);
	return NULL;
}
