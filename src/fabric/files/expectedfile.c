/* fabric/expected (expectedfile.h): a reader's text is the expectation's
 * topology; a writer's text is read line by line as it is written (a bad
 * line fails the write that carries it) and taken at close(), when
 * something was written since the last, by the store (expected.c). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/array.h"
#include "umadfs/base/log.h"
#include "umadfs/fabric/files/expectedfile.h"
#include "umadfs/fabric/files/fabtext.h"
#include "umadfs/fabric/files/lasterror.h"
#include "umadfs/fabric/problems/expected.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/topofile.h"
#include "umadfs/fabric/watch/sweeper.h"
#include "umadfs/fuse/stream.h"
#include "umadfs/fuse/tree.h"

struct exp_open;

static struct {
	pthread_mutex_t lock;
	struct exp_open *opens;  /* every open file, for expectedfile_close (lock) */
	size_t pending;          /* bytes the writers' opens hold: their texts
				  * and their parsers (lock) */
} ex = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* An open of fabric/expected: a reader's text, or a writer's. */
struct exp_open {
	struct exp_open *prev, *next; /* on ex.opens (ex.lock) */
	bool writer;
	/* A reader's: the expectation it opened (NULL: none) and its text. */
	struct fab_snap *snap;
	const char *text;
	/* A writer's, guarded by lock (len: a reader's text's too): */
	pthread_mutex_t lock;
	char *buf;
	size_t len, cap;
	/* buf[0..len) read so far; NULL before a write, and after a take
	 * until the next write (which reads the whole text again). */
	struct topofile_parser *parser;
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
	topofile_parser_free(o->parser);
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
		o->text = fabtext_get(s, FAB_TEXT_TOPOLOGY, &o->len);
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
	stream_reply_text_slice(req, o->text, o->len, size, off);
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
	if (off < 0 || (size_t)off != o->len) {
		lasterror_set("expected: a write at offset %lld: a text is "
				   "written whole, in order (%zu bytes so far)",
				   (long long)off, o->len);
		return -EINVAL;
	}
	if (size > TOPOFILE_TEXT_MAX - o->len) {
		lasterror_set("expected: a text longer than %u MiB",
				   TOPOFILE_TEXT_MAX >> 20);
		return -EFBIG;
	}
	if (hold(size) < 0)
		return -ENOSPC;
	if (ARRAY_GROW(o->buf, o->cap, o->len + size, 65536) < 0) {
		unhold(size);
		lasterror_set("expected: out of memory");
		return -ENOMEM;
	}
	return 0;
}

static void drop_parser(struct exp_open *o)
{
	topofile_parser_free(o->parser);
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

	if (!o->parser && !(o->parser = topofile_parser_new()))
		err = -ENOMEM;
	if (!err)
		err = topofile_parser_feed(o->parser, o->buf, o->len, why, sizeof(why));
	if (err) {
		lasterror_set("expected: %s", why);
		drop_parser(o);
		return err;
	}
	size = topofile_parser_size(o->parser);
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
	err = topofile_parser_finish(o->parser, o->buf, o->len, &s, why, sizeof(why));
	clears = topofile_parser_clears(o->parser);
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
	err = expected_apply(s, o->buf, o->len, why, sizeof(why));
	if (err)
		lasterror_set("expected: %s", why);
	return err;
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

int expectedfile_add(struct node *fabric_dir, const gid_t *group)
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

void expectedfile_close(void)
{
	while (ex.opens)
		open_free(ex.opens);
}
