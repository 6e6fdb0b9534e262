/* fabric/metrics.prom's text, by its length and checksum (FNV-1a, 64
 * bits), on the test fabrics (the ibnetdiscover fixtures of
 * tests/unit/ibnetdiscover/) and a generated fat tree of 1,012 nodes (the
 * bench's, gen-fabric.py's default), each given PortInfos, counters,
 * forwarding tables, descriptions to escape and problems by a
 * pseudo-random generator of fixed seed.  The sums were taken from the
 * text as fabtext.c made it whole (commit 11ed175), so that any other way
 * of making it must give the same bytes.  argv[1]: the fixtures'
 * directory. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "check.h"
#include "fixture.h"
#include "snapbuild.h"
#include "umadfs/fabric/files/fabtext.h"
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
	n->lft = malloc(top + 1u);
	if (!n->lft)
		exit(2);
	n->lft_top = (uint16_t)top;
	for (unsigned lid = 0; lid <= top; lid++)
		n->lft[lid] = (uint8_t)(rnd() % 11 ? rnd() % (n->nports + 1u) : 255);
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

/* The text as fabric/metrics.prom gives it. */
static char *metrics_text(struct fab_snap *s, size_t *len)
{
	bool owned;
	const char *text = fabtext_get(s, FAB_TEXT_METRICS, len, &owned);
	char *copy = malloc(*len + 1);

	if (!text || !copy)
		exit(2);
	memcpy(copy, text, *len);
	if (owned)
		fabtext_free((char *)text, *len);
	return copy;
}

static const struct {
	const char *name; /* a fixture, or "fat-tree-1k" */
	size_t len;
	uint64_t sum;
} want[] = {
	{ "two-switch.txt", 59157, 0x04249aa78a1da3a5ull },
	{ "two-switch-full.txt", 49667, 0x71e9ababd90dfd11ull },
	{ "two-switch-group.txt", 59994, 0x85ede82be6905117ull },
	{ "dual-port-hca.txt", 37840, 0xe350dab11dfe7049ull },
	{ "fat-tree.txt", 117706, 0x990c600b9d282aafull },
	{ "fat-tree-1k", 7845176, 0x15fe4959e1c46e19ull },
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

int main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "tests/unit/ibnetdiscover";
	test_sums();
	CHECK_DONE();
}
