/* The one number grammar of umadfs (number.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "umadfs/base/number.h"

/* A digit's value ^ NUMBER_HEX_BAD, 0 (so NUMBER_HEX_BAD once read) for
 * any other byte: designated initializers cannot fill a default, hence
 * the inverted storage. */
const uint8_t number_hex_table[256] = {
	['0'] = 0x10, ['1'] = 0x11, ['2'] = 0x12, ['3'] = 0x13, ['4'] = 0x14,
	['5'] = 0x15, ['6'] = 0x16, ['7'] = 0x17, ['8'] = 0x18, ['9'] = 0x19,
	['a'] = 0x1a, ['b'] = 0x1b, ['c'] = 0x1c, ['d'] = 0x1d, ['e'] = 0x1e,
	['f'] = 0x1f,
	['A'] = 0x1a, ['B'] = 0x1b, ['C'] = 0x1c, ['D'] = 0x1d, ['E'] = 0x1e,
	['F'] = 0x1f,
};

static int parse_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 16)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned int d = number_hex_digit((unsigned char)s[i]);

		if (d & NUMBER_HEX_BAD)
			return -EINVAL;
		v = v << 4 | d;
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
