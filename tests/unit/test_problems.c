/* The judge of fabric/problems on snapshots made by hand: the kinds the
 * simulator cannot produce (an SM that stops counting, a port left in
 * INIT, a saturated counter, a link below its fabric's majority), the
 * expected topology's moved and missing links, and the threshold file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "check.h"
#include "snapbuild.h"
#include "umadfs/fabric/problems/problem.h"
#include "umadfs/fabric/problems/problems.h"
#include "umadfs/fabric/problems/thresholds.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/mcast.h"
#include "umadfs/mad/ibcodes.h"

static void port_up(struct fab_port *p, uint16_t lid)
{
	p->has_info = true;
	p->state = IB_LINK_ACTIVE;
	p->phys_state = IB_PORT_PHYS_STATE_LINKUP;
	p->width = IB_LINK_WIDTH_ACTIVE_4X;
	p->speed = IB_LINK_SPEED_ACTIVE_2_5; /* SDR */
	p->width_enabled = IB_LINK_WIDTH_ACTIVE_4X;
	p->width_supported = IB_LINK_WIDTH_ACTIVE_4X | IB_LINK_WIDTH_ACTIVE_1X;
	p->speed_enabled = IB_LINK_SPEED_ACTIVE_2_5;
	p->speed_supported = IB_LINK_SPEED_ACTIVE_2_5;
	p->lid = lid;
	p->has_counters = true;
}

/* A switch (GUID base + 0x100) with nhcas HCAs (base + 0x200 + i) on
 * ports 1..nhcas, an SM master at LID 1 whose ActCount is act. */
static struct fab_snap *star_at(uint64_t base, unsigned nhcas, uint32_t act,
				int64_t mono_ms)
{
	struct fab_snap *s = fabsnap_new();
	struct fab_node *sw = fabsnap_add(s, base + 0x100, 40);

	sw->type = FAB_SWITCH;
	strcpy(sw->desc, "sw");
	port_up(&sw->ports[0], 100);
	for (unsigned i = 0; i < nhcas; i++) {
		struct fab_node *ca = fabsnap_add(s, base + 0x200 + i, 1);

		sw = fabsnap_find(s, base + 0x100); /* the array may have moved */
		ca->type = FAB_CA;
		snprintf(ca->desc, sizeof(ca->desc), "hca%u", i);
		port_up(&ca->ports[1], (uint16_t)(1 + i));
		port_up(&sw->ports[1 + i], 100);
		link_ports(sw, 1 + i, ca, 1);
	}
	s->ok = true;
	s->mono_ms = mono_ms;
	s->sm_lid = 1;
	s->sms = calloc(1, sizeof(*s->sms));
	s->nsms = 1;
	s->sms[0] = (struct fab_sm){ .guid = 0x201, .lid = 1,
				     .state = IB_SMINFO_STATE_MASTER, .act_count = act };
	fabsnap_count(s);
	return s;
}

static struct fab_snap *star(unsigned nhcas, uint32_t act, int64_t mono_ms)
{
	return star_at(0, nhcas, act, mono_ms);
}

static size_t count(const struct fab_snap *s, unsigned kind)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nproblems; i++)
		n += s->problems[i].kind == kind;
	return n;
}

static const struct fab_problem *first(const struct fab_snap *s, unsigned kind)
{
	for (size_t i = 0; i < s->nproblems; i++)
		if (s->problems[i].kind == kind)
			return &s->problems[i];
	return NULL;
}

static void test_problemsy(void)
{
	struct fab_snap *s = star(4, 10, 1000);

	problems_judge(NULL, s, NULL);
	CHECK_INT((int)s->nproblems, 0);
	fabsnap_put(s);
}

static void test_sm(void)
{
	struct fab_snap *a = star(2, 10, 1000), *b = star(2, 10, 30000);
	struct fab_snap *c = star(2, 10, 61000), *d = star(2, 11, 62000);
	struct fab_snap *e = star(2, 11, 63000);
	char line[1024];

	problems_judge(NULL, a, NULL);
	problems_judge(a, b, NULL);
	CHECK_INT((int)count(b, PROBLEM_SM_STALLED), 0);
	problems_judge(b, c, NULL);                  /* 60 s unmoved */
	CHECK_INT((int)count(c, PROBLEM_SM_STALLED), 1);
	problem_keys(first(c, PROBLEM_SM_STALLED), line, sizeof(line));
	CHECK_STR(line, "problem=sm_stalled severity=warning guid=0x0000000000000201"
		  " lid=1 act_count=10 seconds=60");
	problems_judge(c, d, NULL);                  /* it moved */
	CHECK_INT((int)count(d, PROBLEM_SM_STALLED), 0);
	/* No master: sm_missing, and INIT ports are its, not theirs. */
	e->sms[0].state = IB_SMINFO_STATE_STANDBY;
	e->nodes[1].ports[1].state = IB_LINK_INIT;
	d->nodes[1].ports[1].state = IB_LINK_INIT;
	problems_judge(d, e, NULL);
	CHECK_INT((int)count(e, PROBLEM_SM_MISSING), 1);
	CHECK_INT((int)count(e, PROBLEM_PORT_NOT_ACTIVE), 0);
	CHECK(e->problems[0].kind == PROBLEM_SM_MISSING);
	fabsnap_put(a);
	fabsnap_put(b);
	fabsnap_put(c);
	fabsnap_put(d);
	fabsnap_put(e);
}

static void test_ports(void)
{
	struct fab_snap *a = star(3, 10, 1000), *b = star(3, 10, 2000);
	struct fab_snap *c = star(3, 10, 3000);
	char line[1024];

	/* INIT in one sweep is not yet a problem; in two it is. */
	b->nodes[1].ports[1].state = IB_LINK_INIT;
	c->nodes[1].ports[1].state = IB_LINK_INIT;
	c->nodes[2].ports[1].lid = 0;              /* active, no LID */
	c->nodes[3].sma_timeouts = 2;
	problems_judge(NULL, a, NULL);
	problems_judge(a, b, NULL);
	CHECK_INT((int)count(b, PROBLEM_PORT_NOT_ACTIVE), 0);
	problems_judge(b, c, NULL);
	CHECK_INT((int)count(c, PROBLEM_PORT_NOT_ACTIVE), 1);
	CHECK_INT((int)count(c, PROBLEM_LID_UNASSIGNED), 1);
	CHECK_INT((int)count(c, PROBLEM_NODE_UNRESPONSIVE), 1);
	problem_keys(first(c, PROBLEM_PORT_NOT_ACTIVE), line, sizeof(line));
	CHECK_STR(line, "problem=port_not_active severity=error guid=0x0000000000000200"
		  " port=1 node_desc=\"hca0\" found=Init");
	problem_keys(first(c, PROBLEM_NODE_UNRESPONSIVE), line, sizeof(line));
	CHECK_STR(line, "problem=node_unresponsive severity=error guid=0x0000000000000202"
		  " node_desc=\"hca2\" sma_timeouts=2 pma_timeouts=0");
	fabsnap_put(a);
	fabsnap_put(b);
	fabsnap_put(c);
}

static void test_counters(void)
{
	struct fab_snap *a = star(2, 10, 1000), *b = star(2, 10, 2000);
	struct fab_port *pa = &a->nodes[1].ports[1], *pb = &b->nodes[1].ports[1];
	char line[1024];

	mad_set_field(pa->basic, 0, IB_PC_LINK_DOWNED_F, 3);
	mad_set_field(pb->basic, 0, IB_PC_LINK_DOWNED_F, 5);
	mad_set_field(pa->basic, 0, IB_PC_ERR_SYM_F, 0xffff); /* saturated */
	mad_set_field(pb->basic, 0, IB_PC_ERR_SYM_F, 0xffff);
	problems_judge(NULL, a, NULL);
	problems_judge(a, b, NULL);
	CHECK_INT((int)count(b, PROBLEM_COUNTER_RISING), 1);
	CHECK_INT((int)count(b, PROBLEM_COUNTER_SATURATED), 1);
	CHECK_INT((int)count(b, PROBLEM_COUNTER_OVER_THRESHOLD), 2);
	CHECK_INT((int)count(a, PROBLEM_COUNTER_RISING), 0);
	problem_keys(first(b, PROBLEM_COUNTER_RISING), line, sizeof(line));
	CHECK_STR(line, "problem=counter_rising severity=warning guid=0x0000000000000200"
		  " port=1 node_desc=\"hca0\" counter=LinkDownedCounter value=5 delta=2");
	problem_keys(first(b, PROBLEM_COUNTER_SATURATED), line, sizeof(line));
	CHECK_STR(line, "problem=counter_saturated severity=warning guid=0x0000000000000200"
		  " port=1 node_desc=\"hca0\" counter=SymbolErrorCounter value=65535");
	/* Errors first. */
	CHECK(b->problems[0].severity == SEVERITY_ERROR);
	CHECK(b->problems[b->nproblems - 1].severity == SEVERITY_WARNING);
	fabsnap_put(a);
	fabsnap_put(b);
}

/* A refresh (refreshes > 0) reads neither counters nor forwarding
 * tables, and follows ports up within a second: counter_rising, the
 * routes' problems and port_not_active are carried from the snapshot
 * before (while their port is still there, and still not active), never
 * judged anew. */
static void test_refresh_carries(void)
{
	struct fab_snap *a = star(2, 10, 1000), *b = star(2, 10, 2000);
	struct fab_snap *r1 = star(2, 10, 2000), *r2 = star(2, 10, 2000);
	struct fab_snap *r3 = star(2, 10, 2000);

	mad_set_field(a->nodes[1].ports[1].basic, 0, IB_PC_LINK_DOWNED_F, 3);
	mad_set_field(b->nodes[1].ports[1].basic, 0, IB_PC_LINK_DOWNED_F, 5);
	a->nodes[2].ports[1].state = b->nodes[2].ports[1].state = IB_LINK_INIT;
	problems_judge(NULL, a, NULL);
	problems_judge(a, b, NULL);
	CHECK_INT((int)count(b, PROBLEM_COUNTER_RISING), 1);
	CHECK_INT((int)count(b, PROBLEM_PORT_NOT_ACTIVE), 1);
	/* Its counters as b's (a refresh copies them), still Init: both stand,
	 * where a sweep would clear the rise. */
	mad_set_field(r1->nodes[1].ports[1].basic, 0, IB_PC_LINK_DOWNED_F, 5);
	r1->nodes[2].ports[1].state = IB_LINK_INIT;
	r1->refreshes = 1;
	problems_judge(b, r1, NULL);
	CHECK_INT((int)count(r1, PROBLEM_COUNTER_RISING), 1);
	CHECK_INT((int)count(r1, PROBLEM_PORT_NOT_ACTIVE), 1);
	/* A port coming up Init in a refresh is not port_not_active, though
	 * the refresh before had it Init too; the one that went Active drops. */
	r2->nodes[1].ports[1].state = IB_LINK_INIT;
	r2->refreshes = 2;
	mad_set_field(r2->nodes[1].ports[1].basic, 0, IB_PC_LINK_DOWNED_F, 5);
	r1->nodes[1].ports[1].state = IB_LINK_INIT;
	problems_judge(r1, r2, NULL);
	CHECK_INT((int)count(r2, PROBLEM_PORT_NOT_ACTIVE), 0);
	CHECK_INT((int)count(r2, PROBLEM_COUNTER_RISING), 1);
	/* The next sweep judges all again: no rise, and an Init port in two
	 * snapshots is port_not_active. */
	mad_set_field(r3->nodes[1].ports[1].basic, 0, IB_PC_LINK_DOWNED_F, 5);
	r3->nodes[1].ports[1].state = IB_LINK_INIT;
	problems_judge(r2, r3, NULL);
	CHECK_INT((int)count(r3, PROBLEM_COUNTER_RISING), 0);
	CHECK_INT((int)count(r3, PROBLEM_PORT_NOT_ACTIVE), 1);
	fabsnap_put(a);
	fabsnap_put(b);
	fabsnap_put(r1);
	fabsnap_put(r2);
	fabsnap_put(r3);
}

static void test_speeds(void)
{
	struct fab_snap *s = star(5, 10, 1000);
	char line[1024];

	/* hca0 at 1x although both ends enable 4x: enabled.  hca1's ends
	 * enable only 1x: not below them, but below the other CA links. */
	s->nodes[1].ports[1].width = IB_LINK_WIDTH_ACTIVE_1X;
	s->nodes[0].ports[1].width = IB_LINK_WIDTH_ACTIVE_1X;
	s->nodes[2].ports[1].width = IB_LINK_WIDTH_ACTIVE_1X;
	s->nodes[2].ports[1].width_enabled = IB_LINK_WIDTH_ACTIVE_1X;
	s->nodes[0].ports[2].width = IB_LINK_WIDTH_ACTIVE_1X;
	problems_judge(NULL, s, NULL);
	CHECK_INT((int)count(s, PROBLEM_LINK_DEGRADED), 2);
	problem_keys(first(s, PROBLEM_LINK_DEGRADED), line, sizeof(line));
	CHECK_STR(line, "problem=link_degraded severity=error guid=0x0000000000000200"
		  " port=1 node_desc=\"hca0\" peer_guid=0x0000000000000100 peer_port=1"
		  " peer_node_desc=\"sw\" expected=4xSDR found=1xSDR basis=enabled");
	problem_keys(&s->problems[1], line, sizeof(line));
	CHECK_STR(line, "problem=link_degraded severity=error guid=0x0000000000000201"
		  " port=1 node_desc=\"hca1\" peer_guid=0x0000000000000100 peer_port=2"
		  " peer_node_desc=\"sw\" expected=4xSDR found=1xSDR basis=fabric");
	fabsnap_put(s);
}

static void test_expected(void)
{
	struct fab_snap *exp = star(4, 10, 1000), *s = star(4, 10, 2000);
	struct fab_node *sw = fabsnap_find(s, 0x100);
	char line[1024];

	exp->nodes[1].ports[1].width = IB_LINK_WIDTH_ACTIVE_12X; /* hca0's link */
	exp->nodes[0].ports[1].width = IB_LINK_WIDTH_ACTIVE_12X;
	/* hca1 moved from port 2 to port 6; hca2's link is gone (its port
	 * Polling); hca3 from port 4 to 7 of another switch... gone too. */
	sw->ports[2].peer_guid = 0;
	link_ports(sw, 6, fabsnap_find(s, 0x201), 1);
	port_up(&sw->ports[6], 100);
	sw->ports[3].peer_guid = 0;
	sw->ports[3].phys_state = IB_PORT_PHYS_STATE_POLLING;
	fabsnap_find(s, 0x202)->ports[1].peer_guid = 0;
	problems_judge(NULL, s, exp);
	CHECK_INT((int)count(s, PROBLEM_LINK_MOVED), 1);
	problem_keys(first(s, PROBLEM_LINK_MOVED), line, sizeof(line));
	CHECK_STR(line, "problem=link_moved severity=error guid=0x0000000000000100"
		  " port=2 node_desc=\"sw\" peer_guid=0x0000000000000201 peer_port=1"
		  " peer_node_desc=\"hca1\" expected=0x0000000000000100[2]-0x0000000000000201[1]"
		  " found=0x0000000000000100[6]-0x0000000000000201[1]");
	CHECK_INT((int)count(s, PROBLEM_LINK_MISSING), 2);
	problem_keys(first(s, PROBLEM_LINK_MISSING), line, sizeof(line));
	CHECK_STR(line, "problem=link_missing severity=error guid=0x0000000000000100"
		  " port=3 node_desc=\"sw\" peer_guid=0x0000000000000202 peer_port=1"
		  " peer_node_desc=\"hca2\" found=Polling");
	CHECK_INT((int)count(s, PROBLEM_LINK_DEGRADED), 1);
	CHECK(first(s, PROBLEM_LINK_DEGRADED) &&
	      !strcmp(first(s, PROBLEM_LINK_DEGRADED)->expected, "12xSDR"));
	CHECK_INT((int)count(s, PROBLEM_LINK_UNEXPECTED), 0);
	/* The first sweep as the expectation: its widths are not wanted. */
	exp->from_sweep = true;
	fabsnap_put(s);
	s = star(4, 10, 2000);
	problems_judge(NULL, s, exp);
	CHECK_INT((int)count(s, PROBLEM_LINK_DEGRADED), 0);
	exp->from_sweep = false;
	fabsnap_put(s);

	/* Another fabric entirely: every expected node missing, each once;
	 * its links are theirs. */
	fabsnap_put(exp);
	exp = star(30, 10, 1000);
	s = star_at(0x10000, 2, 10, 2000);
	problems_judge(NULL, s, exp);
	CHECK_INT((int)count(s, PROBLEM_NODE_MISSING), 31);
	CHECK_INT((int)count(s, PROBLEM_LINK_MISSING), 0);
	CHECK_INT((int)count(s, PROBLEM_LINK_UNEXPECTED), 2);
	fabsnap_put(s);
	fabsnap_put(exp);
}

static void test_failed(void)
{
	struct fab_snap *a = star(2, 10, 1000), *b = fabsnap_new();
	char line[1024];

	a->nodes[1].ports[1].lid = 0;
	problems_judge(NULL, a, NULL);
	snprintf(b->error, sizeof(b->error), "no ACTIVE port");
	problems_judge(a, b, NULL);
	CHECK_INT((int)b->nproblems, 2);
	CHECK_INT((int)count(b, PROBLEM_LID_UNASSIGNED), 1);
	problem_keys(first(b, PROBLEM_SWEEP_FAILED), line, sizeof(line));
	CHECK_STR(line, "problem=sweep_failed severity=error reason=\"no ACTIVE port\"");
	fabsnap_put(a);
	fabsnap_put(b);
}

static void test_thresholds(void)
{
	struct thresholds t = THRESHOLDS_INIT;
	char why[200];
	static const char good[] = "# comment\nSymbolErrorCounter=10\n\n"
		"PortXmitWait=0x100\n   \nLinkDownedCounter=3 \n";

	for (unsigned i = 0; i < THRESHOLD_COUNTERS; i++) {
		/* ibqueryerrors matches PortCountersExtended's names. */
		static const int ext[THRESHOLD_COUNTERS] = {
			IB_PC_EXT_ERR_SYM_F, IB_PC_EXT_LINK_RECOVERS_F,
			IB_PC_EXT_LINK_DOWNED_F, IB_PC_EXT_ERR_RCV_F,
			IB_PC_EXT_ERR_PHYSRCV_F, IB_PC_EXT_ERR_SWITCH_REL_F,
			IB_PC_EXT_XMT_DISCARDS_F, IB_PC_EXT_ERR_XMTCONSTR_F,
			IB_PC_EXT_ERR_RCVCONSTR_F, IB_PC_EXT_ERR_LOCALINTEG_F,
			IB_PC_EXT_ERR_EXCESS_OVR_F, IB_PC_EXT_VL15_DROPPED_F,
			IB_PC_EXT_XMT_WAIT_F,
		};

		CHECK_STR(thresholds_name(i), mad_field_name((enum MAD_FIELDS)ext[i]));
	}
	CHECK_INT(thresholds_parse(good, sizeof(good) - 1, &t, why, sizeof(why)), 0);
	CHECK(t.value[0] == 10 && t.value[2] == 3 && t.value[12] == 0x100 &&
	      t.value[1] == 0 && t.wait_per_second == THRESHOLD_WAIT_DEFAULT);
	CHECK_INT(thresholds_parse("PortXmitWaitPerSecond=5000 \n", 27, &t, why,
				   sizeof(why)), 0);
	CHECK(t.wait_per_second == 5000 && t.value[0] == 0);
	CHECK_INT(thresholds_parse("#\nPortXmitWaitPerSecond=0\n", 26, &t, why,
				   sizeof(why)), -EINVAL);
	CHECK(strstr(why, "line 2: PortXmitWaitPerSecond: 0 is out of range") == why);
	CHECK(t.wait_per_second == 5000); /* unchanged */
	CHECK_INT(thresholds_parse(good, sizeof(good) - 1, &t, why, sizeof(why)), 0);
	CHECK_INT(thresholds_parse("SymbolErrorCounter=1\nSymbolErrors=3\n", 35, &t,
				   why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "line 2: 'SymbolErrors' is not a counter") == why);
	CHECK(t.value[0] == 10); /* unchanged */
	CHECK_INT(thresholds_parse("PortRcvErrors=ten\n", 18, &t, why, sizeof(why)),
		  -EINVAL);
	CHECK_STR(why, "line 1: PortRcvErrors: 'ten' is not a number");
	CHECK_INT(thresholds_parse("VL15Dropped=010\n", 16, &t, why, sizeof(why)),
		  -EINVAL);
	CHECK(strstr(why, "leading 0") != NULL);
	CHECK_INT(thresholds_parse("VL15Dropped\n", 12, &t, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "line 1: expected Name=value") == why);
	CHECK_INT(thresholds_load("/nonexistent/x", &t, why, sizeof(why)), -ENOENT);
	/* umadfs's own names: defaults, values, bounds. */
	CHECK_INT(thresholds_parse("", 0, &t, why, sizeof(why)), 0);
	CHECK(t.flap_count == THRESHOLDS_FLAP_COUNT &&
	      t.flap_window_s == THRESHOLDS_FLAP_WINDOW_S);
	CHECK_INT(thresholds_parse("LinkFlapCount=5\nLinkFlapWindowSeconds=60\n", 40,
				   &t, why, sizeof(why)), 0);
	CHECK(t.flap_count == 5 && t.flap_window_s == 60);
	CHECK_INT(thresholds_parse("LinkFlapCount=0\n", 16, &t, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "line 1: LinkFlapCount: 0 is out of range (1 to 16)");
	CHECK_INT(thresholds_parse("#\nLinkFlapWindowSeconds=604801\n", 31, &t, why,
				   sizeof(why)), -EINVAL);
	CHECK_STR(why, "line 2: LinkFlapWindowSeconds: 604801 is out of range (1 to 604800)");
	CHECK(t.flap_count == 5); /* unchanged */
}

/* The star at t: hca1's link down or not, hca0's LinkDownedCounter. */
static struct fab_snap *flap_star(int64_t t, bool down, unsigned downed)
{
	struct fab_snap *s = star(2, 10, t);

	if (down) {
		s->nodes[0].ports[2].peer_guid = 0;
		s->nodes[2].ports[1].peer_guid = 0;
	}
	mad_set_field(s->nodes[1].ports[1].basic, 0, IB_PC_LINK_DOWNED_F, downed);
	return s;
}

/* Judges a snapshot made at t after *prev (dropped), which it becomes. */
static void judge_next(struct fab_snap **prev, int64_t t, bool down, unsigned downed)
{
	struct fab_snap *s = flap_star(t, down, downed);

	problems_judge(*prev, s, NULL);
	fabsnap_put(*prev);
	*prev = s;
}

/* link_flapping: three downs of hca1's link in the view (both its ends),
 * sticky for the window (3600 s by default) after the last; hca0's
 * LinkDownedCounter up 3 at once; two downs are none. */
static void test_flapping(void)
{
	const int64_t window = THRESHOLDS_FLAP_WINDOW_S * 1000;
	struct fab_snap *s = flap_star(0, false, 0);
	char line[1024];

	problems_judge(NULL, s, NULL);
	for (int i = 0; i < 2; i++) {
		judge_next(&s, 1000 + 2000 * i, true, 0);
		judge_next(&s, 2000 + 2000 * i, false, 0);
	}
	CHECK_INT((int)count(s, PROBLEM_LINK_FLAPPING), 0);
	judge_next(&s, 5000, true, 0);
	CHECK_INT((int)count(s, PROBLEM_LINK_FLAPPING), 2);
	problem_keys(first(s, PROBLEM_LINK_FLAPPING), line, sizeof(line));
	CHECK_STR(line, "problem=link_flapping severity=error guid=0x0000000000000100"
		  " port=2 node_desc=\"sw\" flaps=3 window_s=3600 since_s=0 seen_by=events");
	judge_next(&s, 6000, false, 0);
	judge_next(&s, 5000 + window - 1000, false, 0); /* quiet, in the window */
	CHECK_INT((int)count(s, PROBLEM_LINK_FLAPPING), 2);
	problem_keys(first(s, PROBLEM_LINK_FLAPPING), line, sizeof(line));
	CHECK(strstr(line, " flaps=1 window_s=3600 since_s=3599 seen_by=events") != NULL);
	judge_next(&s, 5000 + window, false, 0);
	CHECK_INT((int)count(s, PROBLEM_LINK_FLAPPING), 0);
	/* The counter: three at once. */
	judge_next(&s, 6000 + window, false, 3);
	CHECK_INT((int)count(s, PROBLEM_LINK_FLAPPING), 1);
	problem_keys(first(s, PROBLEM_LINK_FLAPPING), line, sizeof(line));
	CHECK_STR(line, "problem=link_flapping severity=error guid=0x0000000000000200"
		  " port=1 node_desc=\"hca0\" flaps=3 window_s=3600 since_s=0"
		  " seen_by=LinkDownedCounter");
	fabsnap_put(s);
}

/* Gives node n's port p a PKeyTable of the n keys. */
static void give_pkeys(struct fab_node *n, unsigned p, const uint16_t *keys, unsigned k)
{
	struct fab_pkeys *t = fabsnap_pkeys_new(FAB_PKEY_BLOCK, 0);

	CHECK(t != NULL);
	memcpy(t->key, keys, k * sizeof(*keys));
	fabsnap_pkeys_put(n->ports[p].pkeys);
	n->ports[p].pkeys = t;
}

/* The keys of s's first problem of kind are want. */
static void check_keys(const struct fab_snap *s, unsigned kind, const char *want)
{
	char line[1024];
	const struct fab_problem *p = first(s, kind);

	CHECK(p != NULL);
	if (p) {
		problem_keys(p, line, sizeof(line));
		CHECK_STR(line, want);
	}
}

/* Judges s again (its problems before dropped). */
static void rejudge(struct fab_snap *s)
{
	free(s->problems);
	s->problems = NULL;
	problems_judge(NULL, s, NULL);
}

static void test_partitions(void)
{
	static const uint16_t def[] = { 0xffff }, both[] = { 0xffff, 0x0005 };
	static const uint16_t no_def[] = { 0x8003, 0x0005 };
	struct fab_snap *s = star(2, 10, 1000);
	struct fab_node *sw = &s->nodes[0];

	give_pkeys(sw, 0, def, 1);
	give_pkeys(&s->nodes[1], 1, both, 2);    /* hca0: 0x0005 limited */
	give_pkeys(&s->nodes[2], 1, no_def, 2);  /* hca1: no default */
	give_pkeys(sw, 1, def, 1);               /* lacks hca0's 0x0005 */
	problems_judge(NULL, s, NULL);
	CHECK_INT((int)count(s, PROBLEM_PKEY_ENFORCEMENT_MISMATCH), 0); /* off */
	CHECK_INT((int)count(s, PROBLEM_PARTITION_NO_FULL_MEMBER), 1);
	check_keys(s, PROBLEM_PARTITION_NO_FULL_MEMBER,
		   "problem=partition_no_full_member severity=error pkey=0x0005"
		   " limited_members=2");
	check_keys(s, PROBLEM_PORT_WITHOUT_DEFAULT_PARTITION,
		   "problem=port_without_default_partition severity=warning"
		   " guid=0x0000000000000201 port=1 node_desc=\"hca1\" table_len=32");
	sw->ports[1].part_enf = 1;               /* inbound */
	rejudge(s);
	CHECK_INT((int)count(s, PROBLEM_PKEY_ENFORCEMENT_MISMATCH), 1);
	check_keys(s, PROBLEM_PKEY_ENFORCEMENT_MISMATCH,
		   "problem=pkey_enforcement_mismatch severity=error"
		   " guid=0x0000000000000100 port=1 node_desc=\"sw\""
		   " peer_guid=0x0000000000000200 peer_port=1 peer_node_desc=\"hca0\""
		   " pkey=0x0005 enforcement=inbound");
	give_pkeys(sw, 1, both, 2);              /* put back */
	rejudge(s);
	CHECK_INT((int)count(s, PROBLEM_PKEY_ENFORCEMENT_MISMATCH), 0);
	fabsnap_put(s);
}

/* Switch n's MulticastForwardingTable: block 0 (MLIDs 0xc000-0xc01f),
 * mlid forwarded to the ports of mask (ports 0-15). */
static void give_mft(struct fab_node *n, unsigned mlid, unsigned mask)
{
	unsigned npos = n->nports / FAB_MFT_PORTS + 1u;

	if (!n->mft) {
		n->mft = fabmft_new(1, npos, 0);
		CHECK(n->mft != NULL);
		n->mft->pending = 0;
	}
	n->mft->mask[(mlid - 0xc000) * npos] = (uint16_t)mask;
}

/* Groups 0xc000 (hca0 and hca1 full members, hca2 send-only), 0xc001
 * (no member), 0xc002 (an IPoIB broadcast group, no member) and 0xc003
 * (hca2 send-only). */
static void give_groups(struct fab_snap *s)
{
	struct fab_mcast *mc = fabmcast_new(4, 4);

	CHECK(mc != NULL);
	mc->groups[0] = (struct fab_mgroup){ .mgid = { 0xff, 0x12, [15] = 1 }, .mlid = 0xc000,
					     .first = 0, .n = 3 };
	mc->groups[1] = (struct fab_mgroup){ .mgid = { 0xff, 0x12, [15] = 2 }, .mlid = 0xc001,
					     .first = 3, .n = 0 };
	mc->groups[2] = (struct fab_mgroup){
		.mgid = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, [12] = 0xff, 0xff, 0xff, 0xff },
		.mlid = 0xc002, .first = 3, .n = 0 };
	mc->groups[3] = (struct fab_mgroup){ .mgid = { 0xff, 0x12, [15] = 3 }, .mlid = 0xc003,
					     .first = 3, .n = 1 };
	mc->members[3] = (struct fab_mcmember){ .prefix = 0xfe80ull << 48, .guid = 0x202,
						.port = 1, .node_guid = 0x202,
						.join_state = FAB_JOIN_SENDONLY };
	for (unsigned i = 0; i < 3; i++)
		mc->members[i] = (struct fab_mcmember){
			.prefix = 0xfe80ull << 48, .guid = 0x200 + i, .port = 1,
			.node_guid = 0x200 + i,
			.join_state = i < 2 ? FAB_JOIN_FULL : FAB_JOIN_SENDONLY };
	s->mcast = mc;
}

static void test_mcast(void)
{
	struct fab_snap *s = star(3, 10, 1000);
	struct fab_node *sw = &s->nodes[0], *sw2;

	give_groups(s);
	give_mft(sw, 0xc000, 1u << 1 | 1u << 2);   /* hca0, hca1: not hca2 */
	problems_judge(NULL, s, NULL);
	CHECK_INT((int)count(s, PROBLEM_MCAST_MEMBER_UNREACHABLE), 0);
	CHECK_INT((int)count(s, PROBLEM_MCAST_LOOP), 0);
	/* 0xc001 and 0xc003 (a sender, none to receive); not 0xc002 */
	CHECK_INT((int)count(s, PROBLEM_MCAST_GROUP_EMPTY), 2);
	check_keys(s, PROBLEM_MCAST_GROUP_EMPTY,
		   "problem=mcast_group_empty severity=warning mlid=0xc001"
		   " mgid=ff12:0000:0000:0000:0000:0000:0000:0002 members=0");
	CHECK_STR(s->problems[s->nproblems - 1].found,
		  "mlid=0xc003 mgid=ff12:0000:0000:0000:0000:0000:0000:0003 members=1");
	give_mft(sw, 0xc000, 1u << 1);              /* hca1's entry gone */
	rejudge(s);
	CHECK_INT((int)count(s, PROBLEM_MCAST_MEMBER_UNREACHABLE), 1);
	check_keys(s, PROBLEM_MCAST_MEMBER_UNREACHABLE,
		   "problem=mcast_member_unreachable severity=error"
		   " guid=0x0000000000000201 port=1 node_desc=\"hca1\""
		   " peer_guid=0x0000000000000200 peer_port=1 peer_node_desc=\"hca0\""
		   " mlid=0xc000 mgid=ff12:0000:0000:0000:0000:0000:0000:0001 senders=2");
	give_mft(sw, 0xc000, 1u << 1 | 1u << 2);
	rejudge(s);
	CHECK_INT((int)count(s, PROBLEM_MCAST_MEMBER_UNREACHABLE), 0);
	/* A second switch on two links, both forwarding the group: a cycle. */
	sw2 = fabsnap_add(s, 0x300, 8);
	sw = &s->nodes[0];
	sw2->type = FAB_SWITCH;
	strcpy(sw2->desc, "sw2");
	link_ports(sw, 10, sw2, 1);
	link_ports(sw, 11, sw2, 2);
	give_mft(sw, 0xc000, 1u << 1 | 1u << 2 | 1u << 10);
	give_mft(sw2, 0xc000, 1u << 1);
	rejudge(s);
	CHECK_INT((int)count(s, PROBLEM_MCAST_LOOP), 0);  /* a tree */
	give_mft(sw, 0xc000, 1u << 1 | 1u << 2 | 1u << 10 | 1u << 11);
	give_mft(sw2, 0xc000, 1u << 1 | 1u << 2);
	rejudge(s);
	CHECK_INT((int)count(s, PROBLEM_MCAST_LOOP), 1);
	check_keys(s, PROBLEM_MCAST_LOOP,
		   "problem=mcast_loop severity=error guid=0x0000000000000100 port=11"
		   " node_desc=\"sw\" peer_guid=0x0000000000000300 peer_port=2"
		   " peer_node_desc=\"sw2\" mlid=0xc000"
		   " mgid=ff12:0000:0000:0000:0000:0000:0000:0001");
	CHECK_INT((int)count(s, PROBLEM_MCAST_MEMBER_UNREACHABLE), 0);
	/* Members hidden by the SA: an empty group is not judged so. */
	s->mcast->untrusted = true;
	rejudge(s);
	CHECK_INT((int)count(s, PROBLEM_MCAST_GROUP_EMPTY), 0);
	fabsnap_put(s);
}

int main(void)
{
	/* Each test's fabric its own: the flaps one remembers are not the
	 * next one's (problems_forget()). */
	test_problemsy();
	test_sm();
	test_ports();
	test_counters();
	problems_forget();
	test_refresh_carries();
	problems_forget();
	test_speeds();
	test_expected();
	test_failed();
	test_thresholds();
	test_flapping();
	problems_forget();
	test_partitions();
	test_mcast();
	return check_failures ? 1 : 0;
}
