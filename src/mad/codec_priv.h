/*
 * What the files of the MAD codec share and nobody else needs: hex
 * conversion, ASCII name comparison and error reasons.
 */
#ifndef UMADFS_MAD_CODEC_H
#define UMADFS_MAD_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* The D bit of a directed-route SMP shares the status word (IBA 14.2.1.2). */
#define DRSMP_STATUS_MASK	0x7fff

/* Write the reason (printf format) to err if errlen > 0, return ret. */
int codec_error(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ASCII-only case folding: names are ASCII and the locale must not matter. */
static inline unsigned char ascii_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

/* s[0..n) is name (NUL-terminated), ignoring ASCII case. */
bool codec_name_equal(const char *name, const char *s, size_t n);

/*
 * Decode n hex digits into n / 2 bytes at out.  Returns -1 if every digit is
 * hex (an odd last one included, though it is not decoded), else the index
 * of the first that is not (out then holds garbage).
 */
ssize_t codec_hex_decode(const char *s, size_t n, uint8_t *out);

/* Two lowercase hex digits per byte value. */
extern const char codec_hex_pairs[513];

/* Write n bytes as 2n lowercase hex digits; returns the end.  Inline: it
 * is most of what madtext_format() does. */
static inline char *codec_hex_encode(char *out, const uint8_t *in, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		memcpy(out, &codec_hex_pairs[2 * in[i]], 2);
		out += 2;
	}
	return out;
}

/* v in decimal; returns the end. */
static inline char *codec_put_dec(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* "0x" and at least min_digits lowercase hex digits; returns the end. */
static inline char *codec_put_hex(char *p, uint64_t v, int min_digits)
{
	int digits = 1;

	while (digits < 16 && (v >> (4 * digits)))
		digits++;
	if (digits < min_digits)
		digits = min_digits;
	*p++ = '0';
	*p++ = 'x';
	while (digits--)
		*p++ = "0123456789abcdef"[(v >> (4 * digits)) & 0xf];
	return p;
}

#endif
