/* A sweep's view of this process's own SMP Sets (engine/setlog.h): the
 * nodes the Sets sent since the sweep before went to, found on the
 * snapshot before (a LID-routed Set by its LID, a directed one by
 * following its path over that snapshot's links from this sweep's port),
 * so that the tables they may have changed are read again rather than
 * shared (sweeplft.c, sweeppkeys.c).  A Set whose node cannot be found
 * (sent by another port, through a port the snapshot knows no link of, or
 * lost from the log) counts for every node. */
#include <infiniband/mad.h>

#include "umadfs/engine/setlog.h"
#include "umadfs/fabric/snapshot/fabsnap.h"

#include "discover_priv.h"

/* The node of prev with an endport whose LIDs hold lid, or NULL. */
static const struct fab_node *node_of_lid(const struct fab_snap *prev, unsigned lid)
{
	const struct fab_node *n = NULL;

	return fabsnap_find_lid(prev, lid, &n) ? n : NULL;
}

/* The node at the end of e's directed route from prev's local node, or
 * NULL. */
static const struct fab_node *node_of_path(const struct discover *d,
					   const struct setlog_entry *e)
{
	const struct fab_snap *prev = d->prev;
	const struct fab_node *n = fabsnap_find(prev, prev->local_guid);

	if (e->engine != d->engine || e->dr_lids || e->hops >= SETLOG_PATH_MAX)
		return NULL;
	for (unsigned i = 1; n && i <= e->hops; i++) {
		const struct fab_node *next = NULL;

		if (e->path[i] > n->nports ||
		    !fabsnap_peer(prev, &n->ports[e->path[i]], &next))
			return NULL;
		n = next;
	}
	return n;
}

static void add_target(struct discover *d, uint64_t guid, uint16_t attr)
{
	for (unsigned i = 0; i < d->nset_targets; i++)
		if (d->set_targets[i].guid == guid && d->set_targets[i].attr == attr)
			return;
	d->set_targets[d->nset_targets++] = (struct set_target){ guid, attr };
}

void sweepsets_take(struct discover *d)
{
	static struct setlog_entry sets[SETLOG_MAX]; /* the sweep thread's */
	bool lost;
	unsigned n = setlog_since(&d->set_cursor, sets, &lost);

	d->nset_targets = 0;
	if (!d->prev)
		return; /* every table is read */
	if (lost)
		add_target(d, 0, 0);
	for (unsigned i = 0; i < n; i++) {
		const struct fab_node *to = sets[i].dlid ?
			node_of_lid(d->prev, sets[i].dlid) : node_of_path(d, &sets[i]);

		add_target(d, to ? to->guid : 0, sets[i].attr);
	}
}

bool sweepsets_touched(const struct discover *d, uint64_t guid, unsigned attr)
{
	for (unsigned i = 0; i < d->nset_targets; i++) {
		const struct set_target *t = &d->set_targets[i];

		if ((!t->guid || t->guid == guid) && (!t->attr || t->attr == attr))
			return true;
	}
	return false;
}
