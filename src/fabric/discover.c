/* The sweep (discover.h): a table of requests, a queue of those not yet
 * sent, a window of those in flight, and what each answer teaches.  The
 * caller's thread sends and handles answers; the engine's receiver thread
 * only copies each answer into a ring. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/engine/engine.h"
#include "umadfs/fabric/discover.h"
#include "umadfs/fabric/fabsnap.h"
#include "umadfs/mad/getframe.h"
#include "umadfs/mad/mad.h"

#define NO_NODE UINT32_MAX
#define SILENCE_MS 5000 /* beyond a request's own time: the engine is gone */
#define PORT_STATE_DOWN 1 /* PortInfo PortState */
#define MAX_HOPS (FAB_PATH_MAX - 1)
/* PMA ClassPortInfo CapabilityMask bits (IBA 16.1.3.1, as perfquery). */
#define PM_EXT_WIDTH_SUPPORTED 0x0200
#define PM_EXT_WIDTH_NOIETF    0x0400
#define LFT_TOP_MAX 0xbfff /* the highest unicast LID */

enum req_kind { REQ_NODE_INFO, REQ_NODE_DESC, REQ_PORT_INFO, REQ_SWITCH_INFO,
		REQ_LFT, /* SMPs above, PMA below */
		REQ_PMA_CPI, REQ_PORT_COUNTERS, REQ_PORT_COUNTERS_EXT };

struct req {
	uint8_t kind;
	uint8_t port;   /* NodeInfo: the port of node it leaves by; else the port asked */
	uint8_t hops;   /* SMPs: the directed route, path[1..hops] */
	uint32_t node;  /* the node asked, or (NodeInfo) the one it leaves: NO_NODE */
	uint32_t next_free;
	uint16_t block;  /* LinearForwardingTable: the block asked */
	uint8_t path[FAB_PATH_MAX];
};

struct answer {
	uint8_t frame[UMAD_FRAME_MAX];
	size_t len;
};

struct discover {
	struct mad_sink sink;
	struct mad_engine *engine;
	struct fab_snap *snap;
	int timeout_ms, retries;
	/* The sweep thread's own: */
	struct req *reqs;
	uint32_t nreqs, cap, free_head;
	uint32_t *queue;     /* ring of request indexes not yet sent */
	size_t qhead, qlen, qcap;
	unsigned inflight;
	bool nomem;          /* a request or node could not be stored */
	/* Shared with the receiver thread: */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct answer ring[DISCOVER_WINDOW]; /* lock */
	unsigned rhead, rlen;                /* lock */
	bool stop;                           /* lock */
};

static void on_deliver(struct mad_sink *sink, const void *frame, size_t mad_len)
{
	struct discover *d = (struct discover *)sink;
	struct answer *a;

	pthread_mutex_lock(&d->lock);
	/* At most DISCOVER_WINDOW requests are in flight, each ends once. */
	a = &d->ring[(d->rhead + d->rlen++) % DISCOVER_WINDOW];
	if (mad_len > MAD_SIZE)
		mad_len = MAD_SIZE;
	memcpy(a->frame, frame, UMAD_FRAME_HDR_SIZE + mad_len);
	a->len = mad_len;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

static const struct mad_sink_ops discover_sink_ops = { .deliver = on_deliver };

struct discover *discover_new(void)
{
	struct discover *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->sink.ops = &discover_sink_ops;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	return d;
}

void discover_free(struct discover *d)
{
	if (!d)
		return;
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d->reqs);
	free(d->queue);
	free(d);
}

void discover_abort(struct discover *d)
{
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

/* A new request, queued, with the directed route hops/path (SMPs);
 * -ENOMEM. */
static int enqueue(struct discover *d, enum req_kind kind, uint32_t node,
		   unsigned port, unsigned hops, const uint8_t *path)
{
	uint32_t i;

	if (d->qlen == d->qcap) {
		size_t cap = d->qcap ? d->qcap * 2 : 1024;
		uint32_t *q = malloc(cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		for (size_t k = 0; k < d->qlen; k++)
			q[k] = d->queue[(d->qhead + k) % d->qcap];
		free(d->queue);
		d->queue = q;
		d->qhead = 0;
		d->qcap = cap;
	}
	if (d->free_head == NO_NODE) {
		if (d->nreqs == d->cap) {
			uint32_t cap = d->cap ? d->cap * 2 : 1024;
			struct req *bigger = realloc(d->reqs, cap * sizeof(*bigger));

			if (!bigger)
				return -ENOMEM;
			d->reqs = bigger;
			d->cap = cap;
		}
		i = d->nreqs++;
	} else {
		i = d->free_head;
		d->free_head = d->reqs[i].next_free;
	}
	d->reqs[i] = (struct req){ .kind = (uint8_t)kind, .port = (uint8_t)port,
				   .hops = (uint8_t)hops, .node = node };
	if (path)
		memcpy(d->reqs[i].path, path, FAB_PATH_MAX);
	d->queue[(d->qhead + d->qlen++) % d->qcap] = i;
	return 0;
}

static void req_free(struct discover *d, uint32_t i)
{
	d->reqs[i].next_free = d->free_head;
	d->free_head = i;
}

static void smp_frame(const struct req *r, uint8_t *frame, unsigned attr,
		      unsigned mod)
{
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;

	getframe_smp(frame, attr, mod);
	mad_set_field(mad, 0, IB_DRSMP_HOPCNT_F, r->hops);
	memcpy(mad + 128, r->path, FAB_PATH_MAX); /* Initial Path (IBA 14.2.1.2) */
}

/* The LID node n's PMA answers on for port p (a switch's port 0's; a CA
 * port's own, or another port's when it has none), or 0 when none. */
static unsigned pma_lid(const struct fab_node *n, unsigned p)
{
	if (n->type == FAB_SWITCH)
		return n->ports[0].lid;
	if (p && n->ports[p].lid)
		return n->ports[p].lid;
	for (unsigned i = 1; i <= n->nports; i++)
		if (n->ports[i].lid)
			return n->ports[i].lid;
	return 0;
}

static void pma_frame(const struct discover *d, const struct req *r, uint8_t *frame)
{
	const struct fab_node *n = &d->snap->nodes[r->node];
	uint8_t data[IB_PC_DATA_SZ] = { 0 };
	static const unsigned attr[] = {
		[REQ_PMA_CPI] = CLASS_PORT_INFO,
		[REQ_PORT_COUNTERS] = IB_GSI_PORT_COUNTERS,
		[REQ_PORT_COUNTERS_EXT] = IB_GSI_PORT_COUNTERS_EXT,
	};

	if (r->kind != REQ_PMA_CPI)
		getframe_counters_select(data, attr[r->kind], r->port);
	getframe_pma(frame, pma_lid(n, r->kind == REQ_PMA_CPI ? 0 : r->port),
			attr[r->kind], data);
}

/* Builds request i's frame. */
static void build(struct discover *d, uint32_t i, uint8_t *frame)
{
	const struct req *r = &d->reqs[i];

	switch (r->kind) {
	case REQ_NODE_INFO:
		smp_frame(r, frame, IB_ATTR_NODE_INFO, 0);
		break;
	case REQ_NODE_DESC:
		smp_frame(r, frame, IB_ATTR_NODE_DESC, 0);
		break;
	case REQ_PORT_INFO:
		smp_frame(r, frame, IB_ATTR_PORT_INFO, r->port);
		break;
	case REQ_SWITCH_INFO:
		smp_frame(r, frame, IB_ATTR_SWITCH_INFO, 0);
		break;
	case REQ_LFT:
		smp_frame(r, frame, IB_ATTR_LINEARFORWTBL, r->block);
		break;
	default:
		pma_frame(d, r, frame);
		break;
	}
	mad_set_tid(frame + UMAD_FRAME_HDR_SIZE, i);
}

static void handle(struct discover *d, uint32_t i, uint8_t *frame,
		   size_t len);

/* Sends queued requests while the window has room. */
static void pump(struct discover *d)
{
	uint8_t frame[UMAD_FRAME_MAX];

	while (d->qlen && d->inflight < DISCOVER_WINDOW) {
		uint32_t i = d->queue[d->qhead];
		int r;

		build(d, i, frame);
		r = engine_send(d->engine, &d->sink, frame, MAD_SIZE,
				d->timeout_ms, d->retries);
		if (r == -EBUSY && d->inflight)
			return; /* the engine's table is full: later */
		d->qhead = (d->qhead + 1) % d->qcap;
		d->qlen--;
		if (r < 0) {
			/* Ended without an answer: as a timeout. */
			((struct ib_user_mad *)frame)->status = ETIMEDOUT;
			handle(d, i, frame, 0);
			continue;
		}
		d->snap->stats.mads++;
		d->inflight++;
	}
}


/* A new node's description, SwitchInfo and (switch) every port's PortInfo,
 * by the route that found it. */
static int ask_node(struct discover *d, uint32_t ni)
{
	struct fab_node *n = &d->snap->nodes[ni];
	int r = enqueue(d, REQ_NODE_DESC, ni, 0, n->hops, n->path);

	if (n->type != FAB_SWITCH)
		return r;
	if (r == 0)
		r = enqueue(d, REQ_SWITCH_INFO, ni, 0, n->hops, n->path);
	for (unsigned p = 0; r == 0 && p <= n->nports; p++) {
		n->ports[p].asked = true;
		r = enqueue(d, REQ_PORT_INFO, ni, p, n->hops, n->path);
	}
	return r;
}

/* fabric_routes: whether sweeps read forwarding tables.  Set before the
 * sweep thread starts, then only read. */
static bool lfts_wanted = true;

void discover_set_routes(bool on)
{
	lfts_wanted = on;
}

/* A switch's LinearForwardingTable: blocks 0 .. top / 64 (SwitchInfo
 * LinearFDBTop), into n->lft, 255 until answered. */
static int ask_lft(struct discover *d, uint32_t ni, unsigned top)
{
	struct fab_node *n = &d->snap->nodes[ni];
	unsigned blocks;
	int r = 0;

	if (!lfts_wanted || n->lft)
		return 0;
	if (top > LFT_TOP_MAX)
		top = LFT_TOP_MAX;
	blocks = top / IB_SMP_DATA_SIZE + 1;
	n->lft = malloc((size_t)blocks * IB_SMP_DATA_SIZE);
	if (!n->lft)
		return -ENOMEM;
	memset(n->lft, 0xff, (size_t)blocks * IB_SMP_DATA_SIZE);
	n->lft_top = (uint16_t)top;
	for (unsigned b = 0; r == 0 && b < blocks; b++) {
		r = enqueue(d, REQ_LFT, ni, 0, n->hops, n->path);
		if (r == 0)
			d->reqs[d->queue[(d->qhead + d->qlen - 1) % d->qcap]].block =
				(uint16_t)b;
	}
	return r;
}

/* A block of it answered; or (data NULL) lost: no table then. */
static void lft_block(struct discover *d, const struct req *r, uint8_t *data)
{
	struct fab_node *n = &d->snap->nodes[r->node];

	if (!n->lft)
		return;
	if (data) {
		mad_get_array(data, 0, IB_LINEAR_FORW_TBL_F,
			      n->lft + (size_t)r->block * IB_SMP_DATA_SIZE);
		return;
	}
	free(n->lft);
	n->lft = NULL;
	n->lft_top = 0;
}

static struct fab_node *new_node(struct discover *d, const struct req *r,
				 uint8_t *data, uint64_t guid)
{
	unsigned lp = mad_get_field(data, 0, IB_NODE_LOCAL_PORT_F);
	struct fab_node *n;

	n = fabsnap_add(d->snap, guid, mad_get_field(data, 0, IB_NODE_NPORTS_F));
	if (!n)
		return NULL;
	n->type = (uint8_t)mad_get_field(data, 0, IB_NODE_TYPE_F);
	n->sys_guid = mad_get_field64(data, 0, IB_NODE_SYSTEM_GUID_F);
	n->vendor_id = mad_get_field(data, 0, IB_NODE_VENDORID_F);
	n->device_id = (uint16_t)mad_get_field(data, 0, IB_NODE_DEVID_F);
	n->revision = mad_get_field(data, 0, IB_NODE_REVISION_F);
	n->hops = r->hops;
	n->entry_port = (uint8_t)(r->node == NO_NODE ? 0 : lp);
	memcpy(n->path, r->path, FAB_PATH_MAX);
	return n;
}

/* A node answered NodeInfo through the route of request r. */
static int node_info(struct discover *d, const struct req *r, uint8_t *data)
{
	struct fab_snap *s = d->snap;
	uint64_t guid = mad_get_field64(data, 0, IB_NODE_GUID_F);
	uint64_t port_guid = mad_get_field64(data, 0, IB_NODE_PORT_GUID_F);
	unsigned lp = mad_get_field(data, 0, IB_NODE_LOCAL_PORT_F);
	struct fab_node *n = fabsnap_find(s, guid);
	uint32_t ni;
	int err = 0;

	if (!n) {
		n = new_node(d, r, data, guid);
		if (!n)
			return -ENOMEM;
		err = ask_node(d, (uint32_t)(n - s->nodes));
	}
	ni = (uint32_t)(n - s->nodes);
	if (lp > n->nports)
		return err;
	n->ports[lp].port_guid = port_guid;
	if (n->type == FAB_SWITCH)
		n->ports[0].port_guid = port_guid;
	if (r->node == NO_NODE) {
		s->local_guid = guid;
		s->local_port_guid = port_guid;
	}
	/* A CA's port is asked by the route that reached it. */
	if (!err && n->type != FAB_SWITCH && !n->ports[lp].asked) {
		n->ports[lp].asked = true;
		err = enqueue(d, REQ_PORT_INFO, ni, lp, r->hops, r->path);
	}
	if (r->node != NO_NODE) {
		struct fab_node *from = &s->nodes[r->node];

		from->ports[r->port].peer_guid = guid;
		from->ports[r->port].peer_port = (uint8_t)lp;
		n->ports[lp].peer_guid = from->guid;
		n->ports[lp].peer_port = r->port;
	}
	return err;
}

/* PortInfo of a port: kept; a switch's (or the local CA's) port that is
 * not Down is then followed to the node at its other end. */
static int port_info(struct discover *d, const struct req *r, uint8_t *data)
{
	struct fab_node *n = &d->snap->nodes[r->node];
	struct fab_port *p = &n->ports[r->port];
	uint8_t path[FAB_PATH_MAX];

	p->has_info = true;
	p->state = (uint8_t)mad_get_field(data, 0, IB_PORT_STATE_F);
	p->phys_state = (uint8_t)mad_get_field(data, 0, IB_PORT_PHYS_STATE_F);
	p->width = (uint8_t)mad_get_field(data, 0, IB_PORT_LINK_WIDTH_ACTIVE_F);
	p->speed = (uint8_t)mad_get_field(data, 0, IB_PORT_LINK_SPEED_ACTIVE_F);
	p->ext_speed = (uint8_t)mad_get_field(data, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
	p->lid = (uint16_t)mad_get_field(data, 0, IB_PORT_LID_F);
	p->lmc = (uint8_t)mad_get_field(data, 0, IB_PORT_LMC_F);
	if (n->type == FAB_SWITCH && r->port) {
		p->lid = n->ports[0].lid; /* a switch's ports share port 0's */
		p->lmc = n->ports[0].lmc;
	}
	if (!r->port || p->state <= PORT_STATE_DOWN || p->peer_guid ||
	    r->port == n->entry_port || n->hops >= MAX_HOPS ||
	    (n->type != FAB_SWITCH && n->hops))
		return 0;
	memcpy(path, n->path, FAB_PATH_MAX);
	path[n->hops + 1] = r->port;
	return enqueue(d, REQ_NODE_INFO, r->node, r->port, n->hops + 1u, path);
}

/* PMA ClassPortInfo: which counters to ask of every port (a switch's
 * port 0 too, as its ports/0/counters/ shows them). */
static int pma_class(struct discover *d, const struct req *r, uint8_t *data)
{
	struct fab_node *n = &d->snap->nodes[r->node];
	int err = 0;

	n->pma_capmask = (uint16_t)mad_get_field(data, 0, IB_CPI_CAPMASK_F);
	for (unsigned p = n->type == FAB_SWITCH ? 0 : 1; !err && p <= n->nports; p++) {
		if (!n->ports[p].has_info)
			continue;
		err = enqueue(d, REQ_PORT_COUNTERS, r->node, p, 0, NULL);
		if (!err && (n->pma_capmask & (PM_EXT_WIDTH_SUPPORTED |
					       PM_EXT_WIDTH_NOIETF)))
			err = enqueue(d, REQ_PORT_COUNTERS_EXT, r->node, p, 0, NULL);
	}
	return err;
}

/* The MAD's status (a DR SMP's without the direction bit), 0 if good. */
static unsigned mad_status(const struct req *r, uint8_t *mad)
{
	if (r->kind < REQ_PMA_CPI)
		return mad_get_field(mad, 0, IB_DRSMP_STATUS_F);
	return mad_get_field(mad, 0, IB_MAD_STATUS_F);
}

static int answered(struct discover *d, const struct req *r, uint8_t *mad)
{
	uint8_t *smp = mad + IB_SMP_DATA_OFFS;
	uint8_t *pma = mad + IB_PC_DATA_OFFS;
	struct fab_node *n = r->node == NO_NODE ? NULL : &d->snap->nodes[r->node];

	switch (r->kind) {
	case REQ_NODE_INFO:
		return node_info(d, r, smp);
	case REQ_NODE_DESC:
		memcpy(n->desc, smp, FAB_DESC_LEN);
		n->desc[FAB_DESC_LEN] = '\0';
		return 0;
	case REQ_PORT_INFO:
		return port_info(d, r, smp);
	case REQ_PMA_CPI:
		return pma_class(d, r, pma);
	case REQ_PORT_COUNTERS:
		memcpy(n->ports[r->port].basic, pma, FAB_PC_LEN);
		n->ports[r->port].has_counters = true;
		return 0;
	case REQ_PORT_COUNTERS_EXT:
		memcpy(n->ports[r->port].ext, pma, FAB_PCX_LEN);
		n->ports[r->port].has_ext = true;
		return 0;
	case REQ_LFT:
		lft_block(d, r, smp);
		return 0;
	default: /* SwitchInfo */
		n->enhanced_port0 = mad_get_field(smp, 0, IB_SW_ENHANCED_PORT0_F);
		return ask_lft(d, r->node,
			       mad_get_field(smp, 0, IB_SW_LINEAR_FDB_TOP_F));
	}
}

/* Request i ended: its answer, or (status set) the request given back. */
static int handle_one(struct discover *d, uint32_t i, uint8_t *frame,
		      size_t len)
{
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;
	struct req r = d->reqs[i];
	bool ok;

	req_free(d, i);
	ok = !((const struct ib_user_mad *)frame)->status &&
	     len >= IB_SMP_DATA_OFFS + IB_SMP_DATA_SIZE && !mad_status(&r, mad);
	if (((const struct ib_user_mad *)frame)->status)
		d->snap->stats.timeouts++;
	if (ok)
		return answered(d, &r, mad);
	if (r.kind == REQ_NODE_INFO && r.node != NO_NODE)
		d->snap->stats.unreachable++;
	if (r.kind == REQ_LFT)
		lft_block(d, &r, NULL);
	return 0;
}

static void handle(struct discover *d, uint32_t i, uint8_t *frame,
		   size_t len)
{
	if (handle_one(d, i, frame, len) < 0)
		d->nomem = true;
}

/* Discovery is over: the counters of every node that has a LID. */
static int ask_counters(struct discover *d)
{
	int err = 0;

	for (size_t i = 0; !err && i < d->snap->nnodes; i++)
		if (pma_lid(&d->snap->nodes[i], 0))
			err = enqueue(d, REQ_PMA_CPI, (uint32_t)i, 0, 0, NULL);
	return err;
}

/* Waits for the next answer and handles it; -ECANCELED on abort,
 * -ETIMEDOUT when none came for far longer than any request may take (an
 * engine closed under the sweep ends its requests without a word). */
static int next_answer(struct discover *d)
{
	int64_t wait_ms = (int64_t)d->timeout_ms * (d->retries + 1) + SILENCE_MS;
	struct timespec until;
	struct answer a;
	int r = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (wait_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&d->lock);
	while (!d->rlen && !d->stop && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&d->cond, &d->lock, &until);
	if (d->stop || !d->rlen) {
		pthread_mutex_unlock(&d->lock);
		return d->stop ? -ECANCELED : -ETIMEDOUT;
	}
	memcpy(&a, &d->ring[d->rhead], sizeof(a));
	d->rhead = (d->rhead + 1) % DISCOVER_WINDOW;
	d->rlen--;
	pthread_mutex_unlock(&d->lock);
	d->inflight--;
	handle(d, (uint32_t)mad_tid(a.frame + UMAD_FRAME_HDR_SIZE), a.frame, a.len);
	return 0;
}

int discover_run(struct discover *d, struct mad_engine *engine,
		 const struct fab_snap *prev, struct fab_snap *snap,
		 int timeout_ms, int retries)
{
	bool counting = false;
	int r = 0;

	(void)prev;
	d->engine = engine;
	d->snap = snap;
	d->timeout_ms = timeout_ms;
	d->retries = retries;
	d->nreqs = d->qlen = d->qhead = d->inflight = 0;
	d->free_head = NO_NODE;
	d->nomem = false;
	if (enqueue(d, REQ_NODE_INFO, NO_NODE, 0, 0, NULL) < 0)
		return -ENOMEM;
	while (!d->nomem) {
		pump(d);
		if (!d->inflight && !d->qlen) {
			if (counting)
				break;
			counting = true;
			if (ask_counters(d) < 0)
				d->nomem = true;
			continue;
		}
		r = next_answer(d);
		if (r == -ETIMEDOUT) {
			/* What is missing counts as timed out; the rest stands. */
			d->snap->stats.timeouts += d->inflight;
			r = 0;
			break;
		}
		if (r < 0)
			break;
	}
	if (d->inflight)
		engine_cancel_sink(engine, &d->sink);
	pthread_mutex_lock(&d->lock);
	d->rhead = d->rlen = 0;
	pthread_mutex_unlock(&d->lock);
	return r < 0 ? r : d->nomem ? -ENOMEM : 0;
}
