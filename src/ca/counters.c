/* Port counters through the MAD engine, and counters/reset: a write of 1
 * clears them (perfquery -R and -x -R, query_counters_reset()), parked
 * until the PMA answers; a refused write is logged with the writer's uid. */
#include <errno.h>
#include <stdlib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/base/log.h"
#include "umadfs/base/number.h"
#include "umadfs/ca/attr.h"
#include "umadfs/ca/counters.h"
#include "umadfs/device/device.h"
#include "umadfs/engine/query.h"
#include "umadfs/fuse/parkedwrite.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/getframe.h"
#include "umadfs/mad/pmacounters.h"

static int counter_show(struct node *n, char *buf, size_t cap)
{
	struct ca_port *port = n->owner;
	uint8_t data[IB_PC_DATA_SZ];
	unsigned capmask, attr_id;
	uint64_t v;
	int lid, r;
	bool ext;

	lid = attr_port_lid(port);
	if (lid < 0)
		return lid;
	memset(data, 0, sizeof(data));
	r = ca_port_pma_get(port, (unsigned)lid, CLASS_PORT_INFO, data);
	if (r < 0)
		return r == -ENODEV || r == -ENETDOWN ? r : -EIO;
	capmask = mad_get_field(data, 0, IB_CPI_CAPMASK_F);
	attr_id = pmacounters_attr((unsigned)n->attr, capmask);
	if (!attr_id)
		return -EOPNOTSUPP;

	memset(data, 0, sizeof(data));
	getframe_counters_select(data, attr_id, (unsigned)port->portnum);
	r = ca_port_pma_get(port, (unsigned)lid, attr_id, data);
	if (r < 0)
		return -EIO;
	ext = attr_id == IB_GSI_PORT_COUNTERS_EXT;
	if (!pmacounters_value((unsigned)n->attr, ext ? NULL : data, ext ? data : NULL,
			       capmask, &v))
		return -EOPNOTSUPP;
	return snprintf(buf, cap, "%" PRIu64 "\n", v);
}

/* A text file: a stat shows the true size (textfile_size(): two MADs per
 * stat), so that copies get the value. */
static const struct node_ops counter_ops = { .show = counter_show };

/* Set before the CAs are built, then only read. */
static bool group_set;
static gid_t group_gid;
static counters_note_fn note;

void counters_configure(const gid_t *group, counters_note_fn fn)
{
	group_set = group != NULL;
	if (group)
		group_gid = *group;
	note = fn;
}

/* A reset in flight. */
struct reset {
	struct parkedwrite *pw;
	char port[UMAD_CA_NAME_LEN + 8]; /* "CA/N" */
	uid_t uid;
};

static void reset_done(void *ctx, int err, const char *why)
{
	struct reset *r = ctx;

	if (err)
		log_warn("%s: uid %u: counters reset failed: %s", r->port,
			 (unsigned)r->uid, why);
	else
		log_info("%s: uid %u: counters reset", r->port, (unsigned)r->uid);
	if (note)
		note("event=action action=counters_reset port=%s uid=%u result=%s%s%s",
		     r->port, (unsigned)r->uid, err ? "failed" : "ok",
		     err ? " errno=" : "", err ? log_errno_name(-err) : "");
	parkedwrite_answer(r->pw, -err);
	free(r);
}

/* Refuses a reset: err, and a log line with the writer's uid and the
 * port (the journal's trail of what was refused: no action, no event). */
static void refuse(fuse_req_t req, const struct ca_port *port, int err, const char *why)
{
	log_warn("%s/%d: uid %u: counters reset refused (%s): %s", port->ca->name,
		 port->portnum, (unsigned)fuse_req_ctx(req)->uid, log_errno_name(err), why);
	fuse_reply_err(req, err);
}

static void reset_write(fuse_req_t req, struct node *n, const char *buf,
			size_t size, off_t off, struct fuse_file_info *fi)
{
	struct ca_port *port = n->owner;
	struct mad_engine *e;
	struct reset *r;
	uint64_t one;
	int lid, err;

	if (number_parse_value(buf, size, 1, 1, &one) < 0) {
		refuse(req, port, EINVAL, "expected 1");
		return;
	}
	lid = attr_port_lid(port);
	if (lid <= 0) {
		refuse(req, port, lid < 0 ? -lid : ENETDOWN, lid < 0 ?
		       "the port's LID cannot be read" : "the port has no LID");
		return;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (!(e = ca_port_engine(port, &err))) {
		refuse(req, port, -err, "the port has no MAD engine");
		free(r);
		return;
	}
	snprintf(r->port, sizeof(r->port), "%s/%d", port->ca->name, port->portnum);
	r->uid = fuse_req_ctx(req)->uid;
	r->pw = parkedwrite_new(req, size);
	err = r->pw ? query_counters_reset(e, 0, (unsigned)lid, (unsigned)port->portnum,
					   reset_done, r) : -ENOMEM;
	ca_port_engine_done(port);
	if (err < 0 && r->pw)
		reset_done(r, err, "the request could not be sent");
	else if (err < 0) {
		fuse_reply_err(req, ENOMEM);
		free(r);
	}
}

static const struct node_ops reset_ops = {
	.show = textfile_show_nothing, .open = textfile_open_action, .write = reset_write,
};

int counters_add_files(struct node *port_dir, struct ca_port *port)
{
	struct node *dir = tree_add(port_dir, "counters", S_IFDIR | 0555, NULL, port, 0);
	struct node *reset;

	if (!dir)
		return -ENOMEM;
	for (unsigned i = 0; i < pmacounters_count(); i++)
		if (!tree_add(dir, pmacounters_name(i), S_IFREG | 0444, &counter_ops,
			      port, (int)i))
			return -ENOMEM;
	reset = tree_add(dir, "reset", S_IFREG | (group_set ? 0220 : 0200), &reset_ops,
			 port, 0);
	if (!reset)
		return -ENOMEM;
	if (group_set)
		reset->gid = group_gid;
	return 0;
}
