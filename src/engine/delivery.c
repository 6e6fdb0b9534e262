/* Handing frames to sinks: each sink with a flush op woken once per run of
 * deliveries, and early timeouts held until their deadline.  All of it runs
 * under dispatch_lock (delivery_release_held() takes it). */
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/clock.h"
#include "delivery.h"
#include "engine_priv.h"

/* Wakes the readers of every sink given frames since the last flush. */
void delivery_flush(struct mad_engine *engine)
{
	for (unsigned i = 0; i < engine->ntouched; i++)
		engine->touched[i]->ops->flush(engine->touched[i]);
	engine->ntouched = 0;
}

/* Hands a frame to its sink.  A sink with a flush op is woken later, once
 * for all the frames of a drain (one FUSE reply with many lines instead of
 * one per MAD). */
void delivery_add(struct mad_engine *engine, struct mad_sink *sink, const void *frame,
		  size_t mad_len)
{
	/* Read before: a sink without flush may be gone once it has its
	 * frame (a one-shot engine_request() sink frees itself). */
	bool flushes = sink->ops->flush != NULL;

	sink->ops->deliver(sink, frame, mad_len);
	if (!flushes)
		return;
	for (unsigned i = 0; i < engine->ntouched; i++) {
		if (engine->touched[i] == sink)
			return;
	}
	if (engine->ntouched == TOUCHED_MAX)
		delivery_flush(engine);
	engine->touched[engine->ntouched++] = sink;
}

/* Keeps a timeout that came early until its deadline. */
void delivery_hold(struct mad_engine *engine, struct mad_sink *sink, const uint8_t *frame,
		   size_t mad_len, int64_t due_ms)
{
	struct held *h = malloc(sizeof(*h) + UMAD_FRAME_HDR_SIZE + mad_len), **hp;

	if (!h) {
		delivery_add(engine, sink, frame, mad_len); /* early beats lost */
		return;
	}
	h->sink = sink;
	h->due_ms = due_ms;
	h->mad_len = mad_len;
	memcpy(h->frame, frame, UMAD_FRAME_HDR_SIZE + mad_len);
	for (hp = &engine->held; *hp && (*hp)->due_ms <= due_ms; hp = &(*hp)->next)
		;
	h->next = *hp;
	*hp = h;
}

/* Drops the timeouts held for sink (NULL: for every sink) undelivered. */
void delivery_drop_held(struct mad_engine *engine, struct mad_sink *sink)
{
	for (struct held **hp = &engine->held; *hp;) {
		struct held *h = *hp;

		if (!sink || h->sink == sink) {
			*hp = h->next;
			free(h);
		} else {
			hp = &h->next;
		}
	}
}

/* Delivers the held timeouts that are due (all: every one, now); returns
 * ms until the next, at most RECV_POLL_MS.  Takes dispatch_lock. */
int delivery_release_held(struct mad_engine *engine, bool all)
{
	int64_t now = clock_now_ms();
	int wait = RECV_POLL_MS;

	pthread_mutex_lock(&engine->dispatch_lock);
	while (engine->held && (all || engine->held->due_ms <= now)) {
		struct held *h = engine->held;

		engine->held = h->next;
		delivery_add(engine, h->sink, h->frame, h->mad_len);
		free(h);
	}
	delivery_flush(engine);
	if (engine->held && engine->held->due_ms - now < wait)
		wait = (int)(engine->held->due_ms - now);
	pthread_mutex_unlock(&engine->dispatch_lock);
	return wait;
}
