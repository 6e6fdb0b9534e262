/* The judge of fabric/problems (health.h): what is wrong with a new
 * snapshot, from its own contents, the snapshot before it, the expected
 * topology and the error thresholds.  No MADs; the sweep thread.
 *
 * The expected topology's link widths and speeds count only when it was
 * given (fabric/expected written or loaded: a text, which sent no MADs);
 * the first complete sweep, the default expectation, gives links and
 * nodes but not speeds, which are then judged against the fabric's own
 * majority. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/device/sysfmt.h"
#include "umadfs/fabric/health.h"
#include "umadfs/fabric/thresholds.h"

#define PHYS_LINKUP 5     /* PortInfo PortPhysicalState */
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

/* The problems being made, and what they are judged against. */
struct judge {
	struct fab_snap *snap;
	const struct fab_snap *last;     /* the snapshot before, if ok */
	const struct fab_snap *expected; /* or NULL */
	bool expected_speeds;            /* expected was given as a text */
	struct fab_problem *list;
	size_t n, cap;
	bool nomem;
};

/* Room in the array *v (*cap elements of size, n used) for one more;
 * false (j->nomem set) when it cannot grow. */
static bool room(struct judge *j, void **v, size_t *cap, size_t n, size_t size)
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

/* A new problem of kind about node n (or NULL: the fabric's), port p
 * (-1: none); NULL on ENOMEM. */
static struct fab_problem *add(struct judge *j, unsigned kind,
			       const struct fab_node *n, int port)
{
	struct fab_problem *p;

	if (!room(j, (void **)&j->list, &j->cap, j->n, sizeof(*p)))
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

static void set_peer(struct fab_problem *p, const struct fab_node *peer,
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
		if (v > thr.value[i] && (pr = add(j, PROBLEM_COUNTER_OVER_THRESHOLD, n, (int)port))) {
			pr->counter = (int8_t)i;
			pr->value = v;
			pr->threshold = thr.value[i];
		}
		if (v == field_max(f) && (pr = add(j, PROBLEM_COUNTER_SATURATED, n, (int)port))) {
			pr->counter = (int8_t)i;
			pr->value = v;
		}
		/* The error counters (not PortXmitWait, a congestion count). */
		if (f != IB_PC_XMT_WAIT_F && op && counter_value(old, op, i, &was) &&
		    v > was && (pr = add(j, PROBLEM_COUNTER_RISING, n, (int)port))) {
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

	if (!sm_missing && port && not_active(p) && old && port <= old->nports &&
	    not_active(&old->ports[port]) &&
	    (pr = add(j, PROBLEM_PORT_NOT_ACTIVE, n, (int)port)))
		snprintf(pr->found, sizeof(pr->found), "%s",
			 p->state == STATE_INIT ? "Init" : "Armed");
	/* Endports: a CA's ports, a switch's port 0. */
	if ((n->type == FAB_SWITCH) == (port == 0) && p->has_info &&
	    p->state == STATE_ACTIVE && !p->lid)
		add(j, PROBLEM_LID_UNASSIGNED, n, (int)port);
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

			if ((pr = add(j, PROBLEM_DUPLICATE_LID, x->n, (int)x->port))) {
				pr->lid = (uint16_t)y->first;
				set_peer(pr, y->n, y->port);
			}
			if ((pr = add(j, PROBLEM_DUPLICATE_LID, y->n, (int)y->port))) {
				pr->lid = (uint16_t)y->first;
				set_peer(pr, x->n, x->port);
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
			struct fab_problem *pr = add(j, PROBLEM_DUPLICATE_NODE_DESC, v[k], -1);

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
			pr = add(j, PROBLEM_DUPLICATE_GUID, m, -1);
			if (pr)
				snprintf(pr->found, sizeof(pr->found),
					 "0x%016" PRIx64 "[%u],0x%016" PRIx64 "[%u]",
					 n->guid, p, back->peer_guid, back->peer_port);
		}
	}
}

/* ---- link speeds ---- */

/* A speed as Mb/s per lane: the extended one when set. */
static unsigned lane_mbps(unsigned speed, unsigned ext)
{
	static const struct { unsigned bit, mbps; } exts[] = {
		{ 16, 200000 }, { 8, 100000 }, { 4, 50000 }, { 2, 25000 }, { 1, 14000 },
	};

	for (size_t i = 0; ext && i < sizeof(exts) / sizeof(exts[0]); i++)
		if (ext & exts[i].bit)
			return exts[i].mbps;
	return speed & 4 ? 10000 : speed & 2 ? 5000 : speed & 1 ? 2500 : 0;
}

/* The highest bit of a speed set (SDR 1, DDR 2, QDR 4; ext FDR 1 ...). */
static unsigned top_bit(unsigned set)
{
	unsigned b = 0;

	for (unsigned i = 0; i < 8; i++)
		if (set & (1u << i))
			b = 1u << i;
	return b;
}

/* The widest width of a set (1x 1, 4x 2, 8x 4, 12x 8, 2x 16). */
static unsigned widest(unsigned set)
{
	unsigned best = 0;

	for (unsigned i = 0; i < 5; i++)
		if ((set & (1u << i)) && sysfmt_width_lanes(1u << i) >
		    sysfmt_width_lanes(best))
			best = 1u << i;
	return best;
}

/* "Enabled" values that mean "as supported" (IBA 14.2.5.6). */
static unsigned enabled_width(const struct fab_port *p)
{
	return p->width_enabled == 0xff ? p->width_supported : p->width_enabled;
}

static unsigned enabled_speed(const struct fab_port *p)
{
	return p->speed_enabled == 15 ? p->speed_supported : p->speed_enabled;
}

static unsigned enabled_ext(const struct fab_port *p)
{
	return p->ext_speed_enabled >= 30 ? p->ext_speed_supported :
		p->ext_speed_enabled;
}

struct rate {
	unsigned width;      /* one width bit */
	unsigned speed, ext; /* one speed bit, one ext bit or 0 */
};

static void rate_name(char *buf, size_t cap, const struct rate *r)
{
	static const char *const ext_names[] = { "FDR", "EDR", "HDR", "NDR", "XDR" };
	static const char *const names[] = { "SDR", "DDR", "QDR" };
	const char *sp = "?";

	for (unsigned i = 0; i < 5; i++)
		if (r->ext == 1u << i)
			sp = ext_names[i];
	for (unsigned i = 0; !r->ext && i < 3; i++)
		if (r->speed == 1u << i)
			sp = names[i];
	snprintf(buf, cap, "%dx%s", sysfmt_width_lanes(r->width), sp);
}

/* What a link runs at (either end: both share it). */
static struct rate active_rate(const struct fab_port *p)
{
	return (struct rate){ p->width, p->speed, p->ext_speed };
}

/* The best both ends enable and support; false when they do not say. */
static bool best_rate(const struct fab_port *a, const struct fab_port *b,
		      struct rate *r)
{
	unsigned w = enabled_width(a) & a->width_supported &
		     enabled_width(b) & b->width_supported;
	unsigned s = enabled_speed(a) & a->speed_supported &
		     enabled_speed(b) & b->speed_supported;
	unsigned e = enabled_ext(a) & a->ext_speed_supported &
		     enabled_ext(b) & b->ext_speed_supported;

	if (!w || !s)
		return false;
	*r = (struct rate){ widest(w), top_bit(s), top_bit(e) };
	return true;
}

/* Below: fewer lanes or a slower lane. */
static bool below(const struct rate *found, const struct rate *want)
{
	return sysfmt_width_lanes(found->width) < sysfmt_width_lanes(want->width) ||
	       lane_mbps(found->speed, found->ext) < lane_mbps(want->speed, want->ext);
}

/* A link counted once: from the end with the lower GUID (or port). */
static bool first_end(const struct fab_node *n, unsigned p,
		      const struct fab_port *fp)
{
	return n->guid < fp->peer_guid ||
	       (n->guid == fp->peer_guid && p < fp->peer_port);
}

/* The type pair of a link, as an index below PAIRS. */
static unsigned pair_of(const struct fab_node *a, const struct fab_node *b)
{
	unsigned x = a->type & 3, y = b->type & 3;

	return x < y ? x * 4 + y : y * 4 + x;
}

#define PAIRS 16
#define MAJORITY_RATES 8

/* The rate most links of each type pair run at, if more than half do. */
struct majority {
	struct { struct rate r; unsigned count; } seen[PAIRS][MAJORITY_RATES];
	unsigned links[PAIRS];
};

static void majority_count(struct majority *m, unsigned pair, const struct rate *r)
{
	m->links[pair]++;
	for (unsigned i = 0; i < MAJORITY_RATES; i++) {
		if (!m->seen[pair][i].count) {
			m->seen[pair][i].r = *r;
			m->seen[pair][i].count = 1;
			return;
		}
		if (!memcmp(&m->seen[pair][i].r, r, sizeof(*r))) {
			m->seen[pair][i].count++;
			return;
		}
	}
}

static const struct rate *majority_rate(const struct majority *m, unsigned pair)
{
	for (unsigned i = 0; i < MAJORITY_RATES; i++)
		if (m->seen[pair][i].count * 2 > m->links[pair])
			return &m->seen[pair][i].r;
	return NULL;
}

/* The width and speed the expected topology gives the link at n:p. */
static bool expected_rate(const struct judge *j, const struct fab_node *n,
			  unsigned p, struct rate *r)
{
	const struct fab_node *e;

	if (!j->expected || !j->expected_speeds)
		return false;
	e = fabsnap_find(j->expected, n->guid);
	if (!e || p > e->nports || !e->ports[p].width ||
	    (!e->ports[p].speed && !e->ports[p].ext_speed))
		return false;
	*r = (struct rate){ e->ports[p].width, e->ports[p].speed, e->ports[p].ext_speed };
	return true;
}

static void degraded(struct judge *j, const struct fab_node *n, unsigned p,
		     const struct fab_node *m, const struct rate *found,
		     const struct rate *want, const char *basis)
{
	const struct fab_node *a = n, *b = m;
	unsigned pa = p, pb = n->ports[p].peer_port;
	struct fab_problem *pr;

	/* Named by its CA end, if it has one. */
	if (a->type == FAB_SWITCH && b->type != FAB_SWITCH) {
		a = m;
		b = n;
		pa = pb;
		pb = p;
	}
	pr = add(j, PROBLEM_LINK_DEGRADED, a, (int)pa);
	if (!pr)
		return;
	set_peer(pr, b, pb);
	rate_name(pr->expected, sizeof(pr->expected), want);
	rate_name(pr->found, sizeof(pr->found), found);
	pr->basis = basis;
}

/* Each link once: below what the expected topology gives it, else below
 * what both ends enable and support, else below what most links between
 * nodes of the same two types run at. */
static void judge_speeds(struct judge *j)
{
	const struct fab_snap *s = j->snap;
	struct majority *maj = calloc(1, sizeof(*maj));

	if (!maj) {
		j->nomem = true;
		return;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < s->nnodes; i++) {
			const struct fab_node *n = &s->nodes[i];

			for (unsigned p = 1; p <= n->nports; p++) {
				const struct fab_port *fp = &n->ports[p], *q;
				const struct fab_node *m = NULL;
				struct rate found, want;
				const struct rate *most;

				q = fabsnap_peer(s, fp, &m);
				if (!q || !first_end(n, p, fp) || !fp->has_info ||
				    !q->has_info)
					continue;
				found = active_rate(fp);
				if (!pass) {
					majority_count(maj, pair_of(n, m), &found);
					continue;
				}
				if (expected_rate(j, n, p, &want) ||
				    expected_rate(j, m, fp->peer_port, &want)) {
					if (below(&found, &want))
						degraded(j, n, p, m, &found, &want, "expected");
				} else if (best_rate(fp, q, &want) && below(&found, &want)) {
					degraded(j, n, p, m, &found, &want, "enabled");
				} else if ((most = majority_rate(maj, pair_of(n, m))) &&
					   below(&found, most)) {
					degraded(j, n, p, m, &found, most, "fabric");
				}
			}
		}
	}
	free(maj);
}

/* ---- against the expected topology ---- */

/* A link by its two ends. */
struct link {
	uint64_t a, b;
	uint8_t pa, pb;
	bool matched; /* taken into a link_moved */
};

struct links {
	struct link *v;
	size_t n, cap;
};

static bool links_add(struct judge *j, struct links *l, uint64_t a, unsigned pa,
		      uint64_t b, unsigned pb)
{
	if (!room(j, (void **)&l->v, &l->cap, l->n, sizeof(*l->v)))
		return false;
	l->v[l->n++] = (struct link){ a, b, (uint8_t)pa, (uint8_t)pb, false };
	return true;
}

/* Whether s has n:p linked to guid:port, its port physically up. */
static bool has_link(const struct fab_snap *s, uint64_t guid, unsigned p,
		     uint64_t peer, unsigned peer_port)
{
	const struct fab_node *n = fabsnap_find(s, guid);
	const struct fab_port *fp;

	if (!n || p > n->nports)
		return false;
	fp = &n->ports[p];
	return fp->peer_guid == peer && fp->peer_port == peer_port &&
	       (!fp->has_info || fp->phys_state == PHYS_LINKUP);
}

/* The links of a that b lacks (both ends' nodes in the snapshot, when
 * skip_gone: the links of a missing node are its node_missing's). */
static void links_absent(struct judge *j, const struct fab_snap *a,
			 const struct fab_snap *b, bool skip_gone, struct links *out)
{
	for (size_t i = 0; i < a->nnodes; i++) {
		const struct fab_node *n = &a->nodes[i];

		for (unsigned p = 1; p <= n->nports; p++) {
			const struct fab_port *fp = &n->ports[p];

			if (!fp->peer_guid || !first_end(n, p, fp) ||
			    has_link(b, n->guid, p, fp->peer_guid, fp->peer_port))
				continue;
			if (skip_gone && !fabsnap_find(j->snap, n->guid) &&
			    !fabsnap_find(j->snap, fp->peer_guid))
				continue;
			if (!links_add(j, out, n->guid, p, fp->peer_guid, fp->peer_port))
				return;
		}
	}
}

/* Whether found f is where expected e went: it keeps one of e's ports,
 * or joins the same two nodes. */
static bool moved_to(const struct link *e, const struct link *f)
{
	return (f->a == e->a && f->pa == e->pa) || (f->b == e->b && f->pb == e->pb) ||
	       (f->a == e->b && f->pa == e->pb) || (f->b == e->a && f->pb == e->pa) ||
	       (f->a == e->a && f->b == e->b) || (f->a == e->b && f->b == e->a);
}

/* The node of guid: the snapshot's, else the expectation's (its
 * description and type), else NULL. */
static const struct fab_node *node_of(const struct judge *j, uint64_t guid)
{
	const struct fab_node *n = fabsnap_find(j->snap, guid);

	return n ? n : fabsnap_find(j->expected, guid);
}

static void place(char *buf, size_t cap, const struct link *l)
{
	snprintf(buf, cap, "0x%016" PRIx64 "[%u]-0x%016" PRIx64 "[%u]",
		 l->a, l->pa, l->b, l->pb);
}

/* "Polling": the name sysfs gives the state, a space made '_'. */
static void phys_state_name(char *buf, size_t cap, unsigned state)
{
	char line[64], *name, *c;

	if (sysfmt_phys_state(line, sizeof(line), state) < 0)
		line[0] = '\0';
	name = strstr(line, ": ");
	name = name ? name + 2 : line;
	name[strcspn(name, "\n")] = '\0';
	for (c = name; *c; c++)
		if (*c == ' ')
			*c = '_';
	snprintf(buf, cap, "%s", name);
}

static void link_end(struct judge *j, unsigned kind, uint64_t guid,
		     unsigned port, uint64_t peer, unsigned peer_port)
{
	const struct fab_node *n = node_of(j, guid), *m = node_of(j, peer);
	const struct fab_node *here = fabsnap_find(j->snap, guid);
	struct fab_problem *pr;

	if (!n || !m || !(pr = add(j, kind, n, (int)port)))
		return;
	set_peer(pr, m, peer_port);
	if (kind != PROBLEM_LINK_MISSING)
		return;
	if (!here || port > here->nports || !here->ports[port].has_info)
		snprintf(pr->found, sizeof(pr->found), "absent");
	else
		phys_state_name(pr->found, sizeof(pr->found),
				here->ports[port].phys_state);
}

static void judge_expected(struct judge *j)
{
	const struct fab_snap *e = j->expected;
	struct links gone = { 0 }, extra = { 0 };

	for (size_t i = 0; i < e->nnodes; i++) {
		const struct fab_node *n = &e->nodes[i];
		struct fab_problem *pr;

		if (!fabsnap_find(j->snap, n->guid) &&
		    (pr = add(j, PROBLEM_NODE_MISSING, n, -1)))
			pr->node_type = n->type;
	}
	links_absent(j, e, j->snap, true, &gone);
	links_absent(j, j->snap, e, false, &extra);
	for (size_t g = 0; g < gone.n; g++) {
		struct link *x = &gone.v[g];
		struct fab_problem *pr;

		for (size_t f = 0; f < extra.n && !x->matched; f++) {
			struct link *y = &extra.v[f];

			if (y->matched || !moved_to(x, y))
				continue;
			x->matched = y->matched = true;
			pr = add(j, PROBLEM_LINK_MOVED, node_of(j, x->a), x->pa);
			if (!pr)
				continue;
			set_peer(pr, node_of(j, x->b), x->pb);
			place(pr->expected, sizeof(pr->expected), x);
			place(pr->found, sizeof(pr->found), y);
		}
		if (!x->matched) {
			link_end(j, PROBLEM_LINK_MISSING, x->a, x->pa, x->b, x->pb);
			link_end(j, PROBLEM_LINK_MISSING, x->b, x->pb, x->a, x->pa);
		}
	}
	for (size_t f = 0; f < extra.n; f++)
		if (!extra.v[f].matched)
			link_end(j, PROBLEM_LINK_UNEXPECTED, extra.v[f].a, extra.v[f].pa,
				 extra.v[f].b, extra.v[f].pb);
	free(gone.v);
	free(extra.v);
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
		if ((pr = add(j, PROBLEM_SM_MISSING, NULL, -1)))
			pr->lid = s->sm_lid;
		return true;
	}
	if (was && was->guid == m->guid && was->act_count == m->act_count)
		s->sm_act_since_ms = j->last->sm_act_since_ms;
	if (s->mono_ms - s->sm_act_since_ms >= SM_STALL_MS &&
	    (pr = add(j, PROBLEM_SM_STALLED, NULL, -1))) {
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
		pr = add(j, prev->problems[i].kind, NULL, -1);
		if (pr)
			*pr = prev->problems[i];
	}
	pr = add(j, PROBLEM_SWEEP_FAILED, NULL, -1);
	if (pr)
		snprintf(pr->found, sizeof(pr->found), "%s", j->snap->error);
	if (prev)
		j->snap->sm_act_since_ms = prev->sm_act_since_ms;
}

static void judge_nodes(struct judge *j, bool sm_missing)
{
	const struct fab_snap *s = j->snap;

	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];
		const struct fab_node *old = j->last ? fabsnap_find(j->last, n->guid) : NULL;
		struct fab_problem *pr;

		if ((n->sma_timeouts || n->pma_timeouts) &&
		    (pr = add(j, PROBLEM_NODE_UNRESPONSIVE, n, -1))) {
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
		/* A given text sent no MADs; a sweep (the default) did. */
		.expected_speeds = expected && !expected->stats.mads,
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
