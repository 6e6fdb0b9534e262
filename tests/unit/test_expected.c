/* The expected topology's parser (expected_parse): real ibnetdiscover
 * output (tests/unit/ibnetdiscover/, made by `ibnetdiscover`, `-f` and
 * `-g` under ibsim on tests/topologies/two-switch.net and
 * dual-port-hca.net, and on `tests/bench/gen-fabric.py --leaves 4
 * --spines 2 --hcas-per-leaf 3`), the round trip through fabric/topology's
 * formatter, ibsim-style names, link comments, and bad texts with their
 * reasons.  argv[1]: the fixtures' directory. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "umadfs/fabric/files/fabtext.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/topofile.h"
#include "umadfs/mad/ibcodes.h"

static const char *fixtures;

static char *slurp(const char *name, size_t *len)
{
	return fixture_read(fixtures, name, len);
}

static struct fab_snap *parse_ok(const char *text, size_t len)
{
	struct fab_snap *s = NULL;
	char why[256] = "";
	int r = topofile_parse(text, len, &s, why, sizeof(why));

	if (r != 0)
		fprintf(stderr, "refused: %d %s\n", r, why);
	CHECK_INT(r, 0);
	return s;
}

static struct fab_snap *parse_str(const char *text)
{
	return parse_ok(text, strlen(text));
}

/* The port at the other end of guid's port p, checked to point back. */
static const struct fab_port *peer_of(const struct fab_snap *s, uint64_t guid,
				      unsigned p, uint64_t *peer_guid)
{
	const struct fab_node *n = fabsnap_find(s, guid), *pn = NULL;
	const struct fab_port *peer;

	if (!n || p > n->nports)
		return NULL;
	peer = fabsnap_peer(s, &n->ports[p], &pn);
	if (!peer)
		return NULL;
	CHECK(peer->peer_guid == guid && peer->peer_port == p);
	*peer_guid = pn->guid;
	return peer;
}

static bool linked(const struct fab_snap *s, uint64_t a, unsigned pa,
		   uint64_t b, unsigned pb)
{
	uint64_t g = 0;
	const struct fab_port *peer = peer_of(s, a, pa, &g);
	const struct fab_node *nb = fabsnap_find(s, b);

	return peer && g == b && nb && peer == &nb->ports[pb];
}

static void test_two_switch(const char *file)
{
	size_t len;
	char *text = slurp(file, &len);
	struct fab_snap *s = parse_ok(text, len);
	const struct fab_node *sw1, *sw2, *hca1;

	if (!s)
		goto out;
	CHECK_INT(s->nnodes, 5);
	CHECK_INT(s->stats.switches, 2);
	CHECK_INT(s->stats.cas, 3);
	CHECK_INT(s->stats.links, 5);
	CHECK(s->ok);
	CHECK(s->local_guid == 0x100000 && s->local_port_guid == 0x100001);
	sw1 = fabsnap_find(s, 0x200000);
	sw2 = fabsnap_find(s, 0x200001);
	hca1 = fabsnap_find(s, 0x100000);
	CHECK(sw1 && sw2 && hca1);
	if (!sw1 || !sw2 || !hca1)
		goto out;
	CHECK_INT(sw1->type, FAB_SWITCH);
	CHECK_INT(sw1->nports, 8);
	CHECK_STR(sw1->desc, "umadfs test switch one");
	CHECK(sw1->sys_guid == 0x200000);
	CHECK(sw1->ports[0].port_guid == 0x200000);
	CHECK_INT(sw1->ports[0].lid, 2);
	CHECK_INT(hca1->type, FAB_CA);
	CHECK_INT(hca1->nports, 1);
	CHECK_STR(hca1->desc, "umadfs-node1 HCA-1");
	CHECK(hca1->ports[1].port_guid == 0x100001);
	CHECK_INT(hca1->ports[1].lid, 3);
	/* a switch port's LID: the one its peers' lines give (port 0's) */
	CHECK_INT(sw1->ports[1].lid, 2);
	CHECK_INT(sw1->ports[7].lid, 2);
	CHECK_INT(sw2->ports[8].lid, 4);
	CHECK(linked(s, 0x200000, 1, 0x100000, 1));
	CHECK(linked(s, 0x200000, 2, 0x100002, 1));
	CHECK(linked(s, 0x200000, 7, 0x200001, 7));
	CHECK(linked(s, 0x200000, 8, 0x200001, 8));
	CHECK(linked(s, 0x200001, 1, 0x100004, 1));
	CHECK(!sw1->ports[3].peer_guid && !sw1->ports[3].state);
	/* 4xSDR, Active, LinkUp at both ends of every link */
	for (size_t i = 0; i < s->nnodes; i++)
		for (unsigned p = 1; p <= s->nodes[i].nports; p++) {
			const struct fab_port *fp = &s->nodes[i].ports[p];

			if (!fp->peer_guid)
				continue;
			CHECK_INT(fp->width, 2);
			CHECK_INT(fp->speed, 1);
			CHECK_INT(fp->ext_speed, 0);
			CHECK_INT(fp->state, IB_LINK_ACTIVE);
			CHECK_INT(fp->phys_state, IB_PORT_PHYS_STATE_LINKUP);
		}
out:
	fabsnap_put(s);
	free(text);
}

static void test_fixtures(void)
{
	size_t len;
	char *text;
	struct fab_snap *s;

	test_two_switch("two-switch.txt");
	test_two_switch("two-switch-full.txt");
	test_two_switch("two-switch-group.txt");

	text = slurp("dual-port-hca.txt", &len);
	s = parse_ok(text, len);
	if (s) {
		CHECK_INT(s->stats.links, 3);
		CHECK(linked(s, 0x200000, 1, 0x100000, 1));
		CHECK(linked(s, 0x200000, 2, 0x100000, 2));
		CHECK(linked(s, 0x200000, 3, 0x100003, 1));
		CHECK(fabsnap_find(s, 0x100000)->ports[2].port_guid == 0x100002);
	}
	fabsnap_put(s);
	free(text);

	/* gen-fabric.py: leaf L (0x200000 + L - 1) port 4 + S to spine S
	 * (0x200003 + S) port L. */
	text = slurp("fat-tree.txt", &len);
	s = parse_ok(text, len);
	if (s) {
		CHECK_INT(s->stats.switches, 6);
		CHECK_INT(s->stats.cas, 12);
		CHECK_INT(s->stats.links, 20);
		for (unsigned leaf = 1; leaf <= 4; leaf++)
			for (unsigned spine = 1; spine <= 2; spine++)
				CHECK(linked(s, 0x200000 + leaf - 1, 3 + spine,
					     0x200003 + spine, leaf));
		CHECK_STR(fabsnap_find(s, 0x200004)->desc, "spine switch 1");
	}
	fabsnap_put(s);
	free(text);
}

/* text written in pieces of step bytes to a parser, each time from a new
 * copy of all that was written (a writer's buffer moves as it grows), then
 * ended: 0 with *out, or the refusal; *at_feed says it came before the
 * end. */
static int parse_fed(const char *text, size_t len, size_t step,
		     struct fab_snap **out, char *why, size_t cap, bool *at_feed)
{
	struct topofile_parser *p = topofile_parser_new();
	char *copy = NULL;
	size_t have = 0;
	int r = p ? 0 : -ENOMEM;

	*out = NULL;
	*at_feed = false;
	do {
		have = len - have > step ? have + step : len;
		free(copy);
		copy = malloc(have + 1);
		if (!copy || !p) {
			r = -ENOMEM;
			break;
		}
		memcpy(copy, text, have);
		if (have < len) {
			r = topofile_parser_feed(p, copy, have, why, cap);
			*at_feed = r != 0;
		} else {
			r = topofile_parser_finish(p, copy, have, out, why, cap);
		}
	} while (!r && have < len);
	free(copy);
	topofile_parser_free(p);
	return r;
}

/* a and b hold the same nodes and links (what the parser keeps). */
static void check_same(const struct fab_snap *a, const struct fab_snap *b)
{
	CHECK_INT(a->nnodes, b->nnodes);
	CHECK_INT(a->stats.links, b->stats.links);
	CHECK(a->local_guid == b->local_guid);
	for (size_t i = 0; i < a->nnodes; i++) {
		const struct fab_node *na = &a->nodes[i];
		const struct fab_node *nb = fabsnap_find(b, na->guid);

		CHECK(nb != NULL);
		if (!nb)
			continue;
		CHECK_INT(na->type, nb->type);
		CHECK_INT(na->nports, nb->nports);
		CHECK_STR(na->desc, nb->desc);
		CHECK(na->sys_guid == nb->sys_guid);
		CHECK_INT(na->vendor_id, nb->vendor_id);
		CHECK_INT(na->device_id, nb->device_id);
		for (unsigned p = 0; p <= na->nports; p++) {
			const struct fab_port *pa = &na->ports[p], *pb = &nb->ports[p];

			CHECK(pa->peer_guid == pb->peer_guid);
			CHECK_INT(pa->peer_port, pb->peer_port);
			CHECK_INT(pa->width, pb->width);
			CHECK_INT(pa->speed, pb->speed);
			CHECK_INT(pa->ext_speed, pb->ext_speed);
			CHECK_INT(pa->state, pb->state);
			CHECK_INT(pa->lid, pb->lid);
			if (na->type == FAB_SWITCH && p)
				continue;
			CHECK(pa->port_guid == pb->port_guid);
			CHECK_INT(pa->lmc, pb->lmc);
		}
	}
}

/* What fabric/expected reads (fabric/topology's formatter) parses back to
 * the same topology. */
static void round_trip(struct fab_snap *s)
{
	const char *text;
	struct fab_snap *back;
	size_t len;

	text = fabtext_get(s, FAB_TEXT_TOPOLOGY, &len);
	CHECK(text != NULL);
	if (!text)
		return;
	back = parse_ok(text, len);
	if (back)
		check_same(s, back);
	fabsnap_put(back);
}

/* Every fixture written in pieces of 1, 7 and 4096 bytes reads as the
 * whole text does. */
static void test_fed_in_pieces(void)
{
	const char *files[] = { "two-switch.txt", "two-switch-full.txt",
				"two-switch-group.txt", "dual-port-hca.txt",
				"fat-tree.txt" };
	const size_t steps[] = { 1, 7, 4096 };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t len;
		char *text = slurp(files[i], &len), why[256];
		struct fab_snap *whole = parse_ok(text, len), *fed;
		bool at_feed;

		for (size_t k = 0; whole && k < sizeof(steps) / sizeof(steps[0]); k++) {
			CHECK_INT(parse_fed(text, len, steps[k], &fed, why, sizeof(why),
					    &at_feed), 0);
			if (fed)
				check_same(whole, fed);
			fabsnap_put(fed);
		}
		fabsnap_put(whole);
		free(text);
	}
}

static void test_round_trip(void)
{
	const char *files[] = { "two-switch.txt", "two-switch-group.txt",
				"dual-port-hca.txt", "fat-tree.txt" };

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t len;
		char *text = slurp(files[i], &len);
		struct fab_snap *s = parse_ok(text, len);

		if (s)
			round_trip(s);
		fabsnap_put(s);
		free(text);
	}
}

/* ibsim's own names, with the GUID lines ibnetdiscover writes; a router;
 * a link given from one end only; descriptions with quotes and '#'. */
static void test_names_and_one_end(void)
{
	struct fab_snap *s = parse_str(
		"switchguid=0x10(10)\n"
		"Switch 4 \"sw1\" # \"a \"quoted\" # desc\" enhanced port 0 lid 9 lmc 1\n"
		"[1] \"h1\"[2](22) # \"h one\" lid 7 1xQDR\n"
		"[2][ext 3]\t\"r1\"[1][ext 1] # \"router\" lid 0 12xHDR\n"
		"[4] \"sw1\"[3]\n"
		"\r\n"
		"caguid=0x20\n"
		"Hca 2 \"h1\" # \"h one\"\r\n"
		"rtguid=0x30\n"
		"Rt 1 \"r1\"\n");
	const struct fab_node *sw, *h, *r;

	if (!s)
		return;
	sw = fabsnap_find(s, 0x10);
	h = fabsnap_find(s, 0x20);
	r = fabsnap_find(s, 0x30);
	CHECK(sw && h && r);
	if (!sw || !h || !r)
		goto out;
	CHECK_STR(sw->desc, "a \"quoted\" # desc");
	CHECK_INT(sw->ports[0].lid, 9);
	CHECK_INT(sw->ports[0].lmc, 1);
	CHECK_STR(h->desc, "h one");
	CHECK_INT(r->type, FAB_ROUTER);
	CHECK(linked(s, 0x10, 1, 0x20, 2));
	CHECK(linked(s, 0x10, 2, 0x30, 1));
	CHECK(linked(s, 0x10, 4, 0x10, 3));
	CHECK(!h->ports[1].peer_guid);
	/* the CA's end takes the switch's width and speed, and the port GUID
	 * the switch's line gave */
	CHECK_INT(h->ports[2].width, 1);
	CHECK_INT(h->ports[2].speed, 4);
	CHECK(h->ports[2].port_guid == 0x22);
	CHECK_INT(h->ports[2].lid, 7);
	CHECK_INT(r->ports[1].width, 8);
	CHECK_INT(r->ports[1].ext_speed, 4);
	CHECK_INT(sw->ports[4].width, 0);
	CHECK_INT(s->stats.links, 3);
	round_trip(s);
out:
	fabsnap_put(s);
}

/* A sweep's topology (the default expectation) is what its
 * fabric/topology parses to: a switch, a CA linked at 4xEDR in Init (the
 * expectation says Active), a link the far end does not confirm (left
 * out), counters and PortInfo not kept. */
static void test_topology_of(void)
{
	struct fab_snap *s = fabsnap_new(), *e, *parsed;
	struct fab_node *sw, *ca;
	const char *text;
	size_t len;

	sw = fabsnap_add(s, 0x200000, 4);
	ca = fabsnap_add(s, 0x100000, 2);
	sw = fabsnap_find(s, 0x200000);
	sw->type = FAB_SWITCH;
	ca->type = FAB_CA;
	strcpy(sw->desc, "sw");
	strcpy(ca->desc, "ca \"x\"");
	sw->sys_guid = 0x200000;
	sw->vendor_id = 0x2c9;
	sw->device_id = 0xcf08;
	sw->ports[0].port_guid = 0x200000;
	sw->ports[0].lid = 1;
	ca->ports[1].port_guid = 0x100001;
	ca->ports[1].lid = 2;
	ca->ports[2].port_guid = 0x100002;
	for (unsigned p = 0; p <= 4; p++)
		sw->ports[p].has_info = sw->ports[p].has_counters = true;
	sw->ports[1].basic[10] = 7;
	sw->ports[1].peer_guid = 0x100000;
	sw->ports[1].peer_port = 1;
	ca->ports[1].peer_guid = 0x200000;
	ca->ports[1].peer_port = 1;
	sw->ports[1].state = ca->ports[1].state = 2; /* Init */
	sw->ports[1].width = ca->ports[1].width = IB_LINK_WIDTH_ACTIVE_4X;
	sw->ports[1].ext_speed = ca->ports[1].ext_speed = IB_LINK_SPEED_EXT_ACTIVE_25; /* EDR */
	ca->ports[2].peer_guid = 0x200000; /* the switch says nothing of it */
	ca->ports[2].peer_port = 3;
	s->local_guid = 0x100000;
	s->local_port_guid = 0x100001;
	s->ok = true;
	fabsnap_count(s);
	e = topofile_of_sweep(s);
	CHECK(e != NULL);
	if (!e)
		goto out;
	CHECK_INT(e->stats.links, 1);
	CHECK(linked(e, 0x200000, 1, 0x100000, 1));
	CHECK(!fabsnap_find(e, 0x100000)->ports[2].peer_guid);
	CHECK_INT(fabsnap_find(e, 0x100000)->ports[1].state, 4);
	CHECK(!fabsnap_find(e, 0x200000)->ports[1].has_info);
	CHECK_INT(fabsnap_find(e, 0x200000)->ports[1].basic[10], 0);
	text = fabtext_get(e, FAB_TEXT_TOPOLOGY, &len);
	parsed = text ? parse_ok(text, len) : NULL;
	if (parsed)
		check_same(e, parsed);
	fabsnap_put(parsed);
	fabsnap_put(e);
out:
	fabsnap_put(s);
}

static void test_link_words(void)
{
	static const struct {
		const char *word;
		uint8_t width, speed, ext;
	} cases[] = {
		{ "1xSDR", 1, 1, 0 }, { "4xDDR", 2, 2, 0 }, { "4xQDR", 2, 4, 0 },
		{ "8xFDR", 4, 0, 1 }, { "12xEDR", 8, 0, 2 }, { "2xHDR", 16, 0, 4 },
		{ "4xNDR", 2, 0, 8 }, { "4xXDR", 2, 0, 16 }, { "4xFDR10", 2, 4, 0 },
		{ "4Xedr", 2, 0, 2 }, { "??", 0, 0, 0 }, { "?????", 0, 0, 0 },
		{ "4x???", 2, 0, 0 }, { "??SDR", 0, 1, 0 }, { "4x?", 2, 0, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[256];
		struct fab_snap *s;
		const struct fab_node *n;

		snprintf(text, sizeof(text),
			 "Switch 2 \"S-1\"\n[1] \"H-2\"[1](3) # \"x\" lid 1 %s s=1 w=2\n"
			 "Ca 1 \"H-2\"\n", cases[i].word);
		s = parse_str(text);
		n = s ? fabsnap_find(s, 2) : NULL;
		CHECK(n != NULL);
		if (n) {
			if (n->ports[1].width != cases[i].width ||
			    n->ports[1].speed != cases[i].speed ||
			    n->ports[1].ext_speed != cases[i].ext)
				fprintf(stderr, "%s: got %u %u %u\n", cases[i].word,
					n->ports[1].width, n->ports[1].speed,
					n->ports[1].ext_speed);
			CHECK_INT(n->ports[1].width, cases[i].width);
			CHECK_INT(n->ports[1].speed, cases[i].speed);
			CHECK_INT(n->ports[1].ext_speed, cases[i].ext);
		}
		fabsnap_put(s);
	}
}

/* Texts without a node: blank ones, and the word clear (which only the
 * parser tells from them: fabric/expected refuses the others). */
static void test_empty(void)
{
	static const struct {
		const char *text;
		bool clears;
	} texts[] = {
		{ "", false }, { "\n", false }, { "# only a comment\n\n  \t\n", false },
		{ "\r\n", false }, { "clear\n", true }, { "clear", true },
		{ "# why\n  clear \t\r\n\nclear\n", true },
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct topofile_parser *p = topofile_parser_new();
		struct fab_snap *s = parse_str(texts[i].text), *fed = NULL;
		char why[256];

		CHECK(s && s->nnodes == 0);
		fabsnap_put(s);
		CHECK(p != NULL);
		if (!p)
			continue;
		CHECK_INT(topofile_parser_finish(p, texts[i].text, strlen(texts[i].text),
						 &fed, why, sizeof(why)), 0);
		CHECK(fed && fed->nnodes == 0);
		CHECK(topofile_parser_clears(p) == texts[i].clears);
		fabsnap_put(fed);
		topofile_parser_free(p);
	}
}

#define SW "switchguid=0x1\nSwitch 2 \"S-1\"\n"
#define CA "caguid=0x2\nCa 1 \"H-2\"\n"

static void test_bad(void)
{
	static const struct {
		const char *text, *why;
	} cases[] = {
		{ "hello\n", "line 1 column 1: expected a node line (Switch, Ca, Rt), "
		  "a port line ([N] ...), KEY=VALUE or a # comment" },
		{ "\n\nSwitch 2\n", "line 3 column 9: expected the node's name in "
		  "quotes after its ports" },
		{ "Switch 0 \"S-1\"\n", "line 1 column 8: expected the number of "
		  "ports, 1 to 254" },
		{ "Switch 255 \"S-1\"\n", "line 1 column 8: expected the number of "
		  "ports, 1 to 254" },
		{ "Ca 1 \"H-1\" x\n", "line 1 column 12: unexpected text after the "
		  "node's name" },
		{ "Ca 1 \"H-1\n", "line 1 column 6: a name without its closing '\"'" },
		{ "Ca 1 \"\"\n", "line 1 column 6: an empty name" },
		{ "Ca 1 \"sw1\"\n", "line 1 column 6: no GUID for \"sw1\": name it "
		  "H-<GUID in hex> or give a caguid= line before it" },
		{ "Ca 1 \"H-0\"\n", "line 1 column 6: no GUID for \"H-0\": name it "
		  "H-<GUID in hex> or give a caguid= line before it" },
		{ "Ca 1 \"H-1\"\nCa 1 \"H-01\"\n", "line 2 column 6: GUID "
		  "0x0000000000000001 given twice (line 1)" },
		{ "caguid=0x1\nCa 1 \"a\"\ncaguid=0x2\nCa 1 \"a\"\n", "line 4 "
		  "column 6: the name \"a\" given twice (line 2)" },
		{ "switchguid=0x1\nCa 1 \"H-1\"\n", "line 2 column 1: a Ca line "
		  "after switchguid= (line 1)" },
		{ "vendid=0x2c9\ndevid=0\nvendid=0x2c9\n", "line 3 column 1: a second "
		  "vendid before a node line (the KEY= lines start on line 1)" },
		{ "caguid=0x1\nswitchguid=0x2\n", "line 2 column 1: a second GUID "
		  "line before a node line (the KEY= lines start on line 1)" },
		{ "vendid=0x1000000\n", "line 1 column 8: vendid out of range (24 bits)" },
		{ "devid=x\n", "line 1 column 7: expected a number (0x and hex digits, "
		  "or decimal)" },
		{ "caguid=0\n", "line 1 column 8: a GUID of 0" },
		{ "switchguid=0x1(xyz)\n", "line 1 column 16: expected a GUID of 1 "
		  "to 16 hex digits" },
		{ "switchguid=0x1(12\n", "line 1 column 18: expected ')' after the GUID" },
		{ "sysimgguid=0x1 junk\n", "line 1 column 16: unexpected text after "
		  "the value" },
		{ "foo=1\n", "line 1 column 1: unknown key 'foo=' (vendid, devid, "
		  "sysimgguid, switchguid, caguid, rtguid)" },
		{ "devid=0x1\n", "line 1 column 1: KEY= lines without their node line" },
		{ "devid=0x1\n[1] \"H-2\"[1]\n", "line 2 column 1: a port line where "
		  "the node line of the KEY= of line 1 was expected" },
		{ "devid=0x1\n# c\nfoo\n", "line 3 column 1: expected the node line of "
		  "the KEY= of line 1" },
		{ "[1] \"H-2\"[1]\n", "line 1 column 1: a port line before any node line" },
		{ SW "[x] \"H-2\"[1]\n", "line 3 column 2: expected a port number and ']'" },
		{ SW "[3] \"H-2\"[1]\n", "line 3 column 2: port 3: this node has "
		  "ports 1 to 2" },
		{ SW "[0] \"H-2\"[1]\n", "line 3 column 2: port 0: this node has "
		  "ports 1 to 2" },
		{ SW "[1] \"H-2\"[1]\n[1] \"H-2\"[1]\n", "line 4 column 2: port 1 "
		  "given twice (line 3)" },
		{ SW "[1] H-2[1]\n", "line 3 column 5: expected a node's name in quotes" },
		{ SW "[1] \"H-2\"\n", "line 3 column 10: expected '[' and the peer's "
		  "port number after its name" },
		{ SW "[1] \"H-2\"[a]\n", "line 3 column 11: expected the peer's port "
		  "number and ']'" },
		{ SW "[1] \"H-2\"[255]\n", "line 3 column 11: port 255: ports are 1 "
		  "to 254" },
		{ SW "[1] \"H-2\"[1] x\n", "line 3 column 14: unexpected text after the "
		  "peer's port" },
		{ SW "[1] \"H-2\"[1] # \"desc\n", "line 3 column 16: a description "
		  "without its closing '\"'" },
		{ SW "[1] \"H-2\"[1] # \"d\" lid 1 3xSDR\n", "line 3 column 26: "
		  "unknown link width in '3xSDR' (1x, 2x, 4x, 8x or 12x)" },
		{ SW "[1] \"H-2\"[1] # \"d\" lid 1 4xFOO\n", "line 3 column 26: "
		  "unknown link speed in '4xFOO' (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, "
		  "NDR or XDR)" },
		{ SW "[1] \"H-2\"[1] # \"d\" lid 1 4x\n", "line 3 column 26: '4x': no "
		  "speed after the width" },
		{ SW "[1] \"H-2\"[1]\n", "line 3 column 5: no node is called \"H-2\"" },
		{ SW "[1] \"S-1\"[1]\n", "line 3 column 5: a port linked to itself" },
		{ SW "[1] \"H-2\"[2]\n" CA, "line 3 column 11: port 2: \"H-2\" has "
		  "ports 1 to 1" },
		{ CA "[1](2) \"S-1\"[1] # lid x lmc 0\n" SW, "line 3 column 23: "
		  "expected a number from 0 to 65535 after 'lid'" },
		{ CA "[1](2) \"S-1\"[1] # lid 1 lmc 8\n" SW, "line 3 column 29: "
		  "expected a number from 0 to 7 after 'lmc'" },
		/* a link given differently from its two ends */
		{ SW "[1] \"H-2\"[1]\n" CA "[1] \"S-1\"[2]\n", "line 6 column 5: "
		  "port 1 is linked to \"S-1\"[1] by that node's line" },
		{ SW "[1] \"H-2\"[1]\n[2] \"H-3\"[1]\n" CA "caguid=0x3\nCa 1 \"H-3\"\n"
		  "[1] \"S-1\"[1]\n", "line 9 column 5: port 1 is linked to "
		  "\"S-1\"[2] by that node's line" },
		{ SW "[1] \"H-2\"[1]\n" CA "caguid=0x3\nCa 1 \"H-3\"\n"
		  "[1] \"S-1\"[1]\n", "line 8 column 5: \"S-1\"[1] is linked to "
		  "\"H-2\"[1]" },
		{ "Ca 1 \"H-1\"\n\tx\n", "line 2 column 2: expected a node line (Switch, "
		  "Ca, Rt), a port line ([N] ...), KEY=VALUE or a # comment" },
		{ "Switchy 2 \"S-1\"\n", "line 1 column 1: expected a node line (Switch, "
		  "Ca, Rt), a port line ([N] ...), KEY=VALUE or a # comment" },
		{ "Switch2 \"S-1\"\n", "line 1 column 7: expected the number of ports "
		  "after the node type" },
		{ "Ca 1 \"H\x01\"\n", "line 1 column 8: a control character in a name" },
		{ "clear\nCa 1 \"H-1\"\n", "line 2 column 1: a line after 'clear' (line "
		  "1): the word is a text of its own, with blank lines and comments only" },
		{ "Ca 1 \"H-1\"\n  clear\n", "line 2 column 3: 'clear' in a text with "
		  "node lines: the word is a text of its own, with blank lines and "
		  "comments only" },
		{ "devid=0x1\nclear\n", "line 2 column 1: 'clear' in a text with node "
		  "lines: the word is a text of its own, with blank lines and comments "
		  "only" },
		{ "clearly\n", "line 1 column 1: expected a node line (Switch, Ca, Rt), "
		  "a port line ([N] ...), KEY=VALUE or a # comment" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fab_snap *s = (struct fab_snap *)1;
		char why[256];
		bool at_feed;
		int r = topofile_parse(cases[i].text, strlen(cases[i].text), &s, why,
				       sizeof(why));

		if (r != -EINVAL || strcmp(why, cases[i].why))
			fprintf(stderr, "case %zu: %s", i, cases[i].text);
		CHECK_INT(r, -EINVAL);
		CHECK(s == NULL);
		CHECK_STR(why, cases[i].why);
		/* Written a byte at a time: the same reason. */
		r = parse_fed(cases[i].text, strlen(cases[i].text), 1, &s, why,
			      sizeof(why), &at_feed);
		CHECK_INT(r, -EINVAL);
		CHECK(s == NULL);
		CHECK_STR(why, cases[i].why);
	}
}

/* What is refused as the text is written (the write carrying the line
 * fails) and what only at its end (the close). */
static void test_refused_when(void)
{
	static const struct {
		const char *text;
		size_t len;   /* 0: strlen */
		bool at_feed;
	} cases[] = {
		{ "hello\n", 0, true },
		{ "Ca 1 \"H-1\"\nCa 1 \"H-01\"\n", 0, true },          /* a GUID twice */
		{ SW "[3] \"H-2\"[1]\n", 0, true },                     /* no port 3 */
		{ SW "[1] \"H-2\"[1] # \"d\" lid 1 4xFOO\n", 0, true },   /* a speed */
		{ "Ca 1 \"H-1\"\n#\0", 13, true },          /* a NUL, its line unfinished */
		{ SW "[1] \"H-2\"[1]\n", 0, false },   /* a peer a later line may name */
		{ "devid=0x1\n", 0, false },           /* its node line may follow */
		{ "hello", 0, false },                 /* the last line, unfinished */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct topofile_parser *p = topofile_parser_new();
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].text);
		struct fab_snap *s = NULL;
		char why[256];
		int r;

		CHECK(p != NULL);
		if (!p)
			return;
		r = topofile_parser_feed(p, cases[i].text, len, why, sizeof(why));
		if ((r != 0) != cases[i].at_feed)
			fprintf(stderr, "case %zu: %s\n", i, cases[i].text);
		CHECK((r != 0) == cases[i].at_feed);
		if (!r)
			r = topofile_parser_finish(p, cases[i].text, len, &s, why,
						   sizeof(why));
		CHECK_INT(r, -EINVAL);
		CHECK(s == NULL);
		topofile_parser_free(p);
	}
}

static void test_bytes_and_bounds(void)
{
	struct fab_snap *s = (struct fab_snap *)1;
	char why[256], line[TOPOFILE_LINE_MAX + 2];
	size_t n, cap = 4u << 20, len = 0;
	char *big = malloc(cap);
	int r;

	r = topofile_parse("Ca 1 \"H-1\"\n#\0\n", 14, &s, why, sizeof(why));
	CHECK_INT(r, -EINVAL);
	CHECK_STR(why, "line 2 column 2: a NUL byte");
	memset(line, 'x', sizeof(line));
	line[0] = '#';
	r = topofile_parse(line, sizeof(line), &s, why, sizeof(why));
	CHECK_INT(r, -EINVAL);
	CHECK_STR(why, "line 1 column 4097: a line longer than 4096 bytes");
	r = topofile_parse(line, sizeof(line) - 2, &s, why, sizeof(why));
	CHECK_INT(r, 0);
	fabsnap_put(s);
	/* Only the length is looked at. */
	r = topofile_parse(line, TOPOFILE_TEXT_MAX + 1ull, &s, why, sizeof(why));
	CHECK_INT(r, -EFBIG);
	CHECK_STR(why, "longer than 64 MiB");
	CHECK(s == NULL);

	/* TOPOFILE_NODES_MAX nodes, then one more */
	if (!big)
		return;
	for (unsigned i = 1; i <= TOPOFILE_NODES_MAX + 1; i++)
		len += (size_t)sprintf(big + len, "Ca 1 \"H-%x\"\n", i);
	r = topofile_parse(big, len, &s, why, sizeof(why));
	CHECK_INT(r, -EINVAL);
	CHECK_STR(why, "line 65537 column 1: more than 65536 nodes");
	n = (size_t)(strrchr(big, 'C') - big);
	r = topofile_parse(big, n, &s, why, sizeof(why));
	CHECK_INT(r, 0);
	CHECK_INT(s ? s->nnodes : 0, TOPOFILE_NODES_MAX);
	fabsnap_put(s);
	/* 1028 switches of 254 ports are 262,140 ports; the 1029th is over */
	for (len = 0, n = 1; n <= 1029; n++)
		len += (size_t)sprintf(big + len, "Switch 254 \"S-%zx\"\n", n);
	r = topofile_parse(big, len, &s, why, sizeof(why));
	CHECK_INT(r, -EINVAL);
	CHECK_STR(why, "line 1029 column 1: more than 262144 ports in all");
	free(big);
}

/* A why buffer too small for the reason is cut, never overrun. */
static void test_short_why(void)
{
	struct fab_snap *s;
	char why[12];

	memset(why, 'z', sizeof(why));
	CHECK_INT(topofile_parse("hello", 5, &s, why, 8), -EINVAL);
	CHECK_STR(why, "line 1 ");
	CHECK(why[8] == 'z');
	CHECK_INT(topofile_parse("hello", 5, &s, why, 0), -EINVAL);
}

int main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "tests/unit/ibnetdiscover";
	test_fixtures();
	test_round_trip();
	test_fed_in_pieces();
	test_names_and_one_end();
	test_topology_of();
	test_link_words();
	test_empty();
	test_bad();
	test_refused_when();
	test_bytes_and_bounds();
	test_short_why();
	CHECK_DONE();
}
