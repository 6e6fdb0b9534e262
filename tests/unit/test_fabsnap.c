/* Fabric snapshots and their texts: the GUID hash through growth, link
 * counts, the quoting rule, topology/links of a two-node snapshot and
 * those made ahead for the next
 * (its metrics.prom: test_metrics.c). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "snapbuild.h"
#include "umadfs/fabric/files/fabtext.h"
#include "umadfs/fabric/snapshot/fabsnap.h"

static void test_hash(void)
{
	struct fab_snap *s = fabsnap_new();

	for (uint64_t g = 1; g <= 5000; g++)
		CHECK(fabsnap_add(s, g * 0x100000ull, 2) != NULL);
	for (uint64_t g = 1; g <= 5000; g++) {
		struct fab_node *n = fabsnap_find(s, g * 0x100000ull);

		CHECK(n && n->guid == g * 0x100000ull);
	}
	CHECK(fabsnap_find(s, 0x12345) == NULL);
	fabsnap_put(s);
}

static void test_texts(void)
{
	struct fab_snap *s = switch_and_hca();
	const char *text;
	size_t len;

	CHECK_INT(s->stats.links, 1);
	CHECK_INT(s->stats.switches, 1);
	CHECK_INT(s->stats.cas, 1);
	CHECK_INT(s->stats.ports, 9);

	text = fabtext_get(s, FAB_TEXT_LINKS, &len);
	CHECK(text != NULL);
	CHECK_STR(text, "guid=0x0000000000200000 port=1 node_desc=\"switch \\\"one\\\"\" "
		  "peer_guid=0x0000000000100000 peer_port=1 peer_node_desc=\"hca\" "
		  "width=4x speed=SDR state=Active\n");
	text = fabtext_get(s, FAB_TEXT_TOPOLOGY, &len);
	CHECK(text && strstr(text, "Switch\t8 \"S-0000000000200000\"\t\t# "
			     "\"switch \"one\"\" base port 0 lid 2 lmc 0\n"
			     "[1]\t\"H-0000000000100000\"[1](100001) \t\t# \"hca\" lid 3 4xSDR\n"));
	CHECK(strstr(text, "Ca\t1 \"H-0000000000100000\"\t\t# \"hca\"\n"
		     "[1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 3 lmc 0 "
		     "\"switch \"one\"\" lid 2 4xSDR\n"));
	fabsnap_put(s);
}

/* A new snapshot's texts made ahead are those the one before had made
 * (read), no other, and equal to the ones made as read. */
static void test_make_ahead(void)
{
	struct fab_snap *old = switch_and_hca(), *s = switch_and_hca(), *t = switch_and_hca();
	const char *a, *b;
	size_t la, lb;

	CHECK(fabtext_get(old, FAB_TEXT_LINKS, &la) != NULL);
	fabtext_make_ahead(s, old);
	for (int k = 0; k < FAB_TEXT_COUNT; k++)
		CHECK((s->texts[k].buf != NULL) == (k == FAB_TEXT_LINKS));
	a = fabtext_get(s, FAB_TEXT_LINKS, &la);
	b = fabtext_get(t, FAB_TEXT_LINKS, &lb);
	CHECK(a && b && la == lb && memcmp(a, b, la) == 0);
	fabtext_make_ahead(t, NULL); /* no snapshot before: nothing */
	CHECK(t->texts[FAB_TEXT_TOPOLOGY].buf == NULL);
	fabsnap_put(t);
	fabsnap_put(s);
	fabsnap_put(old);
}

static void test_quote(void)
{
	char b[64];

	CHECK_INT(fabsnap_quote(b, sizeof(b), "a\"b\\c\x01"), 13);
	CHECK_STR(b, "\"a\\\"b\\\\c\\x01\"");
}

int main(void)
{
	test_hash();
	test_texts();
	test_make_ahead();
	test_quote();
	CHECK_DONE();
}
