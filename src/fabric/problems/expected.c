/* The expected topology's store (expected.h): the expectation the sweep
 * thread judges against (the first complete sweep when none was given),
 * -o fabric_expected=PATH loaded at mount, and each text written to
 * fabric/expected (expectedfile.c) saved there and made the expectation.
 * Its snapshots are topofile.c's. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "umadfs/base/clock.h"
#include "umadfs/base/filetext.h"
#include "umadfs/base/log.h"
#include "umadfs/fabric/problems/expected.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/topofile.h"

static struct {
	pthread_mutex_t lock;
	struct fab_snap *snap;   /* the expectation, or NULL (lock) */
	/* One text applied at a time, so that PATH and snap agree. */
	pthread_mutex_t apply_lock;
	/* -o fabric_expected=: absolute, and its directory; set at mount. */
	char *path, *dir;
} ex = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.apply_lock = PTHREAD_MUTEX_INITIALIZER,
};

struct fab_snap *expected_get(void)
{
	struct fab_snap *s;

	pthread_mutex_lock(&ex.lock);
	s = ex.snap;
	if (s)
		fabsnap_get(s);
	pthread_mutex_unlock(&ex.lock);
	return s;
}

/* Makes s (or NULL: none, the next complete sweep) the expectation. */
static void swap_in(struct fab_snap *s)
{
	struct fab_snap *old;

	pthread_mutex_lock(&ex.lock);
	old = ex.snap;
	ex.snap = s;
	pthread_mutex_unlock(&ex.lock);
	fabsnap_put(old);
}

void expected_offer(struct fab_snap *snap)
{
	struct fab_snap *e;
	char when[32];
	bool none;

	pthread_mutex_lock(&ex.lock);
	none = !ex.snap;
	pthread_mutex_unlock(&ex.lock);
	/* Complete: it reached the fabric and every node it found answered. */
	if (!none || !snap->ok || !snap->nnodes || snap->stats.unreachable)
		return;
	e = topofile_of_sweep(snap);
	if (!e) {
		log_warn("fabric/expected: no memory for the sweep's topology");
		return;
	}
	pthread_mutex_lock(&ex.lock);
	none = !ex.snap;
	if (none)
		ex.snap = e;
	pthread_mutex_unlock(&ex.lock);
	if (!none) {
		fabsnap_put(e); /* a write came first */
		return;
	}
	clock_iso_time(when, sizeof(when), &e->time);
	log_info("fabric/expected: the sweep of %s is the expected topology: "
		 "%zu nodes, %u links", when, e->nnodes, e->stats.links);
}

/* ---- -o fabric_expected=PATH ---- */

/* path made absolute (the daemon's working directory may change), its
 * directory resolved: 0, or -errno with why. */
static int set_path(const char *path, char *why, size_t cap)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir = slash ? strndup(path, (size_t)(slash - path + (slash == path))) :
		strdup(".");
	char *real = NULL;
	int err = 0;

	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		snprintf(why, cap, "expected the path of a file");
		err = -EINVAL;
	} else if (!dir) {
		err = -ENOMEM;
	} else if (!(real = realpath(dir, NULL))) {
		err = -errno;
		snprintf(why, cap, "its directory: %s", strerror(-err));
	} else if (asprintf(&ex.path, "%s%s%s", real, strcmp(real, "/") ? "/" : "",
			    base) < 0) {
		ex.path = NULL;
		err = -ENOMEM;
	}
	if (err == -ENOMEM)
		snprintf(why, cap, "out of memory");
	free(dir);
	if (err)
		free(real);
	else
		ex.dir = real;
	return err;
}

static void forget_config(void)
{
	swap_in(NULL);
	free(ex.path);
	free(ex.dir);
	ex.path = ex.dir = NULL;
}

int expected_configure(const char *path)
{
	struct timespec mtime = { 0 };
	struct fab_snap *s = NULL;
	char why[256] = "", *text = NULL;
	size_t len = 0;
	int err;

	forget_config();
	if (!path)
		return 0;
	err = set_path(path, why, sizeof(why));
	if (!err) {
		err = filetext_read(ex.path, TOPOFILE_TEXT_MAX, &text, &len, &mtime,
				    why, sizeof(why));
		if (err == -ENOENT)
			return 0; /* none yet: the first write makes it */
	}
	if (!err)
		err = topofile_parse(text, len, &s, why, sizeof(why));
	free(text);
	if (err) {
		fprintf(stderr, "umadfs: fabric_expected=%s: %s\n", path, why);
		forget_config();
		return -EINVAL;
	}
	if (s->nnodes) {
		s->time = mtime;
		swap_in(s);
	} else {
		fabsnap_put(s);
	}
	return 0;
}

static int write_all(int fd, const char *text, size_t len)
{
	while (len) {
		ssize_t n = write(fd, text, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		text += n;
		len -= (size_t)n;
	}
	return 0;
}

/* text as PATH's new content, atomically: a file beside it with PATH's
 * mode and owner (0644 and ours for a new one), synced, then renamed over
 * it, and the rename synced. */
static int save(const char *text, size_t len, char *why, size_t cap)
{
	size_t plen = strlen(ex.path);
	char *tmp = malloc(plen + 8);
	mode_t mode = 0644;
	struct stat st;
	int fd, dfd, err = 0;

	if (!tmp) {
		snprintf(why, cap, "out of memory");
		return -ENOMEM;
	}
	memcpy(tmp, ex.path, plen);
	memcpy(tmp + plen, ".XXXXXX", 8);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (stat(ex.path, &st) == 0) {
		mode = st.st_mode & 07777;
		/* A daemon that is not root keeps the file its own. */
		if (fchown(fd, st.st_uid, st.st_gid) < 0 && errno != EPERM)
			err = -errno;
	}
	if (!err && fchmod(fd, mode) < 0)
		err = -errno;
	if (!err)
		err = write_all(fd, text, len);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, ex.path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	dfd = err ? -1 : open(ex.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd); /* the rename itself */
		close(dfd);
	}
out:
	if (err)
		snprintf(why, cap, "saving %s: %s", ex.path, strerror(-err));
	free(tmp);
	return err;
}

int expected_apply(struct fab_snap *s, const char *text, size_t len, char *why,
		   size_t cap)
{
	size_t nodes = s->nnodes;
	unsigned links = s->stats.links;
	int err;

	if (!nodes) {
		fabsnap_put(s);
		s = NULL;
	}
	pthread_mutex_lock(&ex.apply_lock);
	err = ex.path ? save(text, len, why, cap) : 0;
	if (!err)
		swap_in(s);
	pthread_mutex_unlock(&ex.apply_lock);
	if (err) {
		fabsnap_put(s);
		return err;
	}
	if (nodes)
		log_info("fabric/expected: written: %zu nodes, %u links", nodes, links);
	else
		log_info("fabric/expected: cleared: the next complete sweep will be "
			 "the expected topology");
	return 0;
}

void expected_close(void)
{
	forget_config();
}
