/* A sweep's PKeyTables (discover_priv.h): which ports' tables are read
 * and which are the snapshot before's, shared; their blocks asked and
 * answered.
 *
 * Partition tables change only when the SM sets them: as it brings a port
 * up (the PortState moves), gives it a LID, or is told of new partitions.
 * Once discovery is over, a port's table is read when the snapshot before
 * has none for it, its PortState or LID is not what it was when its table
 * was read, its table's length changed, this process sent the node a
 * PKeyTable Set since the sweep before (sweepsets.c), or it is due
 * (PKEYS_MAX_MS after it was read, brought forward by up to half of it by
 * GUID); otherwise
 * the snapshot before's is shared.  So a table the SM changes on a port
 * whose state and LID stay shows within PKEYS_MAX_MS.  The ports read:
 * every port of a switch (its external ports when it has partition
 * enforcement: SwitchInfo PartitionEnforcementCap), a CA's port the sweep
 * reaches it by (the route to another port of a CA is through that
 * port). */
#include <errno.h>
#include <stdlib.h>

#include <infiniband/mad.h>

#include "umadfs/fabric/snapshot/fabsnap.h"

#include "discover_priv.h"

#define PKEYS_MAX_MS 300000

static bool askable(const struct discover *d, uint32_t ni, unsigned p)
{
	const struct fab_node *n = &d->snap->nodes[ni];
	const struct fab_port *fp = &n->ports[p];

	if (!fp->has_info || !fabsnap_pkeys_len(n, p))
		return false;
	if (n->type == FAB_SWITCH)
		return true;
	return p == (ni == d->local_node ? d->local_port : n->entry_port);
}

/* Whether the snapshot before's table of port p stands in this sweep. */
static bool pkeys_stand(const struct discover *d, const struct fab_node *n,
			unsigned p, const struct fab_node *was)
{
	const struct fab_pkeys *t;

	if (!was || p > was->nports || !(t = was->ports[p].pkeys) ||
	    sweepsets_touched(d, n->guid, IB_ATTR_PKEY_TBL))
		return false;
	if (t->pending || t->n != fabsnap_pkeys_len(n, p) ||
	    t->state != n->ports[p].state || t->lid != n->ports[p].lid)
		return false;
	return d->now_ms < sweepreq_due_ms(n->guid + p, t->read_ms, PKEYS_MAX_MS);
}

/* Port p's table: its blocks asked, 0 until answered. */
static int ask_pkeys(struct discover *d, uint32_t ni, unsigned p)
{
	struct fab_node *n = &d->snap->nodes[ni];
	struct fab_pkeys *t = fabsnap_pkeys_new(fabsnap_pkeys_len(n, p), d->now_ms);
	unsigned blocks;

	if (!t)
		return -ENOMEM;
	t->state = n->ports[p].state;
	t->lid = n->ports[p].lid;
	n->ports[p].pkeys = t;
	blocks = (t->n + FAB_PKEY_BLOCK - 1u) / FAB_PKEY_BLOCK;
	t->pending = (uint16_t)blocks;
	for (unsigned b = 0; b < blocks; b++) {
		struct req *q = sweepreq_enqueue(d, REQ_PKEYS, ni, p, n->hops, n->path);

		if (!q)
			return -ENOMEM;
		q->block = (uint16_t)b;
	}
	return 0;
}

int sweeppkeys_ask(struct discover *d)
{
	for (uint32_t ni = 0; ni < d->snap->nnodes; ni++) {
		struct fab_node *n = &d->snap->nodes[ni];
		const struct fab_node *was = d->ns[ni].was;

		for (unsigned p = 0; p <= n->nports; p++) {
			if (!askable(d, ni, p) || n->ports[p].pkeys)
				continue;
			if (pkeys_stand(d, n, p, was)) {
				n->ports[p].pkeys = was->ports[p].pkeys;
				fabsnap_pkeys_get(n->ports[p].pkeys);
			} else if (ask_pkeys(d, ni, p) < 0) {
				return -ENOMEM;
			}
		}
	}
	return 0;
}

unsigned sweeppkeys_attrmod(const struct discover *d, const struct req *r)
{
	/* A switch's PKeyTable names its port in bits 16-31. */
	bool sw = d->snap->nodes[r->node].type == FAB_SWITCH;

	return r->block | (sw ? (unsigned)r->port << 16 : 0u);
}

void sweeppkeys_block(struct discover *d, const struct req *r, const uint8_t *data)
{
	struct fab_port *fp = &d->snap->nodes[r->node].ports[r->port];
	uint16_t *key;

	if (!fp->pkeys)
		return; /* a block lost earlier dropped it */
	if (!data) {
		fabsnap_pkeys_put(fp->pkeys);
		fp->pkeys = NULL;
		return;
	}
	/* 32 PKeys of 16 bits, big-endian: libibmad names no field for them
	 * (smpquery's pkeys reads them so too). */
	fp->pkeys->pending--;
	key = fp->pkeys->key + (size_t)r->block * FAB_PKEY_BLOCK;
	for (unsigned i = 0; i < FAB_PKEY_BLOCK; i++)
		key[i] = (uint16_t)(data[2 * i] << 8 | data[2 * i + 1]);
}
