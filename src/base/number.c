/* The one number grammar of umadfs (number.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "umadfs/base/number.h"

/* A hex digit's value plus one, 0 for any other byte: one load per digit,
 * as the MAD text path parses 100k+ lines/s. */
static const uint8_t hex_value[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static int parse_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 16)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned int d = hex_value[(unsigned char)s[i]];

		if (!d)
			return -EINVAL;
		v = v << 4 | (d - 1);
	}
	*out = v;
	return 0;
}

int number_parse(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_hex(s + 2, len - 2, out);
	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int number_parse_value(const char *s, size_t len, uint64_t min, uint64_t max,
		       uint64_t *out)
{
	uint64_t v;

	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		len--;
	if (number_parse(s, len, &v) < 0 || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int number_parse_setting(const char *s, size_t len, uint64_t max, bool complete,
			 uint64_t *out, char *why, size_t cap)
{
	if (!len || len >= NUMBER_SETTING_MAX || memchr(s, '\n', len)) {
		snprintf(why, cap, "expected one number from 0 to %" PRIu64, max);
		return -EINVAL;
	}
	if (number_parse(s, len, out) == 0 && *out <= max)
		return 0;
	/* Only "0x" is no number that more digits make one. */
	if (!complete && len == 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return -EAGAIN;
	snprintf(why, cap, "'%.*s' is not a number from 0 to %" PRIu64, (int)len, s,
		 max);
	return -EINVAL;
}
