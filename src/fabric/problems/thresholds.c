/* Error thresholds (thresholds.h): the counters ibqueryerrors checks
 * (pmacounters.c's list) by index, and the parsing of its threshold
 * file, stricter than ibqueryerrors (which ignores what it cannot read)
 * in saying why a line is refused, with umadfs's own names
 * (PortXmitWaitPerSecond, LinkFlap*) and their bounds. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
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

/* umadfs's own names: their slot in *t and their bounds. */
static const struct {
	const char *name;
	size_t off;
	uint64_t min, max;
} settings[] = {
	{ THRESHOLD_WAIT_NAME, offsetof(struct thresholds, wait_per_second), 1,
	  THRESHOLD_WAIT_MAX },
	{ "LinkFlapCount", offsetof(struct thresholds, flap_count), 1,
	  THRESHOLDS_FLAP_COUNT_MAX },
	{ "LinkFlapWindowSeconds", offsetof(struct thresholds, flap_window_s), 1,
	  THRESHOLDS_FLAP_WINDOW_S_MAX },
};

/* The slot of name s[0..len) in t, its name and bounds; NULL when it is
 * none of the file's names (why says). */
static uint64_t *find_slot(const char *s, size_t len, struct thresholds *t,
			   const char **name, uint64_t *min, uint64_t *max,
			   char *why, size_t cap)
{
	int i = find_name(s, len);

	*min = 0;
	*max = UINT64_MAX;
	if (i >= 0) {
		*name = thresholds_name((unsigned)i);
		return &t->value[i];
	}
	for (size_t k = 0; k < sizeof(settings) / sizeof(settings[0]); k++) {
		if (strlen(settings[k].name) != len || memcmp(settings[k].name, s, len))
			continue;
		*name = settings[k].name;
		*min = settings[k].min;
		*max = settings[k].max;
		return (uint64_t *)((char *)t + settings[k].off);
	}
	snprintf(why, cap, "'%.*s' is not a counter ibqueryerrors checks (%s ... %s) "
		 "nor PortXmitWaitPerSecond, LinkFlapCount or LinkFlapWindowSeconds",
		 (int)(len > 64 ? 64 : len), s, thresholds_name(0),
		 thresholds_name(THRESHOLD_COUNTERS - 1));
	return NULL;
}

/* One line that is not blank or a comment: Name=value. */
static int parse_line(const char *s, size_t len, struct thresholds *t,
		      char *why, size_t cap)
{
	const char *eq = memchr(s, '=', len);
	const char *v, *name;
	uint64_t value, min, max, *slot;
	size_t vlen;

	if (!eq) {
		snprintf(why, cap, "expected Name=value, as '%.*s' is not",
			 (int)(len > 64 ? 64 : len), s);
		return -EINVAL;
	}
	slot = find_slot(s, (size_t)(eq - s), t, &name, &min, &max, why, cap);
	if (!slot)
		return -EINVAL;
	v = eq + 1;
	vlen = len - (size_t)(v - s);
	while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t' || v[vlen - 1] == '\r'))
		vlen--;
	if (vlen > 1 && v[0] == '0' && v[1] >= '0' && v[1] <= '9') {
		snprintf(why, cap, "%s: '%.*s' has a leading 0, which "
			 "ibqueryerrors reads as octal: write it without", name,
			 (int)(vlen > 32 ? 32 : vlen), v);
		return -EINVAL;
	}
	if (number_parse(v, vlen, &value) < 0) {
		snprintf(why, cap, "%s: '%.*s' is not a number", name,
			 (int)(vlen > 32 ? 32 : vlen), v);
		return -EINVAL;
	}
	if (value < min || value > max) {
		snprintf(why, cap, "%s: %" PRIu64 " is out of range (%" PRIu64
			 " to %" PRIu64 ")", name, value, min, max);
		return -EINVAL;
	}
	*slot = value;
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
