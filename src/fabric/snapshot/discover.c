/* The sweep (discover.h): the discovery by directed route (NodeInfo,
 * NodeDescription, PortInfo, SwitchInfo, LinearForwardingTable), the
 * SMs' SMInfo, the ports' PKeyTables once discovery is over, the requests sent as the window has room, and what each
 * answer teaches.  The caller's thread sends and handles answers; the
 * engine's receiver thread only copies each answer into a ring.
 *
 * The window of requests in flight is window.c's, the table and queue of
 * requests sweepreq.c's, the PMA's counters sweeppma.c's, the
 * PKeyTables sweeppkeys.c's, the multicast groups and tables
 * sweepmcast.c's.
 *
 * With a snapshot before it (prev), a sweep asks only what can change
 * (docs/files.md, "What a sweep asks"):
 * - a node of the same GUID and NodeInfo keeps its NodeDescription and
 *   ClassPortInfo, and its SwitchInfo is not asked, until they are due
 *   (STATIC_MAX_MS, spread by GUID) or, for a CA, its port was not Active
 *   (sweepkeep.c);
 * - a switch keeps prev's forwarding table until a change can have made
 *   the SM rewrite it, or it is due (sweeplft.c);
 * - a switch whose PMA sums its ports keeps prev's PortCounters while
 *   the sum says they stand (sweeppma.c);
 * - a port keeps prev's PKeyTable while its state and LID stand, until
 *   it is due (sweeppkeys.c);
 * - while light sweeps guard the view, a CA of one port behind a switch
 *   port whose link stands is prev's, unasked, until it is due
 *   (sweepkeep.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/base/clock.h"
#include "umadfs/engine/engine.h"
#include "umadfs/fabric/snapshot/discover.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/rates.h"
#include "umadfs/fabric/snapshot/window.h"
#include "umadfs/mad/getframe.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/mad.h"

#include "discover_priv.h"

struct discover *discover_new(void)
{
	struct discover *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->window = window_new();
	if (!d->window) {
		free(d);
		return NULL;
	}
	return d;
}

void discover_free(struct discover *d)
{
	if (!d)
		return;
	window_free(d->window);
	free(d->reqs);
	free(d->queue);
	free(d->ns);
	free(d);
}

void discover_abort(struct discover *d)
{
	window_abort(d->window);
}

static void smp_frame(const struct req *r, uint8_t *frame, unsigned attr,
		      unsigned mod)
{
	getframe_smp_route(frame, attr, mod, r->hops, r->path);
}

/* SMInfo: by the directed route to the port where discovery found the
 * SM (an SMP reaches it through ports not yet Active), else by LID, as
 * sminfo asks it: the SM answers it, not the port's SMA. */
static void sm_frame(const struct req *r, uint8_t *frame)
{
	if (r->node != NO_NODE)
		smp_frame(r, frame, IB_ATTR_SMINFO, 0);
	else
		getframe_smp_lid(frame, IB_ATTR_SMINFO, 0, r->lid);
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
	case REQ_SM_INFO:
		sm_frame(r, frame);
		break;
	case REQ_LFT:
		smp_frame(r, frame, IB_ATTR_LINEARFORWTBL, r->block);
		break;
	case REQ_PKEYS:
		smp_frame(r, frame, IB_ATTR_PKEY_TBL, sweeppkeys_attrmod(d, r));
		break;
	case REQ_SL2VL: /* AttributeModifier: in-port in bits 8-15, out-port 0-7 */
		smp_frame(r, frame, IB_ATTR_SLVL_TABLE, (unsigned)r->block << 8 | r->port);
		break;
	case REQ_MFT:
		smp_frame(r, frame, IB_ATTR_MULTICASTFORWTBL, sweepmcast_attrmod(d, r));
		break;
	default:
		d->reqs[i].lid = (uint16_t)sweeppma_frame(d, r, frame);
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

	while (d->qlen && window_has_room(d->window)) {
		uint32_t i = sweepreq_head(d);
		int r;

		build(d, i, frame);
		r = window_send(d->window, frame, d->reqs[i].once);
		if (r == -EBUSY)
			return; /* the engine's table is full: later */
		sweepreq_pop(d);
		if (r < 0) {
			/* Ended without an answer: as a timeout. */
			((struct ib_user_mad *)frame)->status = ETIMEDOUT;
			handle(d, i, frame, 0);
			continue;
		}
		d->snap->stats.mads++;
	}
}

/* The forwarding tables' options.  Set before the sweep thread starts,
 * then only read (each sweep takes a copy). */
static struct discover_routes routes_opts = {
	.on = true,
	.settle_ms = DISCOVER_ROUTES_SETTLE_MS,
	.max_age_ms = DISCOVER_ROUTES_MAX_AGE_MS,
};

void discover_set_routes(bool on, unsigned settle_ms, unsigned max_age_ms)
{
	routes_opts = (struct discover_routes){ on, settle_ms, max_age_ms };
}

/* -- what the snapshot before tells -------------------------------------- */

static bool same_node_info(const struct fab_node *a, const struct fab_node *b)
{
	return a->type == b->type && a->nports == b->nports &&
	       a->sys_guid == b->sys_guid && a->vendor_id == b->vendor_id &&
	       a->device_id == b->device_id && a->revision == b->revision;
}

/* -- SMInfo -------------------------------------------------------------- */

/* Whether the master SM at lid, the local port's MasterSMLID, was silent
 * in the snapshot before (or the traps' check found it so since). */
static bool master_was_silent(const struct discover *d, unsigned lid)
{
	return d->prev && d->prev->sm_lid == lid && !fabsnap_master(d->prev);
}

/* SMInfo of the SM at lid, found at node's port by the directed route
 * hops/path (or NO_NODE: by LID), once per LID and sweep, SM_MAX at
 * most.  A master that was silent is asked by LID without retries: where
 * its link is down, each try is a packet its switch port discards. */
static int ask_sminfo(struct discover *d, unsigned lid, uint32_t node,
		      unsigned port, unsigned hops, const uint8_t *path)
{
	struct req *r;

	if (!lid || lid > IB_LID_UCAST_END_HO || d->nsm_lids == SM_MAX)
		return 0;
	for (unsigned i = 0; i < d->nsm_lids; i++)
		if (d->sm_lids[i] == lid)
			return 0;
	r = sweepreq_enqueue(d, REQ_SM_INFO, node, port, hops, path);
	if (!r)
		return -ENOMEM;
	r->lid = (uint16_t)lid;
	r->once = node == NO_NODE && master_was_silent(d, lid);
	d->sm_lids[d->nsm_lids++] = (uint16_t)lid;
	return 0;
}

static int sm_info(struct discover *d, const struct req *r, uint8_t *data)
{
	struct fab_snap *s = d->snap;
	struct fab_sm *sm;

	/* One per LID asked: SM_MAX at most. */
	if (!s->sms && !(s->sms = calloc(SM_MAX, sizeof(*s->sms))))
		return -ENOMEM;
	sm = &s->sms[s->nsms++];
	sm->guid = mad_get_field64(data, 0, IB_SMINFO_GUID_F);
	sm->act_count = mad_get_field(data, 0, IB_SMINFO_ACT_F);
	sm->priority = (uint8_t)mad_get_field(data, 0, IB_SMINFO_PRIO_F);
	sm->state = (uint8_t)mad_get_field(data, 0, IB_SMINFO_STATE_F);
	sm->lid = r->lid;
	if (r->node != NO_NODE)
		sm->port_guid = s->nodes[r->node].ports[r->port].port_guid;
	return 0;
}

/* The port GUID of the endport at lid, or 0. */
static uint64_t port_guid_of(const struct fab_snap *s, unsigned lid)
{
	const struct fab_node *n;
	const struct fab_port *fp = fabsnap_find_lid(s, lid, &n);

	return fp ? fp->port_guid : 0;
}

/* Sorting SMs: the master at the local port's MasterSMLID, other masters,
 * the rest; then by LID. */
static unsigned sm_rank(const struct fab_snap *s, const struct fab_sm *sm)
{
	return sm->state == IB_SMINFO_STATE_MASTER ? (sm->lid == s->sm_lid ? 0 : 1) : 2;
}

static void finish_sms(struct fab_snap *s)
{
	for (size_t i = 0; i < s->nsms; i++)
		if (!s->sms[i].port_guid)
			s->sms[i].port_guid = port_guid_of(s, s->sms[i].lid);
	for (size_t i = 1; i < s->nsms; i++) { /* SM_MAX at most */
		struct fab_sm sm = s->sms[i];
		size_t j = i;

		for (; j && (sm_rank(s, &s->sms[j - 1]) > sm_rank(s, &sm) ||
			     (sm_rank(s, &s->sms[j - 1]) == sm_rank(s, &sm) &&
			      s->sms[j - 1].lid > sm.lid)); j--)
			s->sms[j] = s->sms[j - 1];
		s->sms[j] = sm;
	}
}

/* -- discovery ----------------------------------------------------------- */

static struct fab_node *new_node(struct discover *d, const struct req *r,
				 uint8_t *data)
{
	unsigned lp = mad_get_field(data, 0, IB_NODE_LOCAL_PORT_F);
	struct fab_node *n = fabsnap_add_node_info(d->snap, data), *was;

	if (!n)
		return NULL;
	n->hops = r->hops;
	n->entry_port = (uint8_t)(r->node == NO_NODE ? 0 : lp);
	memcpy(n->path, r->path, FAB_PATH_MAX);
	was = d->prev ? fabsnap_find(d->prev, n->guid) : NULL;
	if (sweepkeep_track(d, n, was && same_node_info(was, n) ? was : NULL) < 0)
		return NULL;
	return n;
}

/* A new node: its static attributes, and (a switch) every port's PortInfo
 * by the route that found it. */
static int ask_node(struct discover *d, uint32_t ni, unsigned lp)
{
	struct fab_node *n = &d->snap->nodes[ni];
	int r = sweepkeep_static(d, ni, lp);
	unsigned nports;

	if (n->type != FAB_SWITCH)
		return r;
	nports = n->nports;
	d->ns[ni].pi_pending = (uint16_t)(nports + 1u);
	for (unsigned p = 0; r == 0 && p <= nports; p++) {
		r = sweepkeep_port(d, ni, p);
		if (r) { /* taken with its CA, or -ENOMEM */
			d->ns[ni].pi_pending--;
			r = r < 0 ? r : 0;
			continue;
		}
		n = &d->snap->nodes[ni]; /* (a CA kept may have moved the nodes) */
		n->ports[p].asked = true;
		r = sweepreq_ask(d, REQ_PORT_INFO, ni, p, n->hops, n->path);
	}
	return r;
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
		n = new_node(d, r, data);
		if (!n)
			return -ENOMEM;
		ni = (uint32_t)(n - s->nodes);
		err = ask_node(d, ni, lp);
		n = &s->nodes[ni]; /* (the CAs it kept may have moved the nodes) */
		/* A node come, or another NodeInfo under its GUID. */
		if (!err && d->prev && d->prev->ok && !d->ns[ni].was)
			err = sweeplft_reroute(d);
	} else {
		fabsnap_node_info_port(n, data);
		err = sweepkeep_found(d, (uint32_t)(n - s->nodes), r);
	}
	ni = (uint32_t)(n - s->nodes);
	if (lp > n->nports)
		return err;
	if (r->node == NO_NODE) {
		s->local_guid = guid;
		s->local_port_guid = port_guid;
		d->local_node = ni;
		d->local_port = lp;
	}
	/* A CA's port is asked by the route that reached it; a remote CA's
	 * other ports too (its SMA answers for each), so that one Down or
	 * linked elsewhere is still listed.  Not the local CA's: the host
	 * shows its own ports. */
	for (unsigned p = 1; !err && n->type != FAB_SWITCH && p <= n->nports; p++) {
		if (n->ports[p].asked || (p != lp && r->node == NO_NODE))
			continue;
		n->ports[p].asked = true;
		err = sweepreq_ask(d, REQ_PORT_INFO, ni, p, r->hops, r->path);
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

/* PortInfo of a port: kept; the local port names the master SM, a port
 * with IsSM is asked for its SMInfo; a switch's (or the local CA's) port
 * that is not Down is then followed to the node at its other end. */
static int port_info(struct discover *d, const struct req *r, uint8_t *data)
{
	struct fab_node *n = &d->snap->nodes[r->node];
	struct fab_port *p = &n->ports[r->port];
	const struct fab_node *was = d->ns[r->node].was;
	uint8_t path[FAB_PATH_MAX];
	int err = 0;

	fabsnap_read_port_info(n, r->port, data);
	sweepkeep_port_info(d, r->node, was);
	if (was && r->port <= was->nports &&
	    fabsnap_port_reroutes(n, r->port, &was->ports[r->port]) &&
	    sweeplft_reroute(d) < 0)
		return -ENOMEM;
	if (n->type == FAB_SWITCH && r->port) {
		p->lid = n->ports[0].lid; /* a switch's ports share port 0's */
		p->lmc = n->ports[0].lmc; /* (set again once all are in) */
		sweepkeep_port_read(d, r);
	}
	if (r->node == d->local_node && r->port == d->local_port)
		d->snap->sm_lid = p->sm_lid; /* asked by LID at the end if not found */
	/* (IsSM is port 0's on a switch; the local port's may be the
	 * simulator's issm the engine holds for an agent.) */
	if ((p->cap_mask & IB_PORT_CAP_IS_SM) && (n->type != FAB_SWITCH || !r->port) &&
	    !(r->node == d->local_node && !r->hops && engine_holds_issm(d->engine)))
		err = ask_sminfo(d, p->lid, r->node, r->port, r->hops, r->path);
	if (err || !r->port || p->state <= IB_LINK_DOWN || p->peer_guid ||
	    r->port == n->entry_port || n->hops >= FAB_HOPS_MAX ||
	    (n->type != FAB_SWITCH && n->hops))
		return err;
	err = sweepkeep_ca(d, r->node, r->port);
	if (err)
		return err < 0 ? err : 0;
	memcpy(path, n->path, FAB_PATH_MAX);
	path[n->hops + 1] = r->port;
	return sweepreq_ask(d, REQ_NODE_INFO, r->node, r->port, n->hops + 1u, path);
}

/* Every PortInfo of switch ni has ended: its ports take port 0's LID and
 * extended speed capability, and its PMA is asked. */
static int switch_ready(struct discover *d, uint32_t ni)
{
	struct fab_node *n = &d->snap->nodes[ni];

	fabsnap_switch_ports(n);
	return n->ports[0].has_info && n->ports[0].lid ? sweeppma_start(d, ni, 0) : 0;
}

/* A PortInfo Get ended, answered or not. */
static int port_info_ended(struct discover *d, const struct req *r)
{
	struct fab_node *n = &d->snap->nodes[r->node];

	if (n->type == FAB_SWITCH && n->ports[r->port].kept)
		return sweepkeep_port_ended(d, r); /* (asked after all) */
	if (n->type == FAB_SWITCH)
		return --d->ns[r->node].pi_pending ? 0 : switch_ready(d, r->node);
	if (!n->ports[r->port].has_info || !fabsnap_pma_lid(n, r->port))
		return 0;
	return sweeppma_start(d, r->node, r->port);
}

/* -- answers ------------------------------------------------------------- */

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
	struct fab_node *n = r->node == NO_NODE ? NULL : &d->snap->nodes[r->node];
	int err;

	if (r->kind >= REQ_PMA_CPI)
		return sweeppma_answered(d, r, mad + IB_PC_DATA_OFFS);
	switch (r->kind) {
	case REQ_NODE_INFO:
		return node_info(d, r, smp);
	case REQ_NODE_DESC:
		fabsnap_read_node_desc(n, smp);
		return 0;
	case REQ_PORT_INFO:
		err = port_info(d, r, smp);
		return err ? err : port_info_ended(d, r);
	case REQ_SM_INFO:
		return sm_info(d, r, smp);
	case REQ_LFT:
		sweeplft_block(d, r, smp);
		return 0;
	case REQ_PKEYS:
		sweeppkeys_block(d, r, smp);
		return 0;
	case REQ_SL2VL:
		sweepsl2vl_answer(d, r, smp);
		return 0;
	case REQ_MFT:
		sweepmcast_block(d, r, smp);
		return 0;
	default: /* SwitchInfo */
		n->enhanced_port0 = mad_get_field(smp, 0, IB_SW_ENHANCED_PORT0_F);
		n->enforce_cap = (uint16_t)mad_get_field(smp, 0, IB_SW_PARTITION_ENFORCE_CAP_F);
		return sweeplft_switch(d, r->node,
				       mad_get_field(smp, 0, IB_SW_LINEAR_FDB_TOP_F));
	}
}

/* A request ended without a good answer. */
static int failed(struct discover *d, const struct req *r)
{
	switch (r->kind) {
	case REQ_NODE_INFO:
		if (r->node != NO_NODE)
			d->snap->stats.unreachable++;
		return 0;
	case REQ_PORT_INFO:
		return port_info_ended(d, r);
	case REQ_PORT_COUNTERS:
		return sweeppma_failed(d, r) < 0 ? -ENOMEM : sweepkeep_silent(d, r);
	case REQ_PMA_CPI:
	case REQ_PORT_COUNTERS_EXT:
	case REQ_PORT_DETAILS:
		return sweeppma_failed(d, r);
	case REQ_LFT:
		sweeplft_block(d, r, NULL);
		return 0;
	case REQ_PKEYS:
		sweeppkeys_block(d, r, NULL);
		return 0;
	case REQ_SL2VL:
		sweepsl2vl_answer(d, r, NULL);
		return 0;
	case REQ_MFT:
		sweepmcast_block(d, r, NULL);
		return 0;
	default:
		return 0;
	}
}

/* A request timed out: the sweep's count, and its node's (SMA or PMA).
 * A NodeInfo's node is the one it leaves from, and an SM, not the SMA,
 * answers SMInfo: neither counts against a node; nor does a detail
 * counters' Get, which a PMA that answers the rest may leave unanswered
 * (an optional attribute: sweepdet.c asks it again in its turn), nor an
 * SLtoVLMappingTable's (optional where a port has VL 0 only), nor a kept
 * CA's probe (its link's question: sweepkeep.c). */
static void timed_out(struct discover *d, const struct req *r)
{
	struct fab_node *n;
	uint16_t *count;

	d->snap->stats.timeouts++;
	if (r->node == NO_NODE || r->kind == REQ_NODE_INFO || r->kind == REQ_SM_INFO ||
	    r->kind == REQ_PORT_DETAILS || r->kind == REQ_SL2VL || r->once)
		return;
	n = &d->snap->nodes[r->node];
	/* Nor a PMA's Get to a LID its port no longer has: its SM gave it
	 * another since (sweepkeep.c asks a kept CA's PortInfo then). */
	if (r->kind >= REQ_PMA_CPI && r->lid != fabsnap_pma_lid(n, r->port))
		return;
	count = r->kind >= REQ_PMA_CPI ? &n->pma_timeouts : &n->sma_timeouts;
	if (*count < UINT16_MAX)
		(*count)++;
}

/* Request i ended: its answer, or (status set) the request given back. */
static int handle_one(struct discover *d, uint32_t i, uint8_t *frame,
		      size_t len)
{
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;
	unsigned status = (unsigned)((const struct ib_user_mad *)frame)->status;
	struct req r = d->reqs[i];

	sweepreq_free(d, i);
	if (status)
		timed_out(d, &r);
	if (!status && len >= IB_SMP_DATA_OFFS + IB_SMP_DATA_SIZE && !mad_status(&r, mad))
		return answered(d, &r, mad);
	return failed(d, &r);
}

static void handle(struct discover *d, uint32_t i, uint8_t *frame,
		   size_t len)
{
	if (handle_one(d, i, frame, len) < 0)
		d->nomem = true;
}

/* Waits for the next answer and handles it (window_next()'s returns). */
static int next_answer(struct discover *d)
{
	uint8_t frame[UMAD_FRAME_MAX];
	size_t len;
	int r = window_next(d->window, frame, &len);

	if (r == 0)
		handle(d, (uint32_t)mad_tid(frame + UMAD_FRAME_HDR_SIZE), frame, len);
	return r;
}

/* Nothing more in flight: after discovery (ends 0) the master's SMInfo
 * by LID, unless found with IsSM, and the ports' PKeyTables
 * (sweeppkeys.c); after that (1) what the whole sweep shows against the
 * one before (sweeplft.c), then the multicast groups and tables
 * (sweepmcast.c); then (2, 3) the SL-to-VL tables in two steps
 * (sweepsl2vl.c). */
static int sweep_end(struct discover *d, unsigned ends)
{
	if (!ends)
		return ask_sminfo(d, d->snap->sm_lid, NO_NODE, 0, 0, NULL) < 0 ?
			-ENOMEM : sweeppkeys_ask(d);
	if (ends == 1)
		return sweeplft_finish(d) < 0 ? -ENOMEM : sweepmcast_ask(d);
	return sweepsl2vl_ask(d, ends - 2);
}

int discover_run(struct discover *d, struct mad_engine *engine,
		 const struct fab_snap *prev, struct fab_snap *snap,
		 int timeout_ms, int retries, bool guarded)
{
	unsigned ends = 0;
	int r = 0;

	d->now_ms = clock_now_ms();
	window_start(d->window, engine, timeout_ms, retries);
	d->engine = engine;
	d->snap = snap;
	d->prev = prev;
	sweepsets_take(d);
	d->routes = routes_opts;
	d->lft_all = prev && prev->routes_broken;
	d->keep_cas = guarded && prev && prev->ok;
	snap->reroute_ms = prev ? prev->reroute_ms : 0;
	snap->sweeps = prev ? prev->sweeps + 1 : 0;
	sweepreq_reset(d);
	d->local_node = NO_NODE;
	d->nsm_lids = 0;
	d->nomem = false;
	d->unlinked = 0;
	if (!sweepreq_enqueue(d, REQ_NODE_INFO, NO_NODE, 0, 0, NULL))
		return -ENOMEM;
	while (!d->nomem) {
		/* Every answer waiting first, then the window filled again in
		 * one burst: sending and answers interleave less (under the
		 * simulator each send holds umad2sim's one mutex through its
		 * write, which its receiving thread waits for: a futex and two
		 * context switches a MAD; a fifth less of the daemon's CPU a
		 * sweep on the 4k tree, tests/bench/README.md). */
		if (!window_answered(d->window))
			pump(d);
		if (!window_inflight(d->window) && !d->qlen) {
			if (ends == 4)
				break;
			if (sweep_end(d, ends++) < 0)
				d->nomem = true;
			continue;
		}
		r = next_answer(d);
		if (r == -ETIMEDOUT) {
			/* What is missing counts as timed out; the rest stands. */
			d->snap->stats.timeouts += window_inflight(d->window);
			r = 0;
			break;
		}
		if (r < 0)
			break;
	}
	window_end(d->window);
	sweepkeep_finish(d);
	sweeplft_changes(d);
	finish_sms(snap);
	rates_take_base(snap, prev);
	sweepkeep_drop(d);
	d->prev = NULL;
	return r < 0 ? r : d->nomem ? -ENOMEM : 0;
}
