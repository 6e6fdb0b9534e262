/* fabric/mcast/ (mcastfiles.h): a directory per multicast group of the
 * current snapshot (0xMLID), with `mgid` and `members` (one a line: the
 * port GID, the join state, the node's description), and each switch's
 * `mft`, its MulticastForwardingTable as `ibroute -M` lists it (the
 * blocks of the MLIDs in use).  The directories follow each new snapshot
 * (mcastfiles_update); each open makes its text from the current one; no
 * MADs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/fabric/files/mcastfiles.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/mcast.h"
#include "umadfs/fabric/watch/sweeper.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/ibcodes.h"

enum { FILE_MGID, FILE_MEMBERS };

static struct node *mcast_dir; /* fabric/mcast (tree lock) */

static void put_gid(FILE *f, const uint8_t *gid)
{
	char text[FAB_GID_TEXT];

	fabmcast_gid_text(text, gid);
	fputs(text, f);
}

static void put_member(FILE *f, const struct fab_snap *s, const struct fab_mcmember *m)
{
	const struct fab_node *n = m->node_guid ? fabsnap_find(s, m->node_guid) : NULL;
	char desc[4 * FAB_DESC_LEN + 3], gid[FAB_GID_TEXT];

	fabmcast_member_gid_text(gid, m);
	fprintf(f, "gid=%s", gid);
	fabsnap_quote(desc, sizeof(desc), n ? n->desc : "");
	fprintf(f, " join_state=%s node_desc=%s\n", fabmcast_join_name(m->join_state), desc);
}

/* The text of memory stream f, closed: NULL if it failed. */
static char *closed(FILE *f, char **text)
{
	bool bad = ferror(f);

	if (fclose(f) || bad) {
		free(*text);
		return NULL;
	}
	return *text;
}

/* Answers an open with text (len bytes), or err when there is none. */
static void open_text(fuse_req_t req, struct fuse_file_info *fi, char *text,
		      size_t len, int err)
{
	if (!text) {
		fuse_reply_err(req, err);
		return;
	}
	textfile_open_text(req, fi, text, len);
	free(text);
}

static char *group_text(const struct fab_snap *s, unsigned mlid, int which, size_t *len)
{
	const struct fab_mgroup *g = fabmcast_group(s->mcast, mlid);
	char *text = NULL;
	FILE *f;

	if (!g)
		return NULL;
	f = open_memstream(&text, len);
	if (!f)
		return NULL;
	if (which == FILE_MGID) {
		put_gid(f, g->mgid);
		fputc('\n', f);
	}
	for (uint32_t i = 0; which == FILE_MEMBERS && i < g->n; i++)
		put_member(f, s, &s->mcast->members[g->first + i]);
	return closed(f, &text);
}

static void group_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct fab_snap *s = sweeper_snapshot();
	size_t len = 0;
	char *text = s ? group_text(s, (unsigned)n->file >> 1, n->file & 1, &len) : NULL;

	fabsnap_put(s);
	open_text(req, fi, text, len, s ? ENOENT : ENODATA);
}

static const struct node_ops group_ops = {
	.open = group_open, .read = textfile_read, .release = textfile_release,
};

static void add_group(unsigned mlid)
{
	char name[8];
	struct node *d;

	snprintf(name, sizeof(name), "0x%04x", mlid);
	d = tree_add(mcast_dir, name, S_IFDIR | 0555, NULL, NULL, (int)mlid);
	if (!d ||
	    !tree_add(d, "mgid", S_IFREG | 0444, &group_ops, NULL, (int)(mlid << 1 | FILE_MGID)) ||
	    !tree_add(d, "members", S_IFREG | 0444, &group_ops, NULL,
		      (int)(mlid << 1 | FILE_MEMBERS)))
		return; /* ENOMEM: what was made stays, its files read ENOENT */
}

void mcastfiles_update(const struct fab_snap *snap)
{
	const struct fab_mcast *mc = snap->mcast;
	struct node *c, *next;

	tree_wrlock();
	for (c = mcast_dir ? mcast_dir->children : NULL; c; c = next) {
		next = c->next_sibling;
		if (!fabmcast_group(mc, (unsigned)c->file))
			tree_unlink(c);
	}
	for (uint32_t i = 0; mcast_dir && mc && i < mc->ngroups; i++) {
		char name[8];

		snprintf(name, sizeof(name), "0x%04x", mc->groups[i].mlid);
		if (!tree_child(mcast_dir, name))
			add_group(mc->groups[i].mlid);
	}
	tree_unlock();
}

int mcastfiles_add(struct node *fabric_dir)
{
	mcast_dir = tree_add(fabric_dir, "mcast", S_IFDIR | 0555, NULL, NULL, 0);
	return mcast_dir ? 0 : -ENOMEM;
}

/* ---- a switch's mft ---- */

/* One line per MLID of the blocks read whose entry has a port: the MLID
 * and its ports, as ibroute -M marks them. */
static void mft_lines(FILE *f, const struct fab_node *fn)
{
	const struct fab_mft *t = fn->mft;

	for (unsigned b = 0; t && b < t->nblocks; b++)
		for (unsigned i = 0; i < FAB_MFT_MLIDS; i++) {
			unsigned mlid = IB_LID_MCAST_START_HO + t->block[b] * FAB_MFT_MLIDS + i;
			bool any = false;

			for (unsigned p = 0; p <= fn->nports; p++) {
				if (!fabmft_has(t, mlid, p))
					continue;
				if (!any)
					fprintf(f, "0x%04x", mlid);
				any = true;
				fprintf(f, " %u", p);
			}
			if (any)
				fputc('\n', f);
		}
}

static char *mft_text(const struct fab_snap *s, uint64_t guid, size_t *len, int *err)
{
	const struct fab_node *fn = fabsnap_find(s, guid);
	char *text = NULL;
	FILE *f;

	*err = !fn || fn->type != FAB_SWITCH ? ENOENT : ENODATA;
	/* No table: the SA was not heard, or a block went unanswered; none
	 * is read while no group has an MLID. */
	if (!fn || fn->type != FAB_SWITCH || !s->mcast ||
	    (!fn->mft && s->mcast->ngroups))
		return NULL;
	*err = ENOMEM;
	f = open_memstream(&text, len);
	if (!f)
		return NULL;
	mft_lines(f, fn);
	return closed(f, &text);
}

static void mft_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct fab_snap *s = sweeper_snapshot();
	size_t len = 0;
	int err = ENODATA;
	char *text = s ? mft_text(s, *(const uint64_t *)n->owner, &len, &err) : NULL;

	fabsnap_put(s);
	open_text(req, fi, text, len, err);
}

static const struct node_ops mft_ops = {
	.open = mft_open, .read = textfile_read, .release = textfile_release,
};

void mcastfiles_node(struct node *dir, const struct fab_node *fn)
{
	uint64_t *guid;

	if (fn->type != FAB_SWITCH || !(guid = malloc(sizeof(*guid))))
		return; /* ENOMEM: no mft file */
	*guid = fn->guid;
	tree_add_owned(dir, "mft", S_IFREG | 0444, &mft_ops, guid, 0);
}
