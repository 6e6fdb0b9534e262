/* fabric/partitions/ (partfiles.h): a directory per partition the
 * endports' PKeyTables of the current snapshot name (0xPKEY, the PKey
 * without its membership bit), with `full` and `limited`, the endports
 * (a CA's port the view has the table of, a switch's port 0) that are
 * full or limited members, one a line.  The directories follow each new
 * snapshot (partfiles_update); each open makes its text from the current
 * one; no MADs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/fabric/files/partfiles.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/watch/sweeper.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"

#define PKEY_FULL 0x8000u   /* the membership bit */
#define PKEY_MASK 0x7fffu
#define PKEYS 0x8000u       /* the PKeys without the bit */

enum { FILE_FULL, FILE_LIMITED };

static struct node *parts_dir; /* fabric/partitions (tree lock) */

/* Whether table t has pkey (no bit) with the membership asked. */
static bool member(const struct fab_pkeys *t, unsigned pkey, bool full)
{
	for (unsigned i = 0; i < t->n; i++)
		if ((t->key[i] & PKEY_MASK) == pkey && !!(t->key[i] & PKEY_FULL) == full)
			return true;
	return false;
}

/* The lines of a partition's full or limited members in s. */
static char *members_text(const struct fab_snap *s, unsigned pkey, bool full,
			  size_t *len)
{
	char *text = NULL, desc[4 * FAB_DESC_LEN + 3];
	FILE *f = open_memstream(&text, len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = 0; p <= n->nports; p++) {
			const struct fab_pkeys *t = fabsnap_endport_pkeys(n, p);

			if (!t || !member(t, pkey, full))
				continue;
			fabsnap_quote(desc, sizeof(desc), n->desc);
			fprintf(f, "guid=0x%016" PRIx64 " port=%u lid=%u node_desc=%s\n",
				n->guid, p, n->ports[p].lid, desc);
		}
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void members_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct fab_snap *s = sweeper_snapshot();
	unsigned pkey = (unsigned)n->file >> 1;
	size_t len = 0;
	char *text = s ? members_text(s, pkey, !(n->file & 1), &len) : NULL;

	fabsnap_put(s);
	if (!text) {
		fuse_reply_err(req, s ? ENOMEM : ENOENT);
		return;
	}
	textfile_open_text(req, fi, text, len);
	free(text);
}

static const struct node_ops members_ops = {
	.open = members_open, .read = textfile_read, .release = textfile_release,
};

/* The PKeys the endports of s name, as a bitmap of PKEYS bits. */
static void pkeys_named(const struct fab_snap *s, uint8_t *named)
{
	memset(named, 0, PKEYS / 8);
	for (size_t i = 0; i < s->nnodes; i++)
		for (unsigned p = 0; p <= s->nodes[i].nports; p++) {
			const struct fab_pkeys *t = fabsnap_endport_pkeys(&s->nodes[i], p);

			for (unsigned k = 0; t && k < t->n; k++) {
				unsigned pkey = t->key[k] & PKEY_MASK;

				if (pkey)
					named[pkey / 8] |= (uint8_t)(1u << (pkey % 8));
			}
		}
}

static void add_partition(unsigned pkey)
{
	char name[8];
	struct node *d;

	snprintf(name, sizeof(name), "0x%04x", pkey);
	d = tree_add(parts_dir, name, S_IFDIR | 0555, NULL, NULL, (int)pkey);
	if (!d ||
	    !tree_add(d, "full", S_IFREG | 0444, &members_ops, NULL, (int)(pkey << 1 | FILE_FULL)) ||
	    !tree_add(d, "limited", S_IFREG | 0444, &members_ops, NULL,
		      (int)(pkey << 1 | FILE_LIMITED)))
		return; /* ENOMEM: what was made stays, empty files read so */
}

void partfiles_update(const struct fab_snap *snap)
{
	uint8_t *named = malloc(PKEYS / 8);
	struct node *c, *next;

	if (!named)
		return;
	pkeys_named(snap, named);
	tree_wrlock();
	for (c = parts_dir ? parts_dir->children : NULL; c; c = next) {
		unsigned pkey = (unsigned)c->file;

		next = c->next_sibling;
		if (named[pkey / 8] & (1u << (pkey % 8)))
			named[pkey / 8] &= (uint8_t)~(1u << (pkey % 8)); /* shown already */
		else
			tree_unlink(c);
	}
	for (unsigned pkey = 1; parts_dir && pkey < PKEYS; pkey++)
		if (named[pkey / 8] & (1u << (pkey % 8)))
			add_partition(pkey);
	tree_unlock();
	free(named);
}

int partfiles_add(struct node *fabric_dir)
{
	parts_dir = tree_add(fabric_dir, "partitions", S_IFDIR | 0555, NULL, NULL, 0);
	return parts_dir ? 0 : -ENOMEM;
}
