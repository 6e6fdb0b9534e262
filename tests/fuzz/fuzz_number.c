// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the one number grammar (src/base/number.c) as the
 * settings files (timeout_ms, retries), fabric/interval_ms and the numeric
 * -o options (queue_len=, fabric_interval=) read it (see
 * docs/bad-input.md).
 *
 * The first input byte picks a range [min, max] (those of the files and
 * options, and the extremes); the rest is the value.  number_parse() must
 * agree with a model written from the grammar in docs/text-format.md
 * (decimal digits, or 0x/0X and 1 to 16 hex digits; no sign, no spaces; at
 * most 2^64-1), number_parse_value() with the model after trailing spaces
 * and newlines and the range; an accepted value printed in decimal and in
 * hex must parse back to itself.  number_parse_setting() (the trimmed
 * value, ranges from 0) takes what the model takes when the text is one
 * line of fewer than 32 bytes, and, unfinished, asks for more bytes
 * (-EAGAIN) only for "0x"; every refusal says why.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/number.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct { uint64_t min, max; } ranges[] = {
	{ 0, 3600000 },		/* timeout_ms */
	{ 0, 100 },		/* retries */
	{ 1, 1000000 },		/* -o queue_len= */
	{ 0, 86400000 },	/* interval_ms, -o fabric_interval= */
	{ 0, UINT64_MAX },
	{ UINT64_MAX, UINT64_MAX },
	{ 5, 4 },		/* empty */
};

static void die(const char *what, const char *s, size_t n)
{
	fprintf(stderr, "fuzz_number: %s\n  value: '%.*s'\n", what, (int)n, s);
	abort();
}

static int hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The grammar, written again: true and *out for a number. */
static bool model(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (n - 2 > 16)
			return false;
		for (size_t i = 2; i < n; i++) {
			int d = hex_digit((unsigned char)s[i]);

			if (d < 0)
				return false;
			v = v * 16 + (unsigned)d;
		}
		*out = v;
		return true;
	}
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i];

		if (d < '0' || d > '9')
			return false;
		d -= '0';
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, d, &v))
			return false;
	}
	*out = v;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t min, max, v = 0, mv = 0, again = 0;
	char *s, text[32];
	size_t n, trimmed;
	bool ok, mok;

	if (!size)
		return 0;
	min = ranges[data[0] % (sizeof(ranges) / sizeof(ranges[0]))].min;
	max = ranges[data[0] % (sizeof(ranges) / sizeof(ranges[0]))].max;
	n = size - 1;
	s = malloc(n ? n : 1);	/* exact size: ASan sees a read past it */
	if (!s)
		return 0;
	memcpy(s, data + 1, n);

	ok = number_parse(s, n, &v) == 0;
	mok = model(s, n, &mv);
	if (ok != mok || (ok && v != mv))
		die(ok ? "number_parse() took what the grammar does not, or misread it"
		       : "number_parse() refused a number", s, n);

	trimmed = n;
	while (trimmed && (s[trimmed - 1] == '\n' || s[trimmed - 1] == ' '))
		trimmed--;
	mok = model(s, trimmed, &mv) && mv >= min && mv <= max;
	ok = number_parse_value(s, n, min, max, &v) == 0;
	if (ok != mok || (ok && v != mv))
		die("number_parse_value() disagrees with the grammar and range", s, n);
	if (!min && trimmed) {
		bool one = trimmed < NUMBER_SETTING_MAX && !memchr(s, '\n', trimmed);
		char why[128] = "";

		for (int complete = 0; complete < 2; complete++) {
			int r = number_parse_setting(s, trimmed, max, complete, &v, why,
						     sizeof(why));
			bool again = !complete && trimmed == 2 && s[0] == '0' &&
				(s[1] == 'x' || s[1] == 'X');

			if ((r == 0) != (one && mok) || (r == 0 && v != mv) ||
			    (r == -EAGAIN) != (again && one) ||
			    (r == -EINVAL && !why[0]))
				die("number_parse_setting() disagrees with the model", s, n);
		}
	}
	if (ok) {
		int k = snprintf(text, sizeof(text), "%" PRIu64, v);

		if (number_parse(text, (size_t)k, &again) || again != v)
			die("decimal does not parse back", text, (size_t)k);
		k = snprintf(text, sizeof(text), "0x%" PRIx64, v);
		if (number_parse(text, (size_t)k, &again) || again != v)
			die("hex does not parse back", text, (size_t)k);
	}
	free(s);
	return 0;
}
