/* The one number grammar of umadfs (number.h). */
#include <errno.h>

#include "umadfs/base/number.h"

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 16)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		int d = hex_digit(s[i]);

		if (d < 0)
			return -EINVAL;
		v = v << 4 | (unsigned)d;
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
