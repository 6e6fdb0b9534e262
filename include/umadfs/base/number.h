/* Numbers as every umadfs interface reads them: MAD text keys, settings
 * files, mount options.  One grammar (docs/text-format.md, "Numbers"):
 * decimal digits, or 0x/0X and 1 to 16 hex digits; no sign, no spaces,
 * no octal; at most 2^64-1. */
#ifndef UMADFS_NUMBER_H
#define UMADFS_NUMBER_H

#include <stddef.h>
#include <stdint.h>

/* s[0..len) is exactly one number: 0, or -EINVAL. */
int number_parse(const char *s, size_t len, uint64_t *out);

/* A value written to a file or given as an option: one number, optionally
 * followed by spaces and newlines, from min to max: 0, or -EINVAL. */
int number_parse_value(const char *s, size_t len, uint64_t min, uint64_t max,
		       uint64_t *out);

#endif
