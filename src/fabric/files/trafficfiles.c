/* A fabric port's traffic files (trafficfiles.h): counters/'s detail
 * counters (PortRcvErrorDetails, PortXmitDiscardDetails, PortVLXmitWait
 * per VL) and ports/N/rates, each made on open from the current snapshot;
 * no MAD.  Each file owns a small owner of its own: the node and port. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "umadfs/fabric/files/fabtext.h"
#include "umadfs/fabric/files/trafficfiles.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/watch/sweeper.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/pmadetails.h"

/* n->file: a detail counter's index (pmadetails.h), or FILE_RATES. */
#define FILE_RATES (-1)

struct port_file {
	uint64_t guid;
	unsigned port;
};

/* A detail counter: as a counter, EOPNOTSUPP when not answered (yet) or
 * past the port's VLs. */
static int detail_show(const struct fab_port *fp, unsigned i, char *buf, size_t cap)
{
	const uint8_t *det = fabsnap_details(fp, pmadetails_attr_of(i));

	if (!det || pmadetails_vl(i) >= (int)pmadetails_oper_vls(fp->oper_vls))
		return -EOPNOTSUPP;
	return snprintf(buf, cap, "%" PRIu64 "\n", pmadetails_value(i, det));
}

static int traffic_show(struct node *n, char *buf, size_t cap)
{
	const struct port_file *pf = n->owner;
	struct fab_snap *s = sweeper_snapshot();
	const struct fab_node *fn = s ? fabsnap_find(s, pf->guid) : NULL;
	int r = -ENOENT;

	if (fn && pf->port <= fn->nports)
		r = n->file == FILE_RATES ? fabtext_port_rates(s, fn, pf->port, buf, cap) :
			detail_show(&fn->ports[pf->port], (unsigned)n->file, buf, cap);
	fabsnap_put(s);
	return r;
}

static void traffic_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_open_late(req, n, fi, traffic_show);
}

static const struct node_ops traffic_ops = { .show = traffic_show, .open = traffic_open };

static int add_file(struct node *dir, const char *name, int which, uint64_t guid,
		    unsigned p)
{
	struct port_file *pf = malloc(sizeof(*pf));

	if (!pf)
		return -ENOMEM;
	*pf = (struct port_file){ guid, p };
	return tree_add_owned(dir, name, S_IFREG | 0444, &traffic_ops, pf, which) ?
		0 : -ENOMEM;
}

/* The VLs of the port in the current snapshot (OperationalVLs). */
static unsigned port_vls(uint64_t guid, unsigned p)
{
	struct fab_snap *s = sweeper_snapshot();
	const struct fab_node *fn = s ? fabsnap_find(s, guid) : NULL;
	unsigned vls = fn && p <= fn->nports ?
		pmadetails_oper_vls(fn->ports[p].oper_vls) : 0;

	fabsnap_put(s);
	return vls;
}

int trafficfiles_port(struct node *dir, struct node *counters, uint64_t guid,
		      unsigned p)
{
	unsigned vls = port_vls(guid, p);

	for (unsigned i = 0; i < pmadetails_count(); i++)
		if (pmadetails_vl(i) < (int)vls &&
		    add_file(counters, pmadetails_name(i), (int)i, guid, p) < 0)
			return -ENOMEM;
	return add_file(dir, "rates", FILE_RATES, guid, p);
}
