/* A sweep's SLtoVLMappingTables (discover_priv.h): which switches' tables
 * are asked, which are the snapshot before's, shared; their Gets asked
 * and answered.  Only SL 0's VL is kept (fab_sl2vl): the routing check
 * follows every route on SL 0, as ibdmchk does without a path-SL file.
 *
 * A switch's tables go with its LinearForwardingTable: a switch whose
 * table the sweep shares shares the snapshot before's SL-to-VL tables too,
 * unless this process sent it an SLtoVLMappingTable Set since the sweep
 * before (sweepsets.c); one whose table it reads has them asked again (the
 * SM sets both when it routes).  In two steps, so that a fabric on one VL costs one Get a
 * switch: first each such switch's probe, the table from its last Active
 * port to another switch to its first (a packet passing through, where a
 * dateline or a VL-changing engine maps SL 0 elsewhere); then, if some
 * switch's table (probe or shared) maps SL 0 off VL 0, every switch's
 * tables from each Active port to each Active port to a switch (the VL of
 * a channel to a CA never closes a cycle), those not yet read.  CA ports'
 * tables are not read: the channel out of a CA is in no cycle. */
#include <errno.h>

#include <infiniband/mad.h>

#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/mad/ibcodes.h"

#include "discover_priv.h"

static int ask(struct discover *d, uint32_t ni, unsigned in, unsigned out)
{
	struct fab_node *n = &d->snap->nodes[ni];
	struct req *q;

	if (n->sl2vl->vl[in * (n->nports + 1u) + out] != 0xff)
		return 0;
	q = sweepreq_enqueue(d, REQ_SL2VL, ni, out, n->hops, n->path);
	if (!q)
		return -ENOMEM;
	q->block = (uint16_t)in;
	n->sl2vl->vl[in * (n->nports + 1u) + out] = 0xfe; /* asked */
	n->sl2vl->pending++;
	d->snap->stats.sl2vl_mads++;
	return 0;
}

/* Switch ni's probe: its last Active port to a switch, to its first. */
static int probe(struct discover *d, uint32_t ni)
{
	struct fab_node *n = &d->snap->nodes[ni];
	unsigned first = 0, last = 0;

	for (unsigned p = 1; p <= n->nports; p++) {
		if (!fabsnap_port_active(d->snap, n, p, true))
			continue;
		if (!first)
			first = p;
		last = p;
	}
	n->sl2vl = fabsnap_sl2vl_new(n->nports);
	if (!n->sl2vl)
		return -ENOMEM;
	return first && last != first ? ask(d, ni, last, first) : 0;
}

static bool reads_tables(const struct discover *d, uint32_t ni)
{
	const struct fab_node *n = &d->snap->nodes[ni];

	return d->routes.on && n->type == FAB_SWITCH && n->lft;
}

/* Step 1: each switch with a table read, its probe; the rest share. */
static int step_probe(struct discover *d)
{
	for (uint32_t ni = 0; ni < d->snap->nnodes; ni++) {
		struct fab_node *n = &d->snap->nodes[ni];
		const struct fab_node *was = d->ns[ni].was;

		if (!reads_tables(d, ni) || n->sl2vl)
			continue;
		if (d->ns[ni].lft_shared && was && was->sl2vl &&
		    was->sl2vl->nports == n->nports && !was->sl2vl->pending &&
		    !sweepsets_touched(d, n->guid, IB_ATTR_SLVL_TABLE)) {
			n->sl2vl = was->sl2vl;
			fabsnap_sl2vl_get(n->sl2vl);
		} else if (probe(d, ni) < 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* Some switch's table maps SL 0 off VL 0. */
static bool many_vls(const struct discover *d)
{
	for (uint32_t ni = 0; ni < d->snap->nnodes; ni++) {
		const struct fab_sl2vl *t = d->snap->nodes[ni].sl2vl;
		size_t n = t ? (t->nports + 1u) * (t->nports + 1u) : 0;

		for (size_t i = 0; i < n; i++)
			if (t->vl[i] != 0 && t->vl[i] < 0xfe)
				return true;
	}
	return false;
}

/* Step 2: every switch's pairs not read yet (a shared table not full
 * is replaced by one of this sweep's). */
static int step_full(struct discover *d)
{
	for (uint32_t ni = 0; ni < d->snap->nnodes; ni++) {
		struct fab_node *n = &d->snap->nodes[ni];

		if (!n->sl2vl || n->sl2vl->full)
			continue;
		if (d->ns[ni].was && n->sl2vl == d->ns[ni].was->sl2vl) {
			fabsnap_sl2vl_put(n->sl2vl);
			n->sl2vl = NULL;
			if (probe(d, ni) < 0)
				return -ENOMEM;
		}
		n->sl2vl->full = true;
		for (unsigned in = 1; in <= n->nports; in++)
			for (unsigned out = 1; out <= n->nports; out++)
				if (fabsnap_sl2vl_pair(d->snap, n, in, out) &&
				    ask(d, ni, in, out) < 0)
					return -ENOMEM;
	}
	return 0;
}

int sweepsl2vl_ask(struct discover *d, unsigned step)
{
	if (step == 0)
		return step_probe(d);
	return many_vls(d) ? step_full(d) : 0;
}

void sweepsl2vl_answer(struct discover *d, const struct req *r, const uint8_t *data)
{
	struct fab_sl2vl *t = d->snap->nodes[r->node].sl2vl;
	uint64_t map;

	if (!t)
		return;
	t->pending--;
	if (!data) {
		/* Unanswered: SL 0 taken to stay on VL 0 there. */
		t->vl[r->block * (t->nports + 1u) + r->port] = 0xff;
		return;
	}
	/* SLtoVLMappingTable: 16 VLs of 4 bits, SL 0's the highest. */
	map = mad_get_field64((void *)data, 0, IB_SLTOVL_MAPPING_TABLE_F);
	t->vl[r->block * (t->nports + 1u) + r->port] = (uint8_t)(map >> 60 & 0xf);
}
