/* Numbers as every umadfs interface reads them: MAD text keys, settings
 * files, mount options.  One grammar (docs/text-format.md, "Numbers"):
 * decimal digits, or 0x/0X and 1 to 16 hex digits; no sign, no spaces,
 * no octal; at most 2^64-1. */
#ifndef UMADFS_NUMBER_H
#define UMADFS_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A hex digit's value (0-15), with NUMBER_HEX_BAD set for any other
 * byte: one load and no branch, so that a decoder may OR the digits of a
 * whole value together and check once at the end (the MAD text path
 * decodes 100k+ lines/s).  The one hex digit decoder of umadfs. */
#define NUMBER_HEX_BAD 0x10
extern const uint8_t number_hex_table[256];
static inline unsigned number_hex_digit(unsigned char c)
{
	return number_hex_table[c] ^ NUMBER_HEX_BAD;
}

/* s[0..len) is exactly one number: 0, or -EINVAL. */
int number_parse(const char *s, size_t len, uint64_t *out);

/* A value written to a file or given as an option: one number, optionally
 * followed by spaces and newlines, from min to max: 0, or -EINVAL. */
int number_parse_value(const char *s, size_t len, uint64_t min, uint64_t max,
		       uint64_t *out);

/* A setting's value as a file holds it (the text written, trailing spaces
 * and newlines cut): one number from 0 to max, 0 with *out; -EINVAL with
 * why ("expected one number from 0 to MAX" for none, several lines or
 * NUMBER_SETTING_MAX bytes or more; "'TEXT' is not a number from 0 to
 * MAX"); or, for a text its writer has not ended (complete false) that
 * more bytes could make a number ("0x"), -EAGAIN. */
#define NUMBER_SETTING_MAX 32
int number_parse_setting(const char *s, size_t len, uint64_t max, bool complete,
			 uint64_t *out, char *why, size_t cap);

#endif
