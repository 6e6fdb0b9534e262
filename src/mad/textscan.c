/*
 * textscan: the first pass of madtext_parse(): split a line into key=value
 * tokens, look the keys up and convert the values that do not depend on
 * other keys (textscan_priv.h).  Hex values are only delimited here.
 */
#include "textscan_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "umadfs/base/number.h"
#include "umadfs/mad/madtext.h"
#include "codec_priv.h"

#define KEY(id, str, k, m) [id] = { str, sizeof(str) - 1, k, m }
const struct key_desc text_keys[KEY_COUNT] = {
	KEY(KEY_CLASS, "class", VAL_CLASS, 0xff),
	KEY(KEY_VERSION, "version", VAL_NUMBER, 0xff),
	KEY(KEY_METHOD, "method", VAL_METHOD, 0xff),
	KEY(KEY_ATTR, "attr", VAL_ATTR, 0xffff),
	KEY(KEY_ATTRMOD, "attrmod", VAL_NUMBER, 0xffffffff),
	KEY(KEY_TID, "tid", VAL_NUMBER, UINT64_MAX),
	KEY(KEY_STATUS, "status", VAL_NUMBER, 0xffff),
	KEY(KEY_LID, "lid", VAL_NUMBER, 0xffff),
	KEY(KEY_QP, "qp", VAL_NUMBER, 0xffffff),
	KEY(KEY_QKEY, "qkey", VAL_NUMBER, 0xffffffff),
	KEY(KEY_SL, "sl", VAL_NUMBER, 15),
	KEY(KEY_PKEY_INDEX, "pkey_index", VAL_NUMBER, 0xffff),
	KEY(KEY_PATH_BITS, "path_bits", VAL_NUMBER, 0x7f),
	KEY(KEY_GID, "gid", VAL_GID, 0),
	KEY(KEY_GID_INDEX, "gid_index", VAL_NUMBER, 0xff),
	KEY(KEY_HOP_LIMIT, "hop_limit", VAL_NUMBER, 0xff),
	KEY(KEY_TRAFFIC_CLASS, "traffic_class", VAL_NUMBER, 0xff),
	KEY(KEY_FLOW_LABEL, "flow_label", VAL_NUMBER, 0xfffff),
	KEY(KEY_DR, "dr", VAL_PATH, 0),
	KEY(KEY_DRSLID, "drslid", VAL_NUMBER, 0xffff),
	KEY(KEY_DRDLID, "drdlid", VAL_NUMBER, 0xffff),
	KEY(KEY_DIRECTION, "direction", VAL_NUMBER, 1),
	KEY(KEY_MKEY, "mkey", VAL_NUMBER, UINT64_MAX),
	KEY(KEY_COMP_MASK, "comp_mask", VAL_NUMBER, UINT64_MAX),
	KEY(KEY_SMKEY, "smkey", VAL_NUMBER, UINT64_MAX),
	KEY(KEY_ATTR_OFFSET, "attr_offset", VAL_NUMBER, 0xffff),
	KEY(KEY_OUI, "oui", VAL_NUMBER, 0xffffff),
	KEY(KEY_DATA, "data", VAL_HEX, 0),
	KEY(KEY_MAD, "mad", VAL_HEX, 0),
	KEY(KEY_TIMEOUT, "timeout", VAL_NUMBER, INT_MAX),
	KEY(KEY_RETRIES, "retries", VAL_NUMBER, INT_MAX),
	KEY(KEY_ERROR, "error", VAL_IGNORED, 0),
	KEY(KEY_LEN, "len", VAL_IGNORED, 0),
};

/*
 * Key lookup is on every token, so it is hashed: an open-addressing table
 * built once from text_keys[] (so adding a key is still one row above).
 */
#define KEY_HASH_SLOTS	128	/* power of two, well above KEY_COUNT */
_Static_assert(KEY_COUNT < KEY_HASH_SLOTS / 2, "key hash table too full");

static int8_t key_slots[KEY_HASH_SLOTS];
static pthread_once_t key_slots_once = PTHREAD_ONCE_INIT;

static unsigned int key_hash(const char *s, size_t n)
{
	return (unsigned int)(n * 7 + ascii_lower(s[0]) * 31 +
			      ascii_lower(s[n / 2]) * 5 +
			      ascii_lower(s[n - 1])) & (KEY_HASH_SLOTS - 1);
}

static void build_key_slots(void)
{
	int k;

	memset(key_slots, -1, sizeof(key_slots));
	for (k = 0; k < KEY_COUNT; k++) {
		unsigned int h = key_hash(text_keys[k].name, text_keys[k].len);

		while (key_slots[h] >= 0)
			h = (h + 1) & (KEY_HASH_SLOTS - 1);
		key_slots[h] = (int8_t)k;
	}
}

static int lookup_key(const char *s, size_t n)
{
	unsigned int h;
	int k;

	if (n == 0 || n >= sizeof(text_keys[0].name))
		return -1;
	pthread_once(&key_slots_once, build_key_slots);
	for (h = key_hash(s, n); (k = key_slots[h]) >= 0;
	     h = (h + 1) & (KEY_HASH_SLOTS - 1))
		if (text_keys[k].len == n &&
		    codec_name_equal(text_keys[k].name, s, n))
			return k;
	return -1;
}

bool madtext_is_blank(const char *line, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (line[i] == ' ' || line[i] == '\t')
			continue;
		return line[i] == '#';
	}
	return true;
}

static int parse_gid(const char *s, size_t n, uint8_t gid[16])
{
	char text[INET6_ADDRSTRLEN + 1];

	/* 32 hex digits, with or without 0x: the raw 16 bytes. */
	if (n == 34 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (n == 32 && codec_hex_decode(s, n, gid) < 0)
		return 0;
	if (n >= sizeof(text))
		return -EINVAL;
	memcpy(text, s, n);
	text[n] = '\0';
	return inet_pton(AF_INET6, text, gid) == 1 ? 0 : -EINVAL;
}

/* ibmad's path notation (smpquery -D): "0,p1,p2,...", one port per hop. */
static int parse_path(const char *s, size_t n, uint8_t *path, size_t *count,
		      char *err, size_t errlen, size_t col)
{
	size_t i = 0, elems = 0;

	while (i <= n) {
		size_t start = i;
		uint64_t port;

		while (i < n && s[i] != ',')
			i++;
		if (number_parse(s + start, i - start, &port) || port > 0xff)
			return codec_error(err, errlen, -EINVAL,
				"bad port '%.*s' in dr= at column %zu (want 0-255)",
				(int)(i - start), s + start, col + start);
		if (elems == IB_SUBNET_PATH_HOPS_MAX)
			return codec_error(err, errlen, -EINVAL,
				"dr= has more than %d hops at column %zu",
				IB_SUBNET_PATH_HOPS_MAX - 1, col);
		path[elems++] = (uint8_t)port;
		i++;	/* skip ',' (or step past the end) */
	}
	if (path[0] != 0)
		return codec_error(err, errlen, -EINVAL,
			"dr= must start with 0 (the local port) at column %zu",
			col);
	*count = elems;
	return 0;
}

/* A number for key k (a class or method number may not be 0). */
static int parse_number(struct scanned_line *sl, int k, const char *v,
			size_t n, size_t col, char *err, size_t errlen)
{
	const struct key_desc *kd = &text_keys[k];
	bool named = kd->kind == VAL_CLASS || kd->kind == VAL_METHOD;
	uint64_t num;

	if (number_parse(v, n, &num))
		return codec_error(err, errlen, -EINVAL,
			"bad number '%.*s' for %s= at column %zu", (int)n, v,
			kd->name, col);
	if (num > kd->max || (named && num == 0))
		return codec_error(err, errlen, -EINVAL,
			"%s=%.*s out of range (%s0x%" PRIx64 ") at column %zu",
			kd->name, (int)n, v, named ? "0x01-" : "max ",
			kd->max, col);
	sl->num[k] = num;
	return 0;
}

/* A class or method given by name. */
static int parse_name(struct scanned_line *sl, int k, const char *v, size_t n,
		      size_t col, char *err, size_t errlen)
{
	int value = k == KEY_CLASS ? madtext_class_from_name(v, n)
				   : madtext_method_from_name(v, n);

	if (value < 0)
		return codec_error(err, errlen, -EINVAL,
			"unknown %s '%.*s' at column %zu", text_keys[k].name,
			(int)n, v, col);
	sl->num[k] = (uint64_t)value;
	return 0;
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Convert the value of key k (col is the value's column). */
static int parse_value(struct scanned_line *sl, int k, const char *v, size_t n,
		       size_t col, char *err, size_t errlen)
{
	if (n == 0)
		return codec_error(err, errlen, -EINVAL,
			"empty value for %s= at column %zu", text_keys[k].name,
			col);

	switch (text_keys[k].kind) {
	case VAL_CLASS:
	case VAL_METHOD:
		if (is_digit(v[0]))
			break;
		return parse_name(sl, k, v, n, col, err, errlen);
	case VAL_ATTR:
		if (is_digit(v[0]))
			break;
		/* Attribute names depend on the class: textbuild resolves them. */
		sl->attr_by_name = true;
		sl->text[k] = v;
		sl->text_len[k] = n;
		return 0;
	case VAL_HEX:
		sl->text[k] = v;
		sl->text_len[k] = n;
		return 0;
	case VAL_GID:
		if (parse_gid(v, n, sl->gid))
			return codec_error(err, errlen, -EINVAL,
				"bad gid '%.*s' at column %zu (want IPv6 form or 32 hex digits)",
				(int)n, v, col);
		return 0;
	case VAL_PATH:
		return parse_path(v, n, sl->path, &sl->path_len, err, errlen,
				  col);
	case VAL_IGNORED:
		return 0;
	default:
		break;
	}
	return parse_number(sl, k, v, n, col, err, errlen);
}

/* The rest of a token from i: its end, or an error for a byte no line may
 * hold (control characters, DEL, non-ASCII). */
static int token_end(const unsigned char *p, size_t i, size_t len, size_t *end,
		     char *err, size_t errlen)
{
	while (i < len && is_token_byte(p[i]))
		i++;
	if (i < len && p[i] != ' ' && p[i] != '\t') {
		if (p[i] == '\r')
			return codec_error(err, errlen, -EINVAL,
				"carriage return at column %zu (CRLF line ending?)",
				i + 1);
		return codec_error(err, errlen, -EINVAL,
			"invalid byte 0x%02x at column %zu", p[i], i + 1);
	}
	*end = i;
	return 0;
}

/* The end of a hex value from i.  Hex values are most of a long line: find
 * their end with memchr; the decoder checks every byte anyway, junk
 * included. */
static size_t hex_value_end(const unsigned char *p, size_t i, size_t len)
{
	const unsigned char *sep = memchr(p + i, ' ', len - i);
	size_t end = sep ? (size_t)(sep - p) : len;

	sep = memchr(p + i, '\t', end - i);
	return sep ? (size_t)(sep - p) : end;
}

/* Mark key k, found at line[start..), seen. */
static int mark_key(int k, size_t start, struct scanned_line *sl, char *err,
		    size_t errlen)
{
	if (has(sl, k))
		return codec_error(err, errlen, -EINVAL,
			"duplicate key '%s' at column %zu (first at column %zu)",
			text_keys[k].name, start + 1, sl->column[k]);
	sl->present |= KEY_BIT(k);
	sl->column[k] = start + 1;
	return k;
}

/* A field key's value from i: a quoted string ('"' ends it, '\\' escapes
 * the next byte; spaces allowed inside) or a plain token.  Its end in *end. */
static int field_value_end(const unsigned char *p, size_t i, size_t len,
			   size_t *end, char *err, size_t errlen)
{
	size_t open = i;

	if (i == len || p[i] != '"')
		return token_end(p, i, len, end, err, errlen);
	for (i++; i < len && p[i] != '"'; i++) {
		if (p[i] == '\\' && i + 1 < len)
			i++;
		if (p[i] != ' ' && !is_token_byte(p[i]))
			return codec_error(err, errlen, -EINVAL,
				"invalid byte 0x%02x in a quoted value at column %zu (write \\xNN)",
				p[i], i + 1);
	}
	if (i == len)
		return codec_error(err, errlen, -EINVAL,
			"unterminated quote at column %zu", open + 1);
	i++;
	if (i < len && p[i] != ' ' && p[i] != '\t')
		return codec_error(err, errlen, -EINVAL,
			"junk after the closing quote at column %zu", i + 1);
	*end = i;
	return 0;
}

/* A key that is none of text_keys[] but has a '.': Attribute.Field. */
static bool is_field_key(const char *s, size_t n)
{
	return memchr(s, '.', n) != NULL;
}

/* Scan the key=value token at *pos and move *pos past it. */
static int scan_token(const char *line, size_t len, size_t *pos,
		      struct scanned_line *sl, char *err, size_t errlen)
{
	const unsigned char *p = (const unsigned char *)line;
	size_t start = *pos, i = start, value;
	int k, ret;

	while (i < len && is_token_byte(p[i]) && p[i] != '=')
		i++;
	if (i == start || i == len || p[i] != '=') {
		ret = token_end(p, i, len, &i, err, errlen);
		if (ret)
			return ret;
		return codec_error(err, errlen, -EINVAL,
			"expected key=value, got '%.*s' at column %zu",
			(int)(i - start), line + start, start + 1);
	}
	k = lookup_key(line + start, i - start);
	if (k < 0 && is_field_key(line + start, i - start)) {
		if (sl->first_field == SIZE_MAX)
			sl->first_field = start;
		return field_value_end(p, i + 1, len, pos, err, errlen);
	}
	if (k < 0)
		return codec_error(err, errlen, -EINVAL,
			"unknown key '%.*s' at column %zu", (int)(i - start),
			line + start, start + 1);
	k = mark_key(k, start, sl, err, errlen);
	if (k < 0)
		return k;

	value = ++i;
	if (text_keys[k].kind == VAL_HEX) {
		i = hex_value_end(p, i, len);
	} else {
		ret = token_end(p, i, len, &i, err, errlen);
		if (ret)
			return ret;
	}
	*pos = i;
	return parse_value(sl, k, line + value, i - value, value + 1, err,
			   errlen);
}

bool textscan_next_field(const struct scanned_line *sl, size_t *pos,
			 struct field_token *tok)
{
	const unsigned char *p = (const unsigned char *)sl->line;
	size_t i = *pos, start, eq, end;

	while (i < sl->len) {
		if (p[i] == ' ' || p[i] == '\t') {
			i++;
			continue;
		}
		start = i;
		for (eq = start; eq < sl->len && p[eq] != '='; eq++)
			;
		if (lookup_key(sl->line + start, eq - start) >= 0 ||
		    !is_field_key(sl->line + start, eq - start)) {
			while (i < sl->len && p[i] != ' ' && p[i] != '\t')
				i++;	/* hex values have no quotes either */
			continue;
		}
		/* textscan_line() accepted the line: no error here. */
		field_value_end(p, eq + 1, sl->len, &end, NULL, 0);
		tok->key = sl->line + start;
		tok->key_len = eq - start;
		tok->value = sl->line + eq + 1;
		tok->value_len = end - eq - 1;
		tok->column = start + 1;
		*pos = end;
		return true;
	}
	*pos = i;
	return false;
}

int textscan_line(const char *line, size_t len, struct scanned_line *sl,
		  char *err, size_t errlen)
{
	size_t i = 0;
	int ret;

	sl->present = 0;
	sl->attr_by_name = false;
	sl->line = line;
	sl->len = len;
	sl->first_field = SIZE_MAX;
	while (i < len) {
		if (line[i] == ' ' || line[i] == '\t') {
			i++;
			continue;
		}
		ret = scan_token(line, len, &i, sl, err, errlen);
		if (ret)
			return ret;
	}
	if (!sl->present && sl->first_field == SIZE_MAX)
		return codec_error(err, errlen, -EINVAL, "empty line");
	return 0;
}
