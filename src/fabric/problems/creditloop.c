/* Credit loops (routequal_priv.h): the channel dependency graph that
 * routequal.c drew from the routes (channel a -> b: some CA-to-CA route
 * leaves a switch by a and the next one by b) cut into strongly connected
 * components (Tarjan's, iteratively); each component with more than one
 * channel holds a cycle, a credit loop on its VL: the shortest cycle
 * through its first channel (by GUID, port) is its problem's.  Where the
 * switches' SL-to-VL tables map SL 0 to more than one VL, the graph's
 * nodes are (channel, VL), a route on SL 0 going from VL to VL hop by hop
 * as the tables say (routequal.c).  Also the text helpers routequal.c
 * shares. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/array.h"

#include "routequal_priv.h"

#define CREDIT_LOOPS_LISTED 8

void rq_put(struct rq_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || array_grow(&t->buf, &t->cap, t->len + (size_t)n + 1, 1, 1024) < 0) {
		t->failed = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(t->buf + t->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

void rq_channel_name(const struct rq *q, size_t c, char *buf, size_t cap)
{
	uint32_t k = 0;

	while (k + 1 < q->nsw && q->first[k + 1] <= c)
		k++;
	snprintf(buf, cap, "0x%016" PRIx64 "/%zu", q->s->nodes[q->sw[k]].guid,
		 c - q->first[k]);
}

struct tarjan {
	struct rq *q;
	uint32_t *index, *low; /* 0: not visited */
	uint32_t *stack;       /* the components being made */
	size_t nstack;
	struct { uint32_t c, bit; } *calls;
	size_t ncalls;
	uint8_t *on;           /* on stack */
	uint32_t counter;
	uint32_t *comp;        /* per channel: its component's first member, in cycle() */
	uint32_t *parent;      /* cycle()'s BFS */
	uint32_t *queue;
	uint32_t *path;        /* cycle()'s, backwards */
};

/* The graph's nodes: channel c on VL v is u = c * nvl + v; node u's
 * dependency bit b: the peer switch's port b / nvl on VL b % nvl. */
static size_t nbits(const struct rq *q, size_t u)
{
	size_t c = u / q->nvl;

	return q->peer[c] == RQ_NONE ? 0 :
		(q->s->nodes[q->sw[q->peer[c]]].nports + 1u) * (size_t)q->nvl;
}

static bool depends(const struct rq *q, size_t u, size_t bit)
{
	size_t c = u / q->nvl;
	size_t b = ((q->ebase[c] + bit / q->nvl) * q->nvl + u % q->nvl) * q->nvl +
		bit % q->nvl;

	return q->edges[b / 64] >> (b % 64) & 1;
}

/* Node u's dependency bit b's node. */
static uint32_t target(const struct rq *q, size_t u, size_t b)
{
	return (uint32_t)((q->first[q->peer[u / q->nvl]] + b / q->nvl) * q->nvl +
			  b % q->nvl);
}

static void call(struct tarjan *t, uint32_t c)
{
	t->index[c] = t->low[c] = ++t->counter;
	t->stack[t->nstack++] = c;
	t->on[c] = 1;
	t->calls[t->ncalls].c = c;
	t->calls[t->ncalls++].bit = 0;
}

/* The shortest cycle from channel first back to it within its component
 * (members: comp == first), into t->queue[0..]: its length. */
static size_t cycle(struct tarjan *t, uint32_t first)
{
	struct rq *q = t->q;
	size_t head = 0, tail = 0, n = 0;
	uint32_t last = RQ_NONE;

	t->queue[tail++] = first;
	t->parent[first] = first;
	while (head < tail && last == RQ_NONE) {
		uint32_t c = t->queue[head++];

		for (size_t b = 0; b < nbits(q, c) && last == RQ_NONE; b++) {
			uint32_t w = target(q, c, b);

			if (!depends(q, c, b) || t->comp[w] != first)
				continue;
			if (w == first)
				last = c;
			else if (t->parent[w] == RQ_NONE) {
				t->parent[w] = c;
				t->queue[tail++] = w;
			}
		}
	}
	for (uint32_t c = last; c != RQ_NONE && n < q->nch * q->nvl; c = t->parent[c]) {
		t->path[n++] = c;
		if (c == first)
			break;
	}
	for (size_t i = 0; i < n; i++)
		t->queue[i] = t->path[n - 1 - i];
	return n;
}

/* Node u as "GUID/PORT", and "/VL" when the fabric has more than one. */
static void node_name(const struct rq *q, uint32_t u, char *buf, size_t cap)
{
	size_t len;

	rq_channel_name(q, u / q->nvl, buf, cap);
	len = strlen(buf);
	if (q->nvl > 1)
		snprintf(buf + len, cap - len, "/%u", u % q->nvl);
}

/* Channels by GUID, then port (then VL): the component's first. */
static bool before(const struct rq *q, uint32_t a, uint32_t b)
{
	char x[48], y[48];

	node_name(q, a, x, sizeof(x));
	node_name(q, b, y, sizeof(y));
	return strcmp(x, y) < 0;
}

/* One credit loop: the problem (its cycle cut to fit) and its line. */
static void loop_found(struct tarjan *t, const uint32_t *members, size_t n,
		       struct rq_text *text)
{
	struct rq *q = t->q;
	uint32_t first = members[0];
	struct fab_problem *p;
	size_t len, o;
	uint32_t k = 0;
	char name[48];

	for (size_t i = 1; i < n; i++)
		if (before(q, members[i], first))
			first = members[i];
	for (size_t i = 0; i < n; i++) {
		t->comp[members[i]] = first;
		t->parent[members[i]] = RQ_NONE;
	}
	len = cycle(t, first);
	while (k + 1 < q->nsw && q->first[k + 1] <= first / q->nvl)
		k++;
	p = q->list ? problem_add(q->list, PROBLEM_CREDIT_LOOP, &q->s->nodes[q->sw[k]],
				  (int)(first / q->nvl - q->first[k])) : NULL;
	rq_put(text, "credit_loop vl=%u ports=%zu cycle=", first % q->nvl, len);
	o = p ? (size_t)snprintf(p->found, sizeof(p->found), "vl=%u ports=%zu cycle=",
				 first % q->nvl, len) : 0;
	for (size_t i = 0; i < len; i++) {
		node_name(q, t->queue[i], name, sizeof(name));
		rq_put(text, "%s%s", i ? "," : "", name);
		if (p && o + strlen(name) + 6 < sizeof(p->found))
			o += (size_t)snprintf(p->found + o, sizeof(p->found) - o, "%s%s",
					      i ? "," : "", name);
		else if (p && o + 5 <= sizeof(p->found))
			o += (size_t)snprintf(p->found + o, sizeof(p->found) - o, ",...");
	}
	rq_put(text, "\n");
	if (p)
		p->n.count = len;
}

/* Channel c's visit is over: its component, if it is one's root. */
static void returned(struct tarjan *t, uint32_t c, struct rq_text *text)
{
	size_t from;

	if (t->low[c] != t->index[c])
		return;
	for (from = t->nstack; t->stack[--from] != c;)
		;
	for (size_t i = from; i < t->nstack; i++)
		t->on[t->stack[i]] = 0;
	if (t->nstack - from > 1 && t->q->r.credit_loops++ < CREDIT_LOOPS_LISTED)
		loop_found(t, &t->stack[from], t->nstack - from, text);
	t->nstack = from;
}

static void visit(struct tarjan *t, uint32_t root, struct rq_text *text)
{
	struct rq *q = t->q;

	call(t, root);
	while (t->ncalls) {
		uint32_t c = t->calls[t->ncalls - 1].c, b = t->calls[t->ncalls - 1].bit;
		bool down = false;

		for (; b < nbits(q, c) && !down; b++) {
			uint32_t w = target(q, c, b);

			if (!depends(q, c, b))
				continue;
			if (!t->index[w]) {
				t->calls[t->ncalls - 1].bit = b + 1;
				call(t, w);
				down = true;
			} else if (t->on[w] && t->index[w] < t->low[c]) {
				t->low[c] = t->index[w];
			}
		}
		if (down)
			continue;
		returned(t, c, text);
		if (--t->ncalls && t->low[c] < t->low[t->calls[t->ncalls - 1].c])
			t->low[t->calls[t->ncalls - 1].c] = t->low[c];
	}
}

int creditloop_find(struct rq *q, struct rq_text *text)
{
	struct tarjan t = { .q = q };
	size_t n = q->nch * q->nvl + 1;
	int r = 0;

	t.index = calloc(n, sizeof(*t.index));
	t.low = malloc(n * sizeof(*t.low));
	t.stack = malloc(n * sizeof(*t.stack));
	t.calls = malloc(n * sizeof(*t.calls));
	t.on = calloc(n, 1);
	t.comp = malloc(n * sizeof(*t.comp));
	t.parent = malloc(n * sizeof(*t.parent));
	t.queue = malloc(n * sizeof(*t.queue));
	t.path = malloc(n * sizeof(*t.path));
	if (!t.index || !t.low || !t.stack || !t.calls || !t.on || !t.comp ||
	    !t.parent || !t.queue || !t.path)
		r = -ENOMEM;
	else
		memset(t.comp, 0xff, n * sizeof(*t.comp));
	for (uint32_t c = 0; r == 0 && c < q->nch * q->nvl; c++)
		if (!t.index[c] && nbits(q, c))
			visit(&t, c, text);
	if (r == 0)
		rq_put(text, "credit_loops %u\n", q->r.credit_loops);
	free(t.index);
	free(t.low);
	free(t.stack);
	free(t.calls);
	free(t.on);
	free(t.comp);
	free(t.parent);
	free(t.queue);
	free(t.path);
	return r;
}
