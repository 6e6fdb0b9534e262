/* Synchronous queries: engine_query(), which waits for the one answer of a
 * request, and the daemon's own SMP and PMA Gets of its local port. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
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
	memset(q, 0, sizeof(*q));
	q->sink.ops = &query_sink_ops;
	q->frame = frame;
	q->cap = cap;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->done_cond, NULL);
}

/* Waits until the answer is in q, the engine stops, or wait_ms pass. */
static void query_wait(struct mad_engine *engine, struct query_sink *q, long long wait_ms)
{
	int64_t deadline = clock_now_ms() + wait_ms;

	pthread_mutex_lock(&q->lock);
	while (!q->done && !engine->stopping) {
		if (clock_wait_until(&q->done_cond, &q->lock, deadline) == ETIMEDOUT)
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

int query_smp_route_get(struct mad_engine *engine, unsigned attr_id,
			unsigned attr_mod, unsigned hops, const uint8_t *path,
			uint8_t data[IB_SMP_DATA_SIZE])
{
	uint8_t frame[UMAD_FRAME_MAX];

	if (!engine)
		return -ENODEV;
	getframe_smp_route(frame, attr_id, attr_mod, hops, path);
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

/* A one-shot sink for engine_request(): freed with its answer. */
struct request_sink {
	struct mad_sink sink;
	engine_answer_fn fn;
	void *ctx;
};

static void request_deliver(struct mad_sink *s, const void *frame, size_t mad_len)
{
	struct request_sink *rs = (struct request_sink *)s;

	rs->fn(rs->ctx, frame, mad_len);
	free(rs);
}

const struct mad_sink_ops request_sink_ops = { .deliver = request_deliver };

int engine_request(struct mad_engine *engine, void *frame, size_t mad_len,
		   int timeout_ms, int retries, engine_answer_fn fn, void *ctx)
{
	struct request_sink *rs = malloc(sizeof(*rs));
	int r;

	if (!rs)
		return -ENOMEM;
	rs->sink.ops = &request_sink_ops;
	rs->fn = fn;
	rs->ctx = ctx;
	r = engine_send(engine, &rs->sink, frame, mad_len, timeout_ms, retries);
	if (r < 0)
		free(rs);
	return r;
}

/* -- the daemon's own Sets: chains of engine_request()s ------------------ */

enum chain_step { STEP_PI_GET, STEP_PI_SET, STEP_CPI_GET, STEP_PC_SET, STEP_PCX_SET };

static const char *const step_names[] = {
	[STEP_PI_GET] = "PortInfo Get", [STEP_PI_SET] = "PortInfo Set",
	[STEP_CPI_GET] = "PerfMgt ClassPortInfo Get",
	[STEP_PC_SET] = "PortCounters Set", [STEP_PCX_SET] = "PortCountersExtended Set",
};

struct chain {
	struct mad_engine *engine;
	query_done_fn done;
	void *ctx;
	enum chain_step step;
	unsigned port, phys_state, lid, capmask;
	unsigned hops;
	uint8_t path[64];
};

static void chain_answer(void *ctx, const uint8_t *frame, size_t mad_len);

static int chain_send(struct chain *c, uint8_t *frame)
{
	return engine_request(c->engine, frame, MAD_SIZE, QUERY_TIMEOUT_MS,
			      QUERY_RETRIES, chain_answer, c);
}

static void chain_end(struct chain *c, int err, const char *fmt, unsigned v)
{
	char why[160];

	snprintf(why, sizeof(why), fmt, step_names[c->step], v);
	c->done(c->ctx, err, err ? why : "");
	free(c);
}

/* The errno a MAD status stands for (IBA 13.4.7). */
static int status_errno(unsigned status)
{
	switch (status & 0x1c) {
	case 0x08: /* method unsupported */
	case 0x0c: /* method/attribute unsupported */
		return -EOPNOTSUPP;
	case 0x1c: /* an attribute or modifier value is invalid */
		return -EINVAL;
	default:
		return -EIO;
	}
}

#define PM_PORT_COUNTERS_EXT 0x0600 /* ExtendedWidth supported, or NOIETF */

/* The next request of c after the answer in frame; 1 when c is done. */
static int chain_next(struct chain *c, uint8_t *frame)
{
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;
	uint8_t data[IB_PC_DATA_SZ];

	switch (c->step) {
	case STEP_PI_GET: /* the Set carries the Get's PortInfo back */
		c->step = STEP_PI_SET;
		memcpy(data, mad + IB_SMP_DATA_OFFS, IB_SMP_DATA_SIZE);
		getframe_smp_route(frame, IB_ATTR_PORT_INFO, c->port, c->hops, c->path);
		getframe_to_set(frame);
		getframe_portinfo_phys(data, c->phys_state);
		memcpy(mad + IB_SMP_DATA_OFFS, data, IB_SMP_DATA_SIZE);
		return chain_send(c, frame);
	case STEP_CPI_GET:
		c->capmask = mad_get_field(mad + IB_PC_DATA_OFFS, 0, IB_CPI_CAPMASK_F);
		c->step = STEP_PC_SET;
		getframe_counters_reset(data, IB_GSI_PORT_COUNTERS, c->port, c->capmask);
		break;
	case STEP_PC_SET: /* PortCountersExtended too: asked even where
			   * CapabilityMask lacks its bits, as many PMAs have it */
		c->step = STEP_PCX_SET;
		getframe_counters_reset(data, IB_GSI_PORT_COUNTERS_EXT, c->port, c->capmask);
		break;
	default:
		return 1;
	}
	getframe_pma(frame, c->lid, c->step == STEP_PC_SET ? IB_GSI_PORT_COUNTERS :
		     IB_GSI_PORT_COUNTERS_EXT, data);
	getframe_to_set(frame);
	return chain_send(c, frame);
}

static void chain_answer(void *ctx, const uint8_t *frame, size_t mad_len)
{
	struct chain *c = ctx;
	const struct ib_user_mad *hdr = (const struct ib_user_mad *)frame;
	uint8_t next[UMAD_FRAME_MAX];
	bool smp = c->step == STEP_PI_GET || c->step == STEP_PI_SET;
	unsigned status;
	int r;

	if (hdr->status) {
		chain_end(c, -ETIMEDOUT, "%s: no answer (%u tries)", QUERY_RETRIES + 1u);
		return;
	}
	if (mad_len < MAD_SIZE) {
		chain_end(c, -EIO, "%s: a short answer (%u bytes)", (unsigned)mad_len);
		return;
	}
	memcpy(next, frame, UMAD_FRAME_HDR_SIZE + MAD_SIZE);
	status = mad_get_field(next + UMAD_FRAME_HDR_SIZE, 0,
			       smp ? IB_DRSMP_STATUS_F : IB_MAD_STATUS_F);
	if (status && c->step == STEP_PCX_SET && !(c->capmask & PM_PORT_COUNTERS_EXT)) {
		chain_end(c, 0, "%s", 0); /* not claimed, not there: done */
		return;
	}
	if (status) {
		chain_end(c, status_errno(status), "%s: MAD status 0x%04x", status);
		return;
	}
	r = chain_next(c, next);
	if (r == 1)
		chain_end(c, 0, "%s", 0);
	else if (r < 0)
		chain_end(c, r, "%s: could not be sent (error %u)", (unsigned)-r);
}

static struct chain *chain_new(struct mad_engine *engine, query_done_fn done,
			       void *ctx, enum chain_step step)
{
	struct chain *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->engine = engine;
	c->done = done;
	c->ctx = ctx;
	c->step = step;
	return c;
}

static int chain_start(struct chain *c, uint8_t *frame)
{
	int r = chain_send(c, frame);

	if (r < 0)
		free(c);
	return r;
}

int query_port_phys_set(struct mad_engine *engine, unsigned hops,
			const uint8_t *path, unsigned port, unsigned phys_state,
			query_done_fn done, void *ctx)
{
	struct chain *c = chain_new(engine, done, ctx, STEP_PI_GET);
	uint8_t frame[UMAD_FRAME_MAX];

	if (!c)
		return -ENOMEM;
	c->port = port;
	c->phys_state = phys_state;
	c->hops = hops;
	memcpy(c->path, path, sizeof(c->path));
	getframe_smp_route(frame, IB_ATTR_PORT_INFO, port, hops, path);
	return chain_start(c, frame);
}

int query_counters_reset(struct mad_engine *engine, unsigned lid, unsigned port,
			 query_done_fn done, void *ctx)
{
	struct chain *c = chain_new(engine, done, ctx, STEP_CPI_GET);
	uint8_t frame[UMAD_FRAME_MAX], data[IB_PC_DATA_SZ] = { 0 };

	if (!c)
		return -ENOMEM;
	if (!lid) {
		free(c);
		return -ENETDOWN;
	}
	c->port = port;
	c->lid = lid;
	getframe_pma(frame, lid, CLASS_PORT_INFO, data);
	return chain_start(c, frame);
}
