/* Fabric snapshots and their texts: the GUID hash through growth, link
 * counts, the quoting rule, and topology/links of a two-node snapshot. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "snapbuild.h"
#include "umadfs/fabric/files/fabtext.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/mad/ibcodes.h"

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
	struct fab_snap *s = fabsnap_new();
	struct fab_node *sw, *ca;
	const char *text;
	size_t len;
	bool owned;

	sw = fabsnap_add(s, 0x200000, 8);
	sw->type = FAB_SWITCH;
	strcpy(sw->desc, "switch \"one\"");
	ca = fabsnap_add(s, 0x100000, 1);
	sw = fabsnap_find(s, 0x200000); /* the array may have moved */
	ca->type = FAB_CA;
	strcpy(ca->desc, "hca");
	ca->ports[1].port_guid = 0x100001;
	ca->ports[1].lid = 3;
	for (unsigned p = 0; p <= 8; p++)
		sw->ports[p].has_info = true;
	sw->ports[0].lid = sw->ports[1].lid = 2; /* a switch port: port 0's */
	ca->ports[1].has_info = true;
	ca->ports[1].width = sw->ports[1].width = IB_LINK_WIDTH_ACTIVE_4X;
	ca->ports[1].speed = sw->ports[1].speed = IB_LINK_SPEED_ACTIVE_2_5; /* SDR */
	ca->ports[1].state = sw->ports[1].state = IB_LINK_ACTIVE;
	link_ports(sw, 1, ca, 1);
	fabsnap_count(s);
	CHECK_INT(s->stats.links, 1);
	CHECK_INT(s->stats.switches, 1);
	CHECK_INT(s->stats.cas, 1);
	CHECK_INT(s->stats.ports, 9);

	text = fabtext_get(s, FAB_TEXT_LINKS, &len, &owned);
	CHECK(text && !owned);
	CHECK_STR(text, "guid=0x0000000000200000 port=1 node_desc=\"switch \\\"one\\\"\" "
		  "peer_guid=0x0000000000100000 peer_port=1 peer_node_desc=\"hca\" "
		  "width=4x speed=SDR state=Active\n");
	text = fabtext_get(s, FAB_TEXT_TOPOLOGY, &len, &owned);
	CHECK(text && strstr(text, "Switch\t8 \"S-0000000000200000\"\t\t# "
			     "\"switch \"one\"\" base port 0 lid 2 lmc 0\n"
			     "[1]\t\"H-0000000000100000\"[1](100001) \t\t# \"hca\" lid 3 4xSDR\n"));
	CHECK(strstr(text, "Ca\t1 \"H-0000000000100000\"\t\t# \"hca\"\n"
		     "[1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 3 lmc 0 "
		     "\"switch \"one\"\" lid 2 4xSDR\n"));
	text = fabtext_get(s, FAB_TEXT_METRICS, &len, &owned);
	CHECK(text && !owned); /* kept: it is small */
	/* Stable labels on the port's series, the peer on link_info's. */
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
	CHECK_INT(fabtext_size(s, FAB_TEXT_METRICS), len);
	fabsnap_put(s);
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
	test_quote();
	CHECK_DONE();
}
