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
#include "umadfs/fabric/snapshot/mcast.h"

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

/* A group 0xc000 of n members, GUIDs guid[0..n). */
static struct fab_mcast *group_of(const uint64_t *guid, unsigned n)
{
	struct fab_mcast *m = fabmcast_new(1, n);

	CHECK(m != NULL);
	m->groups[0] = (struct fab_mgroup){ .mgid = { 0xff, 0x12 }, .mlid = 0xc000, .n = n };
	for (unsigned i = 0; i < n; i++)
		m->members[i] = (struct fab_mcmember){ .prefix = 0xfe80ull << 48, .guid = guid[i],
						       .join_state = FAB_JOIN_FULL };
	return m;
}

static unsigned joins, leaves;
static uint64_t last_guid;

static void count_diff(void *ctx, bool join, const struct fab_mgroup *g,
		       const struct fab_mcmember *m)
{
	(void)ctx;
	(void)g;
	*(join ? &joins : &leaves) += 1;
	last_guid = m->guid;
}

/* The members come and gone between two snapshots' groups, a GID's
 * text, a table's entries by position. */
static void test_mcast(void)
{
	static const uint64_t a[] = { 1, 2, 3 }, b[] = { 2, 3, 4, 5 };
	struct fab_mcast *ma = group_of(a, 3), *mb = group_of(b, 4);
	struct fab_mft *t = fabmft_new(1, 3, 0);
	char text[FAB_GID_TEXT];

	fabmcast_diff(ma, mb, count_diff, NULL);
	CHECK(joins == 2 && leaves == 1);
	CHECK(!fabmcast_same(ma, mb) && fabmcast_same(ma, ma));
	mb->truncated = true;                  /* not whole: no event */
	fabmcast_diff(ma, mb, count_diff, NULL);
	CHECK(joins == 2 && leaves == 1);
	fabmcast_member_gid_text(text, &ma->members[2]);
	CHECK(strcmp(text, "fe80:0000:0000:0000:0000:0000:0000:0003") == 0);
	CHECK(strcmp(fabmcast_join_name(FAB_JOIN_SENDONLY), "send-only") == 0);
	CHECK(t != NULL);
	t->block[0] = 1;                      /* MLIDs 0xc020-0xc03f */
	t->mask[(0x21 - 0x20) * 3 + 2] = 1u << 3; /* 0xc021: port 2 x 16 + 3 */
	CHECK(fabmft_has(t, 0xc021, 35) && !fabmft_has(t, 0xc021, 3));
	CHECK(!fabmft_has(t, 0xc001, 35) && fabmft_mask(t, 0xc021, 2) == 8);
	fabmft_put(t);
	fabmcast_put(ma);
	fabmcast_put(mb);
}

int main(void)
{
	test_hash();
	test_texts();
	test_make_ahead();
	test_quote();
	test_mcast();
	CHECK_DONE();
}
