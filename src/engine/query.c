/* Synchronous queries: engine_query(), which waits for the one answer of a
 * request, and the daemon's own SMP and PMA Gets of its local port. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "umadfs/engine/engine.h"
#include "umadfs/engine/query.h"
#include "umadfs/mad/getframe.h"
#include "engine_priv.h"


/* A one-shot sink for engine_query's caller, who waits on it. */
struct query_sink {
	struct mad_sink sink;
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done;      /* guarded by lock */
	uint8_t *frame; /* the caller's buffer, cap bytes */
	size_t cap, mad_len;
	int status;
};

static void query_deliver(struct mad_sink *s, const void *frame, size_t mad_len)
{
	struct query_sink *q = (struct query_sink *)s;
	const struct ib_user_mad *hdr = frame;
	size_t n = UMAD_FRAME_HDR_SIZE + mad_len;

	pthread_mutex_lock(&q->lock);
	if (n > q->cap)
		n = q->cap;
	memcpy(q->frame, frame, n);
	q->mad_len = n - UMAD_FRAME_HDR_SIZE;
	q->status = hdr->status ? -(int)hdr->status : 0;
	q->done = true;
	pthread_cond_signal(&q->done_cond);
	pthread_mutex_unlock(&q->lock);
}

static const struct mad_sink_ops query_sink_ops = { .deliver = query_deliver };

static void query_sink_init(struct query_sink *q, void *frame, size_t cap)
{
	pthread_condattr_t attr;

	memset(q, 0, sizeof(*q));
	q->sink.ops = &query_sink_ops;
	q->frame = frame;
	q->cap = cap;
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&q->done_cond, &attr);
	pthread_condattr_destroy(&attr);
}

/* Waits until the answer is in q, the engine stops, or wait_ms pass. */
static void query_wait(struct mad_engine *engine, struct query_sink *q, long long wait_ms)
{
	struct timespec deadline;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += wait_ms / 1000;
	deadline.tv_nsec += (wait_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&q->lock);
	while (!q->done && !engine->stopping) {
		if (pthread_cond_timedwait(&q->done_cond, &q->lock, &deadline) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&q->lock);
}

int engine_query(struct mad_engine *engine, void *frame, size_t cap, size_t *mad_len,
	       int timeout_ms, int retries)
{
	struct query_sink q;
	/* Longer than the engine takes to end the request itself, so that a
	 * request not given back always makes it probe the transport. */
	long long wait_ms = (long long)timeout_ms * (retries + 1) +
			    EXPIRE_GRACE_MS + 500;
	int r;

	query_sink_init(&q, frame, cap);
	r = engine_send(engine, &q.sink, frame, *mad_len, timeout_ms, retries);
	if (r < 0)
		goto out;
	query_wait(engine, &q, wait_ms);
	engine_cancel_sink(engine, &q.sink);
	if (!q.done && !engine->stopping)
		liveness_want_probe(engine, "a query of the port got no answer");
	if (!q.done)
		r = engine->stopping ? -ENODEV : -ETIMEDOUT;
	else if (q.status)
		r = q.status;
	else
		*mad_len = q.mad_len;
out:
	pthread_cond_destroy(&q.done_cond);
	pthread_mutex_destroy(&q.lock);
	return r;
}

/* Where a Get's answer keeps its data, and how its status is read. */
struct get_kind {
	size_t min_len;   /* MAD bytes the answer must have */
	enum MAD_FIELDS status_f;
	size_t data_offs; /* in the MAD */
	size_t data_len;
};

/* The DR status field leaves out the direction (D) bit. */
static const struct get_kind smp_get = {
	IB_SMP_DATA_OFFS + IB_SMP_DATA_SIZE, IB_DRSMP_STATUS_F, IB_SMP_DATA_OFFS,
	IB_SMP_DATA_SIZE,
};
static const struct get_kind pma_get = {
	MAD_SIZE, IB_MAD_STATUS_F, IB_PC_DATA_OFFS, IB_PC_DATA_SZ,
};

/* Sends the Get in frame and waits for its answer there: at least
 * k->min_len bytes of MAD with a zero status, whose data it copies out.
 * Returns 0, -errno, or -EPROTO. */
static int local_get(struct mad_engine *engine, uint8_t frame[UMAD_FRAME_MAX],
		     const struct get_kind *k, uint8_t *data)
{
	size_t mad_len = MAD_SIZE;
	int r = engine_query(engine, frame, UMAD_FRAME_MAX, &mad_len,
			     QUERY_TIMEOUT_MS, QUERY_RETRIES);

	if (r < 0)
		return r;
	if (mad_len < k->min_len ||
	    mad_get_field(frame + UMAD_FRAME_HDR_SIZE, 0, k->status_f))
		return -EPROTO;
	memcpy(data, frame + UMAD_FRAME_HDR_SIZE + k->data_offs, k->data_len);
	return 0;
}

int query_smp_get(struct mad_engine *engine, unsigned attr_id, unsigned attr_mod,
		  uint8_t data[IB_SMP_DATA_SIZE])
{
	uint8_t frame[UMAD_FRAME_MAX];

	if (!engine)
		return -ENODEV;
	getframe_smp(frame, attr_id, attr_mod);
	return local_get(engine, frame, &smp_get, data);
}

int query_pma_get(struct mad_engine *engine, unsigned lid, unsigned attr_id,
		  uint8_t data[IB_PC_DATA_SZ])
{
	uint8_t frame[UMAD_FRAME_MAX];

	if (!engine)
		return -ENODEV;
	if (!lid)
		return -ENETDOWN; /* no LID yet: the port is not configured */
	getframe_pma(frame, lid, attr_id, data);
	return local_get(engine, frame, &pma_get, data);
}
