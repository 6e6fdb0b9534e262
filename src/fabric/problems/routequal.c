/* Whether the routing as a whole is any good (problems_priv.h), judged as
 * ibdmchk judges opensm's dump files, from the snapshot's forwarding
 * tables and no MAD: every CA port's route to every CA port's LID
 * followed once per destination LID (each switch's entry, then each
 * source's switch walked to the end, a switch met before not walked
 * again); from that the CA-to-CA hop histograms (by the tables, by the
 * topology's minimum), the DLIDs routed out of each switch-to-switch port,
 * and the channel dependencies whose cycles creditloop.c looks for.
 * fabric/routing's text and numbers go in the snapshot (fab_routing). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/array.h"
#include "umadfs/fabric/snapshot/routes.h"
#include "umadfs/mad/ibcodes.h"

#include "routequal_priv.h"

#define PORTS_FAR 4 /* ports farthest from the mean, listed */
#define BALANCE_SLACK 1 /* route_unbalanced: more LIDs than this between
			 * a switch's ports (check_lft_balance's) */

/* Channel c's port beyond: the switch there, or the CA port. */
static void channel_beyond(struct rq *q, size_t c, const struct fab_node *n,
			   unsigned p)
{
	const struct fab_node *pn = NULL;
	const struct fab_port *pp = p ? fabsnap_peer(q->s, &n->ports[p], &pn) : NULL;

	q->peer[c] = RQ_NONE;
	q->end[c] = NULL;
	if (!pp || !n->ports[p].has_info || n->ports[p].state != IB_LINK_ACTIVE)
		return;
	if (pn->type == FAB_SWITCH)
		q->peer[c] = q->swno[pn - q->s->nodes];
	else
		q->end[c] = pp;
}

/* The VL SL 0 goes out of switch k's port out on, come in by in. */
static unsigned vl_of(const struct rq *q, uint32_t k, unsigned in, unsigned out)
{
	unsigned v = fabsnap_sl2vl_vl(q->s->nodes[q->sw[k]].sl2vl, in, out);

	return v < q->nvl ? v : q->nvl - 1;
}

/* The VLs the switches' SL-to-VL tables map SL 0 (or the pairs' SLs)
 * to: q->nvl. */
static void count_vls(struct rq *q)
{
	routesl_init(q);
	q->nvl = 1;
	if (q->sls) {
		q->nvl = routesl_nvl(q);
		return;
	}
	for (uint32_t k = 0; k < q->nsw; k++) {
		const struct fab_node *n = &q->s->nodes[q->sw[k]];

		for (unsigned in = 1; n->sl2vl && in <= n->nports; in++)
			for (unsigned out = 1; out <= n->nports; out++)
				if (fabsnap_sl2vl_vl(n->sl2vl, in, out) + 1 > q->nvl)
					q->nvl = fabsnap_sl2vl_vl(n->sl2vl, in, out) + 1;
	}
}

/* The switches with a table, their ports as channels, and the bits of
 * their dependencies (a channel into a switch: one per port of it). */
static int build_switches(struct rq *q)
{
	const struct fab_snap *s = q->s;
	size_t bits = 0;

	q->swno = malloc((s->nnodes + 1) * sizeof(*q->swno));
	q->sw = malloc((s->nnodes + 1) * sizeof(*q->sw));
	q->first = malloc((s->nnodes + 1) * sizeof(*q->first));
	if (!q->swno || !q->sw || !q->first)
		return -ENOMEM;
	for (size_t i = 0; i < s->nnodes; i++) {
		q->swno[i] = RQ_NONE;
		if (s->nodes[i].type != FAB_SWITCH || !s->nodes[i].lft)
			continue;
		q->swno[i] = (uint32_t)q->nsw;
		q->first[q->nsw] = q->nch;
		q->sw[q->nsw++] = (uint32_t)i;
		q->nch += s->nodes[i].nports + 1u;
	}
	q->peer = malloc((q->nch + 1) * sizeof(*q->peer));
	q->end = malloc((q->nch + 1) * sizeof(*q->end));
	q->ebase = malloc((q->nch + 1) * sizeof(*q->ebase));
	q->dlids = calloc(q->nch + 1, sizeof(*q->dlids));
	q->calids = calloc(q->nch + 1, sizeof(*q->calids));
	if (!q->peer || !q->end || !q->ebase || !q->dlids || !q->calids)
		return -ENOMEM;
	for (uint32_t k = 0; k < q->nsw; k++) {
		const struct fab_node *n = &s->nodes[q->sw[k]];

		for (unsigned p = 0; p <= n->nports; p++)
			channel_beyond(q, q->first[k] + p, n, p);
	}
	count_vls(q);
	for (size_t c = 0; c < q->nch; c++) {
		q->ebase[c] = bits;
		if (q->peer[c] != RQ_NONE)
			bits += s->nodes[q->sw[q->peer[c]]].nports + 1u;
	}
	bits *= (size_t)q->nvl * q->nvl;
	q->edges = calloc(bits / 64 + 1, sizeof(*q->edges));
	return q->edges ? 0 : -ENOMEM;
}

/* Per channel, the VLs SL 0 takes out of it from its switch's CA ports. */
static int ca_vls(struct rq *q)
{
	q->camask = calloc(q->nch + 1, sizeof(*q->camask));
	if (!q->camask)
		return -ENOMEM;
	for (size_t i = 0; q->nvl > 1 && !q->sls && i < q->nca; i++) {
		uint32_t k = q->ca[i].sw;
		unsigned in = q->ca[i].port->peer_port;

		for (unsigned out = 1; out <= q->s->nodes[q->sw[k]].nports; out++)
			q->camask[q->first[k] + out] |= (uint16_t)(1u << vl_of(q, k, in, out));
	}
	return 0;
}

static int ca_cmp(const void *a, const void *b)
{
	const struct rq_ca *x = a, *y = b;

	return x->sw < y->sw ? -1 : x->sw > y->sw;
}

/* The CA ports routed between: Active, with a LID, on a switch with a
 * table; by switch. */
static int build_cas(struct rq *q)
{
	size_t cap = 0;

	q->cas = calloc(q->nsw + 1, sizeof(*q->cas));
	q->firstca = malloc((q->nsw + 1) * sizeof(*q->firstca));
	q->longer = calloc(q->nsw + 1, sizeof(*q->longer));
	q->longer_lid = calloc(q->nsw + 1, sizeof(*q->longer_lid));
	if (!q->cas || !q->firstca || !q->longer || !q->longer_lid)
		return -ENOMEM;
	for (size_t i = 0; i < q->s->nnodes; i++) {
		const struct fab_node *n = &q->s->nodes[i];

		for (unsigned p = 1; n->type == FAB_CA && p <= n->nports; p++) {
			const struct fab_node *pn = NULL;
			const struct fab_port *fp = &n->ports[p];

			if (!fp->has_info || fp->state != IB_LINK_ACTIVE || !fp->lid ||
			    !fabsnap_peer(q->s, fp, &pn) || q->swno[pn - q->s->nodes] == RQ_NONE)
				continue;
			if (array_grow(&q->ca, &cap, q->nca + 1, sizeof(*q->ca), 64) < 0)
				return -ENOMEM;
			q->ca[q->nca++] = (struct rq_ca){ n, fp, p, q->swno[pn - q->s->nodes] };
		}
	}
	if (q->nca)
		qsort(q->ca, q->nca, sizeof(*q->ca), ca_cmp);
	memset(q->firstca, 0xff, (q->nsw + 1) * sizeof(*q->firstca));
	for (size_t i = q->nca; i-- > 0;) {
		q->cas[q->ca[i].sw]++;
		q->firstca[q->ca[i].sw] = (uint32_t)i;
	}
	return 0;
}

/* Switch hops from switch d to every switch, over Active links. */
static void bfs(struct rq *q, uint32_t d)
{
	size_t head = 0, tail = 0;

	memset(q->dist, 0xff, q->nsw);
	q->dist[d] = 0;
	q->queue[tail++] = d;
	while (head < tail) {
		uint32_t k = q->queue[head++];
		size_t last = q->first[k] + q->s->nodes[q->sw[k]].nports;

		for (size_t c = q->first[k] + 1; c <= last; c++) {
			uint32_t w = q->peer[c];

			if (w != RQ_NONE && q->dist[w] == 0xff && q->dist[k] < 0xfe) {
				q->dist[w] = (uint8_t)(q->dist[k] + 1);
				q->queue[tail++] = w;
			}
		}
	}
}

/* Each switch's entry for lid and where it leads. */
static void entries(struct rq *q, unsigned lid)
{
	for (uint32_t k = 0; k < q->nsw; k++) {
		const struct fab_node *n = &q->s->nodes[q->sw[k]];
		unsigned e = routes_entry(n, lid);
		size_t c = q->first[k] + e;

		q->ent[k] = (uint8_t)e;
		q->next[k] = RQ_NONE;
		if (!e || e > n->nports)
			continue;
		q->calids[c]++;
		if (q->peer[c] != RQ_NONE)
			q->next[k] = q->peer[c];
		else if (q->end[c] && routes_has_lid(q->end[c], lid))
			q->next[k] = RQ_ARRIVED;
	}
}

/* The links from switch s to the LID (RQ_UNROUTED: it does not arrive),
 * each switch on the way given its own. */
static unsigned walk(struct rq *q, uint32_t s)
{
	size_t n = 0;
	uint32_t k = s;
	unsigned h;

	while (k < q->nsw && !q->hops[k]) {
		q->hops[k] = RQ_WALKING;
		q->queue[n++] = k;
		k = q->next[k];
	}
	h = k == RQ_ARRIVED ? 0 : k == RQ_NONE ? RQ_UNROUTED :
		q->hops[k] >= RQ_WALKING ? RQ_UNROUTED : q->hops[k];
	while (n--) {
		h = h == RQ_UNROUTED || h + 1 >= RQ_WALKING ? RQ_UNROUTED : h + 1;
		q->hops[q->queue[n]] = (uint8_t)h;
	}
	return q->hops[s];
}

/* n pairs from switch s's CA ports to d, h links from s by the tables. */
static void count_pairs(struct rq *q, uint32_t s, size_t d, uint64_t n, unsigned h)
{
	unsigned min = q->dist[s] == 0xff ? RQ_UNROUTED : q->dist[s] + 2u;

	q->r.pairs += n;
	if (min != RQ_UNROUTED)
		q->r.hops_min[min < FAB_ROUTE_HOPS ? min : FAB_ROUTE_HOPS - 1] += n;
	if (h == RQ_UNROUTED) {
		q->r.unrouted += n;
		return;
	}
	h++;
	q->r.hops_lft[h < FAB_ROUTE_HOPS ? h : FAB_ROUTE_HOPS - 1] += n;
	if (h > q->worst) {
		q->worst = h;
		q->worst_src = q->firstca[s];
		q->worst_dst = d;
	}
}

/* The VL on switch j's entry's channel for a route come from switch k's
 * channel c (into j) on SL 0. */
static unsigned vl_from(const struct rq *q, uint32_t k, size_t c, uint32_t j)
{
	return vl_of(q, j, q->s->nodes[q->sw[k]].ports[c - q->first[k]].peer_port,
		     q->ent[j]);
}

/* One destination's: the VLs on each routed switch's entry's channel, from
 * its own CA ports (routes starting there) and the switches before it. */
static void route_vls(struct rq *q, uint32_t dsw)
{
	for (uint32_t k = 0; k < q->nsw; k++)
		q->vlmask[k] = rq_routed(q, k) && q->cas[k] - (k == dsw) ?
			q->camask[q->first[k] + q->ent[k]] : 0;
	for (uint32_t k = 0; k < q->nsw; k++) {
		size_t c = q->first[k] + q->ent[k];

		if (rq_routed(q, k) && q->peer[c] != RQ_NONE)
			q->vlmask[q->peer[c]] |= (uint16_t)(1u << vl_from(q, k, c, q->peer[c]));
	}
}

/* Switch k's entry's channel c (to a switch) depends on the next one's,
 * on each VL it carries (one VL: VL 0). */
static void depend(struct rq *q, uint32_t k, size_t c)
{
	uint32_t j = q->peer[c];
	size_t base = (q->ebase[c] + q->ent[j]) * q->nvl;
	unsigned to = q->nvl > 1 ? vl_from(q, k, c, j) : 0;

	for (unsigned v = 0; v < q->nvl; v++) {
		size_t bit = (base + v) * q->nvl + to;

		if (q->nvl == 1 || q->vlmask[k] >> v & 1)
			q->edges[bit / 64] |= 1ull << (bit % 64);
	}
}

/* Every CA port's route to lid (of CA port d; base: its LID, counted in
 * the histograms): the DLIDs out of each port, the dependencies. */
static void route_lid(struct rq *q, size_t d, unsigned lid, bool base)
{
	uint32_t dsw = q->ca[d].sw;

	entries(q, lid);
	memset(q->hops, 0, q->nsw);
	for (uint32_t s = 0; s < q->nsw; s++) {
		uint64_t n = q->cas[s] - (s == dsw);
		unsigned h;

		if (!n)
			continue;
		h = walk(q, s);
		if (base)
			count_pairs(q, s, d, n, h);
	}
	if (q->sls)
		routesl_vls(q, d, lid);
	else if (q->nvl > 1)
		route_vls(q, dsw);
	for (uint32_t k = 0; k < q->nsw; k++) {
		size_t c = q->first[k] + q->ent[k];

		if (!q->hops[k] || q->hops[k] >= RQ_WALKING || q->peer[c] == RQ_NONE)
			continue;
		q->dlids[c]++;
		if (q->sls)
			routesl_depend(q, k, c);
		else
			depend(q, k, c);
		if (q->dist[q->peer[c]] >= q->dist[k] && !q->longer[k]++)
			q->longer_lid[k] = (uint16_t)lid;
	}
}

static int route_all(struct rq *q)
{
	uint32_t bfs_of = RQ_NONE;

	q->ent = malloc(q->nsw + 1);
	q->next = malloc((q->nsw + 1) * sizeof(*q->next));
	q->hops = malloc(q->nsw + 1);
	q->dist = malloc(q->nsw + 1);
	q->queue = malloc((q->nsw + 1) * sizeof(*q->queue));
	q->vlmask = calloc(q->nsw + 1, sizeof(*q->vlmask));
	if (!q->ent || !q->next || !q->hops || !q->dist || !q->queue || !q->vlmask ||
	    ca_vls(q) < 0 || (q->sls && routesl_alloc(q) < 0))
		return -ENOMEM;
	for (size_t d = 0; d < q->nca; d++) {
		const struct fab_port *p = q->ca[d].port;
		unsigned last = p->lid + (1u << (p->lmc & 7)) - 1;

		if (q->ca[d].sw != bfs_of)
			bfs(q, bfs_of = q->ca[d].sw);
		for (unsigned lid = p->lid; lid <= last && lid <= ROUTE_LID_MAX; lid++)
			route_lid(q, d, lid, lid == p->lid);
	}
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The DLIDs of the switch-to-switch ports that carry some, as ibdmchk's
 * histogram counts them (and how many carry none). */
static int dlids_text(struct rq *q, struct rq_text *t)
{
	uint32_t *v = malloc((q->nch + 1) * sizeof(*v));
	size_t n = 0, idle = 0;
	double sum = 0;

	if (!v)
		return -ENOMEM;
	for (size_t c = 0; c < q->nch; c++) {
		if (q->peer[c] == RQ_NONE)
			continue;
		if (!q->dlids[c])
			idle++;
		else
			sum += (v[n++] = q->dlids[c]);
	}
	q->mean = n ? sum / (double)n : 0;
	rq_put(t, "switch_ports %zu\nidle_ports %zu\ndlids_mean %.2f\n", n, idle, q->mean);
	if (n)
		qsort(v, n, sizeof(*v), u32_cmp);
	for (size_t i = 0, k; i < n; i = k) {
		for (k = i; k < n && v[k] == v[i]; k++)
			;
		rq_put(t, "dlids %" PRIu32 " %zu\n", v[i], k - i);
	}
	free(v);
	return 0;
}

/* The PORTS_FAR switch-to-switch ports farthest from the mean. */
static void far_text(struct rq *q, struct rq_text *t)
{
	size_t listed[PORTS_FAR];
	char name[40];

	for (size_t i = 0; i < PORTS_FAR; i++) {
		double best = -1;

		listed[i] = SIZE_MAX;
		for (size_t c = 0; c < q->nch; c++) {
			double dev = fabs(q->dlids[c] - q->mean);
			bool seen = false;

			for (size_t j = 0; j < i; j++)
				seen |= listed[j] == c;
			if (q->peer[c] != RQ_NONE && q->dlids[c] && !seen && dev > best) {
				best = dev;
				listed[i] = c;
			}
		}
		if (listed[i] == SIZE_MAX)
			return;
		rq_channel_name(q, listed[i], name, sizeof(name));
		rq_put(t, "port_far %s %" PRIu32 "\n", name, q->dlids[listed[i]]);
	}
}

static void hops_text(struct rq *q, struct rq_text *t)
{
	const struct rq_ca *a = &q->ca[q->worst_src], *b = &q->ca[q->worst_dst];

	rq_put(t, "pairs %" PRIu64 "\npairs_unrouted %" PRIu64 "\n", q->r.pairs,
	       q->r.unrouted);
	for (unsigned h = 0; h < FAB_ROUTE_HOPS; h++)
		if (q->r.hops_lft[h])
			rq_put(t, "hops_lft %u %" PRIu64 "\n", h, q->r.hops_lft[h]);
	for (unsigned h = 0; h < FAB_ROUTE_HOPS; h++)
		if (q->r.hops_min[h])
			rq_put(t, "hops_min %u %" PRIu64 "\n", h, q->r.hops_min[h]);
	rq_put(t, "worst_hops %u\n", q->worst);
	if (q->worst && q->worst_src < q->nca)
		rq_put(t, "worst_pair 0x%016" PRIx64 "/%u 0x%016" PRIx64 "/%u\n",
		       a->node->guid, a->portnum, b->node->guid, b->portnum);
}

static void rq_free(struct rq *q)
{
	free(q->sw);
	free(q->swno);
	free(q->first);
	free(q->peer);
	free(q->end);
	free(q->ebase);
	free(q->edges);
	free(q->dlids);
	free(q->calids);
	free(q->ca);
	free(q->cas);
	free(q->firstca);
	free(q->longer);
	free(q->longer_lid);
	free(q->ent);
	free(q->next);
	free(q->hops);
	free(q->dist);
	free(q->queue);
	free(q->vlmask);
	free(q->camask);
	free(q->slmask);
	free(q->slvl);
}

/* Switch k's ports as check_lft_balance weighs them: the CA LIDs its
 * table sends out of each port, leaving out a port to a CA that carries
 * just that CA's LIDs, and an idle port that is not Active.  Unbalanced:
 * the most exceed the fewest by more than one (BALANCE_SLACK). */
static void balance_switch(struct rq *q, uint32_t k)
{
	const struct fab_node *n = &q->s->nodes[q->sw[k]];
	unsigned lo = 0, hi = 0;
	uint32_t min = UINT32_MAX, max = 0;
	struct fab_problem *p;

	for (unsigned port = 1; port <= n->nports; port++) {
		size_t c = q->first[k] + port;
		uint32_t v = q->calids[c];
		bool up = q->peer[c] != RQ_NONE || q->end[c];

		if ((!v && !up) ||
		    (q->end[c] && v == 1u << (q->end[c]->lmc & 7)))
			continue;
		if (v < min)
			min = v, lo = port;
		if (v > max)
			max = v, hi = port;
	}
	if (min == UINT32_MAX || max <= min + BALANCE_SLACK)
		return;
	p = problem_add(q->list, PROBLEM_ROUTE_UNBALANCED, n, -1);
	if (p)
		snprintf(p->found, sizeof(p->found),
			 "min_lids=%" PRIu32 " min_port=%u max_lids=%" PRIu32 " max_port=%u",
			 min, lo, max, hi);
}

/* Switch k sends LIDs of CAs' routes to a switch no nearer to them than
 * itself (with fabric_routes_minimal=on): route_not_minimal. */
static void minimal_switch(struct rq *q, uint32_t k)
{
	struct fab_problem *p;

	if (!q->list->routes_minimal || !q->longer[k])
		return;
	p = problem_add(q->list, PROBLEM_ROUTE_NOT_MINIMAL, &q->s->nodes[q->sw[k]], -1);
	if (p)
		snprintf(p->found, sizeof(p->found), "lids=%" PRIu32 " lid=%u",
			 q->longer[k], q->longer_lid[k]);
}

/* The snapshot's fab_routing: q's numbers and t's text. */
static int routing_block(struct rq *q, struct rq_text *t)
{
	struct fab_routing *r;

	if (t->failed)
		return -ENOMEM;
	r = malloc(sizeof(*r) + t->len + 1);
	if (!r)
		return -ENOMEM;
	*r = q->r;
	r->len = t->len;
	memcpy(r->text, t->buf ? t->buf : "", t->len);
	r->text[t->len] = '\0';
	q->list->snap->routing = r;
	return 0;
}

/* The pairs' SLs, when the SA was asked them (pathsl.h): how many, the
 * SLs they are on, and those it had no record for. */
static void sls_text(const struct rq *q, struct rq_text *t)
{
	const struct fab_pathsl *p = q->s->pathsl;

	if (!p)
		return;
	rq_put(t, "path_sls %zu\nsls", p->n);
	for (unsigned sl = 0; sl < 16; sl++)
		if (p->sls >> sl & 1)
			rq_put(t, " %u", sl);
	rq_put(t, "\npath_sls_unknown %u\n", p->unknown);
}

/* The switches, the CA ports and every route between them followed:
 * 0 (nothing when no switch has a table: q->nsw 0), or -ENOMEM. */
static int route_tables(struct rq *q)
{
	int r = build_switches(q);

	if (r == 0 && q->nsw)
		r = build_cas(q);
	if (r == 0 && q->nsw)
		r = route_all(q);
	return r;
}

int routequal_loops(const struct fab_snap *s)
{
	struct rq q = { .s = s };
	struct rq_text t = { 0 };
	int r = route_tables(&q);

	if (r == 0 && q.nsw)
		r = creditloop_find(&q, &t);
	free(t.buf);
	rq_free(&q);
	return r < 0 ? r : (int)q.r.credit_loops;
}

void routequal_judge(struct problem_list *list)
{
	struct rq q = { .list = list, .s = list->snap };
	struct rq_text t = { 0 };
	int r = route_tables(&q);

	if (r == 0 && !q.nsw)
		goto out;
	if (r == 0) {
		hops_text(&q, &t);
		r = dlids_text(&q, &t);
	}
	if (r == 0) {
		far_text(&q, &t);
		rq_put(&t, "vls %u\n", q.nvl);
		sls_text(&q, &t);
		r = creditloop_find(&q, &t);
	}
	for (uint32_t k = 0; r == 0 && k < q.nsw; k++) {
		balance_switch(&q, k);
		minimal_switch(&q, k);
	}
	if (r == 0)
		r = routing_block(&q, &t);
	if (r < 0)
		list->nomem = true;
out:
	free(t.buf);
	rq_free(&q);
}
