/* The pairs' SLs (pathsl.h): asked of the SA, one PathRecord Get a pair,
 * for a small fabric whose routing the check finds a credit loop in when
 * it follows every route on SL 0 (fabric.c decides, before the judgement);
 * then, if some pair is on another SL, every switch's SL-to-VL tables
 * from each Active port to each Active port to a switch, each SL's VL
 * kept.  A GetTable would cost one request, but umad2sim hands a client
 * only an answer's first RMPP segment (three PathRecords), so a Get a
 * pair, bounded by PATHSL_CAS_MAX. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/engine/query.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/pathsl.h"
#include "umadfs/mad/getframe.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/mad.h"

/* PathRecord's ComponentMask bits (IBA 15.2.5.16): DLID, SLID. */
#define PR_COMP_DLID (1ull << 4)
#define PR_COMP_SLID (1ull << 5)
#define PATHSL_LIDS_MAX 8 /* DLIDs asked of a port with an LMC */

bool pathsl_carry(const struct fab_snap *prev, struct fab_snap *snap)
{
	if (!snap->pathsl && prev && prev->pathsl &&
	    fabsnap_routes_as_before(prev, snap)) {
		snap->pathsl = prev->pathsl;
		fabsnap_pathsl_get(snap->pathsl);
	}
	return snap->pathsl != NULL;
}

/* A CA's port the pairs run between: Active, with a LID. */
static bool endport(const struct fab_node *n, unsigned p)
{
	const struct fab_port *fp = &n->ports[p];

	return n->type == FAB_CA && fp->has_info && fp->state == IB_LINK_ACTIVE && fp->lid;
}

/* snap's endports into eps (cap of them): how many there are. */
static size_t endports(const struct fab_snap *snap, const struct fab_port **eps,
		       size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < snap->nnodes; i++)
		for (unsigned p = 1; p <= snap->nodes[i].nports; p++)
			if (endport(&snap->nodes[i], p) && n++ < cap)
				eps[n - 1] = &snap->nodes[i].ports[p];
	return n;
}

bool pathsl_small(const struct fab_snap *snap)
{
	return snap->ok && snap->sm_lid && endports(snap, NULL, 0) <= PATHSL_CAS_MAX;
}

/* One PathRecord Get from slid to dlid: its SL in *sl.  0, -ENOENT (the
 * SA has no such path), or -errno (no answer). */
static int path_get(struct fab_snap *snap, struct mad_engine *engine, unsigned slid,
		    unsigned dlid, unsigned *sl, bool (*stop)(void))
{
	uint8_t frame[UMAD_FRAME_HDR_SIZE + MAD_SIZE], rec[IB_SA_DATA_SIZE] = { 0 };
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;
	size_t len = MAD_SIZE;
	int r;

	if (stop())
		return -ECANCELED;
	mad_set_field(rec, 0, IB_SA_PR_DLID_F, dlid);
	mad_set_field(rec, 0, IB_SA_PR_SLID_F, slid);
	getframe_sa(frame, snap->sm_lid, IB_MAD_METHOD_GET, IB_SA_ATTR_PATHRECORD, rec,
		    sizeof(rec));
	mad_set_field64(mad, 0, IB_SA_COMPMASK_F, PR_COMP_DLID | PR_COMP_SLID);
	snap->stats.pathsl_mads++;
	snap->stats.mads++;
	r = engine_query(engine, frame, sizeof(frame), &len, QUERY_TIMEOUT_MS, QUERY_RETRIES);
	if (r < 0)
		return r;
	if (mad_get_field(mad, 0, IB_MAD_STATUS_F) || len < IB_SA_DATA_OFFS + 52)
		return -ENOENT;
	*sl = mad_get_field(mad + IB_SA_DATA_OFFS, 0, IB_SA_PR_SL_F);
	return 0;
}

/* Every pair's SL, into a new table (*out). */
static int ask_pairs(struct fab_snap *snap, struct mad_engine *engine,
		     struct fab_pathsl **out, bool (*stop)(void))
{
	const struct fab_port *eps[PATHSL_CAS_MAX];
	size_t n = endports(snap, eps, PATHSL_CAS_MAX), k = 0;
	struct fab_pathsl *t;
	int r = 0;

	if (n > PATHSL_CAS_MAX)
		return -E2BIG;
	t = calloc(1, sizeof(*t) + n * n * PATHSL_LIDS_MAX * sizeof(t->pairs[0]));
	if (!t)
		return -ENOMEM;
	t->refs = 1;
	for (size_t a = 0; r >= 0 && a < n; a++)
		for (size_t b = 0; r >= 0 && b < n; b++) {
			unsigned lids = 1u << (eps[b]->lmc & 7), sl = 0;

			for (unsigned l = 0; a != b && l < lids && l < PATHSL_LIDS_MAX; l++) {
				r = path_get(snap, engine, eps[a]->lid, eps[b]->lid + l, &sl,
					     stop);
				if (r == -ENOENT)
					t->unknown++;
				else if (r < 0)
					break;
				t->pairs[k].src = eps[a]->port_guid;
				t->pairs[k].dlid = (uint16_t)(eps[b]->lid + l);
				t->pairs[k++].sl = (uint8_t)(r ? 0 : sl);
				t->sls |= (uint16_t)(1u << (r ? 0 : sl));
				r = 0;
			}
		}
	if (r < 0) {
		free(t);
		return r;
	}
	t->n = k;
	qsort(t->pairs, k, sizeof(t->pairs[0]), fabsnap_pathsl_cmp);
	*out = t;
	return 0;
}

/* One SLtoVLMappingTable Get of switch n, from port in to port out, into
 * t (SL 0's VL in vl[], the map in maps[]).  0 or -errno (no answer). */
static int table_get(struct fab_snap *snap, struct mad_engine *engine,
		     const struct fab_node *n, struct fab_sl2vl *t, unsigned in, unsigned out,
		     bool (*stop)(void))
{
	uint8_t frame[UMAD_FRAME_HDR_SIZE + MAD_SIZE];
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;
	size_t len = MAD_SIZE, i = in * (n->nports + 1u) + out;
	uint64_t map;
	int r;

	if (stop())
		return -ECANCELED;
	getframe_smp_route(frame, IB_ATTR_SLVL_TABLE, in << 8 | out, n->hops, n->path);
	snap->stats.pathsl_mads++;
	snap->stats.mads++;
	r = engine_query(engine, frame, sizeof(frame), &len, QUERY_TIMEOUT_MS, QUERY_RETRIES);
	if (r < 0)
		return r;
	if (mad_get_field(mad, 0, IB_DRSMP_STATUS_F))
		return 0; /* as not read: SL 0 taken to stay on VL 0 */
	map = mad_get_field64(mad + IB_SMP_DATA_OFFS, 0, IB_SLTOVL_MAPPING_TABLE_F);
	t->maps[i] = map;
	t->vl[i] = (uint8_t)(map >> 60 & 0xf);
	return 0;
}

/* Switch n's tables, each SL's VL, in a new table of snap's. */
static int ask_switch(struct fab_snap *snap, struct mad_engine *engine, struct fab_node *n,
		      bool (*stop)(void))
{
	size_t cells = (n->nports + 1u) * (n->nports + 1u);
	struct fab_sl2vl *t = fabsnap_sl2vl_new(n->nports);
	int r = 0;

	if (!t || !(t->maps = calloc(cells, sizeof(*t->maps)))) {
		fabsnap_sl2vl_put(t);
		return -ENOMEM;
	}
	t->full = true;
	for (unsigned in = 1; r == 0 && in <= n->nports; in++)
		for (unsigned out = 1; r == 0 && out <= n->nports; out++)
			if (fabsnap_sl2vl_pair(snap, n, in, out))
				r = table_get(snap, engine, n, t, in, out, stop);
	if (r < 0) {
		fabsnap_sl2vl_put(t);
		return r;
	}
	fabsnap_sl2vl_put(n->sl2vl);
	n->sl2vl = t;
	return 0;
}

int pathsl_ask(struct fab_snap *snap, struct mad_engine *engine, bool (*stop)(void))
{
	struct fab_pathsl *t = NULL;
	int r = ask_pairs(snap, engine, &t, stop);

	for (size_t i = 0; r == 0 && (t->sls & ~1u) && i < snap->nnodes; i++) {
		struct fab_node *n = &snap->nodes[i];

		if (n->type == FAB_SWITCH && n->lft && n->sl2vl && !n->sl2vl->maps)
			r = ask_switch(snap, engine, n, stop);
	}
	if (r < 0) {
		fabsnap_pathsl_put(t);
		return r;
	}
	snap->pathsl = t;
	return 0;
}
