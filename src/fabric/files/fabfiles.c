/* The fabric/ tree (fabfiles.h): the top files (sweep, interval_ms,
 * last_error, topology, links, sm, metrics.prom), nodes/0xGUID/ with
 * ports/N/ and their counters/, and the peer and class/infiniband links. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/number.h"
#include "umadfs/device/sysfmt.h"
#include "umadfs/fabric/files/actions.h"
#include "umadfs/fabric/files/fabfiles.h"
#include "umadfs/fabric/files/fabmetrics.h"
#include "umadfs/fabric/files/fabtext.h"
#include "umadfs/fabric/files/lasterror.h"
#include "umadfs/fabric/files/mcastfiles.h"
#include "umadfs/fabric/files/pkeyfiles.h"
#include "umadfs/fabric/files/routefiles.h"
#include "umadfs/fabric/files/trafficfiles.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/watch/sweeper.h"
#include "umadfs/fabric/watch/traps.h"
#include "umadfs/fuse/stream.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/pmacounters.h"

/* A node's directory: owner of every node of its subtree (each holds a
 * reference), so it outlives the last one the kernel knows. */
struct fab_nodedir {
	int refs; /* atomic */
	uint64_t guid;
	unsigned nports;
	struct node *dir, *class_link, *ports_dir;
	struct node *port_dirs[]; /* [0..nports]: those with PortInfo */
};

/* Guarded by the tree lock (written by the sweep thread only). */
static struct node *nodes_dir, *class_dir;
static struct fab_snap *shown; /* the snapshot the directories follow */

static time_t snap_mtime(struct node *n)
{
	struct fab_snap *s = sweeper_snapshot();
	time_t t = s ? s->time.tv_sec : 0;

	fabsnap_put(s);
	return t ? t : time(NULL);
}

/* Top files. */
enum { FILE_TOPOLOGY = FAB_TEXT_TOPOLOGY, FILE_LINKS = FAB_TEXT_LINKS,
       FILE_PROBLEMS = FAB_TEXT_PROBLEMS, FILE_RATES = FAB_TEXT_RATES,
       FILE_ROUTING = FAB_TEXT_ROUTING,
       FILE_METRICS = FAB_TEXT_COUNT };

/* An open of a big file: its snapshot's text, or metrics.prom's cursor. */
struct big_open {
	struct big_open *prev, *next; /* on big_opens (big_lock) */
	struct fab_snap *snap; /* NULL: empty */
	const char *text;      /* the snapshot's: lives as long as it */
	size_t len;
	struct fabmetrics_cursor *cursor; /* metrics.prom's */
};

/* Every big file still open, for fabfiles_close(): the kernel drops the
 * RELEASE of a file closed just before an unmount. */
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static struct big_open *big_opens;

static void big_open_list(struct big_open *o)
{
	pthread_mutex_lock(&big_lock);
	o->next = big_opens;
	if (big_opens)
		big_opens->prev = o;
	big_opens = o;
	pthread_mutex_unlock(&big_lock);
}

static void big_open_free(struct big_open *o)
{
	pthread_mutex_lock(&big_lock);
	if (o->prev)
		o->prev->next = o->next;
	else if (big_opens == o)
		big_opens = o->next;
	if (o->next)
		o->next->prev = o->prev;
	pthread_mutex_unlock(&big_lock);
	fabmetrics_close(o->cursor);
	fabsnap_put(o->snap);
	free(o);
}

/* The open's text or cursor: 0, or -ENOMEM. */
static int big_content(struct big_open *o, unsigned file)
{
	if (!o->snap)
		return 0;
	if (file == FILE_METRICS) {
		o->cursor = fabmetrics_open(o->snap);
		return o->cursor ? 0 : -ENOMEM;
	}
	o->text = fabtext_get(o->snap, (enum fab_text)file, &o->len);
	return o->text ? 0 : -ENOMEM;
}

static void big_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct big_open *o = stream_open_read_only(req, fi, sizeof(*o));
	int err;

	if (!o)
		return;
	if (sweeper_first_snapshot(req, &o->snap) < 0) {
		err = EINTR;
		goto err_free;
	}
	if (big_content(o, (unsigned)n->file) < 0) {
		err = ENOMEM;
		goto err_free;
	}
	fi->fh = (uintptr_t)o;
	fi->direct_io = 1;
	big_open_list(o);
	if (fuse_reply_open(req, fi) == -ENOENT)
		big_open_free(o);
	return;
err_free:
	big_open_free(o);
	fuse_reply_err(req, err);
}

/* A read of metrics.prom: made from the cursor into the thread's buffer. */
static void metrics_read(fuse_req_t req, struct fabmetrics_cursor *c, size_t size,
			 off_t off)
{
	char *buf = stream_read_buf(size);
	ssize_t n;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = off < 0 ? 0 : fabmetrics_read(c, buf, size, (uint64_t)off);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	stream_read_buf_done(buf, size);
}

static void big_read(fuse_req_t req, struct node *n, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct big_open *o = (struct big_open *)(uintptr_t)fi->fh;

	if (o->cursor)
		metrics_read(req, o->cursor, size, off);
	else /* the text lives as long as the snapshot we hold until release */
		stream_reply_text_slice(req, o->text, o->len, size, off);
}

static void big_release(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	big_open_free((struct big_open *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/* The length of the current snapshot's text, exact: a copy by sendfile
 * (Python's shutil) or tar takes st_size bytes. */
static off_t big_size(struct node *n)
{
	struct fab_snap *s = sweeper_snapshot();
	uint64_t len = 0;

	if (s && n->file == FILE_METRICS)
		fabmetrics_size(s, &len);
	else if (s)
		len = fabtext_size(s, (enum fab_text)n->file);
	fabsnap_put(s);
	return (off_t)len;
}

static const struct node_ops big_ops = {
	.open = big_open, .read = big_read, .release = big_release,
	.size = big_size, .mtime = snap_mtime,
};

/* A small file's text made by text from the current snapshot (empty
 * before the first). */
static int snap_show(char *buf, size_t cap,
		     int (*text)(const struct fab_snap *s, char *buf, size_t cap))
{
	struct fab_snap *s = sweeper_snapshot();
	int len = s ? text(s, buf, cap) : 0;

	fabsnap_put(s);
	return len;
}

/* A reader's first open waits for a first sweep: false (EINTR replied)
 * when interrupted meanwhile. */
static bool first_sweep(fuse_req_t req)
{
	struct fab_snap *s = NULL;

	if (sweeper_first_snapshot(req, &s) < 0) {
		fuse_reply_err(req, EINTR);
		return false;
	}
	fabsnap_put(s);
	return true;
}

/* The snapshot's lines, then the traps' (traps.c), then what guards the
 * view (sweeper.c). */
static int sweep_show(struct node *n, char *buf, size_t cap)
{
	int len = snap_show(buf, cap, fabtext_sweep), more;
	bool subscribed = false;

	if (len < 0)
		return len;
	more = traps_text(buf + len, cap - (size_t)len, &subscribed);
	if (more < 0 || (size_t)(len + more) >= cap)
		return -ENOSPC;
	len += more;
	more = sweeper_guard_text(buf + len, cap - (size_t)len, subscribed);
	return more < 0 ? more : len + more;
}

static void sweep_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	/* A writer asks for a sweep, it does not wait for one. */
	if ((fi->flags & O_ACCMODE) != O_RDONLY || first_sweep(req))
		textfile_open_settable(req, n, fi, sweep_show, NULL);
}

static int last_error_show(struct node *n, char *buf, size_t cap)
{
	return lasterror_show(buf, cap);
}

static const struct node_ops last_error_ops = { .show = last_error_show };

static void sweep_write(fuse_req_t req, struct node *n, const char *buf,
			size_t size, off_t off, struct fuse_file_info *fi)
{
	int r = sweeper_park_write(req, size);

	if (r == -EAGAIN)
		lasterror_refuse(req, EAGAIN, "sweep: %u writes already wait for a sweep",
		       SWEEPER_WRITERS_MAX);
	else if (r < 0)
		fuse_reply_err(req, -r);
	/* else answered when its sweep is complete */
}

/* A small file of the snapshot's (sweep, sm): not textfile_size(), whose
 * value, handed to the next open, would be the empty one of before the
 * first sweep, which that open waits for. */
static off_t snap_size(struct node *n)
{
	char buf[TEXTFILE_MAX];
	int len = n->ops->show(n, buf, sizeof(buf));

	return len > 0 ? len : 0;
}

static const struct node_ops sweep_ops = {
	.show = sweep_show, .open = sweep_open, .write = sweep_write,
	.size = snap_size, .mtime = snap_mtime,
};

/* SMInfo SMState as fabric/sm words it (sminfo's names). */
static const char *sm_state(unsigned state)
{
	const char *name = ibcodes_sm_state_name(state);

	return name ? name : "unknown";
}

/* fabric/sm: the SM at the local port's MasterSMLID as key value lines,
 * then one standby line per other SM that answered SMInfo. */
static int sm_text(const struct fab_snap *s, char *buf, size_t cap)
{
	size_t len = 0;
	int n;

	for (size_t i = 0; s->sm_lid && i < s->nsms; i++) {
		const struct fab_sm *sm = &s->sms[i];

		if (sm->lid != s->sm_lid)
			continue;
		n = snprintf(buf, cap, "guid 0x%016" PRIx64 "\nlid %u\npriority %u\n"
			     "state %s\nact_count %u\n", sm->guid, sm->lid,
			     sm->priority, sm_state(sm->state), sm->act_count);
		if (n < 0 || (size_t)n >= cap)
			return -ENOSPC;
		len = (size_t)n;
	}
	for (size_t i = 0; i < s->nsms; i++) {
		const struct fab_sm *sm = &s->sms[i];

		if (s->sm_lid && sm->lid == s->sm_lid)
			continue;
		n = snprintf(buf + len, cap - len, "standby guid=0x%016" PRIx64
			     " lid=%u priority=%u state=%s act_count=%u\n", sm->guid,
			     sm->lid, sm->priority, sm_state(sm->state), sm->act_count);
		if (n < 0 || (size_t)n >= cap - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	return (int)len;
}

static int sm_show(struct node *n, char *buf, size_t cap)
{
	return snap_show(buf, cap, sm_text);
}

static void sm_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	if (first_sweep(req))
		textfile_open(req, n, fi, sm_show);
}

static const struct node_ops sm_ops = {
	.show = sm_show, .open = sm_open, .size = snap_size, .mtime = snap_mtime,
};

static int interval_show(struct node *n, char *buf, size_t cap)
{
	return snprintf(buf, cap, "%u\n", sweeper_interval_ms());
}

static void interval_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_open_settable(req, n, fi, interval_show, NULL);
}

/* interval_ms's value (textfile_value_fn). */
static int interval_take(struct node *n, const char *text, size_t len,
			 bool complete)
{
	char why[160];
	uint64_t v;
	int r = number_parse_setting(text, len, SWEEPER_INTERVAL_MAX_MS, complete, &v,
				     why, sizeof(why));

	if (!r && !complete)
		return -EAGAIN;
	if (!r)
		r = sweeper_set_interval_ms((unsigned)v, why, sizeof(why));
	if (r == -EINVAL)
		lasterror_set("interval_ms: %s", why);
	return r;
}

static void interval_write(fuse_req_t req, struct node *n, const char *buf,
			   size_t size, off_t off, struct fuse_file_info *fi)
{
	textfile_write_value(req, n, buf, size, fi, interval_take);
}

static void interval_flush(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_flush_value(req, n, fi, interval_take);
}

static const struct node_ops interval_ops = {
	.show = interval_show, .open = interval_open, .write = interval_write,
	.flush = interval_flush,
};

/* Node, port and counter files: n->file is (port << 8) | what. */
#define FILE_PORT(f) ((unsigned)(f) >> 8)
#define FILE_WHAT(f) ((unsigned)(f) & 0xff)
#define WHAT_COUNTER 64 /* counters: WHAT_COUNTER + counters.h's index */
#define WHAT_NODE 128   /* node files: WHAT_NODE + node_files index */

static const char *const node_files[] = {
	"node_type", "node_guid", "sys_image_guid", "node_desc", "vendor_id",
	"device_id", "revision", "num_ports", "board_id", "fw_ver", "hca_type",
};

static const char *const port_files[] = {
	"state", "phys_state", "rate", "link_width", "link_speed", "lid",
	"lid_mask_count", "link_width_enabled", "link_width_supported",
	"link_speed_enabled", "link_speed_supported",
};

static int node_value(const struct fab_node *fn, unsigned what, char *buf,
		      size_t cap)
{
	switch (what) {
	case 0: return sysfmt_node_type(buf, cap, fn->type);
	case 1: return sysfmt_guid_colon(buf, cap, fn->guid);
	case 2: return sysfmt_guid_colon(buf, cap, fn->sys_guid);
	case 3: /* fall through: board_id is the description (documented) */
	case 8: return snprintf(buf, cap, "%s\n", fn->desc);
	case 4: return snprintf(buf, cap, "0x%06x\n", fn->vendor_id);
	case 5: return snprintf(buf, cap, "0x%04x\n", fn->device_id);
	case 6: return snprintf(buf, cap, "0x%x\n", fn->revision);
	case 7: return snprintf(buf, cap, "%u\n", fn->nports);
	case 9: return snprintf(buf, cap, "%u.%u.%u\n", fn->revision >> 16,
				(fn->revision >> 8) & 0xff, fn->revision & 0xff);
	default: return snprintf(buf, cap, "%s\n", fn->type == FAB_SWITCH ?
				 "switch" : fn->type == FAB_ROUTER ? "router" : "CA");
	}
}

static int port_value(const struct fab_node *fn, const struct fab_port *p,
		      unsigned what, char *buf, size_t cap)
{
	uint64_t v;

	if (what >= WHAT_COUNTER) {
		/* No answer in the last sweep: the kernel's errno for a
		 * counter it cannot read, which node_exporter skips. */
		if (!p->has_counters ||
		    !pmacounters_value(what - WHAT_COUNTER, p->basic,
				    p->has_ext ? p->ext : NULL, fn->pma_capmask, &v))
			return -EOPNOTSUPP;
		return snprintf(buf, cap, "%" PRIu64 "\n", v);
	}
	if (!p->has_info)
		return -ENODATA;
	switch (what) {
	case 0: return sysfmt_port_state(buf, cap, p->state);
	case 1: return sysfmt_phys_state(buf, cap, p->phys_state);
	case 2: return sysfmt_rate(buf, cap, p->width, p->speed, p->ext_speed);
	case 3: return snprintf(buf, cap, "%dX\n", ibcodes_width_lanes(p->width));
	case 4: return snprintf(buf, cap, "%s\n",
				sysfmt_speed_name(p->speed, p->ext_speed));
	case 5: return snprintf(buf, cap, "0x%x\n", p->lid);
	case 6: return snprintf(buf, cap, "%u\n", p->lmc);
	case 7: return sysfmt_widths(buf, cap, p->width_enabled);
	case 8: return sysfmt_widths(buf, cap, p->width_supported);
	case 9: return sysfmt_speeds(buf, cap, p->speed_enabled, p->ext_speed_enabled);
	default: return sysfmt_speeds(buf, cap, p->speed_supported,
				      p->ext_speed_supported);
	}
}

static int fabnode_show(struct node *n, char *buf, size_t cap)
{
	struct fab_nodedir *nd = n->owner;
	struct fab_snap *s = sweeper_snapshot();
	const struct fab_node *fn = s ? fabsnap_find(s, nd->guid) : NULL;
	unsigned port = FILE_PORT(n->file), what = FILE_WHAT(n->file);
	int r = -ENOENT;

	if (fn && what >= WHAT_NODE)
		r = node_value(fn, what - WHAT_NODE, buf, cap);
	else if (fn && port <= fn->nports)
		r = port_value(fn, &fn->ports[port], what, buf, cap);
	fabsnap_put(s);
	return r;
}

static void fabnode_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_open_late(req, n, fi, fabnode_show);
}

static const struct node_ops fabnode_ops = {
	.show = fabnode_show, .open = fabnode_open, .mtime = snap_mtime,
};

static void nodedir_get(struct node *n)
{
	__atomic_add_fetch(&((struct fab_nodedir *)n->owner)->refs, 1,
			   __ATOMIC_RELAXED);
}

static void nodedir_put(struct node *n)
{
	struct fab_nodedir *nd = n->owner;

	if (!__atomic_sub_fetch(&nd->refs, 1, __ATOMIC_ACQ_REL))
		free(nd);
}

/* ports/N/'s files and counters/, at its first use (tree write lock). */
static int port_populate(struct node *dir)
{
	struct fab_nodedir *nd = dir->owner;
	unsigned p = (unsigned)dir->file;
	struct node *counters;

	for (unsigned i = 0; i < sizeof(port_files) / sizeof(port_files[0]); i++)
		if (!tree_add(dir, port_files[i], S_IFREG | 0444, &fabnode_ops, nd,
			      (int)(p << 8 | i)))
			return -ENOMEM;
	counters = tree_add(dir, "counters", S_IFDIR | 0555, NULL, nd, 0);
	if (!counters)
		return -ENOMEM;
	for (unsigned i = 0; i < pmacounters_count(); i++)
		if (!tree_add(counters, pmacounters_name(i), S_IFREG | 0444,
			      &fabnode_ops, nd, (int)(p << 8 | (WHAT_COUNTER + i))))
			return -ENOMEM;
	/* The new nodes hold nd as the rest of its subtree does. */
	for (struct node *c = dir->children; c; c = c->next_sibling)
		if (!S_ISLNK(c->mode))
			tree_hold_owner(c, nodedir_get, nodedir_put);
	/* Files with owners of their own. */
	if (actions_port(dir, counters, nd->guid, p) < 0 ||
	    pkeyfiles_port(dir, nd->guid, p) < 0 ||
	    (p && trafficfiles_port(dir, counters, nd->guid, p) < 0))
		return -ENOMEM;
	return routefiles_port(dir, nd->guid, p);
}

static const struct dir_ops port_dir_ops = { .populate = port_populate };

static void add_port_dir(struct fab_nodedir *nd, unsigned p)
{
	char name[8];

	snprintf(name, sizeof(name), "%u", p);
	nd->port_dirs[p] = tree_add(nd->ports_dir, name, S_IFDIR | 0555, NULL, nd,
				    (int)p);
	if (!nd->port_dirs[p])
		return;
	nd->port_dirs[p]->dops = &port_dir_ops;
	nd->port_dirs[p]->lazy = true;
	tree_hold_owner(nd->port_dirs[p], nodedir_get, nodedir_put);
}

/* ports/N/ is there while the snapshot has the port's PortInfo (a port
 * without one would fail node_exporter's whole collector).  Tree write
 * lock held. */
static void sync_port_dirs(const struct fab_node *fn, struct fab_nodedir *nd)
{
	for (unsigned p = fn->type == FAB_SWITCH ? 0 : 1;
	     nd->ports_dir && p <= fn->nports; p++) {
		bool want = fn->ports[p].has_info;

		if (want && !nd->port_dirs[p]) {
			add_port_dir(nd, p);
		} else if (!want && nd->port_dirs[p]) {
			tree_unlink(nd->port_dirs[p]);
			nd->port_dirs[p] = NULL;
		}
	}
}

/* Whether the snapshot shows the port at the other end of fp's link. */
static bool peer_shown(const struct fab_snap *s, const struct fab_port *fp)
{
	const struct fab_node *pn = fabsnap_find(s, fp->peer_guid);

	return pn && fp->peer_port <= pn->nports &&
	       pn->ports[fp->peer_port].has_info;
}

/* ports/N/peer as the snapshot has it.  Tree write lock held. */
static void update_peer(const struct fab_snap *s, const struct fab_node *fn,
			struct fab_nodedir *nd, unsigned p)
{
	struct node *dir = nd->port_dirs[p], *old;
	const struct fab_port *fp = &fn->ports[p];
	char target[64] = "";

	if (!dir)
		return;
	old = tree_child(dir, "peer");
	if (fp->peer_guid && peer_shown(s, fp))
		snprintf(target, sizeof(target), "../../../0x%016" PRIx64 "/ports/%u",
			 fp->peer_guid, fp->peer_port);
	if (old && (!target[0] || strcmp(old->link, target))) {
		tree_unlink(old);
		old = NULL;
	}
	if (target[0] && !old) {
		struct node *link = tree_add_symlink(dir, "peer", target);

		if (link)
			link->transient = true;
	}
}

/* nodes/0xGUID/'s files, ports/ and its port directories, at its first
 * use (tree write lock): a fabric of 16,000 nodes is 16,000 directories
 * until something looks inside them, not 230,000 nodes. */
static int node_populate(struct node *dir)
{
	struct fab_nodedir *nd = dir->owner;
	const struct fab_node *fn = shown ? fabsnap_find(shown, nd->guid) : NULL;

	for (unsigned i = 0; i < sizeof(node_files) / sizeof(node_files[0]); i++)
		if (!tree_add(dir, node_files[i], S_IFREG | 0444, &fabnode_ops, nd,
			      (int)(WHAT_NODE + i)))
			return -ENOMEM;
	nd->ports_dir = tree_add(dir, "ports", S_IFDIR | 0555, NULL, nd, 0);
	if (!nd->ports_dir)
		return -ENOMEM;
	/* The new nodes hold nd as the directory does; the port directories
	 * take their holds as they come (sync_port_dirs). */
	for (struct node *c = dir->children; c; c = c->next_sibling)
		tree_hold_owner(c, nodedir_get, nodedir_put);
	if (!fn)
		return 0;
	routefiles_node(dir, fn);
	mcastfiles_node(dir, fn);
	sync_port_dirs(fn, nd);
	for (unsigned p = 1; p <= fn->nports; p++)
		update_peer(shown, fn, nd, p);
	return 0;
}

static const struct dir_ops node_dir_ops = { .populate = node_populate };

/* The directory of a node new to the tree (its contents made at its
 * first use), and its class link.  Tree write lock held. */
static struct fab_nodedir *add_node_dir(const struct fab_node *fn)
{
	struct fab_nodedir *nd = calloc(1, sizeof(*nd) +
					(fn->nports + 1u) * sizeof(struct node *));
	char name[24], target[64];

	if (!nd)
		return NULL;
	nd->guid = fn->guid;
	nd->nports = fn->nports;
	snprintf(name, sizeof(name), "0x%016" PRIx64, fn->guid);
	nd->dir = tree_add(nodes_dir, name, S_IFDIR | 0555, NULL, nd, 0);
	if (!nd->dir) {
		free(nd);
		return NULL;
	}
	nd->dir->dops = &node_dir_ops;
	nd->dir->lazy = true;
	/* From now on the directory holds nd; the links hold nothing. */
	tree_hold_owner(nd->dir, nodedir_get, nodedir_put);
	snprintf(target, sizeof(target), "../../nodes/%s", name);
	/* The node directory and this link keep the kernel's name cache (1 s
	 * at most after a node goes): every path into the fabric's sysfs
	 * view passes through them, node_exporter's tens of thousands. */
	nd->class_link = tree_add_symlink(class_dir, name, target);
	return nd;
}

static void remove_node_dir(struct fab_nodedir *nd)
{
	if (nd->class_link)
		tree_unlink(nd->class_link);
	tree_unlink(nd->dir); /* frees nd with its last node */
}

void fabfiles_update(struct fab_snap *snap)
{
	tree_wrlock();
	for (size_t i = 0; i < snap->nnodes; i++) {
		struct fab_node *fn = &snap->nodes[i];
		struct fab_node *was = shown ? fabsnap_find(shown, fn->guid) : NULL;

		fn->dir = was ? was->dir : NULL;
		if (fn->dir && fn->dir->nports != fn->nports) {
			remove_node_dir(fn->dir); /* another device, same GUID */
			fn->dir = NULL;
		}
		if (!fn->dir)
			fn->dir = add_node_dir(fn);
		if (fn->dir)
			sync_port_dirs(fn, fn->dir);
	}
	for (size_t i = 0; shown && i < shown->nnodes; i++) {
		struct fab_nodedir *nd = shown->nodes[i].dir;
		const struct fab_node *now = fabsnap_find(snap, shown->nodes[i].guid);

		if (nd && !now) /* (a replaced one went above) */
			remove_node_dir(nd);
	}
	for (size_t i = 0; i < snap->nnodes; i++)
		for (unsigned p = 1; snap->nodes[i].dir && p <= snap->nodes[i].nports; p++)
			update_peer(snap, &snap->nodes[i], snap->nodes[i].dir, p);
	fabsnap_get(snap);
	fabsnap_put(shown);
	shown = snap;
	tree_unlock();
}

void fabfiles_close(void)
{
	while (big_opens)
		big_open_free(big_opens);
	fabsnap_put(shown);
	shown = NULL;
}

/* fabric/ sits beside the CAs in the mount's root, where node_exporter's
 * infiniband collector (--path.sysfs with the mount as class/infiniband)
 * takes every directory for a device and gives up on all of them when one
 * lacks these files: so fabric/ has them, and an empty ports/. */
static const char *const device_files[][2] = {
	{ "board_id", "umadfs fabric view\n" },
	{ "fw_ver", "0.0.0\n" },
	{ "hca_type", "fabric\n" },
};

static int device_show(struct node *n, char *buf, size_t cap)
{
	return snprintf(buf, cap, "%s", device_files[n->file][1]);
}

static const struct node_ops device_ops = { .show = device_show };

static int add_device_files(struct node *fabric)
{
	for (int i = 0; i < 3; i++)
		if (!tree_add(fabric, device_files[i][0], S_IFREG | 0444, &device_ops,
			      NULL, i))
			return -ENOMEM;
	return tree_add(fabric, "ports", S_IFDIR | 0555, NULL, NULL, 0) ? 0 : -ENOMEM;
}

/* A settable file: root's, and the group's (mode 0664) if there is one. */
static struct node *add_settable(struct node *dir, const char *name,
				 const struct node_ops *ops, const gid_t *group)
{
	struct node *n = tree_add(dir, name, S_IFREG | (group ? 0664 : 0644), ops,
				  NULL, 0);

	if (n && group)
		n->gid = *group;
	return n;
}

int fabfiles_add(struct node *root, const gid_t *group, struct node **out)
{
	struct node *fabric = tree_add(root, "fabric", S_IFDIR | 0555, NULL, NULL, 0);
	struct node *class;

	if (!fabric)
		return -ENOMEM;
	if (!add_settable(fabric, "sweep", &sweep_ops, group) ||
	    !add_settable(fabric, "interval_ms", &interval_ops, group) ||
	    !tree_add(fabric, "last_error", S_IFREG | 0444, &last_error_ops, NULL, 0) ||
	    !tree_add(fabric, "topology", S_IFREG | 0444, &big_ops, NULL,
		      FILE_TOPOLOGY) ||
	    !tree_add(fabric, "links", S_IFREG | 0444, &big_ops, NULL, FILE_LINKS) ||
	    !tree_add(fabric, "rates", S_IFREG | 0444, &big_ops, NULL, FILE_RATES) ||
	    !tree_add(fabric, "sm", S_IFREG | 0444, &sm_ops, NULL, 0) ||
	    !tree_add(fabric, "metrics.prom", S_IFREG | 0444, &big_ops, NULL,
		      FILE_METRICS) ||
	    !tree_add(fabric, "problems", S_IFREG | 0444, &big_ops, NULL,
		      FILE_PROBLEMS) ||
	    !tree_add(fabric, "routing", S_IFREG | 0444, &big_ops, NULL,
		      FILE_ROUTING))
		return -ENOMEM;
	nodes_dir = tree_add(fabric, "nodes", S_IFDIR | 0555, NULL, NULL, 0);
	class = tree_add(fabric, "class", S_IFDIR | 0555, NULL, NULL, 0);
	class_dir = class ? tree_add(class, "infiniband", S_IFDIR | 0555, NULL, NULL, 0) :
		NULL;
	*out = fabric;
	if (!nodes_dir || !class_dir)
		return -ENOMEM;
	return add_device_files(fabric);
}
