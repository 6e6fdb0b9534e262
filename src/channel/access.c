/* The access policy of the MAD files (see access.h). */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "umadfs/base/group.h"
#include "umadfs/base/number.h"
#include "umadfs/channel/access.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/mad.h"
#include "umadfs/mad/madtext.h"

/* Set once by main() before the tree is built, read-only afterwards. */
static bool group_set, group_smi;
static gid_t group_gid;

int access_set_group(const char *group, bool smi, char *why, size_t whylen)
{
	gid_t gid = 0;
	int r = group_parse(group, &gid, why, whylen);

	if (r < 0)
		return r;
	group_set = true;
	group_gid = gid;
	group_smi = smi;
	return 0;
}

void access_share_file(struct node *n, uid_t owner)
{
	n->uid = owner;
	if (!group_set)
		return;
	n->gid = group_gid;
	n->mode |= (n->mode & 0600) >> 3;
}

bool access_group(gid_t *out)
{
	*out = group_gid;
	return group_set;
}

void access_share_dir(struct node *n, uid_t owner, bool sticky)
{
	n->uid = owner;
	if (!group_set)
		return;
	n->gid = group_gid;
	n->mode = S_IFDIR | 0770 | (sticky ? S_ISVTX : 0);
}

static bool opener_in_group(fuse_req_t req, gid_t fsgid)
{
	gid_t small[64], *list = small;
	bool in = fsgid == group_gid;
	int n;

	if (in)
		return true;
	/* The supplementary groups, read from /proc for the requesting
	 * thread: FUSE passes only uid, gid and pid. */
	n = fuse_req_getgroups(req, 64, small);
	if (n > 64) {
		list = malloc((size_t)n * sizeof(*list));
		if (!list)
			return false;
		n = fuse_req_getgroups(req, n, list);
	}
	for (int i = 0; i < n && !in; i++)
		in = list[i] == group_gid;
	if (list != small)
		free(list);
	return in;
}

bool access_opener_privileged(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	if (ctx->uid == 0)
		return true;
	/* Anyone else got past the kernel's mode check only as a member;
	 * asked again so that a wrong guess fails closed. */
	return group_set && group_smi && opener_in_group(req, ctx->gid);
}

#define WHO_MAY "root only (mount option mad_group_smi gives it to the group)"

int access_check_class(unsigned mgmt_class, char *why, size_t whylen)
{
	const char *name = madtext_class_name((int)mgmt_class);

	/* QP0: the SMAs act on what arrives there (a PortInfo Set disables
	 * a port) unless the SM guards them with an M_Key, which many
	 * fabrics do not; SMP Gets read M_Keys and routes. */
	if (mad_class_is_smi(mgmt_class)) {
		snprintf(why, whylen, "class %s (0x%02x) is subnet management: "
			 WHO_MAY, name ? name : "?", mgmt_class);
		return -EPERM;
	}
	return 0;
}

int access_check_mad(const uint8_t *mad, char *why, size_t whylen)
{
	unsigned method = mad[3];
	int r = access_check_class(mad[1], why, whylen);

	if (r < 0)
		return r;
	/* Set writes an attribute in every class (PerfMgt Set clears
	 * counters, SA Set adds records); SA Delete removes records.  Gets,
	 * GetTable, Send, Trap, Report and responses leave the receiver's
	 * settings as they were. */
	if (mad_method_changes_state(method)) {
		snprintf(why, whylen, "method %s (0x%02x) changes state: " WHO_MAY,
			 madtext_method_name((int)method), method);
		return -EPERM;
	}
	return 0;
}
