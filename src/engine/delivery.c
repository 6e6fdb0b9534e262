/* Handing frames to sinks: each sink with a flush op woken once per run of
 * deliveries, and early timeouts held until their deadline.  All of it runs
 * under dispatch_lock (release_held() takes it). */
#include <stdlib.h>
#include <string.h>

#include "umadfs/engine/engine.h"
#include "engine_priv.h"

/* Wakes the readers of every sink given frames since the last flush. */
void flush_touched(struct mad_engine *p)
{
	for (unsigned i = 0; i < p->ntouched; i++)
		p->touched[i]->ops->flush(p->touched[i]);
	p->ntouched = 0;
}

/* Hands a frame to its sink.  A sink with a flush op is woken later, once
 * for all the frames of a drain (one FUSE reply with many lines instead of
 * one per MAD). */
void deliver(struct mad_engine *p, struct mad_sink *sink, const void *frame,
	     size_t mad_len)
{
	sink->ops->deliver(sink, frame, mad_len);
	if (!sink->ops->flush)
		return;
	for (unsigned i = 0; i < p->ntouched; i++) {
		if (p->touched[i] == sink)
			return;
	}
	if (p->ntouched == TOUCHED_MAX)
		flush_touched(p);
	p->touched[p->ntouched++] = sink;
}

/* Keeps a timeout that came early until its deadline. */
void hold(struct mad_engine *p, struct mad_sink *sink, const uint8_t *frame,
	  size_t mad_len, int64_t due_ms)
{
	struct held *h = malloc(sizeof(*h) + UMAD_FRAME_HDR_SIZE + mad_len), **hp;

	if (!h) {
		deliver(p, sink, frame, mad_len); /* early beats lost */
		return;
	}
	h->sink = sink;
	h->due_ms = due_ms;
	h->mad_len = mad_len;
	memcpy(h->frame, frame, UMAD_FRAME_HDR_SIZE + mad_len);
	for (hp = &p->held; *hp && (*hp)->due_ms <= due_ms; hp = &(*hp)->next)
		;
	h->next = *hp;
	*hp = h;
}

/* Drops the timeouts held for sink (NULL: for every sink) undelivered. */
void drop_held(struct mad_engine *p, struct mad_sink *sink)
{
	for (struct held **hp = &p->held; *hp;) {
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
int release_held(struct mad_engine *p, bool all)
{
	int64_t now = now_ms();
	int wait = RECV_POLL_MS;

	pthread_mutex_lock(&p->dispatch_lock);
	while (p->held && (all || p->held->due_ms <= now)) {
		struct held *h = p->held;

		p->held = h->next;
		deliver(p, h->sink, h->frame, h->mad_len);
		free(h);
	}
	flush_touched(p);
	if (p->held && p->held->due_ms - now < wait)
		wait = (int)(p->held->due_ms - now);
	pthread_mutex_unlock(&p->dispatch_lock);
	return wait;
}
