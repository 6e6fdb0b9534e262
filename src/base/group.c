/* Groups as the mount options name them (group.h). */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "umadfs/base/group.h"
#include "umadfs/base/number.h"

static int lookup_group(const char *name, gid_t *out)
{
	long hint = sysconf(_SC_GETGR_R_SIZE_MAX);
	size_t len = hint > 0 ? (size_t)hint : 1024;
	struct group gr, *found = NULL;
	char *buf = NULL;
	int r;

	/* A group with many members needs more than the hint. */
	for (;;) {
		char *bigger = realloc(buf, len);

		if (!bigger) {
			r = ENOMEM;
			break;
		}
		buf = bigger;
		r = getgrnam_r(name, &gr, buf, len, &found);
		if (r != ERANGE || len >= (1u << 20))
			break;
		len *= 2;
	}
	if (r == 0 && found)
		*out = gr.gr_gid;
	free(buf);
	if (r)
		return -r;
	return found ? 0 : -ENOENT;
}

int group_parse(const char *group, gid_t *out, char *why, size_t whylen)
{
	int r;

	if (group[0] >= '0' && group[0] <= '9') {
		uint64_t v;

		/* A number is a GID as chown takes it: it need not be named. */
		if (number_parse(group, strlen(group), &v) < 0 || v >= (gid_t)-1) {
			snprintf(why, whylen, "expected a group name or a GID below %u",
				 (unsigned)(gid_t)-1);
			return -EINVAL;
		}
		*out = (gid_t)v;
		return 0;
	}
	r = group[0] ? lookup_group(group, out) : -ENOENT;
	if (r < 0)
		snprintf(why, whylen, "%s", r == -ENOENT ? "no such group" :
			 strerror(-r));
	return r;
}
