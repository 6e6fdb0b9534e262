/* A refresh (refresh.h): the snapshot before, with just the nodes a trap
 * or an action named asked again - their ports' PortInfo by directed
 * route, and across a port that came up, the node there - instead of a
 * sweep.  A link down is unlinked at both ends, a node no link reaches
 * any more leaves the snapshot, a CA found across a new link joins it; a
 * switch found so asks for a sweep.  Counters, forwarding tables, SMs and
 * descriptions are the snapshot's before (a description is asked again
 * for a node whose trap 144 said it changed); a change that makes an SM
 * reroute is noted (reroute_ms), for the next sweep to read the tables. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/base/clock.h"
#include "umadfs/engine/engine.h"
#include "umadfs/engine/query.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/refresh.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/mad.h"

struct refresh {
	const struct refresh_via *via;
	struct fab_snap *snap;
	bool (*stopped)(void); /* the sweeps are stopping: give up */
	bool need_sweep;
	bool changed;     /* a port asked is not as the snapshot before had it */
	bool rerouted;    /* in a way that makes an SM reroute, or a node came */
	unsigned mads;
};

/* A directed-route Get to path[1..hops]: the SMP data in data. */
static int dr_get(struct refresh *rf, unsigned attr, unsigned mod, unsigned hops,
		  const uint8_t *path, uint8_t data[IB_SMP_DATA_SIZE])
{
	if (rf->stopped()) {
		rf->need_sweep = true; /* (none comes: the caller gives up) */
		return -ECANCELED;
	}
	rf->mads++;
	return rf->via->get(rf->via->ctx, attr, mod, hops, path, data);
}

int refresh_engine_get(void *engine, unsigned attr, unsigned mod, unsigned hops,
		       const uint8_t *path, uint8_t *data)
{
	return query_smp_route_get(engine, attr, mod, hops, path, data);
}

static struct fab_node *node_of(struct refresh *rf, uint64_t guid)
{
	return fabsnap_find(rf->snap, guid);
}

static int ask_port(struct refresh *rf, struct fab_node *n, unsigned p)
{
	uint8_t data[IB_SMP_DATA_SIZE];
	int r = dr_get(rf, IB_ATTR_PORT_INFO, p, n->hops, n->path, data);

	if (r == 0)
		fabsnap_read_port_info(n, p, data);
	return r;
}

static void unlink_port(struct refresh *rf, struct fab_node *n, unsigned p)
{
	struct fab_port *fp = &n->ports[p];
	struct fab_node *peer = node_of(rf, fp->peer_guid);

	if (peer && fp->peer_port <= peer->nports &&
	    peer->ports[fp->peer_port].peer_guid == n->guid) {
		struct fab_port *pp = &peer->ports[fp->peer_port];

		pp->peer_guid = 0;
		pp->peer_port = 0;
		pp->state = IB_LINK_DOWN; /* its end of a link that went */
		pp->phys_state = IB_PORT_PHYS_STATE_POLLING; /* as a port without a peer */
	}
	fp->peer_guid = 0;
	fp->peer_port = 0;
}

/* A CA new to the snapshot, found across port p of n (NodeInfo in data). */
static int add_ca(struct refresh *rf, uint64_t from, unsigned p, uint8_t *data,
		  const uint8_t *path, unsigned hops)
{
	unsigned lp = mad_get_field(data, 0, IB_NODE_LOCAL_PORT_F);
	uint8_t desc[IB_SMP_DATA_SIZE];
	struct fab_node *c = fabsnap_add_node_info(rf->snap, data);

	if (!c)
		return -ENOMEM;
	rf->rerouted = true;
	c->hops = (uint8_t)hops;
	c->entry_port = (uint8_t)lp;
	memcpy(c->path, path, FAB_PATH_MAX);
	if (dr_get(rf, IB_ATTR_NODE_DESC, 0, hops, path, desc) == 0)
		fabsnap_read_node_desc(c, desc);
	else
		rf->need_sweep = true; /* not an empty description: a sweep's */
	for (unsigned q = 1; q <= c->nports; q++)
		ask_port(rf, c, q);
	if (lp <= c->nports) {
		c->ports[lp].peer_guid = from;
		c->ports[lp].peer_port = (uint8_t)p;
	}
	return 0;
}

/* Port p of n is up without a peer: the node across it. */
static int follow(struct refresh *rf, uint64_t guid, unsigned p)
{
	struct fab_node *n = node_of(rf, guid), *there;
	uint8_t data[IB_SMP_DATA_SIZE], path[FAB_PATH_MAX];
	unsigned hops = n->hops + 1u, lp;
	uint64_t other;

	if (n->hops >= FAB_HOPS_MAX || (n->type != FAB_SWITCH && n->hops))
		return 0;
	memcpy(path, n->path, FAB_PATH_MAX);
	path[hops] = (uint8_t)p;
	if (dr_get(rf, IB_ATTR_NODE_INFO, 0, hops, path, data) < 0)
		return 0; /* nothing answers there (yet) */
	other = mad_get_field64(data, 0, IB_NODE_GUID_F);
	lp = mad_get_field(data, 0, IB_NODE_LOCAL_PORT_F);
	there = node_of(rf, other);
	if (!there) {
		if (mad_get_field(data, 0, IB_NODE_TYPE_F) != FAB_CA) {
			rf->need_sweep = true; /* a switch: what lies beyond */
			return 0;
		}
		if (add_ca(rf, guid, p, data, path, hops) < 0)
			return -ENOMEM;
		n = node_of(rf, guid); /* the array may have moved */
	} else if (lp <= there->nports) {
		there->ports[lp].peer_guid = guid;
		there->ports[lp].peer_port = (uint8_t)p;
		/* Its end, by the new route (its own may be longer). */
		if (dr_get(rf, IB_ATTR_PORT_INFO, lp, hops, path, data) == 0)
			fabsnap_read_port_info(there, lp, data);
		if (there->type == FAB_SWITCH)
			fabsnap_switch_ports(there);
	}
	n->ports[p].peer_guid = other;
	n->ports[p].peer_port = (uint8_t)lp;
	return 0;
}

/* Asks node guid's ports again (its description too if desc). */
static int refresh_node(struct refresh *rf, uint64_t guid, bool desc)
{
	struct fab_node *n = node_of(rf, guid);
	unsigned first = n->type == FAB_SWITCH ? 0 : 1, answered = 0;
	uint8_t data[IB_SMP_DATA_SIZE];

	if (desc && dr_get(rf, IB_ATTR_NODE_DESC, 0, n->hops, n->path, data) == 0)
		fabsnap_read_node_desc(n, data);
	for (unsigned p = first; p <= n->nports; p++) {
		n = node_of(rf, guid);
		if (n->type == FAB_CA && n->hops && !n->ports[p].has_info &&
		    p != n->entry_port)
			continue;
		struct fab_port was = n->ports[p];
		int err = ask_port(rf, n, p);

		if (err == -ETIMEDOUT || err == -ECANCELED) {
			/* Not where it was, or stopping: a sweep will tell,
			 * rather than a timeout for each of its ports. */
			rf->need_sweep = true;
			return 0;
		}
		if (err < 0)
			continue;
		answered++;
		rf->changed |= was.state != n->ports[p].state ||
			       was.phys_state != n->ports[p].phys_state;
		rf->rerouted |= fabsnap_port_reroutes(n, p, &was);
		if (!p)
			continue;
		if (n->ports[p].state <= IB_LINK_DOWN && n->ports[p].peer_guid)
			unlink_port(rf, n, p);
		else if (n->ports[p].state > IB_LINK_DOWN && !n->ports[p].peer_guid &&
			 follow(rf, guid, p) < 0)
			return -ENOMEM;
	}
	n = node_of(rf, guid);
	if (n->type == FAB_SWITCH)
		fabsnap_switch_ports(n);
	if (!answered)
		rf->need_sweep = true; /* the node is not where it was */
	return 0;
}

/* -- what is still reached, and by which route ----------------------------- */

/* Breadth first from the local node over the links: each node reached
 * gets its shortest directed route; the others are left with hops 0xff. */
static int reroute(struct fab_snap *s)
{
	uint32_t *queue = malloc(s->nnodes * sizeof(*queue));
	uint8_t *seen = calloc(s->nnodes, 1);
	size_t head = 0, tail = 0;
	struct fab_node *local = fabsnap_find(s, s->local_guid);

	if (!queue || !seen || !local) {
		free(queue);
		free(seen);
		return -ENOMEM;
	}
	local->hops = 0;
	seen[local - s->nodes] = 1;
	queue[tail++] = (uint32_t)(local - s->nodes);
	while (head < tail) {
		struct fab_node *n = &s->nodes[queue[head++]];

		for (unsigned p = 1; p <= n->nports; p++) {
			struct fab_node *m = fabsnap_find(s, n->ports[p].peer_guid);
			size_t mi;

			if (!m || (n->type != FAB_SWITCH && n != local) || n->hops >= FAB_HOPS_MAX)
				continue;
			mi = (size_t)(m - s->nodes);
			if (seen[mi])
				continue;
			seen[mi] = 1;
			queue[tail++] = (uint32_t)mi;
			memcpy(m->path, n->path, FAB_PATH_MAX);
			m->hops = (uint8_t)(n->hops + 1u);
			m->path[m->hops] = (uint8_t)p;
			m->entry_port = n->ports[p].peer_port;
		}
	}
	for (size_t i = 0; i < s->nnodes; i++)
		if (!seen[i])
			s->nodes[i].hops = 0xff;
	free(queue);
	free(seen);
	return 0;
}

static bool reached(const struct fab_node *n, void *ctx)
{
	return n->hops != 0xff;
}

static int reroute(struct fab_snap *s);

/* Whether a node asked has a port the SM has yet to make Active: LinkUp,
 * Init or Armed, with a master SM to do it. */
static bool settling(const struct fab_snap *s, const struct refresh_ask *asks,
		     size_t nasks)
{
	for (size_t i = 0; s->sm_lid && i < nasks; i++) {
		const struct fab_node *n = refresh_find(s, &asks[i]);

		for (unsigned p = 1; n && p <= n->nports; p++)
			if (fabsnap_awaits_sm(&n->ports[p]))
				return true;
	}
	return false;
}

struct fab_snap *refresh_run(const struct refresh_via *via, const struct fab_snap *prev,
			     const struct refresh_ask *asks, size_t nasks,
			     bool (*stopped)(void), bool *need_sweep, unsigned *again_ms)
{
	struct refresh rf = { .via = via, .stopped = stopped };
	struct fab_snap *out = NULL;
	int r = 0;

	*need_sweep = false;
	*again_ms = 0;
	rf.snap = fabsnap_copy(prev, NULL, NULL);
	if (!rf.snap) {
		*need_sweep = true;
		return NULL;
	}
	for (size_t i = 0; i < nasks && r == 0 && !rf.need_sweep; i++) {
		const struct fab_node *n = refresh_find(rf.snap, &asks[i]);
		bool again = false;

		for (size_t k = 0; n && k < i && !again; k++)
			again = refresh_find(rf.snap, &asks[k]) == n; /* asked twice */
		if (n && n->hops == 0xff)
			continue; /* cut off by a change just refreshed: it goes */
		if (n && !again) {
			bool before = rf.changed;

			r = refresh_node(&rf, n->guid, asks[i].desc);
			/* The next nodes by the routes the change left. */
			if (r == 0 && rf.changed && !before)
				r = reroute(rf.snap);
		} else if (!n && !asks[i].gone) {
			rf.need_sweep = true; /* a node the snapshot lacks */
		}
	}
	if (r == 0 && !rf.need_sweep && !rf.mads) {
		/* Nothing was asked (the nodes named had left already). */
		fabsnap_put(rf.snap);
		return NULL;
	}
	if (r == 0 && !rf.need_sweep && reroute(rf.snap) == 0)
		out = fabsnap_copy(rf.snap, reached, NULL);
	fabsnap_put(rf.snap);
	if (!out) {
		*need_sweep = true;
		return NULL;
	}
	fabsnap_refresh_mads(out, rf.mads);
	if (rf.rerouted)
		out->reroute_ms = clock_now_ms();
	fabsnap_count(out);
	if (settling(out, asks, nasks))
		*again_ms = REFRESH_SETTLE_MS;
	else if (rf.changed)
		*again_ms = REFRESH_RECHECK_MS;
	return out;
}

const struct fab_node *refresh_find(const struct fab_snap *s,
				    const struct refresh_ask *a)
{
	if (a->guid) {
		const struct fab_node *n = fabsnap_find(s, a->guid);

		for (size_t i = 0; !n && i < s->nnodes; i++)
			for (unsigned p = 0; p <= s->nodes[i].nports; p++)
				if (s->nodes[i].ports[p].port_guid == a->guid)
					return &s->nodes[i];
		return n;
	}
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = 0; p <= n->nports; p++) {
			const struct fab_port *fp = &n->ports[p];
			unsigned last = fp->lid + (1u << (fp->lmc & 7)) - 1;

			if (fp->has_info && fp->lid && a->lid >= fp->lid && a->lid <= last)
				return n;
		}
	}
	return NULL;
}
