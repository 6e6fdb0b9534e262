/* A fabric port's pkeys/ (pkeyfiles.h): nodes/0xGUID/ports/N/pkeys/IDX,
 * entry IDX of the port's PKeyTable as the current snapshot has it, in
 * the local tree's format ("0xffff").  The entries are made at the
 * directory's first use once the snapshot has the port's table (as many
 * as it has); each open reads the current snapshot; no MADs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "umadfs/fabric/files/pkeyfiles.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/watch/sweeper.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"

/* The owner of a pkeys/ directory and its entries (a reference each). */
struct pkey_dir {
	int refs; /* atomic */
	uint64_t guid;
	unsigned port;
};

static void dir_get(struct node *n)
{
	__atomic_add_fetch(&((struct pkey_dir *)n->owner)->refs, 1, __ATOMIC_RELAXED);
}

static void dir_put(struct node *n)
{
	struct pkey_dir *pd = n->owner;

	if (!__atomic_sub_fetch(&pd->refs, 1, __ATOMIC_ACQ_REL))
		free(pd);
}

/* The port's table in s, or NULL. */
static const struct fab_pkeys *table_of(const struct fab_snap *s,
					const struct pkey_dir *pd)
{
	const struct fab_node *fn = s ? fabsnap_find(s, pd->guid) : NULL;

	return fn && pd->port <= fn->nports ? fn->ports[pd->port].pkeys : NULL;
}

static int pkey_show(struct node *n, char *buf, size_t cap)
{
	struct fab_snap *s = sweeper_snapshot();
	const struct fab_pkeys *t = table_of(s, n->owner);
	int r;

	if (!t || t->pending)
		r = -ENODATA; /* not read (whole) by the last sweep that read it */
	else if ((unsigned)n->pkey >= t->n)
		r = -ENOENT;
	else
		r = snprintf(buf, cap, "0x%04x\n", t->key[n->pkey]);
	fabsnap_put(s);
	return r;
}

static void pkey_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_open_late(req, n, fi, pkey_show);
}

static const struct node_ops pkey_ops = { .show = pkey_show, .open = pkey_open };

/* The entries, once the snapshot has the port's table (tree write lock
 * held); else nothing yet, and the next use tries again. */
static int pkeys_populate(struct node *dir)
{
	struct fab_snap *s = sweeper_snapshot();
	const struct fab_pkeys *t = table_of(s, dir->owner);
	unsigned count = t && !t->pending ? t->n : 0;
	char name[8];
	int r = count ? 0 : -ENODATA;

	fabsnap_put(s);
	for (unsigned i = 0; r == 0 && i < count; i++) {
		struct node *c;

		snprintf(name, sizeof(name), "%u", i);
		c = tree_add(dir, name, S_IFREG | 0444, &pkey_ops, dir->owner, (int)i);
		if (!c)
			r = -ENOMEM;
		else
			tree_hold_owner(c, dir_get, dir_put);
	}
	return r;
}

static const struct dir_ops pkeys_dops = { .populate = pkeys_populate };

int pkeyfiles_port(struct node *dir, uint64_t guid, unsigned port)
{
	struct pkey_dir *pd = calloc(1, sizeof(*pd));
	struct node *n;

	if (!pd)
		return -ENOMEM;
	pd->guid = guid;
	pd->port = port;
	n = tree_add(dir, "pkeys", S_IFDIR | 0555, NULL, pd, 0);
	if (!n) {
		free(pd);
		return -ENOMEM;
	}
	n->dops = &pkeys_dops;
	n->lazy = true;
	tree_hold_owner(n, dir_get, dir_put);
	return 0;
}
