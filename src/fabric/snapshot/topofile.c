/* ibnetdiscover's topology file format (topofile.h), the expected
 * topology's snapshots: a topology file read into one (node lines with their KEY= lines, port lines with
 * their link comments' widths and speeds, read as they are written; names
 * resolved once every node is known; bounded; every refusal a line, a
 * column and a reason), or a sweep's topology taken as one. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
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

#define NAME_MAX_LEN 64 /* a node's name in quotes: "S-0002c90300001234" */
#define PORT_MAX 254

/* A port line: its end, and the other end by the name the text gives.
 * Names are offsets in the text, which may move while it is written. */
struct link_ref {
	uint32_t name;           /* the peer's name: its offset in the text */
	uint64_t peer_port_guid; /* "(GUID)" after the peer, 0 if none */
	uint32_t node;           /* the node whose line it is */
	uint32_t line, col, port_col; /* of the peer's name and its [port] */
	uint8_t name_len, port, peer_port;
	uint8_t width, speed, ext_speed;
	uint16_t peer_lid;       /* "lid N" after its description, 0 if none */
};

/* A node's name (its offset in the text) and where it was given. */
struct node_name {
	uint32_t s;
	uint32_t line, col;
	uint8_t len;
};

enum { HDR_VENDID = 1, HDR_DEVID = 2, HDR_SYSGUID = 4, HDR_GUID = 8 };

struct topofile_parser {
	char *why;          /* the caller's, for the call under way */
	size_t cap;
	const char *text;   /* the text, where it is for the call under way */
	size_t done;        /* its bytes read: whole lines */
	struct fab_snap *snap;
	unsigned line;      /* the line being read, from 1 */
	const char *bol;    /* its first byte */
	size_t nports;      /* NumPorts + 1 of every node so far */
	/* The KEY= lines waiting for their node line. */
	struct {
		unsigned line;  /* of the first, 0: none */
		unsigned seen;  /* HDR_ bits */
		uint8_t type;   /* of its xxguid= line */
		uint64_t guid, port_guid, sys_guid;
		uint32_t vendor_id, device_id;
	} hdr;
	long cur;           /* the node whose port lines follow, -1 none */
	unsigned clear;     /* the line of the word clear, 0 none */
	unsigned port_line[PORT_MAX + 1]; /* of its ports given, 0 none */
	struct node_name *names; /* by node index */
	size_t names_cap;
	uint32_t *name_hash; /* node index + 1, 0 empty */
	size_t hash_cap;
	struct link_ref *refs;
	size_t nrefs, refs_cap;
};

/* Refuses the text at line and col: -EINVAL, the reason in why. */
static int fail_at(struct topofile_parser *ps, unsigned line, size_t col,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail_at(struct topofile_parser *ps, unsigned line, size_t col,
		   const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(ps->why, ps->cap, "line %u column %zu: ", line, col);

	if (n >= 0 && (size_t)n < ps->cap) {
		va_start(ap, fmt);
		vsnprintf(ps->why + n, ps->cap - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Refuses the text at byte at of the current line. */
#define FAIL(ps, at, ...) \
	fail_at(ps, (ps)->line, (size_t)((at) - (ps)->bol) + 1, __VA_ARGS__)

/* s[0..len) for a message: printable ASCII, '?' for other bytes, at most
 * NAME_MAX_LEN of them. */
static const char *shown(char *buf, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < NAME_MAX_LEN; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && is_ws(*p))
		p++;
	return p;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Decimal digits at *p (at most max): 0 and *p past them, or -1. */
static int scan_dec(const char **p, const char *end, unsigned max, unsigned *v)
{
	const char *s = *p;
	unsigned n = 0;

	if (s == end || !is_digit(*s))
		return -1;
	for (; s < end && is_digit(*s); s++) {
		n = n * 10 + (unsigned)(*s - '0');
		if (n > max)
			return -1;
	}
	*v = n;
	*p = s;
	return 0;
}

/* 1 to 16 hex digits at *p (no 0x): 0 and *p past them, or -1. */
static int scan_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;
	unsigned d;

	for (; s < end && !((d = number_hex_digit((unsigned char)*s)) & NUMBER_HEX_BAD); s++) {
		if (s - *p == 16)
			return -1;
		n = n << 4 | (unsigned)d;
	}
	if (s == *p)
		return -1;
	*v = n;
	*p = s;
	return 0;
}

/* The next whitespace-separated word of [*p, end): false at the end. */
static bool next_word(const char **p, const char *end, const char **w,
		      size_t *len)
{
	const char *s = skip_ws(*p, end);

	*w = s;
	while (s < end && !is_ws(*s))
		s++;
	*len = (size_t)(s - *w);
	*p = s;
	return *len > 0;
}

static bool word_is(const char *w, size_t len, const char *lit)
{
	return len == strlen(lit) && !memcmp(w, lit, len);
}

/* "(HEX)" at *p, after optional whitespace: 0 with *v, 1 if none there
 * (*p unmoved), or the refusal. */
static int scan_paren_guid(struct topofile_parser *ps, const char **p, const char *end,
			   uint64_t *v)
{
	const char *s = skip_ws(*p, end);

	if (s == end || *s != '(')
		return 1;
	s++;
	if (scan_hex(&s, end, v) < 0)
		return FAIL(ps, s, "expected a GUID of 1 to 16 hex digits");
	if (s == end || *s != ')')
		return FAIL(ps, s, "expected ')' after the GUID");
	*p = s + 1;
	return 0;
}

/* The quoted name at *p: s and its length, *p past the closing quote. */
static int scan_name(struct topofile_parser *ps, const char **p, const char *end,
		     const char **s, uint8_t *len)
{
	const char *q = *p, *close;

	if (q == end || *q != '"')
		return FAIL(ps, q, "expected a node's name in quotes");
	close = memchr(q + 1, '"', (size_t)(end - q - 1));
	if (!close)
		return FAIL(ps, q, "a name without its closing '\"'");
	if (close == q + 1)
		return FAIL(ps, q, "an empty name");
	if (close - q - 1 > NAME_MAX_LEN)
		return FAIL(ps, q, "a name longer than %d bytes", NAME_MAX_LEN);
	for (const char *c = q + 1; c < close; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return FAIL(ps, c, "a control character in a name");
	*s = q + 1;
	*len = (uint8_t)(close - q - 1);
	*p = close + 1;
	return 0;
}

/* "[ext N]" of ibnetdiscover -g, skipped. */
static void skip_ext(const char **p, const char *end)
{
	const char *s = *p;
	unsigned n;

	if (end - s >= 5 && !memcmp(s, "[ext ", 5)) {
		s += 5;
		if (scan_dec(&s, end, 255, &n) == 0 && s < end && *s == ']')
			*p = s + 1;
	}
}

/* The rest of a line after its fields: whitespace, then a comment or
 * nothing.  The comment (after '#') in *c, or NULL. */
static int line_end(struct topofile_parser *ps, const char *s, const char *end,
		    const char **c, const char *what)
{
	s = skip_ws(s, end);
	*c = NULL;
	if (s == end)
		return 0;
	if (*s != '#')
		return FAIL(ps, s, "unexpected text after %s", what);
	*c = s + 1;
	return 0;
}

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
	} else if (scan_dec(&s, end, 99, &lanes) == 0 && s < end &&
		   (*s == 'x' || *s == 'X')) {
		r->width = (uint8_t)ibcodes_width_of_lanes(lanes);
		if (!r->width) {
			ibcodes_width_list(words, sizeof(words));
			return FAIL(ps, w, "unknown link width in '%s' (%s)",
				    shown(buf, w, len), words);
		}
		if (++s == end)
			return FAIL(ps, w, "'%s': no speed after the width",
				    shown(buf, w, len));
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
	return FAIL(ps, w, "unknown link speed in '%s' (%s)", shown(buf, w, len), words);
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

/* "lid N" and "lmc M" (lmc not NULL) among the words of [s, end), each
 * where given. */
static int parse_lid_lmc(struct topofile_parser *ps, const char *s, const char *end,
			 uint16_t *lid, uint8_t *lmc)
{
	const char *w;
	size_t len;

	while (next_word(&s, end, &w, &len)) {
		bool is_lid = word_is(w, len, "lid");
		const char *v, *at;
		unsigned n;

		if (!is_lid && (!lmc || !word_is(w, len, "lmc")))
			continue;
		at = next_word(&s, end, &v, &len) ? v : w;
		if (!len || scan_dec(&v, v + len, is_lid ? 0xffff : 7, &n) < 0 ||
		    v != s)
			return FAIL(ps, at, "expected a number %s after '%s'",
				    is_lid ? "from 0 to 65535" : "from 0 to 7",
				    is_lid ? "lid" : "lmc");
		if (is_lid)
			*lid = (uint16_t)n;
		else
			*lmc = (uint8_t)n;
	}
	return 0;
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
	if (n->type == FAB_SWITCH && next_word(&rest, end, &w, &len) &&
	    (word_is(w, len, "base") || word_is(w, len, "enhanced")))
		return parse_lid_lmc(ps, rest, end, &n->ports[0].lid,
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
	if (n->type != FAB_SWITCH && next_word(&s, before_end, &w, &len) &&
	    word_is(w, len, "lid")) {
		err = parse_lid_lmc(ps, w, before_end, &n->ports[port].lid,
				    &n->ports[port].lmc);
		if (err)
			return err;
	}
	/* "lid N" after the description is the peer's (a switch's: port 0's) */
	if (q1 && (err = parse_lid_lmc(ps, after, end, &r->peer_lid, NULL)) < 0)
		return err;
	for (s = after; next_word(&s, end, &w, &len);)
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
	if (scan_dec(&s, end, 255, port) < 0 || s == end || *s != ']')
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
	if (scan_dec(&s, end, 255, &port) < 0 || s == end || *s != ']')
		return FAIL(ps, at, "expected a port number and ']'");
	if (port < 1 || port > n->nports)
		return FAIL(ps, at, "port %u: this node has ports 1 to %u", port,
			    n->nports);
	if (ps->port_line[port])
		return FAIL(ps, at, "port %u given twice (line %u)", port,
			    ps->port_line[port]);
	ps->port_line[port] = ps->line;
	s++;
	skip_ext(&s, end);
	err = scan_paren_guid(ps, &s, end, &guid);
	if (err < 0)
		return err;
	if (!err)
		n->ports[port].port_guid = guid;
	s = skip_ws(s, end);
	r.col = (uint32_t)(s - ps->bol) + 1;
	if ((err = scan_name(ps, &s, end, &name, &r.name_len)) < 0)
		return err;
	r.name = (uint32_t)(name - ps->text);
	r.port_col = (uint32_t)(s - ps->bol) + 2;
	if ((err = scan_peer_port(ps, &s, end, &peer_port)) < 0)
		return err;
	skip_ext(&s, end);
	err = scan_paren_guid(ps, &s, end, &r.peer_port_guid);
	if (err < 0 || (err = line_end(ps, s, end, &c, "the peer's port")) < 0)
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
			    "switchguid, caguid, rtguid)", shown(buf, key,
								  (size_t)(eq - key)));
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
		err = scan_paren_guid(ps, &s, end, &port_guid);
		if (err < 0)
			return err;
	}
	if ((err = line_end(ps, s, end, &c, "the value")) < 0)
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
	    scan_hex(&p, s + len, &guid) < 0 || p != s + len)
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
			    "give a %s= line before it", shown(buf, name, name_len),
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
	if (scan_dec(&s, end, 255, &nports) < 0 || nports < 1 || nports > PORT_MAX)
		return FAIL(ps, at, "expected the number of ports, 1 to %u", PORT_MAX);
	if (s == end || !is_ws(*s))
		return FAIL(ps, s, "expected the node's name in quotes after its ports");
	at = s = skip_ws(s, end);
	if ((err = scan_name(ps, &s, end, &name, &name_len)) < 0 ||
	    (err = line_end(ps, s, end, &c, "the node's name")) < 0 ||
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
	if (scan_hex(&s, end, &node) < 0 || end - s < 6 || memcmp(s, " port ", 6))
		return;
	s += 6;
	if (scan_hex(&s, end, &port) < 0)
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

static uint32_t name_hash(const char *s, uint8_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (uint8_t k = 0; k < len; k++)
		h = (h ^ (uint8_t)s[k]) * 16777619u;
	return h;
}

/* The index of the node called s, or -1. */
static long find_name(const struct topofile_parser *ps, const char *s, uint8_t len)
{
	for (size_t slot = name_hash(s, len) & (ps->hash_cap - 1);
	     ps->name_hash[slot]; slot = (slot + 1) & (ps->hash_cap - 1)) {
		const struct node_name *o = &ps->names[ps->name_hash[slot] - 1];

		if (o->len == len && !memcmp(ps->text + o->s, s, len))
			return (long)ps->name_hash[slot] - 1;
	}
	return -1;
}

/* Node names -> node index, every name once. */
static int hash_names(struct topofile_parser *ps)
{
	size_t n = ps->snap->nnodes, cap = 16;
	char buf[NAME_MAX_LEN + 1];

	while (cap < 2 * n)
		cap *= 2;
	ps->name_hash = calloc(cap, sizeof(*ps->name_hash));
	if (!ps->name_hash)
		return -ENOMEM;
	ps->hash_cap = cap;
	for (size_t i = 0; i < n; i++) {
		const struct node_name *nm = &ps->names[i];
		const char *name = ps->text + nm->s;
		long dup = find_name(ps, name, nm->len);
		size_t slot;

		if (dup >= 0)
			return fail_at(ps, nm->line, nm->col,
				       "the name \"%s\" given twice (line %u)",
				       shown(buf, name, nm->len), ps->names[dup].line);
		for (slot = name_hash(name, nm->len) & (cap - 1); ps->name_hash[slot];
		     slot = (slot + 1) & (cap - 1))
			;
		ps->name_hash[slot] = (uint32_t)i + 1;
	}
	return 0;
}

/* Port p's link as another line gave it, for a refusal. */
static const char *linked_to(const struct topofile_parser *ps, const struct fab_port *p,
			     char *buf, size_t cap)
{
	const struct fab_node *n = fabsnap_find(ps->snap, p->peer_guid);
	char name[NAME_MAX_LEN + 1];

	if (n) {
		const struct node_name *nm = &ps->names[n - ps->snap->nodes];

		snprintf(buf, cap, "\"%s\"[%u]", shown(name, ps->text + nm->s, nm->len),
			 p->peer_port);
	}
	return buf;
}

static void set_link(struct fab_port *p, const struct fab_node *peer, uint8_t port)
{
	p->peer_guid = peer->guid;
	p->peer_port = port;
	p->state = IB_LINK_ACTIVE;
	p->phys_state = IB_PORT_PHYS_STATE_LINKUP;
}

/* One port line's link, both ends.  A link two lines give differently
 * (A says its port 1 goes to B[2], B says its port 2 goes elsewhere) is
 * refused where the second of them names its peer. */
static int resolve_ref(struct topofile_parser *ps, const struct link_ref *r)
{
	const char *name = ps->text + r->name;
	long b = find_name(ps, name, r->name_len);
	struct fab_node *na = &ps->snap->nodes[r->node], *nb;
	struct fab_port *pa, *pb;
	char buf[NAME_MAX_LEN + 1], other[NAME_MAX_LEN + 16] = "";

	if (b < 0)
		return fail_at(ps, r->line, r->col, "no node is called \"%s\"",
			       shown(buf, name, r->name_len));
	nb = &ps->snap->nodes[b];
	if (r->peer_port > nb->nports)
		return fail_at(ps, r->line, r->port_col,
			       "port %u: \"%s\" has ports 1 to %u", r->peer_port,
			       shown(buf, name, r->name_len), nb->nports);
	if (na == nb && r->port == r->peer_port)
		return fail_at(ps, r->line, r->col, "a port linked to itself");
	pa = &na->ports[r->port];
	pb = &nb->ports[r->peer_port];
	if (pa->peer_guid && (pa->peer_guid != nb->guid || pa->peer_port != r->peer_port))
		return fail_at(ps, r->line, r->col, "port %u is linked to %s "
			       "by that node's line", r->port,
			       linked_to(ps, pa, other, sizeof(other)));
	if (pb->peer_guid && (pb->peer_guid != na->guid || pb->peer_port != r->port))
		return fail_at(ps, r->line, r->col, "\"%s\"[%u] is linked to %s",
			       shown(buf, name, r->name_len), r->peer_port,
			       linked_to(ps, pb, other, sizeof(other)));
	set_link(pa, nb, r->peer_port);
	set_link(pb, na, r->port);
	pa->width = r->width;
	pa->speed = r->speed;
	pa->ext_speed = r->ext_speed;
	if (nb->type != FAB_SWITCH && !pb->port_guid)
		pb->port_guid = r->peer_port_guid;
	if (!pb->lid)
		pb->lid = r->peer_lid;
	return 0;
}

/* The links, once every node is known; a port whose own line gives no
 * width and speed (or has none) takes its peer's. */
static int resolve(struct topofile_parser *ps)
{
	struct fab_snap *s = ps->snap;
	int err = hash_names(ps);

	for (size_t i = 0; !err && i < ps->nrefs; i++)
		err = resolve_ref(ps, &ps->refs[i]);
	for (size_t i = 0; !err && i < s->nnodes; i++) {
		struct fab_node *n = &s->nodes[i];

		for (unsigned p = 1; p <= n->nports; p++) {
			struct fab_port *me = &n->ports[p];
			const struct fab_port *peer = fabsnap_peer(s, me, NULL);

			if (peer && !me->width && !me->speed && !me->ext_speed) {
				me->width = peer->width;
				me->speed = peer->speed;
				me->ext_speed = peer->ext_speed;
			}
		}
	}
	return err;
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
		return fail_at(ps, ps->line + 1, TOPOFILE_LINE_MAX + 1,
			       "a line longer than %u bytes", TOPOFILE_LINE_MAX);
	if ((nul = memchr(bol, '\0', n)))
		return fail_at(ps, ps->line + 1, (size_t)(nul - bol) + 1, "a NUL byte");
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
		err = fail_at(ps, ps->hdr.line, 1, "KEY= lines without their node line");
	if (!err)
		err = resolve(ps);
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
			set_link(cp, pn, sp->peer_port);
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
