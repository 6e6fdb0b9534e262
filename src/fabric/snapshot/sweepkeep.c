/* What a sweep takes of a node from the snapshot before
 * (discover_priv.h): a node tracked with prev's node of its GUID and
 * NodeInfo; its NodeDescription, ClassPortInfo (and, without forwarding
 * tables, SwitchInfo) kept until due; and, while light sweeps guard the
 * view, a CA of one port at the other end of a switch port whose link
 * stands as the snapshot before had it, taken whole - NodeInfo,
 * NodeDescription, PortInfo - without a MAD, and with it that switch
 * port's PortInfo (the light sweeps ask that port, the link's nearer
 * end, within their cycle, and refresh its node when it changed): only
 * the CA's counters are asked.  Three Gets a CA fewer: on a fabric of
 * thousands of HCAs, two fifths of a repeated sweep.
 *
 * What the sweep still checks: a kept CA behind a kept switch port has
 * its PortCounters asked first, once (a probe of the link: a Get lost in
 * a link gone down is counted as discarded at the switch port, so one,
 * not one per try); a kept CA whose PMA does not answer has its kept
 * switch port's PortInfo asked, and its own when that port still stands
 * (its SM may have given it another LID: the counters then asked there);
 * a kept CA reached through another switch port (its cable moved) has its
 * kept one asked.  A kept port found no longer Active loses the link, and
 * a CA left without one leaves the snapshot at the sweep's end.
 *
 * What that could miss is a CA exchanged for another while its link was
 * Active at both sweeps, unseen by the guard (its Reports lost and the
 * cable out for less than a light sweep's cycle); so a CA is asked again
 * when its LinkDownedCounter or its switch port's moved, when its PMA did
 * not answer, and in any case when its description is due (STATIC_MAX_MS,
 * spread by GUID).  docs/files.md, "What a sweep asks". */
#include <errno.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/base/array.h"
#include "umadfs/mad/ibcodes.h"

#include "discover_priv.h"

int sweepkeep_track(struct discover *d, struct fab_node *n, const struct fab_node *was)
{
	size_t ni = (size_t)(n - d->snap->nodes);

	if (ARRAY_GROW(d->ns, d->ns_cap, ni + 1, 256) < 0)
		return -ENOMEM; /* the node stays, unasked: the sweep ends ENOMEM */
	d->ns[ni] = (struct nstate){ .was = was };
	return 0;
}

/* Whether was's NodeDescription and ClassPortInfo still stand for the node
 * reached at its port lp: not due, and (a CA) that port was Active, since a
 * host that booted since may have set another description. */
static bool static_fresh(const struct discover *d, const struct fab_node *was,
			 unsigned lp)
{
	if (d->now_ms >= sweepreq_due_ms(was->guid, was->static_ms, STATIC_MAX_MS))
		return false;
	return was->type == FAB_SWITCH ||
	       (lp <= was->nports && was->ports[lp].state == IB_LINK_ACTIVE);
}

int sweepkeep_static(struct discover *d, uint32_t ni, unsigned lp)
{
	struct fab_node *n = &d->snap->nodes[ni];
	const struct fab_node *was = d->ns[ni].was;
	bool fresh = was && static_fresh(d, was, lp);

	/* SwitchInfo: its LinearFDBTop (which grows with the LIDs the SM
	 * hands out) for the forwarding table, read at every sweep with
	 * fabric_routes; its EnhancedPort0 for the ports ibqueryerrors
	 * checks. */
	if (n->type == FAB_SWITCH && (!fresh || d->routes.on) &&
	    sweepreq_ask(d, REQ_SWITCH_INFO, ni, 0, n->hops, n->path) < 0)
		return -ENOMEM;
	if (!fresh) {
		n->static_ms = d->now_ms;
		return sweepreq_ask(d, REQ_NODE_DESC, ni, 0, n->hops, n->path);
	}
	n->static_ms = was->static_ms;
	n->enhanced_port0 = was->enhanced_port0;
	n->enforce_cap = was->enforce_cap;
	n->has_cpi = was->has_cpi;
	n->pma_capmask = was->pma_capmask;
	d->ns[ni].cpi = was->has_cpi ? CPI_KNOWN : CPI_NONE;
	if (!was->has_desc)
		return sweepreq_ask(d, REQ_NODE_DESC, ni, 0, n->hops, n->path);
	memcpy(n->desc, was->desc, sizeof(n->desc));
	n->has_desc = true;
	return 0;
}

/* The link at a switch port stands: Active now and in prev, at the same
 * physical state, width and speed. */
static bool link_stands(const struct fab_port *now, const struct fab_port *was)
{
	return was->has_info && now->state == IB_LINK_ACTIVE &&
	       was->state == IB_LINK_ACTIVE && now->phys_state == was->phys_state &&
	       now->width == was->width && now->speed == was->speed &&
	       now->ext_speed == was->ext_speed;
}

/* Whether prev had ca at switch sw's port sp (by whatever route it
 * reached them), ca's one port Active with a LID and no SM (whose SMInfo
 * a sweep asks), at the width and speed sw's port has now (both ends of
 * a link have them: a refresh since, of the switch alone, may have found
 * the link trained down). */
static bool found_there(const struct fab_node *sw, unsigned sp,
			const struct fab_node *ca)
{
	const struct fab_port *cp;

	if (ca->type != FAB_CA || ca->nports != 1)
		return false;
	cp = &ca->ports[1];
	return cp->has_info && cp->state == IB_LINK_ACTIVE && cp->lid &&
	       cp->peer_guid == sw->guid && cp->peer_port == sp &&
	       !(cp->cap_mask & IB_PORT_CAP_IS_SM) &&
	       cp->width == sw->ports[sp].width && cp->speed == sw->ports[sp].speed;
}

/* prev's CA at the other end of switch si's port sp, if it may be taken
 * unasked; else NULL. */
static const struct fab_node *keepable(const struct discover *d, uint32_t si,
				       unsigned sp)
{
	const struct fab_node *sw = &d->snap->nodes[si], *was = d->ns[si].was, *ca;

	if (!d->keep_cas || !was || sp > was->nports ||
	    d->snap->sm_lid != d->prev->sm_lid ||
	    !link_stands(&sw->ports[sp], &was->ports[sp]) || !was->ports[sp].peer_guid)
		return NULL;
	ca = fabsnap_find(d->prev, was->ports[sp].peer_guid);
	if (!ca || ca->recheck || !ca->has_desc || !found_there(sw, sp, ca) ||
	    fabsnap_find(d->snap, ca->guid) ||
	    sweepsets_touched(d, ca->guid, IB_ATTR_PORT_INFO) || !static_fresh(d, ca, 1))
		return NULL;
	return ca;
}

int sweepkeep_ca(struct discover *d, uint32_t si, unsigned sp)
{
	const struct fab_node *was = keepable(d, si, sp);
	struct fab_node *n, *sw;
	uint32_t ni;

	if (!was)
		return 0;
	n = fabsnap_add_found(d->snap, was);
	if (!n || sweepkeep_track(d, n, was) < 0)
		return -ENOMEM;
	ni = (uint32_t)(n - d->snap->nodes);
	sw = &d->snap->nodes[si]; /* (after the add: the nodes may have moved) */
	n->hops = (uint8_t)(sw->hops + 1);
	memcpy(n->path, sw->path, FAB_PATH_MAX);
	n->path[n->hops] = (uint8_t)sp;
	n->entry_port = 1;
	n->ports[1].asked = true;
	n->ports[1].peer_guid = sw->guid;
	n->ports[1].peer_port = (uint8_t)sp;
	sw->ports[sp].peer_guid = n->guid;
	sw->ports[sp].peer_port = 1;
	d->ns[ni].kept = true;
	d->ns[ni].probe = sw->ports[sp].kept;
	d->snap->stats.cas_kept++;
	if (sweepkeep_static(d, ni, 1) < 0 ||
	    (fabsnap_pma_lid(n, 1) && sweeppma_start(d, ni, 1) < 0))
		return -ENOMEM;
	return 1;
}

int sweepkeep_port(struct discover *d, uint32_t si, unsigned sp)
{
	struct fab_node *sw = &d->snap->nodes[si];
	const struct fab_node *was = d->ns[si].was;
	struct fab_port saved;
	int r;

	if (!d->keep_cas || !was || !sp || sp > was->nports || sp == sw->entry_port ||
	    sw->hops >= FAB_HOPS_MAX || !was->ports[sp].peer_guid ||
	    sweepsets_touched(d, sw->guid, IB_ATTR_PORT_INFO))
		return 0;
	saved = sw->ports[sp];
	fabsnap_take_port_info(&sw->ports[sp], &was->ports[sp]);
	sw->ports[sp].kept = true;
	r = sweepkeep_ca(d, si, sp);
	sw = &d->snap->nodes[si]; /* (the CA's add may have moved the nodes) */
	if (r == 0) {
		sw->ports[sp] = saved;
		return 0;
	}
	d->snap->stats.ports_kept++;
	return r;
}

/* Switch si's kept port sp asked after all, once. */
static int ask_kept_port(struct discover *d, uint32_t si, unsigned sp)
{
	struct fab_node *sw = &d->snap->nodes[si];

	if (!sw->ports[sp].kept || sw->ports[sp].asked)
		return 0;
	sw->ports[sp].asked = true;
	return sweepreq_ask(d, REQ_PORT_INFO, si, sp, sw->hops, sw->path);
}

/* The kept CA behind switch port swp no longer linked to it: its port's
 * PortInfo not known (asked again if the sweep reaches it). */
static void unlink_kept(struct discover *d, struct fab_port *swp)
{
	struct fab_node *ca = fabsnap_find(d->snap, swp->peer_guid);

	if (ca && swp->peer_port <= ca->nports) {
		struct fab_port *cp = &ca->ports[swp->peer_port];

		cp->peer_guid = 0;
		cp->peer_port = 0;
		cp->has_info = cp->asked = false;
	}
	swp->peer_guid = 0;
	swp->peer_port = 0;
	d->unlinked++;
}

/* The kept switch port at the other end of kept CA ni's port 1, or -1. */
static int64_t kept_port_of(const struct discover *d, uint32_t ni, unsigned *sp)
{
	const struct fab_node *n = &d->snap->nodes[ni];
	const struct fab_node *sw = fabsnap_find(d->snap, n->ports[1].peer_guid);

	*sp = n->ports[1].peer_port;
	if (!sw || *sp > sw->nports || !sw->ports[*sp].kept)
		return -1;
	return sw - d->snap->nodes;
}

int sweepkeep_silent(struct discover *d, const struct req *r)
{
	struct nstate *ns = &d->ns[r->node];
	const struct fab_node *n = &d->snap->nodes[r->node];
	int64_t si;
	unsigned sp;

	if (!ns->kept || ns->silent)
		return 0;
	ns->silent = true;
	if (ns->probe) { /* its counters asked again once its PortInfo is in */
		ns->probe = false;
		d->snap->nodes[r->node].ports[1].pma_asked = false;
	}
	/* Its switch port first, if that was kept: the link may be down (a
	 * Get sent into it is counted as discarded there). */
	si = kept_port_of(d, r->node, &sp);
	if (si >= 0)
		return ask_kept_port(d, (uint32_t)si, sp);
	return sweepreq_ask(d, REQ_PORT_INFO, r->node, 1, n->hops, n->path);
}

void sweepkeep_port_read(struct discover *d, const struct req *r)
{
	struct fab_port *p = &d->snap->nodes[r->node].ports[r->port];

	if (p->kept && p->peer_guid && p->state != IB_LINK_ACTIVE)
		unlink_kept(d, p);
}

int sweepkeep_port_ended(struct discover *d, const struct req *r)
{
	struct fab_node *sw = &d->snap->nodes[r->node];
	const struct fab_port *p = &sw->ports[r->port];
	const struct fab_node *ca;

	fabsnap_switch_ports(sw);
	/* Still linked (Active, or unanswered): the silent CA's PortInfo. */
	ca = p->peer_guid ? fabsnap_find(d->snap, p->peer_guid) : NULL;
	if (!ca || !d->ns[ca - d->snap->nodes].silent)
		return 0;
	return sweepreq_ask(d, REQ_PORT_INFO, (uint32_t)(ca - d->snap->nodes), 1,
			    ca->hops, ca->path);
}

int sweepkeep_found(struct discover *d, uint32_t ni, const struct req *r)
{
	struct fab_node *n;
	int64_t si;
	unsigned sp;

	if (!d->ns[ni].kept || r->node == NO_NODE)
		return 0;
	si = kept_port_of(d, ni, &sp);
	if (si < 0 || ((uint32_t)si == r->node && sp == r->port))
		return 0;
	/* Moved: its old switch port asked, it asked by the new route (and,
	 * silent, its counters at a new LID if its SM gave it one). */
	unlink_kept(d, &d->snap->nodes[si].ports[sp]);
	n = &d->snap->nodes[ni];
	n->hops = r->hops;
	memcpy(n->path, r->path, FAB_PATH_MAX);
	d->ns[ni].silent = true;
	return ask_kept_port(d, (uint32_t)si, sp);
}

void sweepkeep_port_info(struct discover *d, uint32_t ni, const struct fab_node *was)
{
	struct fab_node *n = &d->snap->nodes[ni];

	if (!d->ns[ni].silent || n->ports[1].lid == was->ports[1].lid)
		return;
	n->ports[1].pma_asked = false;
	n->pma_timeouts = 0; /* (all at the old LID; later ones: timed_out()) */
}

/* Port p's LinkDownedCounter is not was's, both answered. */
static bool downed_moved(const struct fab_port *p, const struct fab_port *was)
{
	return p->has_counters && was->has_counters && fabsnap_link_downed(p) != fabsnap_link_downed(was);
}

/* Whether kept CA n (prev's: was) must be asked by the next sweep. */
static bool recheck(const struct discover *d, const struct fab_node *n,
		    const struct fab_node *was)
{
	const struct fab_port *p = &n->ports[1];
	const struct fab_node *sw = fabsnap_find(d->snap, p->peer_guid);
	const struct fab_node *sw_was;

	if (!p->has_counters || downed_moved(p, &was->ports[1]) || !sw)
		return true;
	sw_was = d->ns[sw - d->snap->nodes].was;
	return sw_was && p->peer_port <= sw_was->nports &&
	       downed_moved(&sw->ports[p->peer_port], &sw_was->ports[p->peer_port]);
}

void sweepkeep_finish(struct discover *d)
{
	struct fab_snap *s = d->snap;

	if (d->nomem || !s->stats.cas_kept)
		return;
	for (size_t i = 0; i < s->nnodes; i++)
		if (d->ns[i].kept)
			s->nodes[i].recheck = d->ns[i].silent ||
					      recheck(d, &s->nodes[i], d->ns[i].was);
}

/* Whether node n is not a kept CA whose link went down in the sweep. */
static bool still_found(const struct fab_node *n, void *ctx)
{
	const struct discover *d = ctx;

	return !d->ns[n - d->snap->nodes].kept || n->ports[1].has_info ||
	       n->ports[1].peer_guid;
}

void sweepkeep_drop(struct discover *d)
{
	if (d->unlinked)
		fabsnap_drop(d->snap, still_found, d);
}
