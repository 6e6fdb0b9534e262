/* Forwarding tables (problems_priv.h): for every LID of an Active endport,
 * each switch's entry - none (route_missing), a port that leads nowhere
 * (route_dead_end), or round to a switch it left (route_loop) - judged
 * from the snapshot's tables (routes.h), no MADs.  A switch's problems of
 * one kind (and port) are a line per LID up to LIDS_LISTED of them, else
 * one line that counts them: a table broken wholesale stays a few lines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/fabric/snapshot/routes.h"
#include "umadfs/mad/ibcodes.h"

#include "problems_priv.h"

#define NO_SWITCH UINT32_MAX
#define LIDS_LISTED 4

/* What lies beyond a port of a switch with a table. */
struct beyond {
	uint32_t sw;                /* the switch there (its number), or NO_SWITCH */
	const struct fab_port *end; /* the endport there (a CA's), or NULL */
	uint8_t state;              /* PortState, 0 without PortInfo */
	bool awaits_sm;             /* LinkUp, Init or Armed, and no master SM */
};

/* One switch's entry for one LID that is wrong. */
struct finding {
	uint32_t sw;  /* the switch's number */
	uint16_t lid;
	uint8_t kind; /* PROBLEM_ROUTE_* */
	uint8_t port; /* route_dead_end: the entry */
};

struct rcheck {
	struct problem_list *list;
	bool sm_missing;
	const struct fab_snap *s;
	uint32_t *sw;      /* switch number -> node index (switches with a table) */
	size_t nsw;
	size_t *first;     /* beyond[first[k] + port]: switch k's ports */
	struct beyond *beyond;
	uint16_t *lids;    /* the LIDs of Active endports, ascending */
	size_t nlids;
	uint32_t *next;    /* per switch: where it forwards the LID judged */
	uint8_t *mark;     /* per switch: the loop search's */
	struct finding *f;
	size_t nf, fcap;
};

static void finding(struct rcheck *j, uint32_t k, unsigned lid, unsigned kind,
		    unsigned port)
{
	if (!problem_room(j->list, &j->f, &j->fcap, j->nf, sizeof(*j->f)))
		return;
	j->f[j->nf++] = (struct finding){ k, (uint16_t)lid, (uint8_t)kind,
					  (uint8_t)port };
}

/* The switches with a table, and what lies beyond each of their ports. */
static int judge_switches(struct rcheck *j)
{
	const struct fab_snap *s = j->s;
	uint32_t *swno = malloc((s->nnodes + 1) * sizeof(*swno));
	size_t nports = 0, b = 0;

	j->sw = malloc((s->nnodes + 1) * sizeof(*j->sw));
	j->first = malloc((s->nnodes + 1) * sizeof(*j->first));
	if (!swno || !j->sw || !j->first)
		goto err;
	for (size_t i = 0; i < s->nnodes; i++) {
		swno[i] = NO_SWITCH;
		if (s->nodes[i].type != FAB_SWITCH || !s->nodes[i].lft)
			continue;
		swno[i] = (uint32_t)j->nsw;
		j->first[j->nsw] = nports;
		j->sw[j->nsw++] = (uint32_t)i;
		nports += s->nodes[i].nports + 1u;
	}
	j->beyond = malloc((nports + 1) * sizeof(*j->beyond));
	if (!j->beyond)
		goto err;
	for (size_t k = 0; k < j->nsw; k++) {
		const struct fab_node *n = &s->nodes[j->sw[k]];

		for (unsigned p = 0; p <= n->nports; p++, b++) {
			const struct fab_node *pn = NULL;
			const struct fab_port *pp = p ? fabsnap_peer(s, &n->ports[p], &pn) : NULL;

			const struct fab_port *fp = &n->ports[p];

			j->beyond[b] = (struct beyond){ NO_SWITCH, NULL,
				fp->has_info ? fp->state : 0,
				j->sm_missing && fabsnap_awaits_sm(fp) };
			if (pp && pn->type == FAB_SWITCH)
				j->beyond[b].sw = swno[pn - s->nodes];
			else if (pp)
				j->beyond[b].end = pp;
		}
	}
	free(swno);
	return 0;
err:
	free(swno);
	return -ENOMEM;
}

/* The LIDs of every Active endport (their LMC ranges), ascending. */
static int judge_lids(struct rcheck *j)
{
	uint8_t *set = calloc(ROUTE_LID_MAX / 8 + 1, 1);
	size_t n = 0;

	if (!set)
		return -ENOMEM;
	for (size_t i = 0; i < j->s->nnodes; i++) {
		const struct fab_node *fn = &j->s->nodes[i];

		for (unsigned p = routes_first_endport(fn); p <= routes_last_endport(fn); p++) {
			const struct fab_port *fp = &fn->ports[p];
			unsigned last = fp->lid + (1u << (fp->lmc & 7)) - 1;

			if (!fp->has_info || fp->state != IB_LINK_ACTIVE || !fp->lid)
				continue;
			for (unsigned lid = fp->lid; lid <= last && lid <= ROUTE_LID_MAX; lid++)
				if (!(set[lid / 8] & (1u << (lid % 8)))) {
					set[lid / 8] |= (uint8_t)(1u << (lid % 8));
					n++;
				}
		}
	}
	j->lids = malloc((n + 1) * sizeof(*j->lids));
	for (unsigned lid = 1; j->lids && lid <= ROUTE_LID_MAX; lid++)
		if (set[lid / 8] & (1u << (lid % 8)))
			j->lids[j->nlids++] = (uint16_t)lid;
	free(set);
	return j->lids ? 0 : -ENOMEM;
}

/* Switch k's entry for lid: the kind of problem it is (-1: none), the
 * entry in *port; j->next[k] the switch it forwards lid to, if any. */
static int judge_entry(struct rcheck *j, uint32_t k, unsigned lid, unsigned *port)
{
	const struct fab_node *n = &j->s->nodes[j->sw[k]];
	unsigned e = routes_entry(n, lid);
	const struct beyond *b;

	j->next[k] = NO_SWITCH;
	*port = e;
	if (e == ROUTE_NO_PORT)
		return PROBLEM_ROUTE_MISSING;
	if (routes_has_lid(&n->ports[0], lid))
		return -1;
	if (!e || e > n->nports)
		return PROBLEM_ROUTE_DEAD_END;
	b = &j->beyond[j->first[k] + e];
	if (b->awaits_sm)
		return -1;
	if (b->state != IB_LINK_ACTIVE || (b->end && !routes_has_lid(b->end, lid)))
		return PROBLEM_ROUTE_DEAD_END;
	j->next[k] = b->sw;
	return -1;
}

/* The switches that j->next, followed towards lid, leads back to. */
static void judge_loops(struct rcheck *j, unsigned lid)
{
	memset(j->mark, 0, j->nsw); /* 0 not seen, 1 on this walk, 2 done */
	for (uint32_t k = 0; k < j->nsw; k++) {
		uint32_t i = k;

		while (i != NO_SWITCH && !j->mark[i]) {
			j->mark[i] = 1;
			i = j->next[i];
		}
		if (i != NO_SWITCH && j->mark[i] == 1) {
			uint32_t c = i;

			do {
				finding(j, c, lid, PROBLEM_ROUTE_LOOP, 0);
				c = j->next[c];
			} while (c != i);
		}
		for (i = k; i != NO_SWITCH && j->mark[i] == 1; i = j->next[i])
			j->mark[i] = 2;
	}
}

static int finding_cmp(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;

	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->lid < y->lid ? -1 : x->lid > y->lid;
}

/* " found=..." of a dead end out of switch k's port e. */
static void dead_end_word(const struct rcheck *j, uint32_t k, unsigned e,
			  char *buf, size_t cap)
{
	const struct fab_node *n = &j->s->nodes[j->sw[k]];
	const struct beyond *b = e && e <= n->nports ? &j->beyond[j->first[k] + e] : NULL;
	const char *state = b && b->state ? ibcodes_state_name(b->state) : NULL;
	const char *w = !e ? "port0" : !b ? "no_port" :
		b->state != IB_LINK_ACTIVE ? (state ? state : "unknown") :
		"wrong_endport";

	snprintf(buf, cap, " found=%s", w);
}

/* The LIDs of findings f[0..n) as ranges, "1-40,42", cut with ",..." to
 * fit cap. */
static void lid_ranges(char *buf, size_t cap, const struct finding *f, size_t n)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0, k; i < n; i = k + 1) {
		char one[16];
		int len;

		for (k = i; k + 1 < n && f[k + 1].lid == f[k].lid + 1; k++)
			;
		len = i == k ? snprintf(one, sizeof(one), "%s%u", o ? "," : "", f[i].lid) :
			snprintf(one, sizeof(one), "%s%u-%u", o ? "," : "", f[i].lid, f[k].lid);
		if (o + (size_t)len + 5 > cap) {
			snprintf(buf + o, cap - o, "%s...", o ? "," : "");
			return;
		}
		memcpy(buf + o, one, (size_t)len + 1);
		o += (size_t)len;
	}
}

/* One switch's findings of one kind (and port): one problem per LID, or
 * one with their count (lid 0).  found holds the kind's keys. */
static void emit(struct rcheck *j, const struct finding *f, size_t n)
{
	const struct fab_node *node = &j->s->nodes[j->sw[f->sw]];
	int port = f->kind == PROBLEM_ROUTE_DEAD_END ? f->port : -1;
	char word[32] = "", ranges[80];
	struct fab_problem *p;

	if (f->kind == PROBLEM_ROUTE_DEAD_END)
		dead_end_word(j, f->sw, f->port, word, sizeof(word));
	for (size_t i = 0; n <= LIDS_LISTED && i < n; i++) {
		p = problem_add(j->list, f->kind, node, port);
		if (!p)
			return;
		p->lid = f[i].lid;
		p->n.count = 1;
		snprintf(p->found, sizeof(p->found), "lid=%u%s", f[i].lid, word);
	}
	if (n <= LIDS_LISTED || !(p = problem_add(j->list, f->kind, node, port)))
		return;
	lid_ranges(ranges, sizeof(ranges), f, n);
	p->n.count = n;
	snprintf(p->found, sizeof(p->found), "lids=%zu lid_ranges=%s%s", n,
		 ranges, word);
}

static void check_free(struct rcheck *j)
{
	free(j->sw);
	free(j->first);
	free(j->beyond);
	free(j->lids);
	free(j->next);
	free(j->mark);
	free(j->f);
}

void routecheck_routes(struct problem_list *list, bool sm_missing)
{
	struct rcheck j = { .list = list, .sm_missing = sm_missing,
			    .s = list->snap };
	int r = judge_switches(&j);

	if (r == 0)
		r = judge_lids(&j);
	if (r == 0 && (!(j.next = malloc((j.nsw + 1) * sizeof(*j.next))) ||
		       !(j.mark = malloc(j.nsw + 1))))
		r = -ENOMEM;
	for (size_t l = 0; r == 0 && l < j.nlids && !list->nomem; l++) {
		for (uint32_t k = 0; k < j.nsw; k++) {
			unsigned port;
			int kind = judge_entry(&j, k, j.lids[l], &port);

			if (kind >= 0)
				finding(&j, k, j.lids[l], (unsigned)kind, port);
		}
		judge_loops(&j, j.lids[l]);
	}
	if (r == 0 && j.nf)
		qsort(j.f, j.nf, sizeof(*j.f), finding_cmp);
	for (size_t a = 0, b; r == 0 && a < j.nf; a = b) {
		for (b = a + 1; b < j.nf && j.f[b].sw == j.f[a].sw &&
		     j.f[b].kind == j.f[a].kind && j.f[b].port == j.f[a].port; b++)
			;
		emit(&j, &j.f[a], b - a);
	}
	if (r < 0)
		list->nomem = true;
	check_free(&j);
}
