/* Links (problems_priv.h): each link's width and speed against what it
 * should run at (link_degraded), and the snapshot's nodes and links
 * against the expected topology (node_missing, link_missing, link_moved,
 * link_unexpected).
 *
 * The expected topology's link widths and speeds count only when it was
 * given (fabric/expected written or loaded);
 * the first complete sweep, the default expectation, gives links and
 * nodes but not speeds, which are then judged against the fabric's own
 * majority. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/device/sysfmt.h"
#include "umadfs/mad/ibcodes.h"

#include "problems_priv.h"

/* ---- link speeds ---- */

/* A speed as Mb/s per lane: the extended one when set; 0 for none. */
static unsigned lane_mbps(unsigned speed, unsigned ext)
{
	const struct ib_speed *s = ibcodes_speed(speed, ext);

	return s ? s->lane_mbps : 0;
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

/* The widest width of a set. */
static unsigned widest(unsigned set)
{
	unsigned best = 0;

	for (unsigned i = 0, w; (w = ibcodes_width_at(i)); i++)
		if (set & w)
			best = w; /* fewest lanes first */
	return best;
}

/* "Enabled" values that mean "as supported" (IBA 14.2.5.6). */
static unsigned enabled_width(const struct fab_port *p)
{
	return p->width_enabled == IB_LINK_WIDTH_SET_LWS ? p->width_supported :
		p->width_enabled;
}

static unsigned enabled_speed(const struct fab_port *p)
{
	return p->speed_enabled == IB_LINK_SPEED_SET_LSS ? p->speed_supported :
		p->speed_enabled;
}

/* (IB_LINK_SPEED_EXT_DISABLE is 0 by now: fabsnap_read_port_info.) */
static unsigned enabled_ext(const struct fab_port *p)
{
	return p->ext_speed_enabled >= IB_LINK_SPEED_EXT_DISABLE ?
		p->ext_speed_supported : p->ext_speed_enabled;
}

struct rate {
	unsigned width;      /* one width bit */
	unsigned speed, ext; /* one speed bit, one ext bit or 0 */
};

/* "4xEDR", as ibnetdiscover words a link. */
static void rate_name(char *buf, size_t cap, const struct rate *r)
{
	const struct ib_speed *s = ibcodes_speed(r->speed, r->ext);

	snprintf(buf, cap, "%dx%s", ibcodes_width_lanes(r->width), s ? s->name : "?");
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
	return ibcodes_width_lanes(found->width) < ibcodes_width_lanes(want->width) ||
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
static bool expected_rate(const struct problem_list *j, const struct fab_node *n,
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

static void degraded(struct problem_list *j, const struct fab_node *n, unsigned p,
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
	pr = problem_add(j, PROBLEM_LINK_DEGRADED, a, (int)pa);
	if (!pr)
		return;
	problem_set_peer(pr, b, pb);
	rate_name(pr->expected, sizeof(pr->expected), want);
	rate_name(pr->found, sizeof(pr->found), found);
	pr->basis = basis;
}

/* Each link once: below what the expected topology gives it, else below
 * what both ends enable and support, else below what most links between
 * nodes of the same two types run at. */
void linkcheck_speeds(struct problem_list *j)
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

static bool links_add(struct problem_list *j, struct links *l, uint64_t a, unsigned pa,
		      uint64_t b, unsigned pb)
{
	if (!problem_room(j, &l->v, &l->cap, l->n, sizeof(*l->v)))
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
	       (!fp->has_info || fp->phys_state == IB_PORT_PHYS_STATE_LINKUP);
}

/* The links of a that b lacks (both ends' nodes in the snapshot, when
 * skip_gone: the links of a missing node are its node_missing's). */
static void links_absent(struct problem_list *j, const struct fab_snap *a,
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
static const struct fab_node *node_of(const struct problem_list *j, uint64_t guid)
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

static void link_end(struct problem_list *j, unsigned kind, uint64_t guid,
		     unsigned port, uint64_t peer, unsigned peer_port)
{
	const struct fab_node *n = node_of(j, guid), *m = node_of(j, peer);
	const struct fab_node *here = fabsnap_find(j->snap, guid);
	struct fab_problem *pr;

	if (!n || !m || !(pr = problem_add(j, kind, n, (int)port)))
		return;
	problem_set_peer(pr, m, peer_port);
	if (kind != PROBLEM_LINK_MISSING)
		return;
	if (!here || port > here->nports || !here->ports[port].has_info)
		snprintf(pr->found, sizeof(pr->found), "absent");
	else
		phys_state_name(pr->found, sizeof(pr->found),
				here->ports[port].phys_state);
}

void linkcheck_expected(struct problem_list *j)
{
	const struct fab_snap *e = j->expected;
	struct links gone = { 0 }, extra = { 0 };

	for (size_t i = 0; i < e->nnodes; i++) {
		const struct fab_node *n = &e->nodes[i];
		struct fab_problem *pr;

		if (!fabsnap_find(j->snap, n->guid) &&
		    (pr = problem_add(j, PROBLEM_NODE_MISSING, n, -1)))
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
			pr = problem_add(j, PROBLEM_LINK_MOVED, node_of(j, x->a), x->pa);
			if (!pr)
				continue;
			problem_set_peer(pr, node_of(j, x->b), x->pb);
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
