/* The expected topology (expected.h): the expectation the sweep thread
 * judges against (the first complete sweep when none was given),
 * -o fabric_expected=PATH loaded at mount and saved at each write, and the
 * file fabric/expected: a writer's text read line by line as it is written
 * (a bad line fails the write that carries it) and taken at close(), when
 * something was written since the last.  Its snapshots are topofile.c's. */
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

#include "umadfs/base/log.h"
#include "umadfs/fabric/expected.h"
#include "umadfs/fabric/lasterror.h"
#include "umadfs/fabric/fabsnap.h"
#include "umadfs/fabric/fabtext.h"
#include "umadfs/fabric/sweeper.h"
#include "umadfs/fuse/stream.h"
#include "umadfs/fuse/tree.h"

struct exp_open;

static struct {
	pthread_mutex_t lock;
	struct fab_snap *snap;   /* the expectation, or NULL (lock) */
	struct exp_open *opens;  /* every open file, for expected_close (lock) */
	size_t pending;          /* bytes the writers' opens hold: their texts
				  * and their parsers (lock) */
	/* One text taken at a time, so that PATH and snap agree. */
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
	e = expected_topology_of(snap);
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
	fabtext_iso_time(when, sizeof(when), &e->time);
	log_info("fabric/expected: the sweep of %s is the expected topology: "
		 "%zu nodes, %u links", when, e->nnodes, e->stats.links);
}

/* ---- -o fabric_expected=PATH ---- */

/* The whole of a regular file of at most EXPECTED_TEXT_MAX bytes (a FIFO
 * or a device refused, never waited on): 0, or -errno with why. */
static int read_file(const char *path, char **text, size_t *len,
		     struct timespec *mtime, char *why, size_t cap)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	size_t have = 0, size = 65536;
	char *buf = NULL, *bigger;
	struct stat st;
	ssize_t n = 1;
	int err = 0;

	if (fd < 0) {
		err = -errno;
		snprintf(why, cap, "%s", strerror(-err));
		return err;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		snprintf(why, cap, "%s", strerror(-err));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		snprintf(why, cap, "not a regular file");
		goto out;
	}
	*mtime = st.st_mtim;
	while (n > 0) {
		if (have == size || !buf) {
			size = buf ? size * 2 : size;
			bigger = realloc(buf, size);
			if (!bigger) {
				err = -ENOMEM;
				snprintf(why, cap, "out of memory");
				goto out;
			}
			buf = bigger;
		}
		n = read(fd, buf + have, size - have);
		if (n < 0 && errno == EINTR)
			n = 1;
		else if (n < 0)
			err = -errno;
		else
			have += (size_t)n;
		if (have > EXPECTED_TEXT_MAX) {
			err = -EFBIG;
			snprintf(why, cap, "longer than %u MiB", EXPECTED_TEXT_MAX >> 20);
			goto out;
		}
	}
	if (err)
		snprintf(why, cap, "%s", strerror(-err));
out:
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*text = buf;
	*len = have;
	return 0;
}

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
		err = read_file(ex.path, &text, &len, &mtime, why, sizeof(why));
		if (err == -ENOENT)
			return 0; /* none yet: the first write makes it */
	}
	if (!err)
		err = expected_parse(text, len, &s, why, sizeof(why));
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

/* A text's snapshot made the expectation (s without nodes: none, the
 * next complete sweep), the text saved to PATH first.  0, or -errno with
 * the reason in last_error; the expectation is as it was then. */
static int apply(struct fab_snap *s, const char *text, size_t len)
{
	size_t nodes = s->nnodes;
	unsigned links = s->stats.links;
	char why[224];
	int err;

	if (!nodes) {
		fabsnap_put(s);
		s = NULL;
	}
	pthread_mutex_lock(&ex.apply_lock);
	err = ex.path ? save(text, len, why, sizeof(why)) : 0;
	if (!err)
		swap_in(s);
	pthread_mutex_unlock(&ex.apply_lock);
	if (err) {
		fabsnap_put(s);
		lasterror_set("expected: %s", why);
		return err;
	}
	if (nodes)
		log_info("fabric/expected: written: %zu nodes, %u links", nodes, links);
	else
		log_info("fabric/expected: cleared: the next complete sweep will be "
			 "the expected topology");
	return 0;
}

/* ---- fabric/expected ---- */

/* An open of fabric/expected: a reader's text, or a writer's. */
struct exp_open {
	struct exp_open *prev, *next; /* on ex.opens (ex.lock) */
	bool writer;
	/* A reader's: the expectation it opened (NULL: none) and its text. */
	struct fab_snap *snap;
	const char *text;
	bool owned;       /* text is ours to free */
	/* A writer's, guarded by lock (len: a reader's text's too): */
	pthread_mutex_t lock;
	char *buf;
	size_t len, cap;
	/* buf[0..len) read so far; NULL before a write, and after a take
	 * until the next write (which reads the whole text again). */
	struct expected_parser *parser;
	size_t held;      /* parser's bytes, counted in ex.pending */
	size_t taken;     /* len when last taken: a close takes more, or nothing */
	int err;          /* a write refused: each close fails so */
};

static void open_free(struct exp_open *o)
{
	pthread_mutex_lock(&ex.lock);
	if (o->prev)
		o->prev->next = o->next;
	else if (ex.opens == o)
		ex.opens = o->next;
	if (o->next)
		o->next->prev = o->prev;
	if (o->writer)
		ex.pending -= o->len + o->held;
	pthread_mutex_unlock(&ex.lock);
	if (o->writer)
		pthread_mutex_destroy(&o->lock);
	expected_parser_free(o->parser);
	if (o->owned)
		fabtext_free((char *)o->text, o->len);
	fabsnap_put(o->snap);
	free(o->buf);
	free(o);
}

/* A reader's text: the expectation, once there is a first sweep when
 * there is none (that read waits for it).  0, -EINTR or -ENOMEM. */
static int open_text(fuse_req_t req, struct exp_open *o)
{
	struct fab_snap *s = expected_get();

	if (!s) {
		struct fab_snap *cur;

		if (sweeper_first_snapshot(req, &cur) < 0)
			return -EINTR;
		fabsnap_put(cur);
		s = expected_get();
	}
	o->snap = s;
	if (s)
		o->text = fabtext_get(s, FAB_TEXT_TOPOLOGY, &o->len, &o->owned);
	return s && !o->text ? -ENOMEM : 0;
}

static void exp_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	bool writer = (fi->flags & O_ACCMODE) != O_RDONLY;
	struct exp_open *o;
	int err;

	if (writer && (fi->flags & O_APPEND)) {
		lasterror_set("expected: appending is refused: write a whole "
				   "topology (>, not >>)");
		fuse_reply_err(req, EINVAL);
		return;
	}
	o = calloc(1, sizeof(*o));
	if (!o) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	o->writer = writer;
	if (writer) {
		pthread_mutex_init(&o->lock, NULL);
	} else if ((err = open_text(req, o)) < 0) {
		open_free(o);
		fuse_reply_err(req, -err);
		return;
	}
	/* Only a writer's close has something to say (its text taken). */
	fi->noflush = !writer;
	fi->direct_io = 1;
	fi->fh = (uintptr_t)o;
	pthread_mutex_lock(&ex.lock);
	o->next = ex.opens;
	if (ex.opens)
		ex.opens->prev = o;
	ex.opens = o;
	pthread_mutex_unlock(&ex.lock);
	if (fuse_reply_open(req, fi) == -ENOENT)
		open_free(o); /* interrupted: no release will come */
}

static void exp_read(fuse_req_t req, struct node *n, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct exp_open *o = (struct exp_open *)(uintptr_t)fi->fh;

	if (o->writer) {
		fuse_reply_err(req, EBADF);
		return;
	}
	reply_text_slice(req, o->text, o->len, size, off);
}

/* n more bytes held by the writers' opens: 0, or -ENOSPC (nothing
 * counted) with the reason in last_error. */
static int hold(size_t n)
{
	bool room;

	pthread_mutex_lock(&ex.lock);
	room = n <= EXPECTED_PENDING_MAX - ex.pending;
	if (room)
		ex.pending += n;
	pthread_mutex_unlock(&ex.lock);
	if (!room)
		lasterror_set("expected: the opens being written hold %u MiB "
			      "already", EXPECTED_PENDING_MAX >> 20);
	return room ? 0 : -ENOSPC;
}

static void unhold(size_t n)
{
	pthread_mutex_lock(&ex.lock);
	ex.pending -= n;
	pthread_mutex_unlock(&ex.lock);
}

/* Room for size more bytes of o's text (o->lock held): 0 or -errno, the
 * reason in last_error. */
static int take_room(struct exp_open *o, size_t size, off_t off)
{
	size_t cap = o->cap ? o->cap : 65536;
	char *bigger;

	if (off < 0 || (size_t)off != o->len) {
		lasterror_set("expected: a write at offset %lld: a text is "
				   "written whole, in order (%zu bytes so far)",
				   (long long)off, o->len);
		return -EINVAL;
	}
	if (size > EXPECTED_TEXT_MAX - o->len) {
		lasterror_set("expected: a text longer than %u MiB",
				   EXPECTED_TEXT_MAX >> 20);
		return -EFBIG;
	}
	if (hold(size) < 0)
		return -ENOSPC;
	while (cap < o->len + size)
		cap *= 2;
	if (cap > o->cap) {
		bigger = realloc(o->buf, cap);
		if (!bigger) {
			unhold(size);
			lasterror_set("expected: out of memory");
			return -ENOMEM;
		}
		o->buf = bigger;
		o->cap = cap;
	}
	return 0;
}

static void drop_parser(struct exp_open *o)
{
	expected_parser_free(o->parser);
	o->parser = NULL;
	unhold(o->held);
	o->held = 0;
}

/* Reads the lines of o's text it has not read (o->lock held): 0, or
 * -errno with the reason in last_error (the parser dropped). */
static int feed(struct exp_open *o)
{
	char why[224] = "out of memory";
	size_t size;
	int err = 0;

	if (!o->parser && !(o->parser = expected_parser_new()))
		err = -ENOMEM;
	if (!err)
		err = expected_parser_feed(o->parser, o->buf, o->len, why, sizeof(why));
	if (err) {
		lasterror_set("expected: %s", why);
		drop_parser(o);
		return err;
	}
	size = expected_parser_size(o->parser);
	if (size > o->held) {
		if (hold(size - o->held) < 0) {
			drop_parser(o);
			return -ENOSPC;
		}
		o->held = size;
	}
	return 0;
}

static void exp_write(fuse_req_t req, struct node *n, const char *buf,
		      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct exp_open *o = (struct exp_open *)(uintptr_t)fi->fh;
	int err;

	pthread_mutex_lock(&o->lock);
	err = o->err ? -o->err : take_room(o, size, off);
	if (!err) {
		memcpy(o->buf + o->len, buf, size);
		o->len += size;
		err = feed(o);
	}
	if (err)
		o->err = -err;
	pthread_mutex_unlock(&o->lock);
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_write(req, size);
}

/* o's text, ended (o->lock held): the expectation it gives, or none for
 * the word clear; a text without a node line is refused.  0 or -errno,
 * the reason in last_error. */
static int take(struct exp_open *o)
{
	struct fab_snap *s = NULL;
	char why[224];
	bool clears;
	int err = o->parser ? 0 : feed(o);

	if (err)
		return err;
	err = expected_parser_finish(o->parser, o->buf, o->len, &s, why, sizeof(why));
	clears = expected_parser_clears(o->parser);
	drop_parser(o);
	if (err) {
		lasterror_set("expected: %s", why);
		return err;
	}
	if (!s->nnodes && !clears) {
		fabsnap_put(s);
		lasterror_set("expected: a text without a node line: the expected "
			      "topology is kept (write the word clear to clear it)");
		return -EINVAL;
	}
	return apply(s, o->buf, o->len);
}

/* At a close: the text, if anything was written since the last close
 * took it; 0 or -errno.  A refused write makes every close fail as it
 * did. */
static int take_open(struct exp_open *o)
{
	int err = 0;

	pthread_mutex_lock(&o->lock);
	if (o->err)
		err = -o->err;
	else if (o->taken != o->len)
		err = take(o);
	o->taken = o->len;
	pthread_mutex_unlock(&o->lock);
	return err;
}

static void exp_flush(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct exp_open *o = (struct exp_open *)(uintptr_t)fi->fh;

	fuse_reply_err(req, o->writer ? -take_open(o) : 0);
}

static void exp_release(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct exp_open *o = (struct exp_open *)(uintptr_t)fi->fh;

	/* Written after the last close's FLUSH (none in practice). */
	if (o->writer && take_open(o) < 0 && !o->err)
		log_warn("fabric/expected: a text taken at release was refused "
			 "(fabric/last_error says why)");
	open_free(o);
	fuse_reply_err(req, 0);
}

static off_t exp_size(struct node *n)
{
	struct fab_snap *s = expected_get();
	size_t len = s ? fabtext_size(s, FAB_TEXT_TOPOLOGY) : 0;

	fabsnap_put(s);
	return (off_t)len;
}

static time_t exp_mtime(struct node *n)
{
	struct fab_snap *s = expected_get();
	time_t t = s ? s->time.tv_sec : 0;

	fabsnap_put(s);
	return t ? t : time(NULL);
}

static const struct node_ops expected_ops = {
	.open = exp_open, .read = exp_read, .write = exp_write,
	.flush = exp_flush, .release = exp_release, .size = exp_size,
	.mtime = exp_mtime,
};

int expected_add(struct node *fabric_dir, const gid_t *group)
{
	struct node *n = tree_add(fabric_dir, "expected",
				  S_IFREG | (group ? 0664 : 0644), &expected_ops,
				  NULL, 0);

	if (!n)
		return -ENOMEM;
	if (group)
		n->gid = *group;
	return 0;
}

void expected_close(void)
{
	while (ex.opens)
		open_free(ex.opens);
	forget_config();
}
