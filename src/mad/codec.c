/* Helpers the MAD codec's files share: hex conversion (each digit by
 * number_hex_digit(), the one decoder), name comparison, error reasons
 * (codec_priv.h). */
#include "codec_priv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "umadfs/base/number.h"

int codec_error(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

bool codec_name_equal(const char *name, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!name[i] || ascii_lower(name[i]) != ascii_lower(s[i]))
			return false;
	}
	return name[n] == '\0';
}

const char codec_hex_pairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

ssize_t codec_hex_decode(const char *s, size_t n, uint8_t *out)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int bad = 0;
	size_t i;

	for (i = 0; i < n / 2; i++) {
		unsigned int hi = number_hex_digit(p[2 * i]);
		unsigned int lo = number_hex_digit(p[2 * i + 1]);

		bad |= hi | lo;
		out[i] = (uint8_t)((hi << 4) | (lo & 0xf));
	}
	if (n & 1)
		bad |= number_hex_digit(p[n - 1]);
	if (!(bad & NUMBER_HEX_BAD))
		return -1;
	/* Rare: find the culprit for the message. */
	for (i = 0; i < n; i++)
		if (number_hex_digit(p[i]) & NUMBER_HEX_BAD)
			break;
	return (ssize_t)i;
}
