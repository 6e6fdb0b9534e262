/* One problem of fabric/problems (problem.h): the kinds, their names and
 * severities, a problem's identity and keys; and the list a judgement
 * makes (problems_priv.h): room, a new problem, its peer, sorted. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/array.h"
#include "umadfs/fabric/problems/problem.h"
#include "umadfs/fabric/problems/thresholds.h"

#include "problems_priv.h"

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
	[PROBLEM_CREDIT_LOOP] = { "credit_loop", SEVERITY_ERROR },
	[PROBLEM_ROUTE_UNBALANCED] = { "route_unbalanced", SEVERITY_WARNING },
	[PROBLEM_ROUTE_NOT_MINIMAL] = { "route_not_minimal", SEVERITY_WARNING },
	[PROBLEM_SWEEP_FAILED] = { "sweep_failed", SEVERITY_ERROR },
	[PROBLEM_PORT_CONGESTED] = { "port_congested", SEVERITY_WARNING },
	[PROBLEM_LINK_FLAPPING] = { "link_flapping", SEVERITY_ERROR },
	[PROBLEM_PARTITION_NO_FULL_MEMBER] = { "partition_no_full_member", SEVERITY_ERROR },
	[PROBLEM_PKEY_ENFORCEMENT_MISMATCH] = { "pkey_enforcement_mismatch", SEVERITY_ERROR },
	[PROBLEM_PORT_WITHOUT_DEFAULT_PARTITION] = { "port_without_default_partition",
						     SEVERITY_WARNING },
	[PROBLEM_MCAST_MEMBER_UNREACHABLE] = { "mcast_member_unreachable", SEVERITY_ERROR },
	[PROBLEM_MCAST_LOOP] = { "mcast_loop", SEVERITY_ERROR },
	[PROBLEM_MCAST_GROUP_EMPTY] = { "mcast_group_empty", SEVERITY_WARNING },
};

const char *problem_kind_name(unsigned kind)
{
	return kind < PROBLEM_KIND_COUNT ? kinds[kind].name : "unknown";
}

const char *problem_severity_name(unsigned severity)
{
	return severity == SEVERITY_ERROR ? "error" : "warning";
}

const char *problem_counter_name(const struct fab_problem *p)
{
	return p->counter >= 0 ? thresholds_name((unsigned)p->counter) : NULL;
}

bool problem_room(struct problem_list *j, void *v, size_t *cap, size_t n, size_t size)
{
	if (array_grow(v, cap, n + 1, size, 64) < 0) {
		j->nomem = true;
		return false;
	}
	return true;
}

struct fab_problem *problem_add(struct problem_list *j, unsigned kind,
			       const struct fab_node *n, int port)
{
	struct fab_problem *p;

	if (!problem_room(j, &j->list, &j->cap, j->n, sizeof(*p)))
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

void problem_set_peer(struct fab_problem *p, const struct fab_node *peer,
		     unsigned port)
{
	p->peer_guid = peer->guid;
	p->peer_port = (uint8_t)port;
	memcpy(p->peer_desc, peer->desc, sizeof(p->peer_desc));
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

int problem_cmp(const struct fab_problem *a, const struct fab_problem *b)
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
	if (!r)
		r = cmp_u64(a->pkey, b->pkey);
	return r;
}

static int problem_qsort_cmp(const void *a, const void *b)
{
	return problem_cmp(a, b);
}

void problem_list_sort(struct problem_list *j)
{
	size_t o = 0;

	if (j->n)
		qsort(j->list, j->n, sizeof(*j->list), problem_qsort_cmp);
	for (size_t i = 0; i < j->n; i++)
		if (!o || problem_cmp(&j->list[o - 1], &j->list[i]))
			j->list[o++] = j->list[i];
	j->n = o;
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

/* The keys every problem has that has them: its kind, severity, node,
 * port and peer. */
static void identity_keys(const struct fab_problem *p, char *buf, size_t cap,
			  size_t *o)
{
	keyf(buf, cap, o, "problem=%s severity=%s", problem_kind_name(p->kind),
	     problem_severity_name(p->severity));
	if (p->guid)
		keyf(buf, cap, o, " guid=0x%016" PRIx64, p->guid);
	if (p->has_port)
		keyf(buf, cap, o, " port=%u", p->port);
	if (p->guid && p->kind != PROBLEM_SM_STALLED)
		key_desc(buf, cap, o, "node_desc", p->node_desc);
	if (p->kind == PROBLEM_NODE_MISSING)
		keyf(buf, cap, o, " node_type=%s", fabsnap_type_name(p->node_type));
	if (p->peer_guid) {
		keyf(buf, cap, o, " peer_guid=0x%016" PRIx64 " peer_port=%u",
		     p->peer_guid, p->peer_port);
		key_desc(buf, cap, o, "peer_node_desc", p->peer_desc);
	}
}

/* A counter's problem's keys: the counter and its numbers. */
static void counter_keys(const struct fab_problem *p, char *buf, size_t cap,
			 size_t *o)
{
	switch (p->kind) {
	case PROBLEM_COUNTER_OVER_THRESHOLD:
		keyf(buf, cap, o, " counter=%s value=%" PRIu64 " threshold=%" PRIu64,
		     problem_counter_name(p), p->n.counter.value, p->n.counter.threshold);
		break;
	case PROBLEM_COUNTER_RISING:
		keyf(buf, cap, o, " counter=%s value=%" PRIu64 " delta=%" PRIu64,
		     problem_counter_name(p), p->n.counter.value,
		     p->n.counter.value - p->n.counter.before);
		break;
	default: /* saturated */
		keyf(buf, cap, o, " counter=%s value=%" PRIu64,
		     problem_counter_name(p), p->n.counter.value);
		break;
	}
}

/* The keys of a kind whose numbers are in p->n. */
static void number_keys(const struct fab_problem *p, char *buf, size_t cap, size_t *o)
{
	switch (p->kind) {
	case PROBLEM_DUPLICATE_NODE_DESC:
		keyf(buf, cap, o, " count=%" PRIu64, p->n.count);
		break;
	case PROBLEM_LINK_FLAPPING:
		keyf(buf, cap, o, " flaps=%" PRIu64 " window_s=%" PRIu64 " since_s=%"
		     PRIu64 " seen_by=%s", p->n.flap.flaps, p->n.flap.window_s,
		     p->n.flap.since_s, p->basis);
		break;
	case PROBLEM_SM_STALLED:
		keyf(buf, cap, o, " lid=%u act_count=%" PRIu64 " seconds=%" PRIu64,
		     p->lid, p->n.sm.act_count, p->n.sm.seconds);
		break;
	case PROBLEM_NODE_UNRESPONSIVE:
		keyf(buf, cap, o, " sma_timeouts=%" PRIu64 " pma_timeouts=%" PRIu64,
		     p->n.timeouts.sma, p->n.timeouts.pma);
		break;
	default:
		break;
	}
}

/* The keys of the problem's kind: what was expected and found, its
 * numbers. */
static void kind_keys(const struct fab_problem *p, char *buf, size_t cap, size_t *o)
{
	char q[2 * sizeof(p->found) + 3];

	switch (p->kind) {
	case PROBLEM_COUNTER_OVER_THRESHOLD:
	case PROBLEM_COUNTER_RISING:
	case PROBLEM_COUNTER_SATURATED:
		counter_keys(p, buf, cap, o);
		break;
	case PROBLEM_LINK_DEGRADED:
		keyf(buf, cap, o, " expected=%s found=%s basis=%s", p->expected,
		     p->found, p->basis ? p->basis : "enabled");
		break;
	case PROBLEM_LINK_MOVED:
		keyf(buf, cap, o, " expected=%s found=%s", p->expected, p->found);
		break;
	case PROBLEM_LINK_MISSING:
	case PROBLEM_PORT_NOT_ACTIVE:
	case PROBLEM_DUPLICATE_GUID:
		keyf(buf, cap, o, " found=%s", p->found);
		break;
	case PROBLEM_DUPLICATE_LID:
		keyf(buf, cap, o, " lid=%u", p->lid);
		break;
	case PROBLEM_SM_MISSING:
		keyf(buf, cap, o, " sm_lid=%u", p->lid);
		break;
	case PROBLEM_DUPLICATE_NODE_DESC:
	case PROBLEM_LINK_FLAPPING:
	case PROBLEM_SM_STALLED:
	case PROBLEM_NODE_UNRESPONSIVE:
		number_keys(p, buf, cap, o);
		break;
	case PROBLEM_ROUTE_MISSING:
	case PROBLEM_ROUTE_LOOP:
	case PROBLEM_ROUTE_DEAD_END:
	case PROBLEM_PORT_CONGESTED:
	case PROBLEM_CREDIT_LOOP:
	case PROBLEM_ROUTE_UNBALANCED:
	case PROBLEM_ROUTE_NOT_MINIMAL:
		keyf(buf, cap, o, " %s", p->found);
		break;
	case PROBLEM_PARTITION_NO_FULL_MEMBER:
	case PROBLEM_PKEY_ENFORCEMENT_MISMATCH:
	case PROBLEM_PORT_WITHOUT_DEFAULT_PARTITION:
		if (p->pkey)
			keyf(buf, cap, o, " pkey=0x%04x", p->pkey);
		keyf(buf, cap, o, " %s", p->found);
		break;
	case PROBLEM_SWEEP_FAILED:
		fabsnap_quote(q, sizeof(q), p->found);
		keyf(buf, cap, o, " reason=%s", q);
		break;
	default: /* the mcast kinds: found holds their keys */
		if (p->kind >= PROBLEM_MCAST_MEMBER_UNREACHABLE)
			keyf(buf, cap, o, " %s", p->found);
		break;
	}
}

size_t problem_keys(const struct fab_problem *p, char *buf, size_t cap)
{
	size_t o = 0;

	if (!cap)
		return 0;
	buf[0] = '\0';
	identity_keys(p, buf, cap, &o);
	kind_keys(p, buf, cap, &o);
	return o;
}
