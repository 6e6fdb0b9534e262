/* What a port carries (carries.h): the endport LIDs a switch port's
 * forwarding sends out of it and its peer's sends into it, as
 * ibfindnodesusing lists them from ibroute, and what a disable of a port
 * would cut: routes from this host, routes between endports, endports
 * left with no link to this host.  From the snapshot alone; no MAD. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/array.h"
#include "umadfs/fabric/snapshot/carries.h"
#include "umadfs/fabric/snapshot/routes.h"
#include "umadfs/mad/ibcodes.h"

/* ---- routed_endports ---- */

struct list {
	struct carried *a;
	size_t n, cap;
};

static int by_lid(const void *x, const void *y)
{
	const struct carried *a = x, *b = y;

	return (a->lid > b->lid) - (a->lid < b->lid);
}

/* Whether endport port of n has a LID to be routed by. */
static bool has_lid(const struct fab_node *n, unsigned port)
{
	return n->ports[port].has_info && n->ports[port].lid;
}

/* Whether `by` sends lid out of its port `port`: by its table if it is a
 * switch; a CA or router sends every LID but its own port's. */
static bool sends(const struct fab_node *by, unsigned port, unsigned lid)
{
	if (by->type == FAB_SWITCH)
		return by->lft && routes_entry(by, lid) == port;
	return !routes_has_lid(&by->ports[port], lid);
}

/* Appends the endport LIDs of s `by` sends out of its port, by LID. */
static int add_sent(const struct fab_snap *s, const struct fab_node *by,
		    unsigned port, bool in, struct list *l)
{
	size_t first = l->n;

	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = routes_first_endport(n); p <= routes_last_endport(n); p++) {
			unsigned lid = n->ports[p].lid;
			unsigned end = lid + (1u << (n->ports[p].lmc & 7));

			for (; has_lid(n, p) && lid < end && lid <= ROUTE_LID_MAX; lid++) {
				if (!sends(by, port, lid))
					continue;
				if (ARRAY_GROW(l->a, l->cap, l->n + 1, 64) < 0)
					return -ENOMEM;
				l->a[l->n++] = (struct carried){ n, p, (uint16_t)lid, in };
			}
		}
	}
	qsort(l->a + first, l->n - first, sizeof(*l->a), by_lid);
	return 0;
}

int carries_endports(const struct fab_snap *s, const struct fab_node *sw,
		     unsigned port, struct carried **out, size_t *n)
{
	struct list l = { NULL, 0, 0 };
	const struct fab_node *peer = NULL;
	const struct fab_port *pp = port ? fabsnap_peer(s, &sw->ports[port], &peer) : NULL;

	if (add_sent(s, sw, port, false, &l) < 0 ||
	    (pp && add_sent(s, peer, sw->ports[port].peer_port, true, &l) < 0)) {
		free(l.a);
		return -ENOMEM;
	}
	*out = l.a;
	*n = l.n;
	return 0;
}

/* ---- the cut of a disable ---- */

enum { MEMO_NO = 1, MEMO_YES = 2 };

/* One count of a cut: the link, and what a destination's walk learnt. */
struct cut {
	const struct fab_snap *s;
	const struct fab_node *a, *b; /* the link's ends and their ports */
	unsigned pa, pb;
	uint32_t *dest;   /* per node: the destination memo[] is about */
	uint8_t *memo;    /* per node: MEMO_*, 0 while walked */
	uint32_t cur;     /* the destination now (1, 2, ...) */
	unsigned *weight; /* per node: endports whose routes start at it */
	size_t *starts;   /* the nodes of weight, nstarts of them */
	size_t nstarts;
};

static size_t idx(const struct cut *c, const struct fab_node *n)
{
	return (size_t)(n - c->s->nodes);
}

/* Out of n's port e, Active: the link's crossing (*yes), or the switch
 * it leads to (NULL: none, the route ends or breaks). */
static const struct fab_node *hop(const struct cut *c, const struct fab_node *n,
				  unsigned e, bool *yes)
{
	const struct fab_port *p = &n->ports[e];
	const struct fab_node *next = NULL;

	if (!p->has_info || p->state != IB_LINK_ACTIVE)
		return NULL;
	if ((n == c->a && e == c->pa) || (n == c->b && e == c->pb)) {
		*yes = true;
		return NULL;
	}
	if (!fabsnap_peer(c->s, p, &next) || next->type != FAB_SWITCH)
		return NULL;
	return next;
}

/* Whether the route from switch w to lid crosses the link (a loop or a
 * break: no), remembered for every switch of the walk. */
static bool crosses(struct cut *c, const struct fab_node *w, unsigned lid)
{
	size_t path[ROUTE_HOPS_MAX];
	unsigned len = 0;
	bool yes = false;

	while (w && len < ROUTE_HOPS_MAX) {
		size_t i = idx(c, w);
		unsigned e;

		if (c->dest[i] == c->cur) { /* known, or walked now: a loop */
			yes = c->memo[i] == MEMO_YES;
			break;
		}
		c->dest[i] = c->cur;
		c->memo[i] = 0;
		path[len++] = i;
		if (!w->lft || routes_has_lid(&w->ports[0], lid))
			break;
		e = routes_entry(w, lid);
		w = e && e <= w->nports ? hop(c, w, e, &yes) : NULL;
	}
	for (unsigned k = 0; k < len; k++)
		c->memo[path[k]] = yes ? MEMO_YES : MEMO_NO;
	return yes;
}

/* Endport (n, p)'s route to lid: crosses the link?  A CA's starts by its
 * own link. */
static bool route_crosses(struct cut *c, const struct fab_node *n, unsigned p,
			  unsigned lid)
{
	bool yes = false;
	const struct fab_node *w;

	if (n->type == FAB_SWITCH)
		return crosses(c, n, lid);
	if (routes_has_lid(&n->ports[p], lid))
		return false;
	w = hop(c, n, p, &yes);
	return yes || (w && crosses(c, w, lid));
}

/* The switch whose walk a CA port's routes follow (weight), or NULL
 * when the port's routes start by crossing the link or go nowhere. */
static const struct fab_node *first_switch(struct cut *c, const struct fab_node *n,
					   unsigned p)
{
	bool yes = false;

	return n->type == FAB_SWITCH ? n : hop(c, n, p, &yes);
}

/* The routes to endport (n, p) by its base LID: into out's pairs (from
 * every other endport) and host (from hp of hn). */
static void count_dest(struct cut *c, const struct fab_node *n, unsigned p,
		       const struct fab_node *hn, unsigned hp, struct carries_cut *out)
{
	unsigned lid = n->ports[p].lid;
	const struct fab_node *self = first_switch(c, n, p);

	c->cur++;
	for (size_t k = 0; k < c->nstarts; k++) {
		size_t i = c->starts[k];

		if (crosses(c, &c->s->nodes[i], lid))
			out->pairs += c->weight[i];
	}
	if (self && n->type != FAB_SWITCH && crosses(c, self, lid))
		out->pairs--; /* its own weight: not a route */
	/* The link's CA ends (weighted nowhere) send everything across. */
	for (int e = 0; e < 2; e++) {
		const struct fab_node *x = e ? c->b : c->a;
		unsigned xp = e ? c->pb : c->pa;

		if (x->type != FAB_SWITCH && has_lid(x, xp) && !(x == n && xp == p) &&
		    route_crosses(c, x, xp, lid))
			out->pairs++;
	}
	if (hn && !(hn == n && hp == p) && route_crosses(c, hn, hp, lid))
		out->host++;
}

/* Each endport's weight at the switch its routes start from; the
 * switches with one listed in starts (a destination's walks start at
 * them alone). */
static void weigh(struct cut *c)
{
	for (size_t i = 0; i < c->s->nnodes; i++) {
		const struct fab_node *n = &c->s->nodes[i];

		for (unsigned p = routes_first_endport(n); p <= routes_last_endport(n); p++) {
			const struct fab_node *w = has_lid(n, p) ? first_switch(c, n, p) : NULL;

			if (w && !c->weight[idx(c, w)]++)
				c->starts[c->nstarts++] = idx(c, w);
		}
	}
}

/* This host's endport in *hn, *hp (NULL when the snapshot has none). */
static void host_end(const struct fab_snap *s, const struct fab_node **hn, unsigned *hp)
{
	const struct fab_node *n = fabsnap_find(s, s->local_guid);

	*hn = NULL;
	for (unsigned p = 0; n && p <= n->nports; p++) {
		if (n->type == FAB_SWITCH ? p == 0 : n->ports[p].port_guid == s->local_port_guid) {
			*hn = has_lid(n, p) ? n : NULL;
			*hp = p;
			return;
		}
	}
}

/* Endports with a LID of the nodes no link but the cut one joins to
 * this host's node. */
static int isolated(struct cut *c, unsigned *out)
{
	const struct fab_snap *s = c->s;
	const struct fab_node *local = fabsnap_find(s, s->local_guid);
	size_t *queue = malloc(s->nnodes * sizeof(*queue)), head = 0, tail = 0;
	uint8_t *seen = calloc(s->nnodes, 1);

	if (!queue || !seen) {
		free(queue);
		free(seen);
		return -ENOMEM;
	}
	if (local) {
		seen[idx(c, local)] = 1;
		queue[tail++] = idx(c, local);
	}
	while (head < tail) {
		const struct fab_node *n = &s->nodes[queue[head++]];

		for (unsigned p = 1; p <= n->nports; p++) {
			const struct fab_node *peer = NULL;

			if ((n == c->a && p == c->pa) || (n == c->b && p == c->pb) ||
			    !fabsnap_peer(s, &n->ports[p], &peer) || seen[idx(c, peer)])
				continue;
			seen[idx(c, peer)] = 1;
			queue[tail++] = idx(c, peer);
		}
	}
	*out = 0;
	for (size_t i = 0; local && i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = routes_first_endport(n); !seen[i] && p <= routes_last_endport(n); p++)
			*out += has_lid(n, p);
	}
	free(queue);
	free(seen);
	return 0;
}

/* Counts the cut of c's link into out. */
static int count_cut(struct cut *c, struct carries_cut *out)
{
	const struct fab_snap *s = c->s;
	const struct fab_node *hn;
	unsigned hp = 0;

	c->dest = calloc(s->nnodes, sizeof(*c->dest));
	c->memo = calloc(s->nnodes, sizeof(*c->memo));
	c->weight = calloc(s->nnodes, sizeof(*c->weight));
	c->starts = malloc((s->nnodes + 1) * sizeof(*c->starts));
	if (!c->dest || !c->memo || !c->weight || !c->starts)
		return -ENOMEM;
	weigh(c);
	host_end(s, &hn, &hp);
	for (size_t i = 0; out->routed && i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = routes_first_endport(n); p <= routes_last_endport(n); p++)
			if (has_lid(n, p))
				count_dest(c, n, p, hn, hp, out);
	}
	return isolated(c, &out->isolated);
}

int carries_cut(const struct fab_snap *s, const struct fab_node *n,
		unsigned port, struct carries_cut *out)
{
	struct cut c = { .s = s, .a = n, .pa = port };
	const struct fab_port *pp;
	int r;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < s->nnodes; i++)
		out->routed |= s->nodes[i].lft != NULL;
	pp = port ? fabsnap_peer(s, &n->ports[port], &c.b) : NULL;
	if (!pp)
		return 0;
	c.pb = n->ports[port].peer_port;
	r = count_cut(&c, out);
	free(c.dest);
	free(c.memo);
	free(c.weight);
	free(c.starts);
	return r;
}
