/* The daemon's own requests, above the engine's public face (engine.c):
 * engine_query(), which waits for the one answer of a request, and the
 * daemon's own SMP and PMA Gets of its local port; engine_request(), whose
 * answer a callback takes, and the chains of requests of the actions,
 * which go on only while the node and port named answer. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/clock.h"
#include "umadfs/engine/engine.h"
#include "umadfs/engine/query.h"
#include "umadfs/mad/getframe.h"
#include "engine_priv.h"
#include "pending.h"

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
		engine_doubt(engine, "a query of the port got no answer");
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

static const struct mad_sink_ops request_sink_ops = { .deliver = request_deliver };

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
	/* Flagged, so that the receiver ends it when it stops: its caller
	 * waits for nothing else. */
	r = pending_send(engine, &rs->sink, frame, mad_len, timeout_ms, retries,
			 PENDING_REQUEST);
	if (r < 0)
		free(rs);
	return r;
}

/* -- the daemon's own Sets: chains of engine_request()s ------------------ */

enum chain_step { /* the SMPs up to STEP_PI_SET */
	STEP_END, STEP_NI_ROUTE_GET, STEP_NI_LID_GET, STEP_PI_GET, STEP_PI_SET,
	STEP_CPI_GET, STEP_PC_SET, STEP_PCX_SET,
};

static const char *const step_names[] = {
	[STEP_NI_ROUTE_GET] = "NodeInfo Get", [STEP_NI_LID_GET] = "NodeInfo Get",
	[STEP_PI_GET] = "PortInfo Get", [STEP_PI_SET] = "PortInfo Set",
	[STEP_CPI_GET] = "PerfMgt ClassPortInfo Get",
	[STEP_PC_SET] = "PortCounters Set", [STEP_PCX_SET] = "PortCountersExtended Set",
};

/* The requests of each chain, in order.  NodeInfo first, as ibportstate
 * asks it, so that a Set goes only to the node named: by the route for a
 * port's physical state, by the PMA's LID for its counters (the node the
 * LID reaches now); none for this port's own PMA. */
static const enum chain_step port_phys_plan[] = {
	STEP_NI_ROUTE_GET, STEP_PI_GET, STEP_PI_SET, STEP_END,
};
static const enum chain_step counters_plan[] = {
	STEP_NI_LID_GET, STEP_CPI_GET, STEP_PC_SET, STEP_PCX_SET, STEP_END,
};
static const enum chain_step own_counters_plan[] = {
	STEP_CPI_GET, STEP_PC_SET, STEP_PCX_SET, STEP_END,
};

struct chain {
	struct mad_engine *engine;
	query_done_fn done;
	void *ctx;
	const enum chain_step *step; /* the request in flight, in its plan */
	uint64_t guid;               /* the node named: its NodeInfo says it */
	unsigned port, phys_state, lid, capmask;
	unsigned hops;
	uint8_t path[64];
	uint8_t portinfo[IB_SMP_DATA_SIZE]; /* the Get's, made the Set's */
};

static void chain_answer(void *ctx, const uint8_t *frame, size_t mad_len);

static int chain_send(struct chain *c, uint8_t *frame)
{
	return engine_request(c->engine, frame, MAD_SIZE, QUERY_TIMEOUT_MS,
			      QUERY_RETRIES, chain_answer, c);
}

/* Ends c: done, or failed with err and why ("STEP: " and fmt's text). */
static void chain_end(struct chain *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void chain_end(struct chain *c, int err, const char *fmt, ...)
{
	char why[192];
	int n = snprintf(why, sizeof(why), "%s: ", step_names[*c->step]);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why + n, sizeof(why) - (size_t)n, fmt, ap);
	va_end(ap);
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

/* The request of c's step, in frame. */
static void chain_frame(struct chain *c, uint8_t *frame)
{
	uint8_t data[IB_PC_DATA_SZ] = { 0 };
	unsigned attr;

	switch (*c->step) {
	case STEP_NI_ROUTE_GET:
		getframe_smp_route(frame, IB_ATTR_NODE_INFO, 0, c->hops, c->path);
		break;
	case STEP_NI_LID_GET:
		getframe_smp_lid(frame, IB_ATTR_NODE_INFO, 0, c->lid);
		break;
	case STEP_PI_GET:
		getframe_smp_route(frame, IB_ATTR_PORT_INFO, c->port, c->hops, c->path);
		break;
	case STEP_PI_SET: /* the Get's PortInfo back, its physical state changed */
		getframe_smp_route(frame, IB_ATTR_PORT_INFO, c->port, c->hops, c->path);
		getframe_to_set(frame);
		memcpy(frame + UMAD_FRAME_HDR_SIZE + IB_SMP_DATA_OFFS, c->portinfo,
		       IB_SMP_DATA_SIZE);
		break;
	case STEP_CPI_GET:
		getframe_pma(frame, c->lid, CLASS_PORT_INFO, data);
		break;
	default: /* PortCountersExtended too: asked even where CapabilityMask
		  * lacks its bits, as many PMAs have it */
		attr = *c->step == STEP_PC_SET ? IB_GSI_PORT_COUNTERS :
		       IB_GSI_PORT_COUNTERS_EXT;
		getframe_counters_reset(data, attr, c->port, c->capmask);
		getframe_pma(frame, c->lid, attr, data);
		getframe_to_set(frame);
		break;
	}
}

/* Takes what c needs from its step's answer (mad, status 0): 0, or
 * -EHOSTUNREACH with why when it is not of the node or port named. */
static int chain_take(struct chain *c, uint8_t *mad, char *why, size_t len)
{
	uint64_t guid;
	unsigned port;

	switch (*c->step) {
	case STEP_NI_ROUTE_GET:
	case STEP_NI_LID_GET:
		guid = mad_get_field64(mad + IB_SMP_DATA_OFFS, 0, IB_NODE_GUID_F);
		if (guid == c->guid)
			return 0;
		if (*c->step == STEP_NI_LID_GET)
			snprintf(why, len, "LID %u is node 0x%016" PRIx64 ", not "
				 "0x%016" PRIx64, c->lid, guid, c->guid);
		else
			snprintf(why, len, "the route leads to node 0x%016" PRIx64
				 ", not 0x%016" PRIx64, guid, c->guid);
		return -EHOSTUNREACH;
	case STEP_PI_GET:
		memcpy(c->portinfo, mad + IB_SMP_DATA_OFFS, IB_SMP_DATA_SIZE);
		getframe_portinfo_phys(c->portinfo, c->phys_state);
		return 0;
	case STEP_CPI_GET:
		c->capmask = mad_get_field(mad + IB_PC_DATA_OFFS, 0, IB_CPI_CAPMASK_F);
		return 0;
	case STEP_PC_SET:
	case STEP_PCX_SET:
		port = mad_get_field(mad + IB_PC_DATA_OFFS, 0, *c->step == STEP_PC_SET ?
				     IB_PC_PORT_SELECT_F : IB_PC_EXT_PORT_SELECT_F);
		if (port == c->port)
			return 0;
		snprintf(why, len, "answered for port %u, not %u", port, c->port);
		return -EHOSTUNREACH;
	default:
		return 0;
	}
}

static void chain_answer(void *ctx, const uint8_t *frame, size_t mad_len)
{
	struct chain *c = ctx;
	const struct ib_user_mad *hdr = (const struct ib_user_mad *)frame;
	uint8_t next[UMAD_FRAME_MAX], *mad = next + UMAD_FRAME_HDR_SIZE;
	bool smp = *c->step <= STEP_PI_SET; /* (the enum's order) */
	char why[128];
	unsigned status;
	int r;

	if (hdr->status) {
		chain_end(c, -ETIMEDOUT, "no answer (%u tries)", QUERY_RETRIES + 1u);
		return;
	}
	if (mad_len < MAD_SIZE) {
		chain_end(c, -EIO, "a short answer (%u bytes)", (unsigned)mad_len);
		return;
	}
	memcpy(next, frame, UMAD_FRAME_HDR_SIZE + MAD_SIZE);
	status = mad_get_field(mad, 0, smp ? IB_DRSMP_STATUS_F : IB_MAD_STATUS_F);
	if (status && *c->step == STEP_PCX_SET && !(c->capmask & PM_PORT_COUNTERS_EXT)) {
		chain_end(c, 0, "not claimed, not there: done");
		return;
	}
	if (status) {
		chain_end(c, status_errno(status), "MAD status 0x%04x", status);
		return;
	}
	r = chain_take(c, mad, why, sizeof(why));
	if (r < 0) {
		chain_end(c, r, "%s", why);
		return;
	}
	if (*++c->step == STEP_END) {
		chain_end(c, 0, "done");
		return;
	}
	chain_frame(c, next);
	r = chain_send(c, next);
	if (r < 0)
		chain_end(c, r, "could not be sent (error %u)", (unsigned)-r);
}

/* Starts the chain of plan: 0, or -errno (c freed, done not called). */
static int chain_start(struct mad_engine *engine, const enum chain_step *plan,
		       struct chain *c, query_done_fn done, void *ctx)
{
	uint8_t frame[UMAD_FRAME_MAX];
	struct chain *mine = malloc(sizeof(*mine));
	int r;

	if (!mine)
		return -ENOMEM;
	*mine = *c;
	mine->engine = engine;
	mine->done = done;
	mine->ctx = ctx;
	mine->step = plan;
	chain_frame(mine, frame);
	r = chain_send(mine, frame);
	if (r < 0)
		free(mine);
	return r;
}

int query_port_phys_set(struct mad_engine *engine, uint64_t guid, unsigned hops,
			const uint8_t *path, unsigned port, unsigned phys_state,
			query_done_fn done, void *ctx)
{
	struct chain c = { .guid = guid, .port = port, .phys_state = phys_state,
			   .hops = hops };

	memcpy(c.path, path, sizeof(c.path));
	return chain_start(engine, port_phys_plan, &c, done, ctx);
}

int query_counters_reset(struct mad_engine *engine, uint64_t guid, unsigned lid,
			 unsigned port, query_done_fn done, void *ctx)
{
	struct chain c = { .guid = guid, .port = port, .lid = lid };

	if (!lid)
		return -ENETDOWN;
	return chain_start(engine, guid ? counters_plan : own_counters_plan, &c,
			   done, ctx);
}
