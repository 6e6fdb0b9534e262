/* The judgement of fabric/problems (problems.h): what is wrong with a new
 * snapshot, from its own contents, the snapshot before it, the expected
 * topology and the error thresholds, without MADs, on the sweep thread;
 * here the judgement and the checks of nodes, ports, counters and the SM
 * (links: linkcheck.c; forwarding tables: routecheck.c; congestion:
 * congestion.c; flapping links: flapcheck.c; one problem and the list:
 * problem.c). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/base/clock.h"
#include "umadfs/fabric/problems/problem.h"
#include "umadfs/fabric/problems/problems.h"
#include "umadfs/fabric/problems/thresholds.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/pmacounters.h"

#include "problems_priv.h"

#define SM_STALL_MS 60000 /* ActCount unmoved this long: sm_stalled */

/* Set by problems_configure() and problems_routes_minimal() before the
 * sweep thread starts, then only read; without a file, THRESHOLDS_INIT's
 * defaults. */
static struct thresholds thr = THRESHOLDS_INIT;
static bool routes_minimal = true;

void problems_routes_minimal(bool on)
{
	routes_minimal = on;
}

int problems_configure(const char *path)
{
	char why[200];
	int r = thresholds_load(path ? path : THRESHOLDS_DEFAULT_PATH, &thr,
				why, sizeof(why));

	if (r == -ENOENT && !path)
		return 0; /* ibqueryerrors' file is optional, as there */
	if (r < 0)
		fprintf(stderr, "umadfs: fabric_thresholds=%s: %s\n",
			path ? path : THRESHOLDS_DEFAULT_PATH, why);
	return r < 0 ? -EINVAL : 0;
}

/* ---- counters ---- */

/* The checked counters' fields and their maxima, found once (the judge
 * asks them for each counter of every port). */
static struct {
	int field;
	uint64_t max;
} checked[THRESHOLD_COUNTERS];
static pthread_once_t checked_once = PTHREAD_ONCE_INIT;

static void find_checked(void)
{
	for (unsigned i = 0; i < THRESHOLD_COUNTERS; i++) {
		checked[i].field = thresholds_field(i);
		checked[i].max = pmacounters_field_max(checked[i].field);
	}
}

/* Counter i's value on port p of n; false when it has none. */
static bool counter_value(const struct fab_node *n, const struct fab_port *p,
			  unsigned i, uint64_t *v)
{
	int f = checked[i].field;

	if (!p->has_counters)
		return false;
	/* As ibqueryerrors: PortXmitWait counts only where the PMA has it. */
	if (f == IB_PC_XMT_WAIT_F && !(n->pma_capmask & IB_PM_PC_XMIT_WAIT_SUP))
		return false;
	*v = mad_get_field((void *)p->basic, 0, (enum MAD_FIELDS)f);
	return true;
}

/* The ports ibqueryerrors checks: every port with counters, a switch's
 * port 0 only when it is an enhanced port 0. */
static bool counted_port(const struct fab_node *n, unsigned port)
{
	return port || (n->type == FAB_SWITCH && n->enhanced_port0);
}

static void judge_counters(struct problem_list *j, const struct fab_node *n,
			   unsigned port, const struct fab_node *old)
{
	const struct fab_port *p = &n->ports[port];
	const struct fab_port *op = old && port <= old->nports ? &old->ports[port] : NULL;

	if (!counted_port(n, port))
		return;
	/* The same counters as the snapshot before's: none rose (at 16k,
	 * half the judgement's reads of a field on a quiet fabric). */
	if (op && op->has_counters && !memcmp(p->basic, op->basic, sizeof(p->basic)))
		op = NULL;
	for (unsigned i = 0; i < THRESHOLD_COUNTERS; i++) {
		int f = checked[i].field;
		struct fab_problem *pr;
		uint64_t v, was;

		if (!counter_value(n, p, i, &v))
			continue;
		if (v > thr.value[i] && (pr = problem_add(j, PROBLEM_COUNTER_OVER_THRESHOLD, n, (int)port))) {
			pr->counter = (int8_t)i;
			pr->n.counter.value = v;
			pr->n.counter.threshold = thr.value[i];
		}
		if (v == checked[i].max &&
		    (pr = problem_add(j, PROBLEM_COUNTER_SATURATED, n, (int)port))) {
			pr->counter = (int8_t)i;
			pr->n.counter.value = v;
		}
		/* The error counters (not PortXmitWait, a congestion count). */
		if (f != IB_PC_XMT_WAIT_F && op && !j->snap->refreshes &&
		    counter_value(old, op, i, &was) &&
		    v > was && (pr = problem_add(j, PROBLEM_COUNTER_RISING, n, (int)port))) {
			pr->counter = (int8_t)i;
			pr->n.counter.value = v;
			pr->n.counter.before = was;
		}
	}
}

/* ---- ports and LIDs ---- */

static void judge_port(struct problem_list *j, const struct fab_node *n, unsigned port,
		       const struct fab_node *old, bool sm_missing)
{
	const struct fab_port *p = &n->ports[port];
	struct fab_problem *pr;

	if (!sm_missing && !j->snap->refreshes && port && fabsnap_awaits_sm(p) && old &&
	    port <= old->nports &&
	    fabsnap_awaits_sm(&old->ports[port]) &&
	    (pr = problem_add(j, PROBLEM_PORT_NOT_ACTIVE, n, (int)port)))
		snprintf(pr->found, sizeof(pr->found), "%s",
			 ibcodes_state_name(p->state));
	/* Endports: a CA's ports, a switch's port 0. */
	if ((n->type == FAB_SWITCH) == (port == 0) && p->has_info &&
	    p->state == IB_LINK_ACTIVE && !p->lid)
		problem_add(j, PROBLEM_LID_UNASSIGNED, n, (int)port);
}

struct endport {
	const struct fab_node *n;
	unsigned port;
	uint32_t first, last; /* its LIDs */
};

static int endport_cmp(const void *a, const void *b)
{
	const struct endport *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* Ports whose LID ranges (LID to LID + 2^LMC - 1) overlap. */
static void judge_lids(struct problem_list *j)
{
	const struct fab_snap *s = j->snap;
	struct endport *e = malloc((s->stats.ports + s->nnodes + 1) * sizeof(*e));
	size_t ne = 0;

	if (!e) {
		j->nomem = true;
		return;
	}
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];
		unsigned from = n->type == FAB_SWITCH ? 0 : 1;
		unsigned to = n->type == FAB_SWITCH ? 0 : n->nports;

		for (unsigned p = from; p <= to; p++) {
			const struct fab_port *fp = &n->ports[p];

			if (!fp->has_info || !fp->lid)
				continue;
			e[ne++] = (struct endport){ n, p, fp->lid,
				fp->lid + (1u << (fp->lmc & 7)) - 1 };
		}
	}
	qsort(e, ne, sizeof(*e), endport_cmp);
	for (size_t a = 0; a < ne; a++) {
		for (size_t b = a + 1; b < ne && e[b].first <= e[a].last; b++) {
			const struct endport *x = &e[a], *y = &e[b];
			struct fab_problem *pr;

			if ((pr = problem_add(j, PROBLEM_DUPLICATE_LID, x->n, (int)x->port))) {
				pr->lid = (uint16_t)y->first;
				problem_set_peer(pr, y->n, y->port);
			}
			if ((pr = problem_add(j, PROBLEM_DUPLICATE_LID, y->n, (int)y->port))) {
				pr->lid = (uint16_t)y->first;
				problem_set_peer(pr, x->n, x->port);
			}
		}
	}
	free(e);
}

static int desc_cmp(const void *a, const void *b)
{
	const struct fab_node *x = *(const struct fab_node *const *)a;
	const struct fab_node *y = *(const struct fab_node *const *)b;

	return strcmp(x->desc, y->desc);
}

/* Nodes that share a description (not an empty one). */
static void judge_descs(struct problem_list *j)
{
	const struct fab_snap *s = j->snap;
	const struct fab_node **v = malloc((s->nnodes + 1) * sizeof(*v));
	size_t a = 0;

	if (!v) {
		j->nomem = true;
		return;
	}
	for (size_t i = 0; i < s->nnodes; i++)
		v[i] = &s->nodes[i];
	qsort(v, s->nnodes, sizeof(*v), desc_cmp);
	while (a < s->nnodes) {
		size_t b = a + 1;

		while (b < s->nnodes && !strcmp(v[a]->desc, v[b]->desc))
			b++;
		for (size_t k = a; b - a > 1 && v[a]->desc[0] && k < b; k++) {
			struct fab_problem *pr = problem_add(j, PROBLEM_DUPLICATE_NODE_DESC, v[k], -1);

			if (pr)
				pr->n.count = b - a;
		}
		a = b;
	}
	free(v);
}

/* A port that names n:port as its peer, where n:port names another: two
 * nodes answered with one GUID, and discovery took the second for the
 * first (its port's peer overwritten).  One problem per GUID. */
static void judge_guids(struct problem_list *j)
{
	const struct fab_snap *s = j->snap;

	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = 1; p <= n->nports; p++) {
			const struct fab_port *fp = &n->ports[p], *back;
			const struct fab_node *m = NULL;
			struct fab_problem *pr;

			back = fabsnap_peer(s, fp, &m);
			if (!back || (back->peer_guid == n->guid && back->peer_port == p))
				continue;
			pr = problem_add(j, PROBLEM_DUPLICATE_GUID, m, -1);
			if (pr)
				snprintf(pr->found, sizeof(pr->found),
					 "0x%016" PRIx64 "[%u],0x%016" PRIx64 "[%u]",
					 n->guid, p, back->peer_guid, back->peer_port);
		}
	}
}

/* ---- the subnet manager ---- */

static const struct fab_sm *master_of(const struct fab_snap *s)
{
	return s && s->nsms && s->sms[0].state == IB_SMINFO_STATE_MASTER ? &s->sms[0] : NULL;
}

/* sm_missing (true) or sm_stalled; sets snap->sm_act_since_ms. */
static bool judge_sm(struct problem_list *j)
{
	struct fab_snap *s = j->snap;
	const struct fab_sm *m = master_of(s), *was = master_of(j->last);
	struct fab_problem *pr;

	s->sm_act_since_ms = s->mono_ms;
	if (!s->sm_lid || !m) {
		if ((pr = problem_add(j, PROBLEM_SM_MISSING, NULL, -1)))
			pr->lid = s->sm_lid;
		return true;
	}
	if (was && was->guid == m->guid && was->act_count == m->act_count)
		s->sm_act_since_ms = j->last->sm_act_since_ms;
	if (s->mono_ms - s->sm_act_since_ms >= SM_STALL_MS &&
	    (pr = problem_add(j, PROBLEM_SM_STALLED, NULL, -1))) {
		pr->guid = m->guid;
		pr->lid = m->lid;
		pr->n.sm.act_count = m->act_count;
		pr->n.sm.seconds = (uint64_t)(s->mono_ms - s->sm_act_since_ms) / 1000;
	}
	return false;
}

/* ---- the judgement ---- */

/* A sweep that failed: the problems before it stand, and it is one. */
static void judge_failed(struct problem_list *j, const struct fab_snap *prev)
{
	struct fab_problem *pr;

	for (size_t i = 0; prev && i < prev->nproblems; i++) {
		if (prev->problems[i].kind == PROBLEM_SWEEP_FAILED)
			continue;
		pr = problem_add(j, prev->problems[i].kind, NULL, -1);
		if (pr)
			*pr = prev->problems[i];
	}
	pr = problem_add(j, PROBLEM_SWEEP_FAILED, NULL, -1);
	if (pr)
		snprintf(pr->found, sizeof(pr->found), "%s", j->snap->error);
	if (prev)
		j->snap->sm_act_since_ms = prev->sm_act_since_ms;
}

/* What a refresh does not judge itself, but carries from the snapshot
 * before until the next sweep: the routes' problems (it reads no
 * forwarding table; the SM reprograms them after the change, in its own
 * time), counter_rising (it reads no counter) for a port still there, and
 * port_not_active while the port still is (it refreshes a port the SM is
 * bringing up again within a second: two refreshes are no two sweeps
 * apart). */
static bool carried(const struct problem_list *j, const struct fab_problem *was)
{
	const struct fab_node *n;

	switch (was->kind) {
	case PROBLEM_ROUTE_MISSING:
	case PROBLEM_ROUTE_LOOP:
	case PROBLEM_ROUTE_DEAD_END:
	case PROBLEM_CREDIT_LOOP:
	case PROBLEM_ROUTE_UNBALANCED:
	case PROBLEM_ROUTE_NOT_MINIMAL:
		return true;
	case PROBLEM_COUNTER_RISING:
		n = fabsnap_find(j->snap, was->guid);
		return n && was->port <= n->nports && n->ports[was->port].has_counters;
	case PROBLEM_PORT_NOT_ACTIVE:
		n = fabsnap_find(j->snap, was->guid);
		return n && was->port <= n->nports && fabsnap_awaits_sm(&n->ports[was->port]);
	default:
		return false;
	}
}

static void carry_to_refresh(struct problem_list *j, const struct fab_snap *prev)
{
	struct fab_problem *pr;

	for (size_t i = 0; prev && i < prev->nproblems; i++) {
		if (!carried(j, &prev->problems[i]))
			continue;
		pr = problem_add(j, prev->problems[i].kind, NULL, -1);
		if (pr)
			*pr = prev->problems[i];
	}
}

/* prev's fabric/routing, as it stands (a copy: each snapshot frees its
 * own). */
static void carry_routing(struct problem_list *j, const struct fab_snap *prev)
{
	const struct fab_routing *r = prev ? prev->routing : NULL;
	size_t size = r ? sizeof(*r) + r->len + 1 : 0;

	if (!r)
		return;
	j->snap->routing = malloc(size);
	if (j->snap->routing)
		memcpy(j->snap->routing, r, size);
	else
		j->nomem = true;
}

/* The routing as a whole, after the routes' own problems: its time of
 * its own in routing_us. */
static void judge_routing(struct problem_list *j)
{
	uint64_t t0 = clock_now_us();

	routequal_judge(j);
	j->snap->routing_us = (unsigned)(clock_now_us() - t0);
}

/* prev's route problems, as they stand. */
static void carry_routes(struct problem_list *j, const struct fab_snap *prev)
{
	for (size_t i = 0; i < prev->nproblems; i++) {
		unsigned kind = prev->problems[i].kind;
		struct fab_problem *pr;

		if (kind != PROBLEM_ROUTE_MISSING && kind != PROBLEM_ROUTE_LOOP &&
		    kind != PROBLEM_ROUTE_DEAD_END && kind != PROBLEM_CREDIT_LOOP &&
		    kind != PROBLEM_ROUTE_UNBALANCED && kind != PROBLEM_ROUTE_NOT_MINIMAL)
			continue;
		pr = problem_add(j, kind, NULL, -1);
		if (pr)
			*pr = prev->problems[i];
	}
}

static void judge_nodes(struct problem_list *j, bool sm_missing)
{
	const struct fab_snap *s = j->snap;

	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];
		const struct fab_node *old = j->last ? fabsnap_find(j->last, n->guid) : NULL;
		struct fab_problem *pr;

		if ((n->sma_timeouts || n->pma_timeouts) &&
		    (pr = problem_add(j, PROBLEM_NODE_UNRESPONSIVE, n, -1))) {
			pr->n.timeouts.sma = n->sma_timeouts;
			pr->n.timeouts.pma = n->pma_timeouts;
		}
		for (unsigned p = 0; p <= n->nports; p++) {
			if (p && n->type == FAB_SWITCH && !n->ports[p].has_info)
				continue;
			judge_counters(j, n, p, old);
			judge_port(j, n, p, old, sm_missing);
		}
	}
}

/* Whether the list holds a routing problem: the next sweep then reads
 * every forwarding table (discover.c). */
static bool routes_broken(const struct problem_list *j)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->list[i].kind == PROBLEM_ROUTE_MISSING ||
		    j->list[i].kind == PROBLEM_ROUTE_LOOP ||
		    j->list[i].kind == PROBLEM_ROUTE_DEAD_END)
			return true;
	return false;
}

void problems_judge(const struct fab_snap *prev, struct fab_snap *snap,
		  const struct fab_snap *expected)
{
	struct problem_list j = {
		.snap = snap,
		.last = prev && prev->ok ? prev : NULL,
		.expected = expected,
		/* A given text's widths, not the first sweep's (the default). */
		.expected_speeds = expected && !expected->from_sweep,
		.routes_minimal = routes_minimal,
	};

	pthread_once(&checked_once, find_checked);
	if (!snap->ok) {
		judge_failed(&j, prev);
	} else {
		bool sm_missing = judge_sm(&j);

		judge_nodes(&j, sm_missing);
		congestion_judge(&j, thr.wait_per_second);
		flapcheck_judge(&j, thr.flap_count, thr.flap_window_s);
		partcheck_judge(&j);
		mcastcheck_judge(&j);
		judge_lids(&j);
		judge_descs(&j);
		judge_guids(&j);
		linkcheck_speeds(&j);
		if (snap->refreshes) {
			carry_to_refresh(&j, prev);
			carry_routing(&j, prev);
		} else if (fabsnap_routes_as_before(prev, snap)) {
			/* The route checks follow every LID from every switch:
			 * the part of a judgement that grows fastest. */
			carry_routes(&j, prev);
			carry_routing(&j, prev);
		} else {
			routecheck_routes(&j, sm_missing);
			judge_routing(&j);
		}
		if (expected)
			linkcheck_expected(&j);
	}
	problem_list_sort(&j);
	snap->problems = j.list;
	snap->nproblems = j.n;
	snap->routes_broken = routes_broken(&j);
}

int problems_credit_loops(const struct fab_snap *snap)
{
	return snap->ok ? routequal_loops(snap) : 0;
}

void problems_forget(void)
{
	flapcheck_forget();
}
