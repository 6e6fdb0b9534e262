/* A sweep's multicast groups and forwarding tables (discover_priv.h):
 * the SA's MCMemberRecords, asked once discovery is over, and each
 * switch's MulticastForwardingTable blocks for the MLIDs in use.
 *
 * The SA is asked at the end of every sweep whose master SM answered
 * SMInfo (at the SM LID of the local port): two GetTables of
 * MCMemberRecord with component mask 0, as saquery -g and saquery --smkey
 * 1 -m ask them: one without SM_Key, which the SM answers with a record
 * per group, and one with SM_Key 1 (opensm's default), which a trusted
 * requester gets a record per member for.  Each waits for its answer
 * (200 ms a try, 3 tries at most), nothing else in flight.  An SM with another
 * key answers the second with the PortGIDs zeroed: the members are then
 * unknown (fab_mcast.untrusted), not absent.
 *
 * A switch's table (only its blocks holding an MLID in use, every
 * position of 16 ports) is read when the snapshot before has none for it,
 * the groups or their members changed, the sweep reads every unicast
 * table (a change that makes the SM reroute: sweeplft.c), this process
 * sent it a MulticastForwardingTable Set since the sweep before
 * (sweepsets.c), or it is due
 * (fabric_routes_max_age after it was read, spread by GUID); otherwise
 * the snapshot before's is shared. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/engine/query.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/mcast.h"
#include "umadfs/mad/getframe.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/mad.h"

#include "discover_priv.h"

#define SA_SMKEY 1                   /* opensm's default SM_Key */
#define SA_ANSWER_MAX (1u << 20)     /* bytes of MAD an answer may have */
#define MCM_RECORDS_MAX 16384        /* of either GetTable */
#define MFT_BLOCKS_MAX ((IB_MAX_MCAST_LID - IB_MIN_MCAST_LID + 1) / FAB_MFT_MLIDS)

/* One MCMemberRecord as read. */
struct mcm {
	uint8_t mgid[16];
	uint64_t prefix, guid;
	uint16_t mlid, pkey;
	uint8_t join_state, proxy;
};

/* Whether an answer is the first RMPP segment of more: one whole MAD
 * whose data area ends inside a record (under umad2sim a client gets that
 * segment only; the kernel hands the whole message, its records whole). */
static bool cut_short(size_t mad_len, size_t stride)
{
	return mad_len == MAD_SIZE && (mad_len - IB_SA_DATA_OFFS) % stride;
}

static void read_mcm(uint8_t *rec, struct mcm *r)
{
	uint8_t gid[16];

	memset(r, 0, sizeof(*r));
	mad_decode_field(rec, IB_SA_MCM_MGID_F, r->mgid);
	mad_decode_field(rec, IB_SA_MCM_PORTGID_F, gid);
	for (int i = 0; i < 8; i++) {
		r->prefix = r->prefix << 8 | gid[i];
		r->guid = r->guid << 8 | gid[8 + i];
	}
	r->mlid = (uint16_t)mad_get_field(rec, 0, IB_SA_MCM_MLID_F);
	r->pkey = (uint16_t)mad_get_field(rec, 0, IB_SA_MCM_PKEY_F);
	r->join_state = (uint8_t)mad_get_field(rec, 0, IB_SA_MCM_JOIN_STATE_F);
	r->proxy = (uint8_t)mad_get_field(rec, 0, IB_SA_MCM_PROXY_JOIN_F);
}

/* One GetTable of MCMemberRecord (smkey: 0 or SA_SMKEY) to the SA at
 * lid: the records in *out (malloc'd), their count in *n.  0 or -errno
 * (-EPROTO: the SA's status). */
static int get_table(struct discover *d, unsigned lid, uint64_t smkey,
		     struct mcm **out, size_t *n, bool *truncated)
{
	size_t cap = UMAD_FRAME_HDR_SIZE + SA_ANSWER_MAX, len = MAD_SIZE, stride;
	uint8_t *frame = malloc(cap), *mad, none[1] = { 0 };
	int r;

	*out = NULL;
	*n = 0;
	if (!frame)
		return -ENOMEM;
	getframe_sa(frame, lid, IB_MAD_METHOD_GET_TABLE, IB_SA_ATTR_MCRECORD, none, 0);
	mad = frame + UMAD_FRAME_HDR_SIZE;
	mad_set_field64(mad, 0, IB_SA_MKEY_F, smkey);
	d->snap->stats.mads++;
	r = engine_query(d->engine, frame, cap, &len, QUERY_TIMEOUT_MS, QUERY_RETRIES);
	if (!r && mad_get_field(mad, 0, IB_MAD_STATUS_F))
		r = -EPROTO;
	stride = r ? 0 : 8u * mad_get_field(mad, 0, IB_SA_ATTROFFS_F);
	if (stride && len > IB_SA_DATA_OFFS) {
		*truncated |= cut_short(len, stride);
		*n = (len - IB_SA_DATA_OFFS) / stride;
		if (*n > MCM_RECORDS_MAX)
			*n = MCM_RECORDS_MAX;
		*out = calloc(*n ? *n : 1, sizeof(**out));
		if (!*out)
			r = -ENOMEM;
		for (size_t i = 0; !r && i < *n; i++)
			read_mcm(mad + IB_SA_DATA_OFFS + i * stride, &(*out)[i]);
	}
	if (!r && !*out && !(*out = calloc(1, sizeof(**out))))
		r = -ENOMEM; /* none: an array all the same, for qsort() */
	free(frame);
	return r;
}

static int cmp_mcm(const void *pa, const void *pb)
{
	const struct mcm *a = pa, *b = pb;
	int c = (a->mlid > b->mlid) - (a->mlid < b->mlid);

	if (!c)
		c = memcmp(a->mgid, b->mgid, sizeof(a->mgid));
	if (!c)
		c = (a->prefix > b->prefix) - (a->prefix < b->prefix);
	return c ? c : (a->guid > b->guid) - (a->guid < b->guid);
}

static bool same_group(const struct mcm *a, const struct mcm *b)
{
	return a->mlid == b->mlid && !memcmp(a->mgid, b->mgid, sizeof(a->mgid));
}

/* The groups of g[ng] and the members of m[nm] (both sorted) merged. */
static struct fab_mcast *merge(const struct mcm *g, size_t ng, const struct mcm *m,
			       size_t nm)
{
	struct fab_mcast *mc = fabmcast_new((uint32_t)(ng + nm), (uint32_t)nm);
	size_t groups = 0, i = 0, j = 0;

	if (!mc)
		return NULL;
	while (i < ng || j < nm) {
		const struct mcm *head = j < nm && (i == ng || cmp_mcm(&m[j], &g[i]) < 0 ||
						    same_group(&m[j], &g[i])) ? &m[j] : &g[i];
		struct fab_mgroup *grp = &mc->groups[groups++];

		memcpy(grp->mgid, head->mgid, sizeof(grp->mgid));
		grp->mlid = head->mlid;
		grp->pkey = head->pkey;
		grp->first = (uint32_t)j;
		for (; i < ng && same_group(&g[i], head); i++)
			;
		for (; j < nm && same_group(&m[j], head); j++) {
			struct fab_mcmember *mb = &mc->members[j];

			mb->prefix = m[j].prefix;
			mb->guid = m[j].guid;
			mb->join_state = m[j].join_state;
			mb->proxy = m[j].proxy;
		}
		grp->n = (uint32_t)j - grp->first;
	}
	mc->ngroups = (uint32_t)groups;
	return mc;
}

static int cmp_member_guid(const void *pa, const void *pb)
{
	const struct fab_mcmember *a = *(struct fab_mcmember *const *)pa;
	const struct fab_mcmember *b = *(struct fab_mcmember *const *)pb;

	return (a->guid > b->guid) - (a->guid < b->guid);
}

/* Each member's node and port, by its GUID: the view's ports walked once
 * against the members sorted by GUID. */
static int place_members(const struct fab_snap *s, struct fab_mcast *mc)
{
	struct fab_mcmember **by = malloc((mc->nmembers + 1u) * sizeof(*by));

	if (!by)
		return -ENOMEM;
	for (uint32_t i = 0; i < mc->nmembers; i++)
		by[i] = &mc->members[i];
	qsort(by, mc->nmembers, sizeof(*by), cmp_member_guid);
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = n->type == FAB_SWITCH ? 0 : 1; p <= n->nports; p++) {
			struct fab_mcmember key = { .guid = n->ports[p].port_guid }, *k = &key;
			struct fab_mcmember **hit = key.guid ? bsearch(&k, by, mc->nmembers,
						    sizeof(*by), cmp_member_guid) : NULL;

			/* (one GUID may be a member of many groups) */
			for (; hit && hit > by && hit[-1]->guid == key.guid; hit--)
				;
			for (; hit && hit < by + mc->nmembers && (*hit)->guid == key.guid; hit++) {
				(*hit)->node_guid = n->guid;
				(*hit)->port = (uint8_t)p;
			}
			if (n->type == FAB_SWITCH)
				break;
		}
	}
	free(by);
	return 0;
}

/* Drops the records whose PortGID is zero (an untrusted requester's
 * view): true if there were any. */
static bool drop_zero_gids(struct mcm *m, size_t *n)
{
	size_t k = 0;

	for (size_t i = 0; i < *n; i++)
		if (m[i].prefix || m[i].guid)
			m[k++] = m[i];
	if (k == *n)
		return false;
	*n = k;
	return true;
}

/* The SA's groups and members into d->snap->mcast; nothing when the SA
 * does not answer. */
static int ask_sa(struct discover *d)
{
	struct mcm *g, *m;
	size_t ng, nm;
	bool truncated = false, untrusted;
	int r = get_table(d, d->snap->sm_lid, 0, &g, &ng, &truncated);

	if (r == 0)
		r = get_table(d, d->snap->sm_lid, SA_SMKEY, &m, &nm, &truncated);
	else
		m = NULL;
	if (r < 0)
		goto out;
	untrusted = drop_zero_gids(m, &nm);
	qsort(g, ng, sizeof(*g), cmp_mcm);
	qsort(m, nm, sizeof(*m), cmp_mcm);
	d->snap->mcast = merge(g, ng, m, nm);
	r = d->snap->mcast ? place_members(d->snap, d->snap->mcast) : -ENOMEM;
	if (d->snap->mcast) {
		d->snap->mcast->truncated = truncated;
		d->snap->mcast->untrusted = untrusted;
	}
out:
	free(g);
	free(m);
	return r == -ENOMEM ? r : 0;
}

/* The blocks of the MLIDs in use, ascending, into block[]: how many. */
static unsigned mlid_blocks(const struct fab_mcast *mc, uint16_t *block)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < mc->ngroups; i++) {
		unsigned mlid = mc->groups[i].mlid, b;

		if (!IB_MLID_VALID(mlid))
			continue;
		b = (mlid - IB_MIN_MCAST_LID) / FAB_MFT_MLIDS;
		if (!n || block[n - 1] != b) /* groups are by MLID */
			block[n++] = (uint16_t)b;
	}
	return n;
}

/* Whether was's table stands in this sweep for one of these blocks. */
static bool mft_stands(const struct discover *d, const struct fab_node *was,
		       const uint16_t *block, unsigned nblocks)
{
	const struct fab_mft *t = was->mft;

	if (!t || t->pending || d->lft_all || t->nblocks != nblocks ||
	    memcmp(t->block, block, nblocks * sizeof(*block)) ||
	    !fabmcast_same(d->prev->mcast, d->snap->mcast) ||
	    sweepsets_touched(d, was->guid, IB_ATTR_MULTICASTFORWTBL))
		return false;
	return d->now_ms < sweepreq_due_ms(was->guid, t->read_ms, d->routes.max_age_ms);
}

/* Switch ni's table: every position of each block asked. */
static int ask_mft(struct discover *d, uint32_t ni, const uint16_t *block,
		   unsigned nblocks)
{
	struct fab_node *n = &d->snap->nodes[ni];
	unsigned npos = n->nports / FAB_MFT_PORTS + 1u;

	n->mft = fabmft_new(nblocks, npos, d->now_ms);
	if (!n->mft)
		return -ENOMEM;
	memcpy(n->mft->block, block, nblocks * sizeof(*block));
	for (unsigned b = 0; b < nblocks; b++)
		for (unsigned pos = 0; pos < npos; pos++) {
			struct req *q = sweepreq_enqueue(d, REQ_MFT, ni, 0, n->hops, n->path);

			if (!q)
				return -ENOMEM;
			q->block = (uint16_t)(b << 4 | pos);
		}
	return 0;
}

int sweepmcast_ask(struct discover *d)
{
	uint16_t block[MFT_BLOCKS_MAX];
	unsigned nblocks;

	if (!fabsnap_master(d->snap)) /* no SA there to wait for */
		return 0;
	if (ask_sa(d) < 0)
		return -ENOMEM;
	if (!d->routes.on || !d->snap->mcast)
		return 0;
	nblocks = mlid_blocks(d->snap->mcast, block);
	for (uint32_t ni = 0; nblocks && ni < d->snap->nnodes; ni++) {
		struct fab_node *n = &d->snap->nodes[ni];
		const struct fab_node *was = d->ns[ni].was;

		if (n->type != FAB_SWITCH || !n->ports[0].has_info)
			continue;
		if (was && d->prev && mft_stands(d, was, block, nblocks)) {
			n->mft = was->mft;
			fabmft_get(n->mft);
		} else if (ask_mft(d, ni, block, nblocks) < 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

unsigned sweepmcast_attrmod(const struct discover *d, const struct req *r)
{
	const struct fab_mft *t = d->snap->nodes[r->node].mft;
	unsigned b = r->block >> 4, pos = r->block & 15u;

	/* PortMask position in bits 31:28, the block in 8:0 (IBA 14.2.5.8) */
	return (pos << 28) | (t && b < t->nblocks ? t->block[b] : 0u);
}

void sweepmcast_block(struct discover *d, const struct req *r, const uint8_t *data)
{
	struct fab_node *n = &d->snap->nodes[r->node];
	unsigned b = r->block >> 4, pos = r->block & 15u;
	uint16_t *mask;

	if (!n->mft)
		return; /* a block lost earlier dropped it */
	if (!data || b >= n->mft->nblocks) {
		fabmft_put(n->mft);
		n->mft = NULL;
		return;
	}
	/* 32 PortMasks of 16 bits, big-endian: libibmad names the block
	 * (IB_MULTICAST_FORW_TBL_F) but no entry (ibroute -M reads them so). */
	n->mft->pending--;
	mask = n->mft->mask + (size_t)b * FAB_MFT_MLIDS * n->mft->npos;
	for (unsigned i = 0; i < FAB_MFT_MLIDS; i++)
		mask[i * n->mft->npos + pos] = (uint16_t)(data[2 * i] << 8 | data[2 * i + 1]);
}
