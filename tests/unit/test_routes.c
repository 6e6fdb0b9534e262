/* Routing on snapshots made by hand: names, paths (a ring of three
 * switches, an LMC range), and the routing problems the judge finds -
 * a loop of three, a dead end, a table broken wholesale counted in one
 * line, and a port the missing SM has yet to bring up; what a port
 * carries, and the cut of a disable against every pair's traced path;
 * and the routing as a whole: the one-way ring's credit loop, on a VL
 * and cut by a dateline in the SL-to-VL tables. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "snapbuild.h"
#include "umadfs/fabric/problems/problem.h"
#include "umadfs/fabric/problems/problems.h"
#include "umadfs/fabric/snapshot/carries.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/routes.h"
#include "umadfs/mad/ibcodes.h"

enum { S1 = 0x11, S2 = 0x12, S3 = 0x13, CA_A = 0xa0, CA_B = 0xb0, CA_C = 0xc0 };

static void up(struct fab_port *p, uint16_t lid)
{
	p->has_info = true;
	p->state = IB_LINK_ACTIVE;
	p->phys_state = IB_PORT_PHYS_STATE_LINKUP;
	p->lid = lid;
}

static struct fab_node *node(struct fab_snap *s, uint64_t guid, unsigned type,
			     unsigned nports, const char *desc)
{
	struct fab_node *n = fabsnap_add(s, guid, nports);

	n->type = (uint8_t)type;
	strcpy(n->desc, desc);
	return n;
}

/* A complete sweep with S1's SM the master at LID 1. */
static void complete(struct fab_snap *s)
{
	s->ok = true;
	s->sm_lid = 1;
	s->sms = calloc(1, sizeof(*s->sms));
	s->nsms = 1;
	s->sms[0] = (struct fab_sm){ .guid = S1, .lid = 1, .state = IB_SMINFO_STATE_MASTER };
	fabsnap_count(s);
}

/* A ring S1 -> S2 -> S3 -> S1 (port 1 to the next switch's port 2), a CA
 * on port 3 of each (A LID 10, B 20, C 30 with LMC 1: 30-31), switches at
 * LIDs 1-3; each table sends the others' LIDs on round the ring. */
static struct fab_snap *ring(void)
{
	static const uint64_t sw[3] = { S1, S2, S3 }, ca[3] = { CA_A, CA_B, CA_C };
	struct fab_snap *s = fabsnap_new();

	for (unsigned i = 0; i < 3; i++) {
		struct fab_node *n = node(s, sw[i], FAB_SWITCH, 5, "sw");

		n->desc[2] = (char)('1' + i);
		n->ports[0].port_guid = sw[i];
		up(&n->ports[0], (uint16_t)(1 + i));
		for (unsigned p = 1; p <= 5; p++) {
			n->ports[p].has_info = true;
			n->ports[p].state = IB_LINK_DOWN;
			n->ports[p].phys_state = IB_PORT_PHYS_STATE_POLLING;
		}
		up(&n->ports[1], 0);
		up(&n->ports[2], 0);
		up(&n->ports[3], 0);
		n->lft = fabsnap_lft_new(31, 0);
	}
	for (unsigned i = 0; i < 3; i++) {
		struct fab_node *c = node(s, ca[i], FAB_CA, 1, "ca \"x\"");

		c->ports[1].port_guid = ca[i] + 1;
		up(&c->ports[1], (uint16_t)(10 * (i + 1)));
		if (i == 2)
			c->ports[1].lmc = 1;
	}
	for (unsigned i = 0; i < 3; i++) {
		struct fab_node *n = fabsnap_find(s, sw[i]);
		static const unsigned lids[] = { 1, 2, 3, 10, 20, 30, 31 };

		link_ports(n, 1, fabsnap_find(s, sw[(i + 1) % 3]), 2);
		link_ports(n, 3, fabsnap_find(s, ca[i]), 1);
		for (unsigned k = 0; k < sizeof(lids) / sizeof(lids[0]); k++) {
			unsigned owner = lids[k] < 10 ? lids[k] - 1 : lids[k] / 10 - 1;

			n->lft->port[lids[k]] = owner != i ? 1 : lids[k] < 10 ? 0 : 3;
		}
	}
	complete(s);
	return s;
}

static void trace_text(const struct fab_snap *s, const char *src, const char *dst,
		       const char *want)
{
	struct route_name a, b;
	struct route_end ea, eb;
	struct route r;
	size_t len;
	char *text;

	CHECK(routes_parse_name(src, &a) == 0 && routes_resolve(s, &a, &ea) == 0);
	CHECK(routes_parse_name(dst, &b) == 0 && routes_resolve(s, &b, &eb) == 0);
	routes_trace(s, &ea, &eb, &r);
	text = routes_text(&r, &len);
	CHECK(text && len == strlen(text));
	CHECK_STR(text ? text : "", want);
	free(text);
}

static void test_names(void)
{
	struct fab_snap *s = ring();
	struct route_name n;
	struct route_end e;

	CHECK(routes_parse_name("0x10", &n) == 0 && !n.is_guid && n.value == 16);
	CHECK(routes_parse_name("0x00000000000000c1", &n) == 0 && n.is_guid &&
	      n.value == CA_C + 1);
	CHECK(routes_resolve(s, &n, &e) == 0 && e.node->guid == CA_C && e.port == 1 &&
	      e.lid == 30);
	CHECK(routes_parse_name("31", &n) == 0 && routes_resolve(s, &n, &e) == 0 &&
	      e.node->guid == CA_C && e.lid == 31);          /* in the LMC range */
	CHECK(routes_parse_name("0x00000000000000a0", &n) == 0 &&
	      routes_resolve(s, &n, &e) == 0 && e.node->guid == CA_A && e.lid == 10);
	CHECK(routes_parse_name("0x0000000000000012", &n) == 0 &&
	      routes_resolve(s, &n, &e) == 0 && e.node->guid == S2 && e.port == 0);
	CHECK(routes_parse_name("32", &n) == 0 && routes_resolve(s, &n, &e) == -ENOENT);
	CHECK(routes_parse_name("0", &n) == -ENOENT);
	CHECK(routes_parse_name("49152", &n) == -ENOENT);    /* multicast */
	CHECK(routes_parse_name("0xzz", &n) == -ENOENT);
	CHECK(routes_parse_name("abc", &n) == -ENOENT);
	CHECK(routes_parse_name("", &n) == -ENOENT);
	fabsnap_put(s);
}

static void test_paths(void)
{
	struct fab_snap *s = ring();
	struct fab_node *s1;

	trace_text(s, "10", "31",
		   "guid=0x00000000000000a0 node_desc=\"ca \\\"x\\\"\" out=1\n"
		   "guid=0x0000000000000011 node_desc=\"sw1\" in=3 out=1\n"
		   "guid=0x0000000000000012 node_desc=\"sw2\" in=2 out=1\n"
		   "guid=0x0000000000000013 node_desc=\"sw3\" in=2 out=3\n"
		   "guid=0x00000000000000c0 node_desc=\"ca \\\"x\\\"\" in=1\n"
		   "result=ok hops=4\n");
	trace_text(s, "2", "2",
		   "guid=0x0000000000000012 node_desc=\"sw2\"\nresult=ok hops=0\n");
	trace_text(s, "20", "0x00000000000000b1",
		   "guid=0x00000000000000b0 node_desc=\"ca \\\"x\\\"\"\nresult=ok hops=0\n");
	/* S1 sends LID 20 out of a Down port, then has no entry for 10,
	 * then no table. */
	s1 = fabsnap_find(s, S1);
	s1->lft->port[20] = 5;
	trace_text(s, "10", "20",
		   "guid=0x00000000000000a0 node_desc=\"ca \\\"x\\\"\" out=1\n"
		   "guid=0x0000000000000011 node_desc=\"sw1\" in=3 out=5\n"
		   "result=dead_end at=0x0000000000000011\n");
	s1->lft->port[10] = 255;
	trace_text(s, "3", "10",
		   "guid=0x0000000000000013 node_desc=\"sw3\" out=1\n"
		   "guid=0x0000000000000011 node_desc=\"sw1\" in=2\n"
		   "result=unrouted at=0x0000000000000011\n");
	fabsnap_lft_put(s1->lft);
	s1->lft = NULL;
	trace_text(s, "20", "10",
		   "guid=0x00000000000000b0 node_desc=\"ca \\\"x\\\"\" out=1\n"
		   "guid=0x0000000000000012 node_desc=\"sw2\" in=3 out=1\n"
		   "guid=0x0000000000000013 node_desc=\"sw3\" in=2 out=1\n"
		   "guid=0x0000000000000011 node_desc=\"sw1\" in=2\n"
		   "result=unreachable at=0x0000000000000011\n");
	fabsnap_put(s);
}

/* The route problems of s as "kind guid port keys" lines. */
/* The lines of the problems of kinds first..last after a judgement. */
static void kind_lines(struct fab_snap *s, unsigned first, unsigned last,
		       char *buf, size_t cap)
{
	size_t o = 0;

	problems_judge(NULL, s, NULL);
	buf[0] = '\0';
	for (size_t i = 0; i < s->nproblems; i++) {
		const struct fab_problem *p = &s->problems[i];
		char keys[1024];

		if (p->kind < first || p->kind > last)
			continue;
		problem_keys(p, keys, sizeof(keys));
		o += (size_t)snprintf(buf + o, cap - o, "%s\n", keys);
	}
}

static void route_problems(struct fab_snap *s, char *buf, size_t cap)
{
	kind_lines(s, PROBLEM_ROUTE_MISSING, PROBLEM_ROUTE_DEAD_END, buf, cap);
}

/* s made ready to be judged again: what its last judgement made freed
 * (the daemon judges a snapshot once). */
static void rejudge(struct fab_snap *s)
{
	free(s->problems);
	free(s->routing);
	s->routing = NULL;
}

static void test_problems(void)
{
	struct fab_snap *s = ring();
	char got[4096];

	route_problems(s, got, sizeof(got));
	CHECK_STR(got, "");
	fabsnap_put(s);

	/* S2 sends B's LID on instead of down to it: round all three. */
	s = ring();
	fabsnap_find(s, S2)->lft->port[20] = 1;
	route_problems(s, got, sizeof(got));
	CHECK_STR(got,
		  "problem=route_loop severity=error guid=0x0000000000000011 node_desc=\"sw1\" lid=20\n"
		  "problem=route_loop severity=error guid=0x0000000000000012 node_desc=\"sw2\" lid=20\n"
		  "problem=route_loop severity=error guid=0x0000000000000013 node_desc=\"sw3\" lid=20\n");
	fabsnap_put(s);

	/* A dead end out of a Down port and one to a CA without the LID;
	 * S3's table empty: seven LIDs, one line. */
	s = ring();
	fabsnap_find(s, S1)->lft->port[30] = 5;
	fabsnap_find(s, S1)->lft->port[31] = 3;
	fabsnap_find(s, S3)->lft->top = 0;
	route_problems(s, got, sizeof(got));
	CHECK_STR(got,
		  "problem=route_dead_end severity=error guid=0x0000000000000011 port=3 node_desc=\"sw1\" lid=31 found=wrong_endport\n"
		  "problem=route_dead_end severity=error guid=0x0000000000000011 port=5 node_desc=\"sw1\" lid=30 found=Down\n"
		  "problem=route_missing severity=error guid=0x0000000000000013 node_desc=\"sw3\" lids=7 lid_ranges=1-3,10,20,30-31\n");
	fabsnap_put(s);

	/* Port 4 of S1 LinkUp but Init: a dead end while an SM is master,
	 * the missing SM's to bring up (as port_not_active) when none is. */
	s = ring();
	s->nodes[0].ports[4].state = IB_LINK_INIT;
	s->nodes[0].ports[4].phys_state = IB_PORT_PHYS_STATE_LINKUP;
	s->nodes[0].lft->port[20] = 4;
	route_problems(s, got, sizeof(got));
	CHECK_STR(got,
		  "problem=route_dead_end severity=error guid=0x0000000000000011 port=4 node_desc=\"sw1\" lid=20 found=Init\n");
	s->sm_lid = 0;
	rejudge(s);
	route_problems(s, got, sizeof(got));
	CHECK_STR(got, "");
	fabsnap_put(s);
}

/* A sweep that read no table and saw no rerouting change since the one
 * before keeps its route problems unjudged (the route checks grow with
 * switches x LIDs); one that read a table, or saw a change, judges them. */
static size_t loops(const struct fab_snap *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nproblems; i++)
		n += s->problems[i].kind == PROBLEM_ROUTE_LOOP;
	return n;
}

static void test_routes_carried(void)
{
	struct fab_snap *prev = ring(), *s = ring();

	fabsnap_find(prev, S2)->lft->port[20] = 1; /* a loop, in prev */
	problems_judge(NULL, prev, NULL);
	CHECK_INT(loops(prev), 3);
	/* s's tables prev's (shared, or read again the same: none changed),
	 * no change since: prev's loop stands, though s's own S2 table (set
	 * apart here to tell the two) would have none. */
	s->stats.tables_changed = 0;
	s->reroute_ms = prev->reroute_ms = 5;
	problems_judge(prev, s, NULL);
	CHECK_INT(loops(s), 3);
	/* A table changed: judged again, no loop. */
	rejudge(s);
	s->stats.tables_changed = 1;
	problems_judge(prev, s, NULL);
	CHECK_INT(loops(s), 0);
	/* No table changed but a rerouting change since prev: judged again. */
	rejudge(s);
	s->stats.tables_changed = 0;
	s->reroute_ms = 9;
	problems_judge(prev, s, NULL);
	CHECK_INT(loops(s), 0);
	fabsnap_put(prev);
	fabsnap_put(s);
}

/* The lines of route_unbalanced and route_not_minimal after a judgement. */
static const char *quality_problems(struct fab_snap *s)
{
	static char buf[4096];

	kind_lines(s, PROBLEM_ROUTE_UNBALANCED, PROBLEM_ROUTE_NOT_MINIMAL, buf, sizeof(buf));
	return buf;
}

/* The routing as a whole (routequal.c): the one-way ring's routes depend
 * on each switch's port 1 in turn, a credit loop; S3/1 carries A's and
 * B's LIDs, the others three (C has two: LMC 1); the way back (ports 2)
 * idle.  S3 sending B's LID back by port 2 breaks the loop (and makes C
 * to B a hop shorter). */
static void test_routing_quality(void)
{
	struct fab_snap *s = ring();
	const struct fab_problem *p = NULL;

	problems_judge(NULL, s, NULL);
	for (size_t i = 0; i < s->nproblems; i++)
		if (s->problems[i].kind == PROBLEM_CREDIT_LOOP)
			p = &s->problems[i];
	CHECK(p && p->guid == S1 && p->port == 1);
	CHECK_STR(p ? p->found : "", "vl=0 ports=3 cycle=0x0000000000000011/1,"
		  "0x0000000000000012/1,0x0000000000000013/1");
	CHECK(s->routing != NULL);
	CHECK_STR(s->routing ? s->routing->text : "",
		  "pairs 6\npairs_unrouted 0\nhops_lft 3 3\nhops_lft 4 3\nhops_min 3 6\n"
		  "worst_hops 4\nworst_pair 0x00000000000000b0/1 0x00000000000000a0/1\n"
		  "switch_ports 3\nidle_ports 3\ndlids_mean 2.67\ndlids 2 1\ndlids 3 2\n"
		  "port_far 0x0000000000000013/1 2\nport_far 0x0000000000000011/1 3\n"
		  "port_far 0x0000000000000012/1 3\nvls 1\n"
		  "credit_loop vl=0 ports=3 cycle=0x0000000000000011/1,"
		  "0x0000000000000012/1,0x0000000000000013/1\ncredit_loops 1\n");
	fabsnap_put(s);

	/* The one-way ring goes the long way to the switch behind (each
	 * switch's port 2 is an Active link back), and sends 2-3 LIDs out
	 * of port 1, none out of port 2: on every switch route_not_minimal
	 * and route_unbalanced; the former not with fabric_routes_minimal=off. */
	s = ring();
	CHECK_STR(quality_problems(s),
		  "problem=route_unbalanced severity=warning guid=0x0000000000000011 node_desc=\"sw1\" min_lids=0 min_port=2 max_lids=3 max_port=1\n"
		  "problem=route_not_minimal severity=warning guid=0x0000000000000011 node_desc=\"sw1\" lids=2 lid=30\n"
		  "problem=route_unbalanced severity=warning guid=0x0000000000000012 node_desc=\"sw2\" min_lids=0 min_port=2 max_lids=3 max_port=1\n"
		  "problem=route_not_minimal severity=warning guid=0x0000000000000012 node_desc=\"sw2\" lids=1 lid=10\n"
		  "problem=route_unbalanced severity=warning guid=0x0000000000000013 node_desc=\"sw3\" min_lids=0 min_port=2 max_lids=2 max_port=1\n"
		  "problem=route_not_minimal severity=warning guid=0x0000000000000013 node_desc=\"sw3\" lids=1 lid=20\n");
	rejudge(s);
	free(s->routing);
	s->routing = NULL;
	problems_routes_minimal(false);
	CHECK(!strstr(quality_problems(s), "route_not_minimal"));
	problems_routes_minimal(true);
	fabsnap_put(s);

	s = ring();
	fabsnap_find(s, S3)->lft->port[20] = 2;
	problems_judge(NULL, s, NULL);
	for (size_t i = 0; i < s->nproblems; i++)
		CHECK(s->problems[i].kind != PROBLEM_CREDIT_LOOP);
	CHECK(s->routing && s->routing->credit_loops == 0 &&
	      s->routing->hops_lft[3] == 4 && s->routing->hops_lft[4] == 2);
	fabsnap_put(s);
}

/* The credit_loop line of s's routing text (the loop's whole line). */
static const char *routing_tail(const struct fab_snap *s)
{
	const char *t = s->routing ? strstr(s->routing->text, "vls ") : NULL;

	return t ? t : "";
}

/* Per VL (creditloop.c): SL 0 sent on VL 1 from every port to every port
 * moves the one-way ring's loop to VL 1, each port named with its VL; a
 * dateline on S1 alone (from S3, port 2, on to S2, port 1: the route C
 * to B) cuts it, C's packets going on from S1 on VL 1 where nothing
 * leads on. */
static void test_routing_vls(void)
{
	static const uint64_t sw[3] = { S1, S2, S3 };
	struct fab_snap *s = ring();

	for (unsigned i = 0; i < 3; i++) {
		struct fab_node *n = fabsnap_find(s, sw[i]);

		n->sl2vl = fabsnap_sl2vl_new(n->nports);
		memset(n->sl2vl->vl, 1, (n->nports + 1u) * (n->nports + 1u));
	}
	problems_judge(NULL, s, NULL);
	CHECK_STR(routing_tail(s), "vls 2\n"
		  "credit_loop vl=1 ports=3 cycle=0x0000000000000011/1/1,"
		  "0x0000000000000012/1/1,0x0000000000000013/1/1\ncredit_loops 1\n");
	fabsnap_put(s);

	s = ring();
	fabsnap_find(s, S1)->sl2vl = fabsnap_sl2vl_new(5);
	fabsnap_find(s, S1)->sl2vl->vl[2 * 6 + 1] = 1;
	problems_judge(NULL, s, NULL);
	CHECK_STR(routing_tail(s), "vls 2\ncredit_loops 0\n");
	for (size_t i = 0; i < s->nproblems; i++)
		CHECK(s->problems[i].kind != PROBLEM_CREDIT_LOOP);
	fabsnap_put(s);
}

/* ring()'s pairs' SLs (routesl.c): each on SL 0 but B's to A (LID 10)
 * on sl_ba, every switch sending SL n on VL n; the tables' maps read. */
static struct fab_snap *ring_sls(unsigned sl_ba)
{
	static const uint64_t sw[3] = { S1, S2, S3 }, ports[3] = { CA_A + 1, CA_B + 1, CA_C + 1 };
	static const unsigned lids[3][2] = { { 10, 10 }, { 20, 20 }, { 30, 31 } };
	struct fab_snap *s = ring();
	struct fab_pathsl *t = calloc(1, sizeof(*t) + 16 * sizeof(t->pairs[0]));

	t->refs = 1;
	for (unsigned a = 0; a < 3; a++)
		for (unsigned b = 0; b < 3; b++)
			for (unsigned l = lids[b][0]; a != b && l <= lids[b][1]; l++) {
				unsigned sl = a == 1 && l == 10 ? sl_ba : 0;

				t->pairs[t->n++] = (struct fab_pathsl_pair){ ports[a], (uint16_t)l,
									     (uint8_t)sl };
				t->sls |= (uint16_t)(1u << sl);
			}
	qsort(t->pairs, t->n, sizeof(t->pairs[0]), fabsnap_pathsl_cmp);
	s->pathsl = t;
	for (unsigned i = 0; i < 3; i++) {
		struct fab_node *n = fabsnap_find(s, sw[i]);
		size_t cells = (n->nports + 1u) * (n->nports + 1u);

		n->sl2vl = fabsnap_sl2vl_new(n->nports);
		n->sl2vl->maps = calloc(cells, sizeof(uint64_t));
		memset(n->sl2vl->vl, 0, cells);
		for (size_t c = 0; c < cells; c++)
			n->sl2vl->maps[c] = 0x0123456789abcdefull;
	}
	return s;
}

/* Pairs on their SLs: B's route to A alone on SL 1 (VL 1) cuts the
 * ring's loop; on SL 0 like the others it stands (the SA's SLs all 0:
 * followed on SL 0, the maps unused); every pair on SL 1 moves it to
 * VL 1. */
static void test_routing_pair_sls(void)
{
	struct fab_snap *s = ring_sls(1);

	problems_judge(NULL, s, NULL);
	CHECK_STR(routing_tail(s), "vls 2\npath_sls 8\nsls 0 1\npath_sls_unknown 0\n"
		  "credit_loops 0\n");
	CHECK_INT(problems_credit_loops(s), 0);
	fabsnap_put(s);

	s = ring_sls(0);
	problems_judge(NULL, s, NULL);
	CHECK_STR(routing_tail(s), "vls 1\npath_sls 8\nsls 0\npath_sls_unknown 0\n"
		  "credit_loop vl=0 ports=3 cycle=0x0000000000000011/1,"
		  "0x0000000000000012/1,0x0000000000000013/1\ncredit_loops 1\n");
	CHECK_INT(problems_credit_loops(s), 1);
	fabsnap_put(s);

	s = ring_sls(1);
	for (size_t i = 0; i < s->pathsl->n; i++)
		s->pathsl->pairs[i].sl = 1;
	s->pathsl->sls = 2;
	problems_judge(NULL, s, NULL);
	CHECK_STR(routing_tail(s), "vls 2\npath_sls 8\nsls 1\npath_sls_unknown 0\n"
		  "credit_loop vl=1 ports=3 cycle=0x0000000000000011/1/1,"
		  "0x0000000000000012/1/1,0x0000000000000013/1/1\ncredit_loops 1\n");
	fabsnap_put(s);
}

/* Many LIDs broken apart: their ranges cut to fit the line. */
static void test_ranges(void)
{
	static const char head[] = "problem=route_missing severity=error "
		"guid=0x0000000000000011 node_desc=\"big\" lids=200 lid_ranges=2,4,6,8,";
	struct fab_snap *s = fabsnap_new();
	struct fab_node *sw = node(s, S1, FAB_SWITCH, 1, "big");
	char got[4096];

	up(&sw->ports[0], 1);
	sw->lft = fabsnap_lft_new(1, 0);
	sw->lft->port[1] = 0;
	for (unsigned i = 0; i < 200; i++) {
		struct fab_node *c = node(s, 0x1000 + i, FAB_CA, 1, "c");

		up(&c->ports[1], (uint16_t)(2 + 2 * i)); /* 2, 4, 6...: no runs */
	}
	complete(s);
	route_problems(s, got, sizeof(got));
	CHECK(!strncmp(got, head, sizeof(head) - 1));
	CHECK(strstr(got, ",...\n") && strlen(got) < 180);
	fabsnap_put(s);
}

/* Whether traced route r crosses the link of n's port p (a hop entering
 * or leaving by either end; not the port a dead end stopped at). */
static bool uses(const struct fab_snap *s, const struct route *r,
		 const struct fab_node *n, unsigned p)
{
	const struct fab_node *peer = NULL;
	const struct fab_port *pp = fabsnap_peer(s, &n->ports[p], &peer);

	for (unsigned i = 0; i < r->nhops; i++) {
		const struct route_hop *h = &r->hop[i];
		bool last = i + 1 == r->nhops && r->result == ROUTE_DEAD_END;

		for (int e = 0; e < 2; e++) {
			const struct fab_node *x = e ? peer : n;
			int xp = e ? (int)n->ports[p].peer_port : (int)p;

			if (x == h->node && (h->in == xp || (!last && h->out == xp)) &&
			    (e == 0 || pp))
				return true;
		}
	}
	return false;
}

/* carries_cut of each port against routes_trace of every pair. */
static void check_cuts(const struct fab_snap *s)
{
	struct route_end ends[16];
	unsigned ne = 0, host = 0;
	static struct route r;

	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = routes_first_endport(n); p <= routes_last_endport(n); p++) {
			if (n->guid == s->local_guid && n->ports[p].port_guid == s->local_port_guid)
				host = ne;
			ends[ne++] = (struct route_end){ n, p, n->ports[p].lid };
		}
	}
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = 1; p <= n->nports; p++) {
			struct carries_cut cut;
			uint64_t pairs = 0;
			unsigned from_host = 0;

			CHECK_INT(carries_cut(s, n, p, &cut), 0);
			for (unsigned a = 0; a < ne && n->ports[p].peer_guid; a++) {
				for (unsigned b = 0; b < ne; b++) {
					if (a == b)
						continue;
					routes_trace(s, &ends[a], &ends[b], &r);
					pairs += uses(s, &r, n, p);
					from_host += a == host && uses(s, &r, n, p);
				}
			}
			if (cut.pairs != pairs || cut.host != from_host)
				fprintf(stderr, "0x%llx port %u: pairs %llu host %u, traced %llu %u\n",
					(unsigned long long)n->guid, p,
					(unsigned long long)cut.pairs, cut.host,
					(unsigned long long)pairs, from_host);
			CHECK(cut.pairs == pairs && cut.host == from_host && cut.routed);
		}
	}
}

static void test_carries(void)
{
	struct fab_snap *s = ring();
	struct carries_cut cut;
	struct carried *c;
	size_t n;
	struct fab_node *s1 = fabsnap_find(s, S1), *s3 = fabsnap_find(s, S3);
	static const unsigned out1[] = { 2, 3, 20, 30, 31 }, in3[] = { 1, 2, 3, 20, 30, 31 };

	s->local_guid = CA_A;
	s->local_port_guid = CA_A + 1;
	/* S1's port 1 (to S2) sends all but S1's and A's LIDs, C's LMC
	 * range a line each; S2 sends nothing back into it. */
	CHECK_INT(carries_endports(s, s1, 1, &c, &n), 0);
	CHECK_INT((int)n, 5);
	for (size_t i = 0; i < n && n == 5; i++)
		CHECK(c[i].lid == out1[i] && !c[i].in);
	CHECK(n == 5 && c[3].node->guid == CA_C && c[3].port == 1 && c[0].port == 0);
	free(c);
	/* Its port 3: A out of it, everything A sends into it. */
	CHECK_INT(carries_endports(s, s1, 3, &c, &n), 0);
	CHECK_INT((int)n, 7);
	CHECK(n == 7 && c[0].lid == 10 && !c[0].in);
	for (size_t i = 1; i < n && n == 7; i++)
		CHECK(c[i].lid == in3[i - 1] && c[i].in);
	free(c);
	check_cuts(s);
	/* A ring link: nothing isolated; A's own: the 5 others, from A. */
	CHECK(carries_cut(s, s1, 1, &cut) == 0 && cut.isolated == 0 && cut.host == 4);
	CHECK(carries_cut(s, s1, 3, &cut) == 0 && cut.isolated == 5 && cut.host == 5);
	CHECK(carries_cut(s, s3, 3, &cut) == 0 && cut.isolated == 1);
	CHECK(carries_cut(s, s1, 4, &cut) == 0 && !cut.host && !cut.pairs && !cut.isolated);
	/* A loop for LID 20 (S1 -> S3 -> S1), a dead end for 10 at S2. */
	s1->lft->port[20] = 2;
	fabsnap_find(s, S2)->lft->port[10] = 5;
	check_cuts(s);
	fabsnap_put(s);
}

int main(void)
{
	test_names();
	test_paths();
	test_problems();
	test_routes_carried();
	test_routing_quality();
	test_routing_vls();
	test_routing_pair_sls();
	test_ranges();
	test_carries();
	return check_failures ? 1 : 0;
}
