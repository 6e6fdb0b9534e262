/* Reading /proc/self/mountinfo (mountinfo.h): one parser of its lines for
 * both questions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "umadfs/mountinfo.h"

/* Calls fn for each mount, in the table's order (a later one is on top),
 * with its device and mount point, until fn returns true.  -errno if the
 * table cannot be read. */
static int each_mount(bool (*fn)(dev_t dev, const char *mnt, void *ctx), void *ctx)
{
	char line[4096], mnt[4096];
	unsigned maj, min;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ...".  Paths with spaces are
	 * octal-escaped there: they never equal a realpath() with one. */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, mnt) == 3 &&
		    fn(makedev(maj, min), mnt, ctx))
			break;
	fclose(f);
	return 0;
}

struct dev_of {
	const char *path;
	dev_t dev;
	bool found;
};

static bool note_dev_of(dev_t dev, const char *mnt, void *ctx)
{
	struct dev_of *q = ctx;

	if (strcmp(mnt, q->path) == 0) {
		q->dev = dev;
		q->found = true;
	}
	return false; /* the last match is the one on top */
}

int mountinfo_dev_of(const char *path, dev_t *out)
{
	struct dev_of q = { .path = realpath(path, NULL) };
	int r;

	if (!q.path)
		return -errno;
	r = each_mount(note_dev_of, &q);
	free((char *)q.path);
	if (r < 0)
		return r;
	if (!q.found)
		return -ENOENT;
	*out = q.dev;
	return 0;
}

struct has_dev {
	dev_t dev;
	bool found;
};

static bool note_has_dev(dev_t dev, const char *mnt, void *ctx)
{
	struct has_dev *q = ctx;

	q->found = dev == q->dev;
	return q->found;
}

bool mountinfo_has_dev(dev_t dev)
{
	struct has_dev q = { .dev = dev };

	return each_mount(note_has_dev, &q) < 0 || q.found;
}
