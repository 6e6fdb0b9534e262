// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the expected topology's parser, topofile_parse() (see
 * docs/bad-input.md), on a text written to fabric/expected or read from
 * -o fabric_expected=PATH.
 *
 * The input is the text.  It must not crash, leak or read outside it.  A
 * refusal is -EINVAL with one line "line L column C: reason" (L at most
 * the input's lines, C at most one past TOPOFILE_LINE_MAX) and no
 * snapshot.  An accepted text gives a snapshot whose nodes have 1 to 254
 * ports and distinct non-zero GUIDs, whose every link is seen from both
 * ends, Active and LinkUp, with widths and speeds of PortInfo's encodings;
 * and that snapshot, formatted as fabric/expected reads it (fabric/
 * topology's formatter), parses back to the same nodes and links.  The
 * text written to a parser in two writes (topofile_parser_feed, cut in
 * the middle, the first half's bytes moved as a writer's buffer moves)
 * is refused or taken as the whole is, to the same nodes and links.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/fabric/files/fabtext.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/topofile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *why)
{
	fprintf(stderr, "fuzz_expected: %s\n  why: %s\n", what, why ? why : "");
	abort();
}

static void check_refusal(const char *text, size_t len, const char *why)
{
	unsigned line, col, lines = 1;
	int n = 0;

	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	if (sscanf(why, "line %u column %u: %n", &line, &col, &n) != 2 || !n ||
	    !why[n] || strchr(why, '\n'))
		die("a refusal without 'line L column C: reason'", why);
	if (!line || line > lines || !col || col > TOPOFILE_LINE_MAX + 1)
		die("a refusal's line or column outside the text", why);
}

static bool width_ok(unsigned w)
{
	return w == 0 || w == 1 || w == 2 || w == 4 || w == 8 || w == 16;
}

static void check_snapshot(const struct fab_snap *s)
{
	unsigned links = 0;

	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		if (!n->guid || fabsnap_find(s, n->guid) != n)
			die("a node's GUID is 0 or not its own", NULL);
		if (n->nports < 1 || n->nports > 254 || n->type < FAB_CA ||
		    n->type > FAB_ROUTER)
			die("a node's ports or type out of range", NULL);
		for (unsigned p = 1; p <= n->nports; p++) {
			const struct fab_port *me = &n->ports[p];
			const struct fab_node *pn = NULL;
			const struct fab_port *peer = fabsnap_peer(s, me, &pn);

			if (!me->peer_guid) {
				if (me->state || me->width || me->speed || me->ext_speed)
					die("an unlinked port with a state or a speed", NULL);
				continue;
			}
			if (!peer || peer->peer_guid != n->guid || peer->peer_port != p ||
			    (pn == n && me->peer_port == p))
				die("a link not seen from both ends", NULL);
			if (me->state != 4 || me->phys_state != 5 || !width_ok(me->width) ||
			    (me->speed != 0 && me->speed != 1 && me->speed != 2 &&
			     me->speed != 4) || !width_ok(me->ext_speed))
				die("a link's state, width or speed out of range", NULL);
			links++;
		}
	}
	if (links != 2 * s->stats.links)
		die("links counted wrong", NULL);
}

/* b has what the parser keeps of a. */
static void check_same(const struct fab_snap *a, const struct fab_snap *b)
{
	if (a->nnodes != b->nnodes || a->stats.links != b->stats.links)
		die("round trip: other nodes or links", NULL);
	for (size_t i = 0; i < a->nnodes; i++) {
		const struct fab_node *na = &a->nodes[i];
		const struct fab_node *nb = fabsnap_find(b, na->guid);

		if (!nb || na->type != nb->type || na->nports != nb->nports ||
		    strcmp(na->desc, nb->desc) || na->sys_guid != nb->sys_guid ||
		    na->vendor_id != nb->vendor_id || na->device_id != nb->device_id)
			die("round trip: a node changed", na->desc);
		for (unsigned p = 0; p <= na->nports; p++) {
			const struct fab_port *pa = &na->ports[p], *pb = &nb->ports[p];
			bool ids = na->type != FAB_SWITCH || !p;

			if (pa->peer_guid != pb->peer_guid || pa->peer_port != pb->peer_port ||
			    pa->width != pb->width || pa->speed != pb->speed ||
			    pa->ext_speed != pb->ext_speed || pa->lid != pb->lid ||
			    (ids && (pa->port_guid != pb->port_guid || pa->lmc != pb->lmc)))
				die("round trip: a port changed", na->desc);
		}
	}
}

/* text as fabric/expected takes it when written in two writes: 0 with
 * *out, or the refusal. */
static int parse_in_two(const char *text, size_t size, struct fab_snap **out)
{
	struct topofile_parser *p = topofile_parser_new();
	char why[256], *first = malloc(size / 2 + 1), *all = malloc(size + 1);
	int r = -ENOMEM;

	*out = NULL;
	if (p && first && all) {
		memcpy(first, text, size / 2);
		memcpy(all, text, size);
		r = topofile_parser_feed(p, first, size / 2, why, sizeof(why));
		if (r == 0)
			r = topofile_parser_finish(p, all, size, out, why, sizeof(why));
	}
	topofile_parser_free(p);
	free(first);
	free(all);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fab_snap *s = NULL, *back = NULL;
	const char *text = (const char *)data;
	char why[256];
	const char *out;
	size_t len;
	int r;

	memset(why, 'z', sizeof(why));
	r = topofile_parse(text, size, &s, why, sizeof(why));
	if (parse_in_two(text, size, &back) != r && r != -ENOMEM)
		die("written in two writes, judged otherwise", why);
	if (back && s)
		check_same(s, back);
	fabsnap_put(back);
	back = NULL;
	if (r < 0) {
		if (s)
			die("a refusal with a snapshot", why);
		if (r == -EINVAL)
			check_refusal(text, size, why);
		else if (r != -ENOMEM)
			die("a refusal other than EINVAL or ENOMEM", why);
		return 0;
	}
	if (r != 0 || !s)
		die("accepted without a snapshot", NULL);
	check_snapshot(s);
	out = fabtext_get(s, FAB_TEXT_TOPOLOGY, &len);
	if (!out)
		die("no topology text", NULL);
	if (topofile_parse(out, len, &back, why, sizeof(why)) != 0)
		die("round trip: fabric/expected's own text refused", why);
	check_same(s, back);
	fabsnap_put(back);
	fabsnap_put(s);
	return 0;
}
