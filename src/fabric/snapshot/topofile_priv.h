/* What the files of the topology file format share (topofile.c, the
 * parser and its lines; topolex.c, the words of a line; topolinks.c, the
 * links once every node is known): the parser's state. */
#ifndef UMADFS_TOPOFILE_PRIV_H
#define UMADFS_TOPOFILE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct fab_node;
struct fab_port;
struct fab_snap;

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

static inline bool is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static inline const char *skip_ws(const char *p, const char *end)
{
	while (p < end && is_ws(*p))
		p++;
	return p;
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool word_is(const char *w, size_t len, const char *lit)
{
	return len == strlen(lit) && !memcmp(w, lit, len);
}

/* topolex.c: refuses the text at line and col: -EINVAL, the reason in
 * why. */
int topolex_fail_at(struct topofile_parser *ps, unsigned line, size_t col,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Refuses the text at byte at of the current line. */
#define FAIL(ps, at, ...) \
	topolex_fail_at(ps, (ps)->line, (size_t)((at) - (ps)->bol) + 1, __VA_ARGS__)
/* s[0..len) for a message: printable ASCII, '?' for other bytes, at most
 * NAME_MAX_LEN of them. */
const char *topolex_shown(char *buf, const char *s, size_t len);
/* Decimal digits at *p (at most max): 0 and *p past them, or -1. */
int topolex_scan_dec(const char **p, const char *end, unsigned max, unsigned *v);
/* 1 to 16 hex digits at *p (no 0x): 0 and *p past them, or -1. */
int topolex_scan_hex(const char **p, const char *end, uint64_t *v);
/* The next whitespace-separated word of [*p, end): false at the end. */
bool topolex_next_word(const char **p, const char *end, const char **w,
		       size_t *len);
/* "(HEX)" at *p, after optional whitespace: 0 with *v, 1 if none there
 * (*p unmoved), or the refusal. */
int topolex_paren_guid(struct topofile_parser *ps, const char **p, const char *end,
		       uint64_t *v);
/* The quoted name at *p: s and its length, *p past the closing quote. */
int topolex_name(struct topofile_parser *ps, const char **p, const char *end,
		 const char **s, uint8_t *len);
/* "[ext N]" of ibnetdiscover -g, skipped. */
void topolex_skip_ext(const char **p, const char *end);
/* The rest of a line after its fields: whitespace, then a comment or
 * nothing.  The comment (after '#') in *c, or NULL. */
int topolex_line_end(struct topofile_parser *ps, const char *s, const char *end,
		     const char **c, const char *what);
/* "lid N" and "lmc M" (lmc not NULL) among the words of [s, end), each
 * where given. */
int topolex_lid_lmc(struct topofile_parser *ps, const char *s, const char *end,
		    uint16_t *lid, uint8_t *lmc);

/* topolinks.c: the links, once every node is known (names hashed, each
 * port line's link set at both ends, widths and speeds shared): 0 or the
 * refusal. */
int topolinks_resolve(struct topofile_parser *ps);
/* p linked to peer's port, Active and LinkUp. */
void topolinks_set(struct fab_port *p, const struct fab_node *peer, uint8_t port);

#endif
