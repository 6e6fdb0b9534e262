/* fabric/metrics.prom's text, by its length and checksum (FNV-1a, 64
 * bits), on the test fabrics (the ibnetdiscover fixtures of
 * tests/unit/ibnetdiscover/) and a generated fat tree of 1,012 nodes (the
 * bench's, gen-fabric.py's default), each given PortInfos, counters,
 * forwarding tables, descriptions to escape and problems by a
 * pseudo-random generator of fixed seed.  The sums were taken from the
 * text as fabtext.c made it whole (commit 11ed175, before the text was
 * made as it is read): the chunks made for each read give the same bytes,
 * whatever the reads' sizes and offsets.  The family groups of -o
 * fabric_metrics= too.  argv[1]: the fixtures' directory. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "check.h"
#include "fixture.h"
#include "snapbuild.h"
#include "umadfs/fabric/files/fabmetrics.h"
#include "umadfs/fabric/files/promlines.h"
#include "umadfs/fabric/problems/problems.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/topofile.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/pmacounters.h"

static const char *fixtures;
static uint64_t seed;

static uint32_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(seed >> 33);
}

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h;
}

/* Counters: the data ones anything, the error ones mostly 0. */
static void set_counters(struct fab_port *p)
{
	for (size_t i = 0; i < FAB_PC_LEN; i++)
		p->basic[i] = (uint8_t)rnd();
	for (size_t i = 0; i < FAB_PCX_LEN; i++)
		p->ext[i] = (uint8_t)rnd();
	for (unsigned i = 0; i < pmacounters_count(); i++)
		if (pmacounters_is_error(i))
			mad_set_field(p->basic, 0, (enum MAD_FIELDS)pmacounters_field(i),
				      rnd() % 64 ? 0 : rnd() % 300);
	p->has_counters = rnd() % 17 != 0;
	p->has_ext = rnd() % 5 != 0;
}

static void set_port(struct fab_port *p, bool port0)
{
	static const uint8_t widths[] = { 1, 2, 8, 3 }; /* 1x 4x 12x ? */
	static const uint8_t speeds[] = { 1, 2, 4 };    /* SDR DDR QDR */

	p->has_info = port0 || rnd() % 13 != 0;
	p->state = p->peer_guid || port0 ? (rnd() % 29 ? 4 : 2) : 1;
	p->phys_state = p->peer_guid || port0 ? 5 : 2;
	p->width = widths[rnd() % 4];
	p->speed = speeds[rnd() % 3];
	p->ext_speed = rnd() % 7 ? 0 : 1;
	set_counters(p);
}

/* A switch's table: LIDs 1..top out of a port or none (255). */
static void set_lft(struct fab_node *n, unsigned top)
{
	n->lft = fabsnap_lft_new((uint16_t)top, 0);
	if (!n->lft)
		exit(2);
	for (unsigned lid = 0; lid <= top; lid++)
		n->lft->port[lid] = (uint8_t)(rnd() % 11 ? rnd() % (n->nports + 1u) : 255);
}

/* What the formatter has to escape, in a few descriptions. */
static void odd_descs(struct fab_snap *s)
{
	static const char *const descs[] = {
		"quote \" backslash \\ end", "control \x01 and \xe9t\xe9",
		"", "newline \n tab \t",
	};

	for (size_t i = 0; i < s->nnodes && i < 4; i++)
		strcpy(s->nodes[(i * 7) % s->nnodes].desc, descs[i]);
}

/* The missing node of the expectation (node_missing, node_up 0). */
static struct fab_snap *expectation(const struct fab_snap *s)
{
	struct fab_snap *e = fabsnap_copy(s, NULL, NULL);
	struct fab_node *gone = e ? fabsnap_add(e, 0xdead00000000ull, 1) : NULL;

	if (!gone)
		exit(2);
	gone->type = FAB_CA;
	strcpy(gone->desc, "gone \"hca\"");
	return e;
}

/* Everything metrics.prom shows, made up around s's nodes and links. */
static void decorate(struct fab_snap *s, uint64_t with_seed)
{
	struct fab_snap *e;

	seed = with_seed;
	for (size_t i = 0; i < s->nnodes; i++) {
		struct fab_node *n = &s->nodes[i];

		n->pma_capmask = (uint16_t)(rnd() % 3 == 0 ? 0 : rnd() % 2 ?
			IB_PM_EXT_WIDTH_SUPPORTED : IB_PM_EXT_WIDTH_NOIETF_SUP);
		for (unsigned p = n->type == FAB_SWITCH ? 0 : 1; p <= n->nports; p++)
			set_port(&n->ports[p], p == 0);
		if (n->type == FAB_SWITCH && i % 3 != 2)
			set_lft(n, (unsigned)s->nnodes * 2);
	}
	odd_descs(s);
	s->time = (struct timespec){ 1790000000, 987654321 };
	s->duration_ms = 1234;
	s->ok = true;
	fabsnap_count(s);
	s->stats.mads = 12345;
	s->stats.timeouts = 6;
	s->stats.unreachable = 1;
	e = expectation(s);
	problems_judge(NULL, s, e);
	fabsnap_put(e);
}

/* gen-fabric.py's tree: leaves x per_leaf HCAs, spines, every leaf to
 * every spine. */
static struct fab_snap *fat_tree(unsigned leaves, unsigned spines, unsigned per_leaf)
{
	struct fab_snap *s = fabsnap_new();
	unsigned hcas = leaves * per_leaf;

	for (unsigned l = 0; l < leaves; l++) {
		struct fab_node *n = fabsnap_add(s, 0x200000 + l, per_leaf + spines);

		n->type = FAB_SWITCH;
		snprintf(n->desc, sizeof(n->desc), "leaf switch %u", l + 1);
	}
	for (unsigned sp = 0; sp < spines; sp++) {
		struct fab_node *n = fabsnap_add(s, 0x210000 + sp, leaves);

		n->type = FAB_SWITCH;
		snprintf(n->desc, sizeof(n->desc), "spine switch %u", sp + 1);
	}
	for (unsigned h = 0; h < hcas; h++) {
		struct fab_node *n = fabsnap_add(s, 0x100000 + 2 * h, 1);

		n->type = FAB_CA;
		snprintf(n->desc, sizeof(n->desc), "bench hca %u", h + 1);
		n->ports[1].port_guid = n->guid + 1;
		n->ports[1].lid = (uint16_t)(100 + h);
	}
	for (unsigned h = 0; h < hcas; h++)
		link_ports(fabsnap_find(s, 0x200000 + h / per_leaf), 1 + h % per_leaf,
			   fabsnap_find(s, 0x100000 + 2 * h), 1);
	for (unsigned l = 0; l < leaves; l++)
		for (unsigned sp = 0; sp < spines; sp++)
			link_ports(fabsnap_find(s, 0x200000 + l), per_leaf + 1 + sp,
				   fabsnap_find(s, 0x210000 + sp), l + 1);
	return s;
}

/* The text as fabric/metrics.prom gives it: read through a cursor in
 * reads of step bytes. */
static char *metrics_text_by(struct fab_snap *s, size_t step, size_t *len)
{
	struct fabmetrics_cursor *c = fabmetrics_open(s);
	uint64_t size = 0;
	char *text;
	ssize_t n;

	CHECK_INT(fabmetrics_size(s, &size), 0);
	text = malloc(size + step + 1);
	if (!c || !text)
		exit(2);
	*len = 0;
	while ((n = fabmetrics_read(c, text + *len, step, *len)) > 0)
		*len += (size_t)n;
	CHECK_INT(n, 0);
	CHECK_INT(*len, size);
	fabmetrics_close(c);
	return text;
}

static char *metrics_text(struct fab_snap *s, size_t *len)
{
	return metrics_text_by(s, 1u << 20, len);
}

static const struct {
	const char *name; /* a fixture, or "fat-tree-1k" */
	size_t len;
	uint64_t sum;
} want[] = {
	{ "two-switch.txt", 59590, 0xf72b1c63a8d48dd2ull },
	{ "two-switch-full.txt", 50060, 0xa194a692f254dea6ull },
	{ "two-switch-group.txt", 60347, 0xace5663406e801abull },
	{ "dual-port-hca.txt", 38193, 0xd8b70a9dc4ac1f40ull },
	/* Since issue 33: the group routing (umadfs_credit_loops,
	 * umadfs_route_pairs) in every text, and the trees' random tables
	 * make route_unbalanced and credit_loop lines of umadfs_problem. */
	{ "fat-tree.txt", 118494, 0x2394177d7d4ddfb6ull },
	{ "fat-tree-1k", 7849624, 0x39e2ba3f7833b95bull },
};

static struct fab_snap *fabric(const char *name)
{
	struct fab_snap *s = NULL;
	char why[256];
	size_t len;
	char *text;

	if (!strcmp(name, "fat-tree-1k"))
		return fat_tree(40, 12, 24);
	text = fixture_read(fixtures, name, &len);
	CHECK_INT(topofile_parse(text, len, &s, why, sizeof(why)), 0);
	free(text);
	return s;
}

static void test_sums(void)
{
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct fab_snap *s = fabric(want[i].name);
		size_t len;
		char *text;
		uint64_t sum;

		if (!s)
			continue;
		decorate(s, 0x5eed0000 + i);
		text = metrics_text(s, &len);
		sum = fnv1a(text, len);
		printf("%s: %zu bytes, sum 0x%016" PRIx64 "\n", want[i].name, len, sum);
		CHECK_INT(len, want[i].len);
		CHECK(sum == want[i].sum);
		free(text);
		fabsnap_put(s);
	}
}

/* Reads of every size and at any offset give the text's bytes there: the
 * kernel's reads of a direct_io open, tail -c, a second reader. */
static void test_reads(const char *name, bool small_steps)
{
	static const size_t steps[] = { 1, 7, 4096, 65536, 131072 + 13 };
	struct fab_snap *s = fabric(name);
	struct fabmetrics_cursor *a, *b;
	size_t len, got;
	char *whole, *text, buf[70000];

	if (!s)
		return;
	decorate(s, 0x5eed0000);
	whole = metrics_text(s, &len);
	for (size_t i = small_steps ? 0 : 2; i < sizeof(steps) / sizeof(steps[0]); i++) {
		text = metrics_text_by(s, steps[i], &got);
		CHECK(got == len && !memcmp(text, whole, len));
		free(text);
	}
	a = fabmetrics_open(s);
	b = fabmetrics_open(s);
	seed = 42;
	for (int i = 0; a && b && i < 300; i++) {
		/* offsets anywhere, around the 32 KiB chunks' ends too */
		uint64_t off = i % 3 ? rnd() % (len + 100) :
			(uint64_t)(rnd() % (len / 32768 + 1)) * 32768 + rnd() % 3000 - 1500;
		size_t size = rnd() % sizeof(buf);
		ssize_t n = fabmetrics_read(i % 2 ? a : b, buf, size, off);
		size_t expect = off >= len ? 0 : len - off < size ? len - off : size;

		CHECK_INT(n, expect);
		CHECK(n <= 0 || !memcmp(buf, whole + off, (size_t)n));
	}
	fabmetrics_close(a);
	fabmetrics_close(b);
	free(whole);
	fabsnap_put(s);
}

/* A switch and a CA, their link: stable labels on the port's series (a
 * switch's port 0 too), the peer on link_info's. */
static void test_labels(void)
{
	struct fab_snap *s = switch_and_hca();
	size_t len;
	char *text;

	text = metrics_text(s, &len);
	text[len] = '\0';
	CHECK(strstr(text, "umadfs_port_state{guid=\"0x0000000000200000\","
		     "node_desc=\"switch \\\"one\\\"\",node_type=\"switch\",port=\"1\"} 4\n"));
	CHECK(strstr(text, "umadfs_port_state{guid=\"0x0000000000200000\","
		     "node_desc=\"switch \\\"one\\\"\",node_type=\"switch\",port=\"0\"} 0\n"));
	CHECK(strstr(text, "umadfs_link_info{guid=\"0x0000000000200000\","
		     "node_desc=\"switch \\\"one\\\"\",node_type=\"switch\",port=\"1\","
		     "peer_guid=\"0x0000000000100000\",peer_port=\"1\","
		     "peer_node_desc=\"hca\"} 1\n"));
	CHECK(!strstr(text, "umadfs_link_info{guid=\"0x0000000000200000\",node_desc"
		      "=\"switch \\\"one\\\"\",node_type=\"switch\",port=\"2\""));
	free(text);
	fabsnap_put(s);
}

/* The series (lines not starting with #) of text, and whether every
 * family of it (its # TYPE lines) is one of names. */
static size_t series(const char *text, size_t len, const char *const *names,
		     bool *only)
{
	size_t n = 0;

	*only = true;
	for (const char *l = text; l < text + len; l = strchr(l, '\n') + 1) {
		bool known = false;

		n += *l != '#';
		if (strncmp(l, "# TYPE umadfs_", 14))
			continue;
		for (size_t i = 0; names[i]; i++)
			known |= !strncmp(l + 14, names[i], strlen(names[i])) &&
				 l[14 + strlen(names[i])] == ' ';
		*only &= known;
	}
	return n;
}

/* -o fabric_metrics=: each group alone shows its families only, and the
 * groups' series add up to all's; names refused. */
static void test_groups(void)
{
	static const char *const families[][23] = {
		{ "sweep_duration_seconds", "sweep_ok", "sweep_timestamp_seconds",
		  "sweep_nodes", "sweep_switches", "sweep_links", "sweep_mads",
		  "sweep_timeouts", "sweep_unreachable", NULL },
		{ "problem", "problems", NULL },
		{ "node_up", NULL },
		{ "port_state", "port_physical_state", "port_rate_bytes_per_second", NULL },
		{ "link_info", NULL },
		{ "port_routed_lids", NULL },
		{ "credit_loops", "route_pairs", NULL },
		{ "port_symbol_error_total", "port_link_error_recovery_total",
		  "port_link_downed_total", "port_errors_received_total",
		  "port_receive_remote_physical_errors_total",
		  "port_receive_switch_relay_errors_total",
		  "port_discards_transmitted_total",
		  "port_constraint_errors_transmitted_total",
		  "port_constraint_errors_received_total",
		  "port_local_link_integrity_errors_total",
		  "port_excessive_buffer_overrun_errors_total",
		  "port_vl15_dropped_total", NULL },
		{ "port_transmit_wait_total", NULL },
		{ "port_data_transmitted_bytes_total", "port_data_received_bytes_total",
		  "port_packets_transmitted_total", "port_packets_received_total",
		  "port_unicast_packets_transmitted_total",
		  "port_unicast_packets_received_total",
		  "port_multicast_packets_transmitted_total",
		  "port_multicast_packets_received_total", NULL },
		{ "port_local_physical_errors_total", "port_malformed_packet_errors_total",
		  "port_buffer_overrun_errors_total", "port_dlid_mapping_errors_total",
		  "port_vl_mapping_errors_total", "port_looping_errors_total",
		  "port_inactive_discards_total", "port_neighbor_mtu_discards_total",
		  "port_switch_lifetime_limit_discards_total",
		  "port_switch_hoq_lifetime_limit_discards_total",
		  "port_vl_transmit_wait_total", NULL },
		{ "partition_members", NULL },
		{ "mcast_group_members", NULL },
	};
	struct fab_snap *s = fabric("fat-tree.txt");
	size_t len, sum = 0, all;
	char *text;
	bool only;

	decorate(s, 7);
	CHECK_INT((int)(sizeof(families) / sizeof(families[0])), PROM_GROUPS);
	for (unsigned g = 0; g < PROM_GROUPS; g++) {
		struct fab_snap *again = fabric("fat-tree.txt");

		decorate(again, 7); /* each snapshot's index is made once */
		CHECK_INT(fabmetrics_configure(promlines_group_name(g)), 0);
		text = metrics_text(again, &len);
		sum += series(text, len, families[g], &only);
		CHECK(only);
		free(text);
		fabsnap_put(again);
	}
	CHECK_INT(fabmetrics_configure("state+all"), 0);
	text = metrics_text(s, &len);
	all = series(text, len, families[0], &only);
	CHECK_INT(sum, all);
	free(text);
	CHECK_INT(fabmetrics_configure("state+bogus"), -EINVAL);
	CHECK_INT(fabmetrics_configure(""), -EINVAL);
	CHECK_INT(fabmetrics_configure("state+"), -EINVAL);
	CHECK_INT(fabmetrics_configure("state,errors"), -EINVAL);
	CHECK(fabmetrics_is_group("xmit_wait") && fabmetrics_is_group("details") &&
	      fabmetrics_is_group("all") &&
	      !fabmetrics_is_group("port_state") && !fabmetrics_is_group(""));
	CHECK_INT(fabmetrics_configure("all"), 0);
	fabsnap_put(s);
}

/* The detail counters: in the details group only (not in all, the
 * default), a line per detail of each port that has it, one per VL of
 * its OperationalVLs; none before a port's attribute is in. */
static void test_details(void)
{
	struct fab_snap *s = fabric("two-switch.txt");
	struct fab_port *p;
	size_t len;
	char *text;

	decorate(s, 11);
	p = &s->nodes[0].ports[1];
	p->has_info = true;
	p->oper_vls = 3; /* VL0-3 */
	mad_set_field(p->rcv_det, 0, IB_PC_RCV_LOOPING_ERR_F, 9);
	mad_set_field(p->vl_wait, 0, IB_PC_PORT_VL_XMIT_WAIT2_F, 777);
	mad_set_field(p->vl_wait, 0, IB_PC_PORT_VL_XMIT_WAIT3_F, 65535);
	mad_set_field(p->vl_wait, 0, IB_PC_PORT_VL_XMIT_WAIT4_F, 5); /* past VL3 */
	p->det_has = 1u << PMADET_RCV | 1u << PMADET_VL;
	CHECK_INT(fabmetrics_configure("details"), 0);
	text = metrics_text(s, &len);
	text[len] = '\0';
	CHECK(strstr(text, "port=\"1\"} 9\n") && strstr(text, "umadfs_port_looping_errors_total{"));
	CHECK(strstr(text, ",port=\"1\",vl=\"2\"} 777\n"));
	CHECK(strstr(text, ",port=\"1\",vl=\"3\"} 65535\n"));
	CHECK(!strstr(text, "vl=\"4\""));
	CHECK(!strstr(text, "inactive_discards")); /* no port has it */
	CHECK(!strstr(text, "umadfs_port_state"));
	free(text);
	fabsnap_put(s);
	s = fabric("two-switch.txt");
	decorate(s, 11);
	s->nodes[0].ports[1].det_has = 1u << PMADET_VL;
	CHECK_INT(fabmetrics_configure("all"), 0);
	text = metrics_text(s, &len);
	text[len] = '\0';
	CHECK(!strstr(text, "vl_transmit_wait") && strstr(text, "umadfs_port_state"));
	free(text);
	fabsnap_put(s);
}

int main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "tests/unit/ibnetdiscover";
	test_sums();
	test_reads("two-switch.txt", true);
	test_reads("fat-tree-1k", false);
	test_labels();
	test_groups();
	test_details();
	CHECK_DONE();
}
