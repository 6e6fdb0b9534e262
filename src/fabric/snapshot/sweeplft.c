/* A sweep's forwarding tables (discover_priv.h): when a switch's
 * LinearForwardingTable is read and when the snapshot before's is shared
 * instead, its blocks asked and answered, and the changes a sweep sees
 * that make an SM reroute (docs/files.md, "What a sweep asks").
 *
 * A switch's table is read when the snapshot before has none for it, its
 * LinearFDBTop changed, the table was read before the last rerouting
 * change the view saw had settled (routes.settle_ms after it), it is due
 * (routes.max_age_ms after it was read, brought forward by up to half of
 * it by GUID), this process sent it a LinearForwardingTable Set since the
 * sweep before (sweepsets.c), or this sweep reads every table: it saw such a change
 * itself, or the judgement of the sweep before found a route_* problem.
 * Otherwise the snapshot before's table is shared, and read after all if
 * a change shows later in the sweep. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/mad/ibcodes.h"

#include "discover_priv.h"

/* Whether t, the snapshot before's table of node was, stands in this
 * sweep for a table of top. */
static bool lft_stands(const struct discover *d, const struct fab_node *was,
		       const struct fab_lft *t, unsigned top)
{
	int64_t reroute = d->snap->reroute_ms;

	if (d->lft_all || t->top != top)
		return false;
	if (reroute && t->read_ms < reroute + (int64_t)d->routes.settle_ms)
		return false; /* read while the SM may have been rerouting */
	return d->now_ms < sweepreq_due_ms(was->guid, t->read_ms, d->routes.max_age_ms);
}

/* Switch ni's table: blocks 0 .. top / 64 asked, 255 until answered. */
static int ask_lft(struct discover *d, uint32_t ni, unsigned top)
{
	struct fab_node *n = &d->snap->nodes[ni];
	unsigned blocks = top / IB_SMP_DATA_SIZE + 1;

	n->lft = fabsnap_lft_new(top, d->now_ms);
	if (!n->lft)
		return -ENOMEM;
	d->snap->stats.lfts_read++;
	for (unsigned b = 0; b < blocks; b++) {
		struct req *q = sweepreq_enqueue(d, REQ_LFT, ni, 0, n->hops, n->path);

		if (!q)
			return -ENOMEM;
		q->block = (uint16_t)b;
	}
	return 0;
}

int sweeplft_switch(struct discover *d, uint32_t ni, unsigned top)
{
	struct fab_node *n = &d->snap->nodes[ni];
	const struct fab_node *was = d->ns[ni].was;

	if (!d->routes.on || n->lft)
		return 0;
	if (top > IB_LID_UCAST_END_HO)
		top = IB_LID_UCAST_END_HO;
	if (was && was->lft && !sweepsets_touched(d, n->guid, IB_ATTR_LINEARFORWTBL) &&
	    lft_stands(d, was, was->lft, top)) {
		n->lft = was->lft;
		fabsnap_lft_get(n->lft);
		d->ns[ni].lft_shared = true;
		return 0;
	}
	return ask_lft(d, ni, top);
}

void sweeplft_block(struct discover *d, const struct req *r, uint8_t *data)
{
	struct fab_node *n = &d->snap->nodes[r->node];

	if (!n->lft)
		return; /* a block lost earlier dropped it */
	if (data) {
		mad_get_array(data, 0, IB_LINEAR_FORW_TBL_F,
			      n->lft->port + (size_t)r->block * IB_SMP_DATA_SIZE);
		return;
	}
	fabsnap_lft_put(n->lft);
	n->lft = NULL;
}

int sweeplft_reroute(struct discover *d)
{
	struct fab_snap *s = d->snap;

	s->reroute_ms = d->now_ms;
	if (d->lft_all)
		return 0;
	d->lft_all = true;
	for (uint32_t i = 0; i < s->nnodes; i++) {
		struct fab_node *n = &s->nodes[i];
		unsigned top;

		if (!d->ns[i].lft_shared)
			continue;
		top = n->lft->top;
		fabsnap_lft_put(n->lft);
		n->lft = NULL;
		d->ns[i].lft_shared = false;
		if (ask_lft(d, i, top) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Whether the master SM is another than prev's (the local port names
 * another, or another answers there), or the same restarted (its
 * ActCount went back).  A master that did not answer this time is no
 * change: the traps' checks ask a sweep when it is lost. */
static bool master_changed(const struct fab_snap *prev, const struct fab_snap *s)
{
	const struct fab_sm *a = fabsnap_master(prev), *b = fabsnap_master(s);

	if (prev->sm_lid != s->sm_lid)
		return true;
	return a && b && (a->guid != b->guid || b->act_count < a->act_count);
}

/* Whether forwarding table t says what old says (t == old: shared). */
static bool lft_same(const struct fab_lft *t, const struct fab_lft *old)
{
	if (t == old)
		return true;
	return t && old && t->top == old->top &&
	       !memcmp(t->port, old->port, (t->top / 64u + 1u) * 64u);
}

/* Whether SL-to-VL tables t give the routing check what old gives: each
 * pair's VL for SL 0 (fabsnap_sl2vl_vl()), and no SL's map read for the
 * pairs' SLs (pathsl.c) that t would not have. */
static bool sl2vl_same(const struct fab_sl2vl *t, const struct fab_sl2vl *old)
{
	if (t == old)
		return true;
	if (!t || !old || t->nports != old->nports || old->maps)
		return false;
	for (unsigned in = 0; in <= t->nports; in++)
		for (unsigned out = 0; out <= t->nports; out++)
			if (fabsnap_sl2vl_vl(t, in, out) != fabsnap_sl2vl_vl(old, in, out))
				return false;
	return true;
}

void sweeplft_changes(struct discover *d)
{
	struct fab_snap *s = d->snap;

	s->stats.tables_changed = 0;
	for (uint32_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i], *was = d->ns[i].was;

		if (n->type != FAB_SWITCH)
			continue;
		if (!lft_same(n->lft, was ? was->lft : NULL) ||
		    !sl2vl_same(n->sl2vl, was ? was->sl2vl : NULL))
			s->stats.tables_changed++;
	}
}

int sweeplft_finish(struct discover *d)
{
	const struct fab_snap *prev = d->prev;
	bool changed = false;

	if (!prev || !d->snap->nnodes)
		return 0; /* the first sweep: nothing to compare */
	/* After a sweep that did not reach the fabric the view was blind. */
	changed = !prev->ok || master_changed(prev, d->snap);
	for (size_t i = 0; i < prev->nnodes && !changed; i++)
		changed = !fabsnap_find(d->snap, prev->nodes[i].guid);
	return changed ? sweeplft_reroute(d) : 0;
}
