/* ibnetdiscover's topology file format (topofile.h), the expected
 * topology's snapshots: a topology file read into one by a parser fed as
 * it is written - its lines (node lines with their KEY= lines, port lines
 * with their link comments' widths and speeds) here, their words
 * topolex.c's, the links once every node is known topolinks.c's; bounded;
 * every refusal a line, a column and a reason - or a sweep's topology
 * taken as one. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/array.h"
#include "umadfs/base/number.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/topofile.h"
#include "umadfs/mad/ibcodes.h"

#include "topofile_priv.h"

/* A link's width and speed as ibnetdiscover writes them: 4xSDR, 1xQDR,
 * 12xHDR, 4xFDR10 (QDR: the sweep reads no vendor speeds), "??" and "???"
 * for unknown ones (0). */
static int parse_link(struct topofile_parser *ps, const char *w, size_t len,
		      struct link_ref *r)
{
	const char *s = w, *end = w + len;
	char buf[NAME_MAX_LEN + 1], words[64];
	unsigned lanes;

	r->width = 0;
	if (*s == '?') {
		while (s < end && *s == '?')
			s++;
	} else if (topolex_scan_dec(&s, end, 99, &lanes) == 0 && s < end &&
		   (*s == 'x' || *s == 'X')) {
		r->width = (uint8_t)ibcodes_width_of_lanes(lanes);
		if (!r->width) {
			ibcodes_width_list(words, sizeof(words));
			return FAIL(ps, w, "unknown link width in '%s' (%s)",
				    topolex_shown(buf, w, len), words);
		}
		if (++s == end)
			return FAIL(ps, w, "'%s': no speed after the width",
				    topolex_shown(buf, w, len));
	}
	r->speed = r->ext_speed = 0;
	if (s == end || *s == '?') {
		while (s < end && *s == '?')
			s++;
		if (s == end)
			return 0;
	}
	if (ibcodes_speed_parse(s, (size_t)(end - s), &r->speed, &r->ext_speed) == 0)
		return 0;
	ibcodes_speed_list(words, sizeof(words));
	return FAIL(ps, w, "unknown link speed in '%s' (%s)", topolex_shown(buf, w, len),
		    words);
}

/* Is word w a link's width and speed (it starts with digits and an 'x',
 * or a '?')? */
static bool looks_like_link(const char *w, size_t len)
{
	size_t i = 0;

	if (*w == '?')
		return true;
	while (i < len && is_digit(w[i]))
		i++;
	return i > 0 && i < len && (w[i] == 'x' || w[i] == 'X');
}

/* A node line's comment: "# \"DESC\"", and a switch's "base port 0 lid N
 * lmc M" after it. */
static int node_comment(struct topofile_parser *ps, struct fab_node *n, const char *c,
			const char *end)
{
	const char *q = skip_ws(c, end), *close = NULL;
	const char *w, *rest;
	size_t len;

	if (q == end || *q != '"')
		return 0; /* a comment of one's own */
	for (const char *s = end; s > q + 1; s--)
		if (s[-1] == '"') {
			close = s - 1;
			break;
		}
	if (!close)
		return FAIL(ps, q, "a description without its closing '\"'");
	len = (size_t)(close - q - 1);
	memcpy(n->desc, q + 1, len < FAB_DESC_LEN ? len : FAB_DESC_LEN);
	rest = close + 1;
	if (n->type == FAB_SWITCH && topolex_next_word(&rest, end, &w, &len) &&
	    (word_is(w, len, "base") || word_is(w, len, "enhanced")))
		return topolex_lid_lmc(ps, rest, end, &n->ports[0].lid,
				       &n->ports[0].lmc);
	return 0;
}

/* A port line's comment: a CA's "lid N lmc M" before the peer's quoted
 * description, and the link's width and speed after it. */
static int port_comment(struct topofile_parser *ps, struct fab_node *n, unsigned port,
			const char *c, const char *end, struct link_ref *r)
{
	const char *q1 = memchr(c, '"', (size_t)(end - c)), *q2 = NULL;
	const char *before_end = q1 ? q1 : end, *after = c, *w, *s;
	size_t len;
	int err;

	if (q1) {
		for (s = end; s > q1; s--)
			if (s[-1] == '"') {
				q2 = s - 1;
				break;
			}
		if (q2 == q1)
			return FAIL(ps, q1, "a description without its closing '\"'");
		after = q2 + 1;
	}
	s = c;
	if (n->type != FAB_SWITCH && topolex_next_word(&s, before_end, &w, &len) &&
	    word_is(w, len, "lid")) {
		err = topolex_lid_lmc(ps, w, before_end, &n->ports[port].lid,
				      &n->ports[port].lmc);
		if (err)
			return err;
	}
	/* "lid N" after the description is the peer's (a switch's: port 0's) */
	if (q1 && (err = topolex_lid_lmc(ps, after, end, &r->peer_lid, NULL)) < 0)
		return err;
	for (s = after; topolex_next_word(&s, end, &w, &len);)
		if (looks_like_link(w, len))
			return parse_link(ps, w, len, r);
	return 0;
}

static int add_ref(struct topofile_parser *ps, const struct link_ref *r)
{
	if (ARRAY_GROW(ps->refs, ps->refs_cap, ps->nrefs + 1, 256) < 0)
		return -ENOMEM;
	ps->refs[ps->nrefs++] = *r;
	return 0;
}

/* "[Q]" after the peer's name: Q, *p past it. */
static int scan_peer_port(struct topofile_parser *ps, const char **p, const char *end,
			  unsigned *port)
{
	const char *s = *p;

	if (s == end || *s != '[')
		return FAIL(ps, s, "expected '[' and the peer's port number after its name");
	s++;
	if (topolex_scan_dec(&s, end, 255, port) < 0 || s == end || *s != ']')
		return FAIL(ps, *p + 1, "expected the peer's port number and ']'");
	if (*port < 1 || *port > PORT_MAX)
		return FAIL(ps, *p + 1, "port %u: ports are 1 to %u", *port, PORT_MAX);
	*p = s + 1;
	return 0;
}

/* "[P](GUID) \"NAME\"[Q](GUID) # comment": port P of the current node
 * linked to port Q of the node called NAME. */
static int port_line(struct topofile_parser *ps, const char *s, const char *end)
{
	struct link_ref r = { .line = ps->line };
	struct fab_node *n;
	const char *c, *at = s + 1, *name;
	unsigned port, peer_port = 0;
	uint64_t guid;
	int err;

	if (ps->hdr.line)
		return FAIL(ps, s, "a port line where the node line of the KEY= "
			    "of line %u was expected", ps->hdr.line);
	if (ps->cur < 0)
		return FAIL(ps, s, "a port line before any node line");
	n = &ps->snap->nodes[ps->cur];
	s = at;
	if (topolex_scan_dec(&s, end, 255, &port) < 0 || s == end || *s != ']')
		return FAIL(ps, at, "expected a port number and ']'");
	if (port < 1 || port > n->nports)
		return FAIL(ps, at, "port %u: this node has ports 1 to %u", port,
			    n->nports);
	if (ps->port_line[port])
		return FAIL(ps, at, "port %u given twice (line %u)", port,
			    ps->port_line[port]);
	ps->port_line[port] = ps->line;
	s++;
	topolex_skip_ext(&s, end);
	err = topolex_paren_guid(ps, &s, end, &guid);
	if (err < 0)
		return err;
	if (!err)
		n->ports[port].port_guid = guid;
	s = skip_ws(s, end);
	r.col = (uint32_t)(s - ps->bol) + 1;
	if ((err = topolex_name(ps, &s, end, &name, &r.name_len)) < 0)
		return err;
	r.name = (uint32_t)(name - ps->text);
	r.port_col = (uint32_t)(s - ps->bol) + 2;
	if ((err = scan_peer_port(ps, &s, end, &peer_port)) < 0)
		return err;
	topolex_skip_ext(&s, end);
	err = topolex_paren_guid(ps, &s, end, &r.peer_port_guid);
	if (err < 0 || (err = topolex_line_end(ps, s, end, &c, "the peer's port")) < 0)
		return err;
	if (c && (err = port_comment(ps, n, port, c, end, &r)) < 0)
		return err;
	r.node = (uint32_t)ps->cur;
	r.port = (uint8_t)port;
	r.peer_port = (uint8_t)peer_port;
	return add_ref(ps, &r);
}

static const struct {
	const char *key;
	unsigned bit;
	uint8_t type; /* of a node's GUID line */
} header_keys[] = {
	{ "vendid", HDR_VENDID, 0 }, { "devid", HDR_DEVID, 0 },
	{ "sysimgguid", HDR_SYSGUID, 0 }, { "switchguid", HDR_GUID, FAB_SWITCH },
	{ "caguid", HDR_GUID, FAB_CA }, { "rtguid", HDR_GUID, FAB_ROUTER },
};

static const char *type_key(uint8_t type)
{
	for (size_t i = 0; i < sizeof(header_keys) / sizeof(header_keys[0]); i++)
		if (header_keys[i].type == type)
			return header_keys[i].key;
	return "?";
}

/* "vendid=0x2c9", "switchguid=0x...(PORTGUID)", ...: kept for the node
 * line that follows. */
static int header_line(struct topofile_parser *ps, const char *key, const char *eq,
		       const char *end)
{
	const char *v = eq + 1, *s = v, *c;
	size_t i, n = sizeof(header_keys) / sizeof(header_keys[0]);
	uint64_t val, port_guid = 0;
	char buf[NAME_MAX_LEN + 1];
	int err;

	for (i = 0; i < n; i++)
		if (word_is(key, (size_t)(eq - key), header_keys[i].key))
			break;
	if (i == n)
		return FAIL(ps, key, "unknown key '%s=' (vendid, devid, sysimgguid, "
			    "switchguid, caguid, rtguid)",
			    topolex_shown(buf, key, (size_t)(eq - key)));
	if (ps->cur >= 0 && !ps->hdr.line)
		ps->cur = -1; /* the node before is complete */
	if (ps->hdr.seen & header_keys[i].bit)
		return FAIL(ps, key, "a second %s before a node line (the KEY= "
			    "lines start on line %u)", header_keys[i].bit == HDR_GUID ?
			    "GUID line" : header_keys[i].key, ps->hdr.line);
	while (s < end && !is_ws(*s) && *s != '(' && *s != '#')
		s++;
	if (number_parse(v, (size_t)(s - v), &val) < 0)
		return FAIL(ps, v, "expected a number (0x and hex digits, or decimal)");
	if ((header_keys[i].bit == HDR_VENDID && val > 0xffffff) ||
	    (header_keys[i].bit == HDR_DEVID && val > 0xffff))
		return FAIL(ps, v, "%s out of range (%s)", header_keys[i].key,
			    header_keys[i].bit == HDR_VENDID ? "24 bits" : "16 bits");
	if (header_keys[i].bit == HDR_GUID) {
		if (!val)
			return FAIL(ps, v, "a GUID of 0");
		err = topolex_paren_guid(ps, &s, end, &port_guid);
		if (err < 0)
			return err;
	}
	if ((err = topolex_line_end(ps, s, end, &c, "the value")) < 0)
		return err;
	if (!ps->hdr.line)
		ps->hdr.line = ps->line;
	ps->hdr.seen |= header_keys[i].bit;
	switch (header_keys[i].bit) {
	case HDR_VENDID: ps->hdr.vendor_id = (uint32_t)val; break;
	case HDR_DEVID: ps->hdr.device_id = (uint32_t)val; break;
	case HDR_SYSGUID: ps->hdr.sys_guid = val; break;
	default:
		ps->hdr.guid = val;
		ps->hdr.port_guid = port_guid;
		ps->hdr.type = header_keys[i].type;
	}
	return 0;
}

/* The GUID in ibnetdiscover's name of a node, "S-0002c90300001234" (also
 * H- and R-), or 0. */
static uint64_t guid_of_name(const char *s, uint8_t len)
{
	const char *p = s + 2;
	uint64_t guid;

	if (len < 3 || s[1] != '-' || (s[0] != 'S' && s[0] != 'H' && s[0] != 'R') ||
	    topolex_scan_hex(&p, s + len, &guid) < 0 || p != s + len)
		return 0;
	return guid;
}

static int add_name(struct topofile_parser *ps, const char *at, const char *s,
		    uint8_t len)
{
	if (ARRAY_GROW(ps->names, ps->names_cap, ps->snap->nnodes, 256) < 0)
		return -ENOMEM;
	ps->names[ps->snap->nnodes - 1] = (struct node_name){
		(uint32_t)(s - ps->text), ps->line, (uint32_t)(at - ps->bol) + 1, len };
	return 0;
}

/* The node of a node line, added to the snapshot with its KEY= lines. */
static int add_node(struct topofile_parser *ps, const char *at, uint8_t type,
		    unsigned nports, const char *name, uint8_t name_len)
{
	uint64_t guid = ps->hdr.guid ? ps->hdr.guid : guid_of_name(name, name_len);
	const struct fab_node *dup;
	struct fab_node *n;
	char buf[NAME_MAX_LEN + 1];

	if (ps->hdr.type && ps->hdr.type != type)
		return FAIL(ps, ps->bol, "a %s line after %s= (line %u)",
			    type == FAB_SWITCH ? "Switch" : type == FAB_CA ? "Ca" : "Rt",
			    type_key(ps->hdr.type), ps->hdr.line);
	if (!guid)
		return FAIL(ps, at, "no GUID for \"%s\": name it %c-<GUID in hex> or "
			    "give a %s= line before it", topolex_shown(buf, name, name_len),
			    type == FAB_SWITCH ? 'S' : type == FAB_CA ? 'H' : 'R',
			    type_key(type));
	dup = fabsnap_find(ps->snap, guid);
	if (dup)
		return FAIL(ps, at, "GUID 0x%016" PRIx64 " given twice (line %u)",
			    guid, ps->names[dup - ps->snap->nodes].line);
	if (ps->snap->nnodes >= TOPOFILE_NODES_MAX)
		return FAIL(ps, ps->bol, "more than %u nodes", TOPOFILE_NODES_MAX);
	if (ps->nports + nports + 1 > TOPOFILE_PORTS_MAX)
		return FAIL(ps, ps->bol, "more than %u ports in all", TOPOFILE_PORTS_MAX);
	n = fabsnap_add(ps->snap, guid, nports);
	if (!n || add_name(ps, at, name, name_len) < 0)
		return -ENOMEM;
	ps->nports += nports + 1;
	n->type = type;
	n->sys_guid = ps->hdr.sys_guid;
	n->vendor_id = ps->hdr.vendor_id;
	n->device_id = (uint16_t)ps->hdr.device_id;
	if (type == FAB_SWITCH)
		n->ports[0].port_guid = ps->hdr.port_guid;
	memset(&ps->hdr, 0, sizeof(ps->hdr));
	memset(ps->port_line, 0, sizeof(ps->port_line));
	ps->cur = (long)(n - ps->snap->nodes);
	return 0;
}

/* "Switch 36 \"S-...\" # \"desc\" base port 0 lid 2 lmc 0", "Ca 2 \"H-...\"
 * # \"desc\"", "Rt ...": a node; s is past the keyword. */
static int node_line(struct topofile_parser *ps, uint8_t type, const char *s,
		     const char *end)
{
	const char *at, *name, *c;
	unsigned nports;
	uint8_t name_len;
	int err;

	if (s == end || !is_ws(*s))
		return FAIL(ps, s, "expected the number of ports after the node type");
	at = s = skip_ws(s, end);
	if (topolex_scan_dec(&s, end, 255, &nports) < 0 || nports < 1 || nports > PORT_MAX)
		return FAIL(ps, at, "expected the number of ports, 1 to %u", PORT_MAX);
	if (s == end || !is_ws(*s))
		return FAIL(ps, s, "expected the node's name in quotes after its ports");
	at = s = skip_ws(s, end);
	if ((err = topolex_name(ps, &s, end, &name, &name_len)) < 0 ||
	    (err = topolex_line_end(ps, s, end, &c, "the node's name")) < 0 ||
	    (err = add_node(ps, at, type, nports, name, name_len)) < 0)
		return err;
	return c ? node_comment(ps, &ps->snap->nodes[ps->cur], c, end) : 0;
}

/* A comment; ibnetdiscover's "# Initiated from node GUID port GUID" names
 * where it looked from, as the sweep's local_guid and local_port_guid. */
static void comment_line(struct topofile_parser *ps, const char *s, const char *end)
{
	static const char from[] = "# Initiated from node ";
	uint64_t node, port;

	if ((size_t)(end - s) < sizeof(from) - 1 || memcmp(s, from, sizeof(from) - 1))
		return;
	s += sizeof(from) - 1;
	if (topolex_scan_hex(&s, end, &node) < 0 || end - s < 6 || memcmp(s, " port ", 6))
		return;
	s += 6;
	if (topolex_scan_hex(&s, end, &port) < 0)
		return;
	ps->snap->local_guid = node;
	ps->snap->local_port_guid = port;
}

/* The word clear: a text of its own (topofile_parser_clears). */
static int clear_line(struct topofile_parser *ps, const char *s)
{
	if (ps->snap->nnodes || ps->hdr.line)
		return FAIL(ps, s, "'clear' in a text with node lines: the word is "
			    "a text of its own, with blank lines and comments only");
	if (!ps->clear)
		ps->clear = ps->line;
	return 0;
}

static int parse_line(struct topofile_parser *ps, const char *s, const char *end)
{
	static const struct { const char *word; uint8_t type; } types[] = {
		{ "Switch", FAB_SWITCH }, { "Ca", FAB_CA }, { "Hca", FAB_CA },
		{ "Rt", FAB_ROUTER }, { "Router", FAB_ROUTER },
	};
	const char *w;
	size_t len;

	s = skip_ws(s, end);
	if (s == end)
		return 0;
	if (*s == '#') {
		comment_line(ps, s, end);
		return 0;
	}
	if (end - s >= 5 && !memcmp(s, "clear", 5) && skip_ws(s + 5, end) == end)
		return clear_line(ps, s);
	if (ps->clear)
		return FAIL(ps, s, "a line after 'clear' (line %u): the word is a "
			    "text of its own, with blank lines and comments only",
			    ps->clear);
	if (*s == '[')
		return port_line(ps, s, end);
	for (w = s; s < end && ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
				*s == '-'); s++)
		;
	len = (size_t)(s - w);
	if (s < end && *s == '=')
		return header_line(ps, w, s, end);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (word_is(w, len, types[i].word))
			return node_line(ps, types[i].type, s, end);
	if (ps->hdr.line)
		return FAIL(ps, w, "expected the node line of the KEY= of line %u",
			    ps->hdr.line);
	/* ibnetdiscover -g: chassis headings. */
	if (word_is(w, len, "Chassis") || word_is(w, len, "Non-Chassis") ||
	    (word_is(w, len, "Hostname") && s < end && *s == ':'))
		return 0;
	return FAIL(ps, w, "expected a node line (Switch, Ca, Rt), a port line "
		    "([N] ...), KEY=VALUE or a # comment");
}

/* One line, bol[0..n) without its '\n'. */
static int read_line(struct topofile_parser *ps, const char *bol, size_t n)
{
	const char *nul;

	ps->line++;
	ps->bol = bol;
	if (n > TOPOFILE_LINE_MAX)
		return FAIL(ps, bol + TOPOFILE_LINE_MAX, "a line longer than %u bytes",
			    TOPOFILE_LINE_MAX);
	if ((nul = memchr(bol, '\0', n)))
		return FAIL(ps, nul, "a NUL byte");
	if (n && bol[n - 1] == '\r')
		n--;
	return parse_line(ps, bol, bol + n);
}

/* What of the unfinished last line, bol[0..n), is refused before its end:
 * its length, a NUL byte (the reasons read_line would give). */
static int read_tail(struct topofile_parser *ps, const char *bol, size_t n)
{
	const char *nul;

	if (n > TOPOFILE_LINE_MAX)
		return topolex_fail_at(ps, ps->line + 1, TOPOFILE_LINE_MAX + 1,
				       "a line longer than %u bytes", TOPOFILE_LINE_MAX);
	if ((nul = memchr(bol, '\0', n)))
		return topolex_fail_at(ps, ps->line + 1, (size_t)(nul - bol) + 1, "a NUL byte");
	return 0;
}

static int refused(struct topofile_parser *ps, int err)
{
	if (err == -ENOMEM && ps->cap)
		snprintf(ps->why, ps->cap, "out of memory");
	return err;
}

struct topofile_parser *topofile_parser_new(void)
{
	struct topofile_parser *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->cur = -1;
	ps->snap = fabsnap_new();
	if (!ps->snap) {
		free(ps);
		return NULL;
	}
	return ps;
}

void topofile_parser_free(struct topofile_parser *ps)
{
	if (!ps)
		return;
	free(ps->names);
	free(ps->name_hash);
	free(ps->refs);
	fabsnap_put(ps->snap);
	free(ps);
}

bool topofile_parser_clears(const struct topofile_parser *ps)
{
	return ps->clear != 0;
}

size_t topofile_parser_size(const struct topofile_parser *ps)
{
	return sizeof(*ps) + ps->names_cap * sizeof(*ps->names) +
		ps->refs_cap * sizeof(*ps->refs) + ps->hash_cap * sizeof(*ps->name_hash) +
		(ps->snap ? ps->snap->cap * sizeof(struct fab_node) +
		 ps->nports * sizeof(struct fab_port) : 0);
}

int topofile_parser_feed(struct topofile_parser *ps, const char *text, size_t len,
			 char *why, size_t cap)
{
	int err = 0;

	ps->why = why;
	ps->cap = cap;
	ps->text = text;
	while (!err && ps->done < len) {
		const char *bol = text + ps->done;
		const char *eol = memchr(bol, '\n', len - ps->done);

		if (!eol)
			return read_tail(ps, bol, len - ps->done);
		ps->done += (size_t)(eol - bol) + 1;
		err = read_line(ps, bol, (size_t)(eol - bol));
	}
	return refused(ps, err);
}

int topofile_parser_finish(struct topofile_parser *ps, const char *text,
			   size_t len, struct fab_snap **out, char *why, size_t cap)
{
	int err = topofile_parser_feed(ps, text, len, why, cap);

	*out = NULL;
	if (!err && ps->done < len) {
		err = read_line(ps, text + ps->done, len - ps->done);
		ps->done = len;
	}
	if (!err && ps->hdr.line)
		err = topolex_fail_at(ps, ps->hdr.line, 1,
				      "KEY= lines without their node line");
	if (!err)
		err = topolinks_resolve(ps);
	if (err)
		return refused(ps, err);
	ps->snap->ok = true;
	clock_gettime(CLOCK_REALTIME, &ps->snap->time);
	fabsnap_count(ps->snap);
	*out = ps->snap;
	ps->snap = NULL;
	return 0;
}

int topofile_parse(const char *text, size_t len, struct fab_snap **out,
		   char *why, size_t cap)
{
	struct topofile_parser *ps;
	int err;

	*out = NULL;
	if (cap)
		why[0] = '\0';
	if (len > TOPOFILE_TEXT_MAX) {
		snprintf(why, cap, "longer than %u MiB", TOPOFILE_TEXT_MAX >> 20);
		return -EFBIG;
	}
	ps = topofile_parser_new();
	if (!ps) {
		snprintf(why, cap, "out of memory");
		return -ENOMEM;
	}
	err = topofile_parser_finish(ps, text, len, out, why, cap);
	topofile_parser_free(ps);
	return err;
}

struct fab_snap *topofile_of_sweep(const struct fab_snap *s)
{
	struct fab_snap *e = fabsnap_new();

	if (e)
		e->from_sweep = true;
	for (size_t i = 0; e && i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];
		struct fab_node *c = fabsnap_add(e, n->guid, n->nports);

		if (!c) {
			fabsnap_put(e);
			return NULL;
		}
		c->type = n->type;
		c->sys_guid = n->sys_guid;
		c->vendor_id = n->vendor_id;
		c->device_id = n->device_id;
		memcpy(c->desc, n->desc, sizeof(c->desc));
		for (unsigned p = 0; p <= n->nports; p++) {
			const struct fab_port *sp = &n->ports[p];
			struct fab_port *cp = &c->ports[p];
			const struct fab_port *peer;
			const struct fab_node *pn;

			/* a link both ends of which say so, as the parser's */
			peer = p ? fabsnap_peer(s, sp, &pn) : NULL;
			if (peer && (peer->peer_guid != n->guid || peer->peer_port != p))
				peer = NULL;
			if (n->type == FAB_SWITCH ? !p : peer != NULL) {
				cp->port_guid = sp->port_guid;
				cp->lmc = sp->lmc;
			}
			if (!p || peer)
				cp->lid = sp->lid;
			if (!peer)
				continue;
			topolinks_set(cp, pn, sp->peer_port);
			cp->width = sp->width;
			cp->speed = sp->speed;
			cp->ext_speed = sp->ext_speed;
		}
	}
	if (!e)
		return NULL;
	e->time = s->time;
	e->mono_ms = s->mono_ms;
	e->ok = true;
	e->local_guid = s->local_guid;
	e->local_port_guid = s->local_port_guid;
	fabsnap_count(e);
	return e;
}
