/* Acting on the fabric (actions.h): a port's admin file (ibportstate's
 * enable, disable and reset) and its counters/reset (perfquery -R and
 * -x -R).  Each write is parked until the port's answer, which the fabric
 * view's port's receiver thread brings; a refusal sets fabric/last_error.
 * Each action is logged and noted in fabric/events with the writer's uid,
 * each refusal logged with it too.  An action is done only when the node
 * named answered (query.h: its NodeInfo first).
 *
 * A port on this host's own route to the node it belongs to (the port
 * the directed route enters the node by, or the local port) is not
 * disabled or reset without "force": the view would lose the node, and
 * the host may lose the fabric. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/log.h"
#include "umadfs/base/number.h"
#include "umadfs/device/device.h"
#include "umadfs/device/sysfmt.h"
#include "umadfs/engine/query.h"
#include "umadfs/fabric/files/actions.h"
#include "umadfs/fabric/files/fabevents.h"
#include "umadfs/fabric/files/lasterror.h"
#include "umadfs/fabric/snapshot/carries.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/watch/sweeper.h"
#include "umadfs/fuse/parkedwrite.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/mad.h"

/* Set before the tree is built, then only read. */
static bool group_set;
static gid_t group_gid;

void actions_configure(const gid_t *group)
{
	group_set = group != NULL;
	if (group)
		group_gid = *group;
}

bool actions_group(gid_t *out)
{
	*out = group_gid;
	return group_set;
}

/* An action file's port. */
struct action_port {
	uint64_t guid;
	unsigned port;
	const char *file; /* "admin", "counters/reset" */
};

/* One action in flight: what its answer completes. */
struct action {
	struct parkedwrite *pw;
	char what[24];     /* "disable", "counters_reset", ... */
	uint64_t guid;
	unsigned port;
	uid_t uid;
	char desc[FAB_DESC_LEN * 4 + 3]; /* quoted */
	void (*after)(uint64_t guid);     /* on success, or NULL */
};

static void action_done(void *ctx, int err, const char *why)
{
	struct action *a = ctx;

	if (err) {
		lasterror_set("%s of 0x%016" PRIx64 " port %u: %s", a->what,
				   a->guid, a->port, why);
		log_warn("fabric: uid %u: %s of 0x%016" PRIx64 " port %u failed: %s",
			 (unsigned)a->uid, a->what, a->guid, a->port, why);
		fabevents_note("event=action action=%s guid=0x%016" PRIx64
			       " port=%u node_desc=%s uid=%u result=failed errno=%s",
			       a->what, a->guid, a->port, a->desc, (unsigned)a->uid,
			       log_errno_name(-err));
	} else {
		log_info("fabric: uid %u: %s of 0x%016" PRIx64 " port %u (%s) done",
			 (unsigned)a->uid, a->what, a->guid, a->port, a->desc);
		fabevents_note("event=action action=%s guid=0x%016" PRIx64
			       " port=%u node_desc=%s uid=%u result=ok", a->what,
			       a->guid, a->port, a->desc, (unsigned)a->uid);
		if (a->after)
			a->after(a->guid);
	}
	parkedwrite_answer(a->pw, -err);
	free(a);
}

/* Refuses the write of action file n: last_error and err, and a log line
 * with the writer's uid and the port named - the journal's trail of what
 * was refused (a refusal sends nothing: it is no action, not in events). */
static void refuse(fuse_req_t req, const struct node *n, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void refuse(fuse_req_t req, const struct node *n, int err, const char *fmt, ...)
{
	const struct action_port *ap = n->owner;
	char why[256];
	va_list args;

	va_start(args, fmt);
	vsnprintf(why, sizeof(why), fmt, args);
	va_end(args);
	log_warn("fabric: uid %u: %s of 0x%016" PRIx64 " port %u refused (%s): %s",
		 (unsigned)fuse_req_ctx(req)->uid, ap->file, ap->guid, ap->port,
		 log_errno_name(err), why);
	lasterror_refuse(req, err, "%s", why);
}

/* The snapshot's node of the file's directory and its port, in *s and
 * *fn (s a reference), or a refusal made (false). */
static bool target(fuse_req_t req, struct node *n, struct fab_snap **s,
		   const struct fab_node **fn)
{
	const struct action_port *ap = n->owner;
	uint64_t guid = ap->guid;
	unsigned port = ap->port;

	*s = sweeper_snapshot();
	*fn = *s ? fabsnap_find(*s, guid) : NULL;
	if (!*s) {
		refuse(req, n, EAGAIN, "%s: no sweep yet: the view has no snapshot "
		       "(write fabric/sweep)", ap->file);
	} else if (!*fn || port > (*fn)->nports) {
		refuse(req, n, ENOENT, "%s: node 0x%016" PRIx64 " port %u is not in "
		       "the current snapshot", ap->file, guid, port);
	} else {
		return true;
	}
	fabsnap_put(*s);
	*s = NULL;
	return false;
}

static struct action *action_new(fuse_req_t req, size_t size, const char *what,
				 const struct fab_node *fn, unsigned port)
{
	struct action *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->pw = parkedwrite_new(req, size);
	if (!a->pw) {
		free(a);
		return NULL;
	}
	snprintf(a->what, sizeof(a->what), "%s", what);
	a->guid = fn->guid;
	a->port = port;
	a->uid = fuse_req_ctx(req)->uid;
	fabsnap_quote(a->desc, sizeof(a->desc), fn->desc);
	return a;
}

static int start_phys(struct mad_engine *e, const struct fab_node *fn,
		      unsigned port, unsigned phys, struct action *a);

typedef int (*action_start_fn)(struct mad_engine *e, const struct fab_node *fn,
			       unsigned port, unsigned arg, struct action *a);

/* Starts the action of file n through the fabric view's port (snapshot s). */
static void run(fuse_req_t req, struct node *n, size_t size, const char *what,
		const struct fab_snap *s, const struct fab_node *fn, unsigned port,
		action_start_fn start, unsigned arg)
{
	struct ca_port *via = sweeper_port(s);
	struct mad_engine *e;
	struct action *a;
	int err = -ENODEV, r;

	e = via ? ca_port_engine(via, &err) : NULL;
	if (!e) {
		refuse(req, n, ENODEV, "%s: the fabric view's port %s is gone: %s",
		       what, s->via, strerror(-err));
		return;
	}
	a = action_new(req, size, what, fn, port);
	if (!a) {
		ca_port_engine_done(via);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* Admin changes what PortInfo says: the node is refreshed after. */
	a->after = start == start_phys ? sweeper_refresh_node : NULL;
	r = start(e, fn, port, arg, a);
	ca_port_engine_done(via);
	if (r < 0) /* not sent: no answer will come */
		action_done(a, r, "the request could not be sent");
}

/* -- admin ---------------------------------------------------------------- */

/* Whether port is on this host's directed route to fn (or the local
 * port): disabling it cuts the view off the node. */
static bool on_own_route(const struct fab_snap *s, const struct fab_node *fn,
			 unsigned port)
{
	if (fn->guid == s->local_guid)
		return port && fn->ports[port].port_guid == s->local_port_guid;
	return port && port == fn->entry_port;
}

static int start_phys(struct mad_engine *e, const struct fab_node *fn,
		      unsigned port, unsigned phys, struct action *a)
{
	return query_port_phys_set(e, fn->guid, fn->hops, fn->path, port, phys,
				   action_done, a);
}

/* "disable", "enable" or "reset", then optionally "force": 0 with the
 * physical state to set, or -EINVAL. */
static int parse_admin(const char *buf, size_t size, unsigned *phys, bool *force,
		       const char **word)
{
	static const struct { const char *word; unsigned phys; } ops[] = {
		{ "disable", IB_PORT_PHYS_STATE_DISABLED }, { "enable", IB_PORT_PHYS_STATE_POLLING },
		{ "reset", IB_PORT_PHYS_STATE_POLLING }, /* as ibportstate: one Set to Polling */
	};
	char text[32], *w, *f, *save;

	while (size && (buf[size - 1] == '\n' || buf[size - 1] == ' '))
		size--;
	if (!size || size >= sizeof(text) || memchr(buf, '\n', size))
		return -EINVAL;
	memcpy(text, buf, size);
	text[size] = '\0';
	w = strtok_r(text, " ", &save);
	f = w ? strtok_r(NULL, " ", &save) : NULL;
	if (!w || (f && strcmp(f, "force")) || strtok_r(NULL, " ", &save))
		return -EINVAL;
	*force = f != NULL;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!strcmp(w, ops[i].word)) {
			*phys = ops[i].phys;
			*word = ops[i].word;
			return 0;
		}
	}
	return -EINVAL;
}

static void admin_write(fuse_req_t req, struct node *n, const char *buf,
			size_t size, off_t off, struct fuse_file_info *fi)
{
	unsigned port = ((const struct action_port *)n->owner)->port, phys = 0;
	const struct fab_node *fn;
	const char *word = NULL;
	struct fab_snap *s;
	bool force = false;

	if (parse_admin(buf, size, &phys, &force, &word) < 0) {
		refuse(req, n, EINVAL, "admin: expected disable, enable or reset, "
		       "optionally followed by force");
		return;
	}
	if (!target(req, n, &s, &fn))
		return;
	if (phys == IB_PORT_PHYS_STATE_DISABLED || !strcmp(word, "reset")) {
		if (!force && on_own_route(s, fn, port)) {
			refuse(req, n, EBUSY, "admin: %s of 0x%016" PRIx64 " port %u would "
			       "cut this host's route to it (%s); write '%s force' to "
			       "do it anyway", word, fn->guid, port,
			       fn->guid == s->local_guid ? "the local port" :
			       "the port the route enters by", word);
			fabsnap_put(s);
			return;
		}
	}
	run(req, n, size, word, s, fn, port, start_phys, phys);
	fabsnap_put(s);
}

/* The dry run of a disable of fn's port in s, as admin's lines after
 * the state (none for a port 0; the route counts only when the snapshot
 * has tables): into buf (cap), its length or -errno. */
static int dry_run(const struct fab_snap *s, const struct fab_node *fn,
		   unsigned port, char *buf, size_t cap)
{
	struct carries_cut cut;
	int r, l = 0;

	if (!port)
		return 0;
	r = carries_cut(s, fn, port, &cut);
	if (r < 0)
		return r;
	if (cut.routed)
		l = snprintf(buf, cap, "disable_host_routes %u\ndisable_pair_routes %"
			     PRIu64 "\n", cut.host, cut.pairs);
	if (l >= 0 && (size_t)l < cap)
		l += snprintf(buf + l, cap - (size_t)l, "disable_isolated %u\n",
			      cut.isolated);
	return l < 0 || (size_t)l >= cap ? -EOVERFLOW : l;
}

/* Reading admin: the port's physical state now (a PortInfo Get by the
 * snapshot's route), as phys_state reads, then what a disable would cut
 * (dry_run, from the snapshot). */
static int admin_show(struct node *n, char *buf, size_t cap)
{
	const struct action_port *ap = n->owner;
	uint64_t guid = ap->guid;
	unsigned port = ap->port;
	struct fab_snap *s = sweeper_snapshot();
	const struct fab_node *fn = s ? fabsnap_find(s, guid) : NULL;
	struct ca_port *via = s ? sweeper_port(s) : NULL;
	uint8_t path[FAB_PATH_MAX], data[IB_SMP_DATA_SIZE];
	char dry[128];
	struct mad_engine *e;
	unsigned hops;
	int err = -ENODEV, r, dlen;

	if (!fn || port > fn->nports) {
		fabsnap_put(s);
		return s ? -ENOENT : -ENODATA;
	}
	hops = fn->hops;
	memcpy(path, fn->path, sizeof(path));
	dlen = dry_run(s, fn, port, dry, sizeof(dry));
	fabsnap_put(s);
	if (dlen < 0)
		return dlen;
	e = via ? ca_port_engine(via, &err) : NULL;
	if (!e)
		return err;
	r = query_smp_route_get(e, IB_ATTR_PORT_INFO, port, hops, path, data);
	ca_port_engine_done(via);
	if (r < 0)
		return r == -EPROTO ? -EIO : r;
	r = sysfmt_phys_state(buf, cap, mad_get_field(data, 0, IB_PORT_PHYS_STATE_F));
	if (r < 0 || (size_t)(r + dlen) >= cap)
		return r < 0 ? r : -EOVERFLOW;
	memcpy(buf + r, dry, (size_t)dlen);
	return r + dlen;
}

static void admin_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_open_settable(req, n, fi, admin_show, NULL);
}

static const struct node_ops admin_ops = {
	.show = admin_show, .open = admin_open, .write = admin_write,
};

/* -- counters/reset --------------------------------------------------------- */

static int start_reset(struct mad_engine *e, const struct fab_node *fn,
		       unsigned port, unsigned lid, struct action *a)
{
	return query_counters_reset(e, fn->guid, lid, port, action_done, a);
}

static void reset_write(fuse_req_t req, struct node *n, const char *buf,
			size_t size, off_t off, struct fuse_file_info *fi)
{
	unsigned port = ((const struct action_port *)n->owner)->port, lid;
	const struct fab_node *fn;
	struct fab_snap *s;

	uint64_t one;

	if (number_parse_value(buf, size, 1, 1, &one) < 0) {
		refuse(req, n, EINVAL, "counters/reset: expected 1");
		return;
	}
	if (!target(req, n, &s, &fn))
		return;
	lid = fabsnap_pma_lid(fn, port);
	if (!fn->ports[port].has_counters || !lid) {
		refuse(req, n, EOPNOTSUPP, "counters/reset: 0x%016" PRIx64 " port %u has "
		       "no counters to reset (%s)", fn->guid, port,
		       lid ? "its PMA gave none in the last sweep" : "no LID to reach its PMA");
		fabsnap_put(s);
		return;
	}
	run(req, n, size, "counters_reset", s, fn, port, start_reset, lid);
	fabsnap_put(s);
}

static const struct node_ops reset_ops = {
	.show = textfile_show_nothing, .open = textfile_open_action, .write = reset_write,
};

/* An action file (file: its path in the port's directory): root's, and
 * the admin group's (-o fabric_admin_group=), owning its port's name. */
static int add_action(struct node *dir, const char *file, const struct node_ops *ops,
		      uint64_t guid, unsigned port, mode_t mode)
{
	const char *name = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	struct action_port *ap = malloc(sizeof(*ap));
	struct node *n;

	if (!ap)
		return -ENOMEM;
	ap->guid = guid;
	ap->port = port;
	ap->file = file;
	if (group_set)
		mode |= (mode & 0600) >> 3;
	n = tree_add_owned(dir, name, S_IFREG | mode, ops, ap, 0);
	if (!n)
		return -ENOMEM;
	if (group_set)
		n->gid = group_gid;
	return 0;
}

int actions_port(struct node *port_dir, struct node *counters_dir, uint64_t guid,
		 unsigned port)
{
	if (add_action(port_dir, "admin", &admin_ops, guid, port, 0644) < 0 ||
	    add_action(counters_dir, "counters/reset", &reset_ops, guid, port, 0200) < 0)
		return -ENOMEM;
	return 0;
}
