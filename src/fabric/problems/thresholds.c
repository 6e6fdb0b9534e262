/* Error thresholds (thresholds.h): the counters ibqueryerrors checks
 * (pmacounters.c's list) by index, and the parsing of its threshold
 * file, stricter than ibqueryerrors (which ignores what it cannot read)
 * in saying why a line is refused; umadfs's own name beside them
 * (PortXmitWaitPerSecond). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/base/filetext.h"
#include "umadfs/base/number.h"
#include "umadfs/fabric/problems/thresholds.h"

int thresholds_field(unsigned i)
{
	return i < THRESHOLD_COUNTERS ? pmacounters_field(pmacounters_checked(i)) : -1;
}

const char *thresholds_name(unsigned i)
{
	return i < THRESHOLD_COUNTERS ?
		mad_field_name((enum MAD_FIELDS)thresholds_field(i)) : "";
}

int thresholds_index(int field)
{
	for (unsigned i = 0; i < THRESHOLD_COUNTERS; i++)
		if (thresholds_field(i) == field)
			return (int)i;
	return -1;
}

static int find_name(const char *s, size_t len)
{
	for (unsigned i = 0; i < THRESHOLD_COUNTERS; i++) {
		const char *name = thresholds_name(i);

		if (strlen(name) == len && !memcmp(name, s, len))
			return (int)i;
	}
	return -1;
}

/* PortXmitWaitPerSecond's value v[0..len): a number from 1 to
 * THRESHOLD_WAIT_MAX. */
static int parse_wait(const char *v, size_t len, struct thresholds *t, char *why,
		      size_t cap)
{
	uint64_t value;

	while (len && (v[len - 1] == ' ' || v[len - 1] == '\t' || v[len - 1] == '\r'))
		len--;
	if (number_parse(v, len, &value) < 0) {
		snprintf(why, cap, "%s: '%.*s' is not a number", THRESHOLD_WAIT_NAME,
			 (int)(len > 32 ? 32 : len), v);
		return -EINVAL;
	}
	if (value < 1 || value > THRESHOLD_WAIT_MAX) {
		snprintf(why, cap, "%s: %.*s is out of range (1 to %u PortXmitWait ticks"
			 " a second)", THRESHOLD_WAIT_NAME, (int)(len > 32 ? 32 : len), v,
			 THRESHOLD_WAIT_MAX);
		return -EINVAL;
	}
	t->wait_per_second = value;
	return 0;
}

/* One line that is not blank or a comment: Name=value. */
static int parse_line(const char *s, size_t len, struct thresholds *t,
		      char *why, size_t cap)
{
	const char *eq = memchr(s, '=', len);
	const char *v;
	size_t vlen;
	uint64_t value;
	int i;

	if (!eq) {
		snprintf(why, cap, "expected Name=value, as '%.*s' is not",
			 (int)(len > 64 ? 64 : len), s);
		return -EINVAL;
	}
	i = find_name(s, (size_t)(eq - s));
	if (i < 0 && (size_t)(eq - s) == strlen(THRESHOLD_WAIT_NAME) &&
	    !memcmp(s, THRESHOLD_WAIT_NAME, (size_t)(eq - s)))
		return parse_wait(eq + 1, len - (size_t)(eq + 1 - s), t, why, cap);
	if (i < 0) {
		snprintf(why, cap, "'%.*s' is not a counter ibqueryerrors "
			 "checks (%s ... %s) or %s", (int)(eq - s > 64 ? 64 : eq - s), s,
			 thresholds_name(0), thresholds_name(THRESHOLD_COUNTERS - 1),
			 THRESHOLD_WAIT_NAME);
		return -EINVAL;
	}
	v = eq + 1;
	vlen = len - (size_t)(v - s);
	while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t' || v[vlen - 1] == '\r'))
		vlen--;
	if (vlen > 1 && v[0] == '0' && v[1] >= '0' && v[1] <= '9') {
		snprintf(why, cap, "%s: '%.*s' has a leading 0, which "
			 "ibqueryerrors reads as octal: write it without", thresholds_name((unsigned)i),
			 (int)(vlen > 32 ? 32 : vlen), v);
		return -EINVAL;
	}
	if (number_parse(v, vlen, &value) < 0) {
		snprintf(why, cap, "%s: '%.*s' is not a number",
			 thresholds_name((unsigned)i), (int)(vlen > 32 ? 32 : vlen), v);
		return -EINVAL;
	}
	t->value[i] = value;
	return 0;
}

static bool blank(const char *s, size_t len)
{
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	return !len;
}

int thresholds_parse(const char *text, size_t len, struct thresholds *t,
		     char *why, size_t cap)
{
	struct thresholds n = THRESHOLDS_INIT;
	unsigned line = 0;

	while (len) {
		const char *nl = memchr(text, '\n', len);
		size_t l = nl ? (size_t)(nl - text) : len;
		char reason[160];

		line++;
		if (!blank(text, l) && text[0] != '#' && parse_line(text, l, &n, reason,
						      sizeof(reason)) < 0) {
			snprintf(why, cap, "line %u: %s", line, reason);
			return -EINVAL;
		}
		text += nl ? l + 1 : l;
		len -= nl ? l + 1 : l;
	}
	*t = n;
	return 0;
}

int thresholds_load(const char *path, struct thresholds *t, char *why,
		    size_t cap)
{
	char *text;
	size_t len;
	int err = filetext_read(path, THRESHOLDS_FILE_MAX, &text, &len, NULL, why, cap);

	if (!err)
		err = thresholds_parse(text, len, t, why, cap);
	free(text);
	return err;
}
