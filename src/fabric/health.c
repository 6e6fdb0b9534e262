/* The judge of fabric/problems (health.h): what is wrong with a new
 * snapshot, from its own contents, the snapshot before it, the expected
 * topology and the error thresholds, without MADs, on the sweep thread;
 * here the judgement, nodes, ports, counters and the SM, and the problem
 * lines (links: linkcheck.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/fabric/health.h"
#include "umadfs/fabric/thresholds.h"

#include "health_priv.h"

#define STATE_INIT 2      /* PortInfo PortState */
#define STATE_ARMED 3
#define STATE_ACTIVE 4
#define SM_MASTER 3       /* SMInfo SMState, as sminfo numbers it */
#define SM_STALL_MS 60000 /* ActCount unmoved this long: sm_stalled */
#define PM_XMIT_WAIT 0x1000 /* PMA CapabilityMask: PortCounters PortXmitWait */

/* Set by health_configure() before the sweep thread starts, then only
 * read. */
static struct thresholds thr;

static const struct {
	const char *name;
	uint8_t severity;
} kinds[PROBLEM_KIND_COUNT] = {
	[PROBLEM_COUNTER_OVER_THRESHOLD] = { "counter_over_threshold", SEVERITY_ERROR },
	[PROBLEM_COUNTER_RISING] = { "counter_rising", SEVERITY_WARNING },
	[PROBLEM_COUNTER_SATURATED] = { "counter_saturated", SEVERITY_WARNING },
	[PROBLEM_LINK_DEGRADED] = { "link_degraded", SEVERITY_ERROR },
	[PROBLEM_NODE_MISSING] = { "node_missing", SEVERITY_ERROR },
	[PROBLEM_LINK_MISSING] = { "link_missing", SEVERITY_ERROR },
	[PROBLEM_LINK_MOVED] = { "link_moved", SEVERITY_ERROR },
	[PROBLEM_LINK_UNEXPECTED] = { "link_unexpected", SEVERITY_WARNING },
	[PROBLEM_PORT_NOT_ACTIVE] = { "port_not_active", SEVERITY_ERROR },
	[PROBLEM_DUPLICATE_GUID] = { "duplicate_guid", SEVERITY_ERROR },
	[PROBLEM_DUPLICATE_LID] = { "duplicate_lid", SEVERITY_ERROR },
	[PROBLEM_LID_UNASSIGNED] = { "lid_unassigned", SEVERITY_ERROR },
	[PROBLEM_DUPLICATE_NODE_DESC] = { "duplicate_node_desc", SEVERITY_WARNING },
	[PROBLEM_SM_MISSING] = { "sm_missing", SEVERITY_ERROR },
	[PROBLEM_SM_STALLED] = { "sm_stalled", SEVERITY_WARNING },
	[PROBLEM_NODE_UNRESPONSIVE] = { "node_unresponsive", SEVERITY_ERROR },
	[PROBLEM_ROUTE_MISSING] = { "route_missing", SEVERITY_ERROR },
	[PROBLEM_ROUTE_LOOP] = { "route_loop", SEVERITY_ERROR },
	[PROBLEM_ROUTE_DEAD_END] = { "route_dead_end", SEVERITY_ERROR },
	[PROBLEM_SWEEP_FAILED] = { "sweep_failed", SEVERITY_ERROR },
};

const char *health_kind_name(unsigned kind)
{
	return kind < PROBLEM_KIND_COUNT ? kinds[kind].name : "unknown";
}

const char *health_severity_name(unsigned severity)
{
	return severity == SEVERITY_ERROR ? "error" : "warning";
}

const char *health_counter_name(const struct fab_problem *p)
{
	return p->counter >= 0 ? thresholds_name((unsigned)p->counter) : NULL;
}

int health_configure(const char *path)
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


bool judge_room(struct judge *j, void **v, size_t *cap, size_t n, size_t size)
{
	size_t more = *cap ? *cap * 2 : 64;
	void *bigger;

	if (n < *cap)
		return true;
	bigger = realloc(*v, more * size);
	if (!bigger) {
		j->nomem = true;
		return false;
	}
	*v = bigger;
	*cap = more;
	return true;
}

struct fab_problem *judge_add(struct judge *j, unsigned kind,
			       const struct fab_node *n, int port)
{
	struct fab_problem *p;

	if (!judge_room(j, (void **)&j->list, &j->cap, j->n, sizeof(*p)))
		return NULL;
	p = &j->list[j->n++];
	memset(p, 0, sizeof(*p));
	p->kind = (uint8_t)kind;
	p->severity = kinds[kind].severity;
	p->counter = -1;
	p->has_port = port >= 0;
	p->port = (uint8_t)(port < 0 ? 0 : port);
	if (n) {
		p->guid = n->guid;
		p->node_type = n->type;
		memcpy(p->node_desc, n->desc, sizeof(p->node_desc));
	}
	return p;
}

void judge_set_peer(struct fab_problem *p, const struct fab_node *peer,
		     unsigned port)
{
	p->peer_guid = peer->guid;
	p->peer_port = (uint8_t)port;
	memcpy(p->peer_desc, peer->desc, sizeof(p->peer_desc));
}

/* ---- counters ---- */

/* The largest value PortCounters field f holds (its width's). */
static uint64_t field_max(int f)
{
	uint8_t buf[IB_PC_DATA_SZ] = { 0 };

	mad_set_field(buf, 0, (enum MAD_FIELDS)f, 0xffffffffu);
	return mad_get_field(buf, 0, (enum MAD_FIELDS)f);
}

/* Counter i's value on port p of n; false when it has none. */
static bool counter_value(const struct fab_node *n, const struct fab_port *p,
			  unsigned i, uint64_t *v)
{
	int f = thresholds_field(i);

	if (!p->has_counters)
		return false;
	/* As ibqueryerrors: PortXmitWait counts only where the PMA has it. */
	if (f == IB_PC_XMT_WAIT_F && !(n->pma_capmask & PM_XMIT_WAIT))
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

static void judge_counters(struct judge *j, const struct fab_node *n,
			   unsigned port, const struct fab_node *old)
{
	const struct fab_port *p = &n->ports[port];
	const struct fab_port *op = old && port <= old->nports ? &old->ports[port] : NULL;

	if (!counted_port(n, port))
		return;
	for (unsigned i = 0; i < THRESHOLD_COUNTERS; i++) {
		int f = thresholds_field(i);
		struct fab_problem *pr;
		uint64_t v, was;

		if (!counter_value(n, p, i, &v))
			continue;
		if (v > thr.value[i] && (pr = judge_add(j, PROBLEM_COUNTER_OVER_THRESHOLD, n, (int)port))) {
			pr->counter = (int8_t)i;
			pr->value = v;
			pr->threshold = thr.value[i];
		}
		if (v == field_max(f) && (pr = judge_add(j, PROBLEM_COUNTER_SATURATED, n, (int)port))) {
			pr->counter = (int8_t)i;
			pr->value = v;
		}
		/* The error counters (not PortXmitWait, a congestion count). */
		if (f != IB_PC_XMT_WAIT_F && op && !j->snap->refreshes &&
		    counter_value(old, op, i, &was) &&
		    v > was && (pr = judge_add(j, PROBLEM_COUNTER_RISING, n, (int)port))) {
			pr->counter = (int8_t)i;
			pr->value = v;
			pr->threshold = was;
		}
	}
}

/* ---- ports and LIDs ---- */

static bool not_active(const struct fab_port *p)
{
	return p->has_info && p->phys_state == PHYS_LINKUP &&
	       (p->state == STATE_INIT || p->state == STATE_ARMED);
}

static void judge_port(struct judge *j, const struct fab_node *n, unsigned port,
		       const struct fab_node *old, bool sm_missing)
{
	const struct fab_port *p = &n->ports[port];
	struct fab_problem *pr;

	if (!sm_missing && !j->snap->refreshes && port && not_active(p) && old &&
	    port <= old->nports &&
	    not_active(&old->ports[port]) &&
	    (pr = judge_add(j, PROBLEM_PORT_NOT_ACTIVE, n, (int)port)))
		snprintf(pr->found, sizeof(pr->found), "%s",
			 p->state == STATE_INIT ? "Init" : "Armed");
	/* Endports: a CA's ports, a switch's port 0. */
	if ((n->type == FAB_SWITCH) == (port == 0) && p->has_info &&
	    p->state == STATE_ACTIVE && !p->lid)
		judge_add(j, PROBLEM_LID_UNASSIGNED, n, (int)port);
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
static void judge_lids(struct judge *j)
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

			if ((pr = judge_add(j, PROBLEM_DUPLICATE_LID, x->n, (int)x->port))) {
				pr->lid = (uint16_t)y->first;
				judge_set_peer(pr, y->n, y->port);
			}
			if ((pr = judge_add(j, PROBLEM_DUPLICATE_LID, y->n, (int)y->port))) {
				pr->lid = (uint16_t)y->first;
				judge_set_peer(pr, x->n, x->port);
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
static void judge_descs(struct judge *j)
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
			struct fab_problem *pr = judge_add(j, PROBLEM_DUPLICATE_NODE_DESC, v[k], -1);

			if (pr)
				pr->value = b - a;
		}
		a = b;
	}
	free(v);
}

/* A port that names n:port as its peer, where n:port names another: two
 * nodes answered with one GUID, and discovery took the second for the
 * first (its port's peer overwritten).  One problem per GUID. */
static void judge_guids(struct judge *j)
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
			pr = judge_add(j, PROBLEM_DUPLICATE_GUID, m, -1);
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
	return s && s->nsms && s->sms[0].state == SM_MASTER ? &s->sms[0] : NULL;
}

/* sm_missing (true) or sm_stalled; sets snap->sm_act_since_ms. */
static bool judge_sm(struct judge *j)
{
	struct fab_snap *s = j->snap;
	const struct fab_sm *m = master_of(s), *was = master_of(j->last);
	struct fab_problem *pr;

	s->sm_act_since_ms = s->mono_ms;
	if (!s->sm_lid || !m) {
		if ((pr = judge_add(j, PROBLEM_SM_MISSING, NULL, -1)))
			pr->lid = s->sm_lid;
		return true;
	}
	if (was && was->guid == m->guid && was->act_count == m->act_count)
		s->sm_act_since_ms = j->last->sm_act_since_ms;
	if (s->mono_ms - s->sm_act_since_ms >= SM_STALL_MS &&
	    (pr = judge_add(j, PROBLEM_SM_STALLED, NULL, -1))) {
		pr->guid = m->guid;
		pr->lid = m->lid;
		pr->value = m->act_count;
		pr->threshold = (uint64_t)(s->mono_ms - s->sm_act_since_ms) / 1000;
	}
	return false;
}

/* ---- the judgement ---- */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

int health_problem_cmp(const struct fab_problem *a, const struct fab_problem *b)
{
	int r = cmp_u64(a->severity, b->severity);

	if (!r)
		r = cmp_u64(a->guid, b->guid);
	if (!r)
		r = cmp_u64(a->has_port ? a->port + 1u : 0, b->has_port ? b->port + 1u : 0);
	if (!r)
		r = cmp_u64(a->kind, b->kind);
	if (!r)
		r = cmp_u64((uint64_t)(a->counter + 1), (uint64_t)(b->counter + 1));
	if (!r)
		r = cmp_u64(a->peer_guid, b->peer_guid);
	if (!r)
		r = cmp_u64(a->peer_port, b->peer_port);
	if (!r)
		r = cmp_u64(a->lid, b->lid);
	return r;
}

static int problem_qsort_cmp(const void *a, const void *b)
{
	return health_problem_cmp(a, b);
}

/* Sorted, and one of each identity (the first). */
static void sort_unique(struct judge *j)
{
	size_t o = 0;

	if (j->n)
		qsort(j->list, j->n, sizeof(*j->list), problem_qsort_cmp);
	for (size_t i = 0; i < j->n; i++)
		if (!o || health_problem_cmp(&j->list[o - 1], &j->list[i]))
			j->list[o++] = j->list[i];
	j->n = o;
}

/* A sweep that failed: the problems before it stand, and it is one. */
static void judge_failed(struct judge *j, const struct fab_snap *prev)
{
	struct fab_problem *pr;

	for (size_t i = 0; prev && i < prev->nproblems; i++) {
		if (prev->problems[i].kind == PROBLEM_SWEEP_FAILED)
			continue;
		pr = judge_add(j, prev->problems[i].kind, NULL, -1);
		if (pr)
			*pr = prev->problems[i];
	}
	pr = judge_add(j, PROBLEM_SWEEP_FAILED, NULL, -1);
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
static bool carried(const struct judge *j, const struct fab_problem *was)
{
	const struct fab_node *n;

	switch (was->kind) {
	case PROBLEM_ROUTE_MISSING:
	case PROBLEM_ROUTE_LOOP:
	case PROBLEM_ROUTE_DEAD_END:
		return true;
	case PROBLEM_COUNTER_RISING:
		n = fabsnap_find(j->snap, was->guid);
		return n && was->port <= n->nports && n->ports[was->port].has_counters;
	case PROBLEM_PORT_NOT_ACTIVE:
		n = fabsnap_find(j->snap, was->guid);
		return n && was->port <= n->nports && not_active(&n->ports[was->port]);
	default:
		return false;
	}
}

static void carry_to_refresh(struct judge *j, const struct fab_snap *prev)
{
	struct fab_problem *pr;

	for (size_t i = 0; prev && i < prev->nproblems; i++) {
		if (!carried(j, &prev->problems[i]))
			continue;
		pr = judge_add(j, prev->problems[i].kind, NULL, -1);
		if (pr)
			*pr = prev->problems[i];
	}
}

static void judge_nodes(struct judge *j, bool sm_missing)
{
	const struct fab_snap *s = j->snap;

	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];
		const struct fab_node *old = j->last ? fabsnap_find(j->last, n->guid) : NULL;
		struct fab_problem *pr;

		if ((n->sma_timeouts || n->pma_timeouts) &&
		    (pr = judge_add(j, PROBLEM_NODE_UNRESPONSIVE, n, -1))) {
			pr->value = n->sma_timeouts;
			pr->threshold = n->pma_timeouts;
		}
		for (unsigned p = 0; p <= n->nports; p++) {
			if (p && n->type == FAB_SWITCH && !n->ports[p].has_info)
				continue;
			judge_counters(j, n, p, old);
			judge_port(j, n, p, old, sm_missing);
		}
	}
}

void health_judge(const struct fab_snap *prev, struct fab_snap *snap,
		  const struct fab_snap *expected)
{
	struct judge j = {
		.snap = snap,
		.last = prev && prev->ok ? prev : NULL,
		.expected = expected,
		/* A given text's widths, not the first sweep's (the default). */
		.expected_speeds = expected && !expected->from_sweep,
	};

	if (!snap->ok) {
		judge_failed(&j, prev);
	} else {
		bool sm_missing = judge_sm(&j);

		judge_nodes(&j, sm_missing);
		judge_lids(&j);
		judge_descs(&j);
		judge_guids(&j);
		judge_speeds(&j);
		if (snap->refreshes)
			carry_to_refresh(&j, prev);
		else
			judge_routes(&j, sm_missing);
		if (expected)
			judge_expected(&j);
	}
	sort_unique(&j);
	snap->problems = j.list;
	snap->nproblems = j.n;
}

/* ---- the text ---- */

/* Appends to buf at *o, as snprintf would (never past cap). */
static void keyf(char *buf, size_t cap, size_t *o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void keyf(char *buf, size_t cap, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*o >= cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *o, cap - *o, fmt, ap);
	va_end(ap);
	if (n > 0)
		*o = *o + (size_t)n < cap ? *o + (size_t)n : cap - 1;
}

static void key_desc(char *buf, size_t cap, size_t *o, const char *key,
		     const char *desc)
{
	char q[4 * FAB_DESC_LEN + 3];

	fabsnap_quote(q, sizeof(q), desc);
	keyf(buf, cap, o, " %s=%s", key, q);
}

size_t health_problem_keys(const struct fab_problem *p, char *buf, size_t cap)
{
	size_t o = 0;

	if (!cap)
		return 0;
	buf[0] = '\0';
	keyf(buf, cap, &o, "problem=%s severity=%s", health_kind_name(p->kind),
	     health_severity_name(p->severity));
	if (p->guid)
		keyf(buf, cap, &o, " guid=0x%016" PRIx64, p->guid);
	if (p->has_port)
		keyf(buf, cap, &o, " port=%u", p->port);
	if (p->guid && p->kind != PROBLEM_SM_STALLED)
		key_desc(buf, cap, &o, "node_desc", p->node_desc);
	if (p->kind == PROBLEM_NODE_MISSING)
		keyf(buf, cap, &o, " node_type=%s", fabsnap_type_name(p->node_type));
	if (p->peer_guid) {
		keyf(buf, cap, &o, " peer_guid=0x%016" PRIx64 " peer_port=%u",
		     p->peer_guid, p->peer_port);
		key_desc(buf, cap, &o, "peer_node_desc", p->peer_desc);
	}
	switch (p->kind) {
	case PROBLEM_COUNTER_OVER_THRESHOLD:
		keyf(buf, cap, &o, " counter=%s value=%" PRIu64 " threshold=%" PRIu64,
		     health_counter_name(p), p->value, p->threshold);
		break;
	case PROBLEM_COUNTER_RISING:
		keyf(buf, cap, &o, " counter=%s value=%" PRIu64 " delta=%" PRIu64,
		     health_counter_name(p), p->value, p->value - p->threshold);
		break;
	case PROBLEM_COUNTER_SATURATED:
		keyf(buf, cap, &o, " counter=%s value=%" PRIu64,
		     health_counter_name(p), p->value);
		break;
	case PROBLEM_LINK_DEGRADED:
		keyf(buf, cap, &o, " expected=%s found=%s basis=%s", p->expected,
		     p->found, p->basis ? p->basis : "enabled");
		break;
	case PROBLEM_LINK_MOVED:
		keyf(buf, cap, &o, " expected=%s found=%s", p->expected, p->found);
		break;
	case PROBLEM_LINK_MISSING:
	case PROBLEM_PORT_NOT_ACTIVE:
		keyf(buf, cap, &o, " found=%s", p->found);
		break;
	case PROBLEM_DUPLICATE_GUID:
		keyf(buf, cap, &o, " found=%s", p->found);
		break;
	case PROBLEM_DUPLICATE_LID:
		keyf(buf, cap, &o, " lid=%u", p->lid);
		break;
	case PROBLEM_DUPLICATE_NODE_DESC:
		keyf(buf, cap, &o, " count=%" PRIu64, p->value);
		break;
	case PROBLEM_SM_MISSING:
		keyf(buf, cap, &o, " sm_lid=%u", p->lid);
		break;
	case PROBLEM_SM_STALLED:
		keyf(buf, cap, &o, " lid=%u act_count=%" PRIu64 " seconds=%" PRIu64,
		     p->lid, p->value, p->threshold);
		break;
	case PROBLEM_NODE_UNRESPONSIVE:
		keyf(buf, cap, &o, " sma_timeouts=%" PRIu64 " pma_timeouts=%" PRIu64,
		     p->value, p->threshold);
		break;
	case PROBLEM_ROUTE_MISSING:
	case PROBLEM_ROUTE_LOOP:
	case PROBLEM_ROUTE_DEAD_END:
		keyf(buf, cap, &o, " %s", p->found);
		break;
	case PROBLEM_SWEEP_FAILED: {
		char q[2 * sizeof(p->found) + 3];

		fabsnap_quote(q, sizeof(q), p->found);
		keyf(buf, cap, &o, " reason=%s", q);
		break;
	}
	default:
		break;
	}
	return o;
}
