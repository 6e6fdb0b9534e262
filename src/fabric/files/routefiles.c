/* The routing files (routefiles.h): fabric/routes/SRC/DST, made at each
 * lookup from the name alone and freed when the kernel forgets them, and
 * a switch's lft and ports/N/routed_lids and routed_endports.  Each open
 * reads the current snapshot; no MADs. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "umadfs/fabric/files/routefiles.h"
#include "umadfs/fabric/snapshot/carries.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/routes.h"
#include "umadfs/fabric/watch/sweeper.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"

/* -o fabric_routes=: set once before the sweep thread starts. */
static bool enabled;

/* The files, as n->file. */
enum { FILE_ROUTE, FILE_LFT, FILE_ROUTED_LIDS, FILE_ROUTED_ENDPORTS };

static char *make(const struct fab_snap *s, struct node *n, size_t *len,
		  int *err);

/* Opens n's text made from the current snapshot (after the first sweep
 * if there is none yet). */
static void made_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct fab_snap *s = NULL;
	char *text = NULL;
	size_t len = 0;
	int err = ENOENT;

	if (sweeper_first_snapshot(req, &s) < 0) {
		fuse_reply_err(req, EINTR);
		return;
	}
	if (s)
		text = make(s, n, &len, &err);
	fabsnap_put(s);
	if (!text) {
		fuse_reply_err(req, err);
		return;
	}
	textfile_open_text(req, fi, text, len);
	free(text);
}

/* st_size: the text's length now, 0 when it cannot be made. */
static off_t made_size(struct node *n)
{
	struct fab_snap *s = sweeper_snapshot();
	size_t len = 0;
	int err;
	char *text = s ? make(s, n, &len, &err) : NULL;
	off_t size = text ? (off_t)len : 0;

	fabsnap_put(s);
	free(text);
	return size;
}

/* The mtime of fabric files: the current snapshot's. */
static time_t made_mtime(struct node *n)
{
	struct fab_snap *s = sweeper_snapshot();
	time_t t = s ? s->time.tv_sec : time(NULL);

	fabsnap_put(s);
	return t;
}

static const struct node_ops made_ops = {
	.open = made_open, .read = textfile_read, .release = textfile_release,
	.size = made_size, .mtime = made_mtime,
};

/* ---- routes/SRC/DST ---- */

struct route_file {
	struct route_name src, dst;
};

static char *route_make(const struct fab_snap *s, struct node *n, size_t *len,
			int *err)
{
	const struct route_file *rf = n->owner;
	struct route_end src, dst;
	struct route r;
	char *text;

	if (routes_resolve(s, &rf->src, &src) < 0 ||
	    routes_resolve(s, &rf->dst, &dst) < 0) {
		*err = ENOENT;
		return NULL;
	}
	routes_trace(s, &src, &dst, &r);
	text = routes_text(&r, len);
	*err = ENOMEM;
	return text;
}

/* name as a route's end: -ENOENT unless it is a LID or GUID, and one of
 * the current snapshot's if there is one (else its open will tell). */
static int end_name(const char *name, struct route_name *out)
{
	struct fab_snap *s;
	struct route_end e;
	int r = routes_parse_name(name, out);

	if (r < 0)
		return r;
	s = sweeper_snapshot();
	if (s)
		r = routes_resolve(s, out, &e);
	fabsnap_put(s);
	return r;
}

/* A node made for a lookup, owning owner (freed with it). */
static int add_made(const char *name, mode_t mode, const struct node_ops *ops,
		    void *owner, struct node **out)
{
	*out = tree_add_detached(name, mode, ops, owner, FILE_ROUTE);
	if (!*out) {
		free(owner);
		return -ENOMEM;
	}
	(*out)->on_free = tree_free_owner;
	return 0;
}

/* routes/SRC/DST (tree write lock held). */
static int dst_lookup(struct node *dir, const char *name, struct node **out)
{
	struct route_file *rf = malloc(sizeof(*rf));
	int r;

	if (!rf)
		return -ENOMEM;
	rf->src = *(const struct route_name *)dir->owner;
	r = end_name(name, &rf->dst);
	if (r < 0) {
		free(rf);
		return r;
	}
	return add_made(name, S_IFREG | 0444, &made_ops, rf, out);
}

static const struct dir_ops src_dir_ops = { .lookup = dst_lookup };

/* routes/SRC (tree write lock held). */
static int src_lookup(struct node *dir, const char *name, struct node **out)
{
	struct route_name *src = malloc(sizeof(*src));
	int r;

	if (!src)
		return -ENOMEM;
	r = end_name(name, src);
	if (r < 0) {
		free(src);
		return r;
	}
	r = add_made(name, S_IFDIR | 0555, NULL, src, out);
	if (r == 0)
		(*out)->dops = &src_dir_ops;
	return r;
}

static const struct dir_ops routes_dir_ops = { .lookup = src_lookup };

int routefiles_add(struct node *fabric_dir, bool on)
{
	struct node *routes;

	enabled = on;
	if (!on)
		return 0;
	routes = tree_add(fabric_dir, "routes", S_IFDIR | 0555, NULL, NULL, 0);
	if (!routes)
		return -ENOMEM;
	routes->dops = &routes_dir_ops;
	return 0;
}

/* ---- lft and routed_lids ---- */

/* A switch file's owner: the switch it shows (and the port). */
struct switch_file {
	uint64_t guid;
	unsigned port;
};

/* The switch of node file n in s, or NULL with *err. */
static const struct fab_node *switch_of(const struct fab_snap *s,
					struct node *n, int *err)
{
	const struct switch_file *sf = n->owner;
	const struct fab_node *fn = fabsnap_find(s, sf->guid);

	*err = !fn || fn->type != FAB_SWITCH ? ENOENT : ENODATA;
	return fn && fn->lft ? fn : NULL;
}

/* `LID PORT` per entry that is not 255, as ibroute lists them. */
static char *lft_make(const struct fab_snap *s, struct node *n, size_t *len,
		      int *err)
{
	const struct fab_node *fn = switch_of(s, n, err);
	char *text = NULL;
	FILE *f;
	bool bad;

	if (!fn)
		return NULL;
	*err = ENOMEM;
	f = open_memstream(&text, len);
	if (!f)
		return NULL;
	for (unsigned lid = 0; lid <= fn->lft->top; lid++)
		if (fn->lft->port[lid] != 255)
			fprintf(f, "%u %u\n", lid, fn->lft->port[lid]);
	bad = ferror(f);
	if (fclose(f) || bad) {
		free(text);
		return NULL;
	}
	return text;
}

static char *routed_make(const struct fab_snap *s, struct node *n, size_t *len,
			 int *err)
{
	const struct fab_node *fn = switch_of(s, n, err);
	unsigned port = ((struct switch_file *)n->owner)->port;
	unsigned counts[256];
	char *text;
	int l;

	if (!fn || port > fn->nports)
		return NULL;
	routes_port_lids(fn, counts);
	*err = ENOMEM;
	l = asprintf(&text, "%u\n", counts[port]);
	if (l < 0)
		return NULL;
	*len = (size_t)l;
	return text;
}

/* One line per endport LID the port carries, out of it then into it. */
static void endport_lines(FILE *f, const struct carried *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char q[4 * FAB_DESC_LEN + 3];

		fabsnap_quote(q, sizeof(q), c[i].node->desc);
		fprintf(f, "direction=%s guid=0x%016" PRIx64 " port=%u lid=%u node_desc=%s\n",
			c[i].in ? "in" : "out", c[i].node->guid, c[i].port,
			c[i].lid, q);
	}
}

static char *endports_make(const struct fab_snap *s, struct node *n, size_t *len,
			   int *err)
{
	const struct fab_node *fn = switch_of(s, n, err);
	unsigned port = ((struct switch_file *)n->owner)->port;
	struct carried *c = NULL;
	char *text = NULL;
	size_t nc = 0;
	FILE *f;
	bool bad;

	if (!fn || port > fn->nports)
		return NULL;
	*err = ENOMEM;
	if (carries_endports(s, fn, port, &c, &nc) < 0)
		return NULL;
	f = open_memstream(&text, len);
	if (f) {
		endport_lines(f, c, nc);
		bad = ferror(f);
		if (fclose(f) || bad) {
			free(text);
			text = NULL;
		}
	}
	free(c);
	return text;
}

/* A file of switch guid (and port) under dir, owning its own owner
 * (the nodes of dir hold another).  0 or -ENOMEM. */
static int add_switch_file(struct node *dir, const char *name, int which,
			   uint64_t guid, unsigned port)
{
	struct switch_file *sf = malloc(sizeof(*sf));

	if (!sf)
		return -ENOMEM;
	sf->guid = guid;
	sf->port = port;
	return tree_add_owned(dir, name, S_IFREG | 0444, &made_ops, sf, which) ?
		0 : -ENOMEM;
}

static char *make(const struct fab_snap *s, struct node *n, size_t *len,
		  int *err)
{
	switch (n->file) {
	case FILE_ROUTE:
		return route_make(s, n, len, err);
	case FILE_LFT:
		return lft_make(s, n, len, err);
	case FILE_ROUTED_ENDPORTS:
		return endports_make(s, n, len, err);
	default:
		return routed_make(s, n, len, err);
	}
}

void routefiles_node(struct node *dir, const struct fab_node *fn)
{
	if (enabled && fn->type == FAB_SWITCH)
		add_switch_file(dir, "lft", FILE_LFT, fn->guid, 0);
}

int routefiles_port(struct node *dir, uint64_t guid, unsigned port)
{
	struct fab_snap *s;
	const struct fab_node *fn;
	int r = 0;

	if (!enabled)
		return 0;
	s = sweeper_snapshot();
	fn = s ? fabsnap_find(s, guid) : NULL;
	if (fn && fn->type == FAB_SWITCH) {
		r = add_switch_file(dir, "routed_lids", FILE_ROUTED_LIDS, guid, port);
		if (r == 0)
			r = add_switch_file(dir, "routed_endports", FILE_ROUTED_ENDPORTS,
					    guid, port);
	}
	fabsnap_put(s);
	return r;
}
