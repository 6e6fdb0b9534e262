/* A window of requests in flight (window.h): the engine's receiver thread
 * copies each answer into a ring of WINDOW_MAX (at most that many requests
 * are in flight and each ends once, so it never overflows) and wakes the
 * caller's thread once per drain (the sink's flush), not once per answer;
 * the caller's thread sends, and waits on the ring on the monotonic
 * clock. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

#include "umadfs/base/clock.h"
#include "umadfs/engine/engine.h"
#include "umadfs/fabric/snapshot/window.h"
#include "umadfs/mad/mad.h"

#define SILENCE_MS 5000 /* beyond a request's own time: the engine is gone */

struct answer {
	uint8_t frame[UMAD_FRAME_MAX];
	size_t len;
};

struct mad_window {
	struct mad_sink sink;
	/* The caller's thread's own: */
	struct mad_engine *engine;
	int timeout_ms, retries;
	unsigned inflight;
	/* Shared with the receiver thread: */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct answer ring[WINDOW_MAX]; /* lock */
	unsigned rhead, rlen;           /* lock */
	bool stop;                      /* lock */
};

static void on_deliver(struct mad_sink *sink, const void *frame, size_t mad_len)
{
	struct mad_window *w = (struct mad_window *)sink;
	struct answer *a;

	pthread_mutex_lock(&w->lock);
	a = &w->ring[(w->rhead + w->rlen++) % WINDOW_MAX];
	if (mad_len > MAD_SIZE)
		mad_len = MAD_SIZE;
	memcpy(a->frame, frame, UMAD_FRAME_HDR_SIZE + mad_len);
	a->len = mad_len;
	pthread_mutex_unlock(&w->lock);
}

/* After the receiver's drain: the caller's thread has what it brought. */
static void on_flush(struct mad_sink *sink)
{
	struct mad_window *w = (struct mad_window *)sink;

	pthread_mutex_lock(&w->lock);
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static const struct mad_sink_ops window_sink_ops = {
	.deliver = on_deliver, .flush = on_flush,
};

struct mad_window *window_new(void)
{
	struct mad_window *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->sink.ops = &window_sink_ops;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	return w;
}

void window_free(struct mad_window *w)
{
	if (!w)
		return;
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

void window_start(struct mad_window *w, struct mad_engine *engine, int timeout_ms,
		  int retries)
{
	w->engine = engine;
	w->timeout_ms = timeout_ms;
	w->retries = retries;
	w->inflight = 0;
}

bool window_has_room(const struct mad_window *w)
{
	return w->inflight < WINDOW_MAX;
}

bool window_answered(struct mad_window *w)
{
	bool any;

	pthread_mutex_lock(&w->lock);
	any = w->rlen > 0;
	pthread_mutex_unlock(&w->lock);
	return any;
}

unsigned window_inflight(const struct mad_window *w)
{
	return w->inflight;
}

int window_send(struct mad_window *w, void *frame, bool once)
{
	int r = engine_send(w->engine, &w->sink, frame, MAD_SIZE, w->timeout_ms,
			    once ? 0 : w->retries);

	if (r == -EBUSY && !w->inflight)
		return -EAGAIN; /* nothing to wait for: as not sent */
	if (r == 0)
		w->inflight++;
	return r;
}

int window_next(struct mad_window *w, uint8_t *frame, size_t *len)
{
	int64_t until = clock_now_ms() + (int64_t)w->timeout_ms * (w->retries + 1) +
			SILENCE_MS;
	int r = 0;

	pthread_mutex_lock(&w->lock);
	while (!w->rlen && !w->stop && r != ETIMEDOUT)
		r = clock_wait_until(&w->cond, &w->lock, until);
	if (w->stop || !w->rlen) {
		pthread_mutex_unlock(&w->lock);
		return w->stop ? -ECANCELED : -ETIMEDOUT;
	}
	memcpy(frame, w->ring[w->rhead].frame, UMAD_FRAME_HDR_SIZE + w->ring[w->rhead].len);
	*len = w->ring[w->rhead].len;
	w->rhead = (w->rhead + 1) % WINDOW_MAX;
	w->rlen--;
	pthread_mutex_unlock(&w->lock);
	w->inflight--;
	return 0;
}

void window_end(struct mad_window *w)
{
	if (w->inflight && w->engine)
		engine_cancel_sink(w->engine, &w->sink);
	w->inflight = 0;
	pthread_mutex_lock(&w->lock);
	w->rhead = w->rlen = 0;
	pthread_mutex_unlock(&w->lock);
}

void window_abort(struct mad_window *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}
