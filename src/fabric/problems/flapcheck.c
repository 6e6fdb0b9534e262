/* Flapping links (problems_priv.h): link_flapping, a port that went down
 * LinkFlapCount times within LinkFlapWindowSeconds, counted two ways -
 * the view's own link_down changes (a link a snapshot had and the next
 * has not, as fabric/events says them) and the rises of its
 * LinkDownedCounter between two snapshots - whichever sees more; raised
 * until a window has passed since the last flap (sticky).  What each
 * port went through is remembered across judgements: at most
 * FLAP_PORTS_MAX ports, each at most THRESHOLDS_FLAP_COUNT_MAX times of
 * each way, forgotten once their window has passed. */
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/array.h"
#include "umadfs/fabric/problems/problem.h"
#include "umadfs/fabric/problems/thresholds.h"

#include "problems_priv.h"

#define FLAP_PORTS_MAX 4096 /* ports remembered: 360 bytes each, 1.5 MB at most */

enum { BY_EVENTS, BY_COUNTER, BY_COUNT };

/* A port that went down within its window (or is still raised). */
struct flap_port {
	uint64_t guid;
	uint8_t port, node_type;
	char desc[FAB_DESC_LEN + 1];
	/* When each way saw it go down (CLOCK_MONOTONIC ms), the latest
	 * THRESHOLDS_FLAP_COUNT_MAX: a ring, next the slot to write. */
	int64_t at[BY_COUNT][THRESHOLDS_FLAP_COUNT_MAX];
	uint8_t next[BY_COUNT], held[BY_COUNT];
	int64_t last;          /* the latest flap */
	int64_t raised_until;  /* raised while now is before it */
};

/* The sweep thread's alone (problems_judge()). */
static struct flap_port *ports;
static size_t nports, cap;

static struct flap_port *find(uint64_t guid, unsigned port)
{
	for (size_t i = 0; i < nports; i++)
		if (ports[i].guid == guid && ports[i].port == port)
			return &ports[i];
	return NULL;
}

/* n's port p's record, made if needed (when full, the one whose last
 * flap is oldest is forgotten for it); NULL on ENOMEM. */
static struct flap_port *record(const struct fab_node *n, unsigned p)
{
	struct flap_port *f = find(n->guid, p);

	if (f)
		return f;
	if (nports == FLAP_PORTS_MAX) {
		f = &ports[0];
		for (size_t i = 1; i < nports; i++)
			if (ports[i].last < f->last)
				f = &ports[i];
	} else {
		if (ARRAY_GROW(ports, cap, nports + 1, 16) < 0)
			return NULL;
		f = &ports[nports++];
	}
	memset(f, 0, sizeof(*f));
	f->guid = n->guid;
	f->port = (uint8_t)p;
	f->node_type = n->type;
	memcpy(f->desc, n->desc, sizeof(f->desc));
	return f;
}

/* k flaps of port p of n seen `by` at now. */
static void flapped(struct problem_list *l, const struct fab_node *n, unsigned p,
		    int by, uint64_t k, int64_t now)
{
	struct flap_port *f = k ? record(n, p) : NULL;

	if (k && !f) {
		l->nomem = true;
		return;
	}
	for (uint64_t i = 0; i < k && i < THRESHOLDS_FLAP_COUNT_MAX; i++) {
		f->at[by][f->next[by]] = now;
		f->next[by] = (uint8_t)((f->next[by] + 1) % THRESHOLDS_FLAP_COUNT_MAX);
		if (f->held[by] < THRESHOLDS_FLAP_COUNT_MAX)
			f->held[by]++;
	}
	if (k)
		f->last = now;
}

/* The flaps from the snapshot before to this one: each port of a node
 * in both whose link is gone or another (fabevents.c's link_down), and
 * the rise of each port's LinkDownedCounter (after a reset: its value). */
static void count_flaps(struct problem_list *l, int64_t now)
{
	const struct fab_snap *last = l->last;

	for (size_t i = 0; last && i < last->nnodes; i++) {
		const struct fab_node *was = &last->nodes[i];
		const struct fab_node *n = fabsnap_find(l->snap, was->guid);

		for (unsigned p = 1; n && p <= n->nports && p <= was->nports; p++) {
			const struct fab_port *a = &was->ports[p], *b = &n->ports[p];
			uint64_t va, vb;

			if (a->peer_guid && (b->peer_guid != a->peer_guid ||
					     b->peer_port != a->peer_port))
				flapped(l, n, p, BY_EVENTS, 1, now);
			if (!a->has_counters || !b->has_counters)
				continue;
			va = fabsnap_link_downed(a);
			vb = fabsnap_link_downed(b);
			flapped(l, n, p, BY_COUNTER, vb < va ? vb : vb - va, now);
		}
	}
}

/* f's flaps seen `by` since from. */
static unsigned within(const struct flap_port *f, int by, int64_t from)
{
	unsigned k = 0;

	for (unsigned i = 0; i < f->held[by]; i++)
		k += f->at[by][i] >= from;
	return k;
}

/* f's problem, raised. */
static void raise_flap(struct problem_list *l, const struct flap_port *f,
		       unsigned events, unsigned counter, uint64_t window_s, int64_t now)
{
	struct fab_problem *pr = problem_add(l, PROBLEM_LINK_FLAPPING, NULL, f->port);

	if (!pr)
		return;
	pr->guid = f->guid;
	pr->node_type = f->node_type;
	memcpy(pr->node_desc, f->desc, sizeof(pr->node_desc));
	pr->n.flap.flaps = events >= counter ? events : counter;
	pr->n.flap.window_s = window_s;
	pr->n.flap.since_s = now > f->last ? (uint64_t)(now - f->last) / 1000 : 0;
	pr->basis = events >= counter ? "events" : "LinkDownedCounter";
}

void flapcheck_judge(struct problem_list *l, uint64_t count, uint64_t window_s)
{
	int64_t now = l->snap->mono_ms, window = (int64_t)window_s * 1000;
	size_t i = 0;

	count_flaps(l, now);
	while (i < nports) {
		struct flap_port *f = &ports[i];
		unsigned ev = within(f, BY_EVENTS, now - window);
		unsigned co = within(f, BY_COUNTER, now - window);

		if (f->last == now && (ev >= count || co >= count || now < f->raised_until))
			f->raised_until = now + window;
		if (now < f->raised_until) {
			raise_flap(l, f, ev, co, window_s, now);
		} else if (f->last + window <= now) {
			*f = ports[--nports]; /* its window passed: forgotten */
			continue;
		}
		i++;
	}
}

void flapcheck_forget(void)
{
	free(ports);
	ports = NULL;
	nports = cap = 0;
}
