/* The words of a topology file's line (topofile_priv.h): numbers, hex
 * GUIDs, quoted names, "lid N lmc M", what ends a line, and each refusal
 * a line, a column and a reason. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "umadfs/base/number.h"

#include "topofile_priv.h"

int topolex_fail_at(struct topofile_parser *ps, unsigned line, size_t col,
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

const char *topolex_shown(char *buf, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < NAME_MAX_LEN; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

int topolex_scan_dec(const char **p, const char *end, unsigned max, unsigned *v)
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

int topolex_scan_hex(const char **p, const char *end, uint64_t *v)
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

bool topolex_next_word(const char **p, const char *end, const char **w,
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

int topolex_paren_guid(struct topofile_parser *ps, const char **p, const char *end,
		       uint64_t *v)
{
	const char *s = skip_ws(*p, end);

	if (s == end || *s != '(')
		return 1;
	s++;
	if (topolex_scan_hex(&s, end, v) < 0)
		return FAIL(ps, s, "expected a GUID of 1 to 16 hex digits");
	if (s == end || *s != ')')
		return FAIL(ps, s, "expected ')' after the GUID");
	*p = s + 1;
	return 0;
}

int topolex_name(struct topofile_parser *ps, const char **p, const char *end,
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

void topolex_skip_ext(const char **p, const char *end)
{
	const char *s = *p;
	unsigned n;

	if (end - s >= 5 && !memcmp(s, "[ext ", 5)) {
		s += 5;
		if (topolex_scan_dec(&s, end, 255, &n) == 0 && s < end && *s == ']')
			*p = s + 1;
	}
}

int topolex_line_end(struct topofile_parser *ps, const char *s, const char *end,
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

int topolex_lid_lmc(struct topofile_parser *ps, const char *s, const char *end,
		    uint16_t *lid, uint8_t *lmc)
{
	const char *w;
	size_t len;

	while (topolex_next_word(&s, end, &w, &len)) {
		bool is_lid = word_is(w, len, "lid");
		const char *v, *at;
		unsigned n;

		if (!is_lid && (!lmc || !word_is(w, len, "lmc")))
			continue;
		at = topolex_next_word(&s, end, &v, &len) ? v : w;
		if (!len || topolex_scan_dec(&v, v + len, is_lid ? 0xffff : 7, &n) < 0 ||
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
