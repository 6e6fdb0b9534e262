/* Text files made at open (textfile.h): the per-open copies of a value, the
 * list of those still open, the values a stat hands to the next open, and
 * the line a writer of a one-value file has not ended yet. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/clock.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"

struct text_copy {
	struct text_copy *prev, *next; /* on the open list (open_lock) */
	size_t len;
	int err;          /* not 0: what reads fail with (textfile_open_late) */
	bool for_writing; /* no text: the open of a writer */
	bool privileged;  /* a writer's opener, as decided at open */
	/* A writer's value not ended by a newline yet, checked at its close
	 * (value_lock): */
	char line[TEXTFILE_VALUE_MAX];
	size_t line_len;
	char text[];
};

/* Guards every writer's line: taken around a check, so that a close
 * and a write of one open do not check it at once. */
static pthread_mutex_t value_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every copy still open, for textfile_drop_opens(): the kernel drops
 * the RELEASE of a file closed just before an unmount. */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct text_copy *opens;

static void text_copy_free(struct text_copy *s)
{
	pthread_mutex_lock(&open_lock);
	if (s->prev)
		s->prev->next = s->next;
	else
		opens = s->next;
	if (s->next)
		s->next->prev = s->prev;
	pthread_mutex_unlock(&open_lock);
	free(s);
}

/* A copy of len bytes of text (none for a writer), on the open list. */
static struct text_copy *text_copy_new(const char *text, size_t len)
{
	struct text_copy *s = malloc(sizeof(*s) + len);

	if (!s)
		return NULL;
	s->len = len;
	s->err = 0;
	s->for_writing = s->privileged = false;
	s->line_len = 0;
	if (len)
		memcpy(s->text, text, len);
	pthread_mutex_lock(&open_lock);
	s->prev = NULL;
	s->next = opens;
	if (opens)
		opens->prev = s;
	opens = s;
	pthread_mutex_unlock(&open_lock);
	return s;
}

/* Replies to the open; frees s if the opener was interrupted (then no
 * release will come). */
static void reply_open(fuse_req_t req, struct fuse_file_info *fi,
		       struct text_copy *s)
{
	fi->fh = (uintptr_t)s;
	/* Only a writer's close may have something to say (its value). */
	if (!s->for_writing)
		fi->noflush = 1;
	/* Reads must reach us whatever st_size said: the value is live. */
	fi->direct_io = 1;
	if (fuse_reply_open(req, fi) == -ENOENT)
		text_copy_free(s);
}

/* The value a stat made, kept for the open that follows it (tar, cp and
 * Python's copies stat, then open, then read st_size bytes): a live value
 * (a counter) may change between the two, and then the copy would be cut
 * or padded.  A few slots by inode, each taken by the first open within
 * HANDOFF_MS; handoff_lock guards them all. */
#define HANDOFF_SLOTS 64
#define HANDOFF_MS 50

struct handoff {
	fuse_ino_t ino; /* 0: empty */
	uint64_t gen;   /* the node's: not another node given its ino since */
	int64_t made_ms;
	int len;
	char text[TEXTFILE_MAX];
};

static pthread_mutex_t handoff_lock = PTHREAD_MUTEX_INITIALIZER;
static struct handoff *handoffs[HANDOFF_SLOTS];

static void handoff_put(const struct node *n, const char *text, int len)
{
	struct handoff **slot = &handoffs[n->ino % HANDOFF_SLOTS];

	pthread_mutex_lock(&handoff_lock);
	if (!*slot)
		*slot = malloc(sizeof(**slot));
	if (*slot) {
		(*slot)->ino = n->ino;
		(*slot)->gen = n->gen;
		(*slot)->made_ms = clock_now_ms();
		(*slot)->len = len;
		memcpy((*slot)->text, text, (size_t)len);
	}
	pthread_mutex_unlock(&handoff_lock);
}

/* Copies the value a recent stat of n made into buf; its length, or -1. */
static int handoff_take(const struct node *n, char *buf)
{
	struct handoff *h;
	int len = -1;

	pthread_mutex_lock(&handoff_lock);
	h = handoffs[n->ino % HANDOFF_SLOTS];
	if (h && h->ino == n->ino && h->gen == n->gen &&
	    clock_now_ms() - h->made_ms <= HANDOFF_MS) {
		len = h->len;
		memcpy(buf, h->text, (size_t)len);
		h->ino = 0;
	}
	pthread_mutex_unlock(&handoff_lock);
	return len;
}

void textfile_drop_opens(void)
{
	while (opens)
		text_copy_free(opens);
	for (int i = 0; i < HANDOFF_SLOTS; i++) {
		free(handoffs[i]);
		handoffs[i] = NULL;
	}
}

/* A copy of show's value; late: show's error (ENOENT aside) is the
 * reads'. */
static void open_copy(fuse_req_t req, struct node *n,
			  struct fuse_file_info *fi, textfile_show_fn show,
			  bool late)
{
	char buf[TEXTFILE_MAX];
	struct text_copy *s;
	int len;

	len = handoff_take(n, buf);
	if (len < 0)
		len = show(n, buf, sizeof(buf));
	if (len < 0 && (!late || len == -ENOENT)) {
		fuse_reply_err(req, -len);
		return;
	}
	s = text_copy_new(buf, len < 0 ? 0 : (size_t)len);
	if (!s) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	s->err = len < 0 ? -len : 0;
	reply_open(req, fi, s);
}

void textfile_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi,
		   textfile_show_fn show)
{
	open_copy(req, n, fi, show, false);
}

void textfile_open_text(fuse_req_t req, struct fuse_file_info *fi,
			const char *text, size_t len)
{
	struct text_copy *s = text_copy_new(text, len);

	if (!s) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	reply_open(req, fi, s);
}

void textfile_open_late(fuse_req_t req, struct node *n,
			struct fuse_file_info *fi, textfile_show_fn show)
{
	open_copy(req, n, fi, show, true);
}

void textfile_open_settable(fuse_req_t req, struct node *n,
			    struct fuse_file_info *fi, textfile_show_fn show,
			    textfile_privilege_fn privilege)
{
	struct text_copy *s;

	if ((fi->flags & O_ACCMODE) == O_RDONLY) {
		textfile_open(req, n, fi, show);
		return;
	}
	/* Writes go to the node's write handler: no text to keep, only who
	 * opened (register checks lines by it). */
	s = text_copy_new(NULL, 0);
	if (!s) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	s->for_writing = true;
	s->privileged = privilege && privilege(req);
	reply_open(req, fi, s);
}

int textfile_show_nothing(struct node *n, char *buf, size_t cap)
{
	return 0;
}

void textfile_open_action(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_open_settable(req, n, fi, textfile_show_nothing, NULL);
}

bool textfile_opener_privileged(const struct fuse_file_info *fi)
{
	const struct text_copy *s = (const struct text_copy *)(uintptr_t)fi->fh;

	return s && s->for_writing && s->privileged;
}

/* text[0..len) less its trailing spaces and newlines: the length left. */
static size_t trimmed(const char *text, size_t len)
{
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	return len;
}

/* The open's unfinished line and buf joined, checked (value_lock held):
 * 0, -EAGAIN or the refusal, as take says; the line kept while it waits
 * for its end. */
static int check_value(struct text_copy *s, struct node *n, const char *buf,
		       size_t size, textfile_value_fn take)
{
	size_t total = s->line_len + size;
	char *joined = NULL;
	const char *t = buf;
	bool complete;
	int r;

	if (s->line_len) {
		joined = malloc(total);
		if (!joined)
			return -ENOMEM;
		memcpy(joined, s->line, s->line_len);
		memcpy(joined + s->line_len, buf, size);
		t = joined;
	}
	/* Ended by its newline, or too long to be a value going on. */
	complete = t[total - 1] == '\n' || total > sizeof(s->line);
	r = take(n, t, trimmed(t, total), complete);
	s->line_len = 0;
	if (r == -EAGAIN) {
		memcpy(s->line, t, total);
		s->line_len = total;
	}
	free(joined);
	return r;
}

void textfile_write_value(fuse_req_t req, struct node *n, const char *buf,
			  size_t size, struct fuse_file_info *fi,
			  textfile_value_fn take)
{
	struct text_copy *s = (struct text_copy *)(uintptr_t)fi->fh;
	int r;

	pthread_mutex_lock(&value_lock);
	r = check_value(s, n, buf, size, take);
	pthread_mutex_unlock(&value_lock);
	if (r < 0 && r != -EAGAIN)
		fuse_reply_err(req, -r);
	else
		fuse_reply_write(req, size);
}

void textfile_flush_value(fuse_req_t req, struct node *n,
			  struct fuse_file_info *fi, textfile_value_fn take)
{
	struct text_copy *s = (struct text_copy *)(uintptr_t)fi->fh;
	int r = 0;

	pthread_mutex_lock(&value_lock);
	if (s->line_len) {
		r = take(n, s->line, trimmed(s->line, s->line_len), true);
		s->line_len = 0;
	}
	pthread_mutex_unlock(&value_lock);
	fuse_reply_err(req, -r);
}

void textfile_read(fuse_req_t req, struct node *n, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct text_copy *s = (struct text_copy *)(uintptr_t)fi->fh;
	char stack[TEXTFILE_MAX], *copy = stack;

	if (!s || s->for_writing) {
		fuse_reply_err(req, EBADF); /* opened for writing */
		return;
	}
	if (s->err) {
		fuse_reply_err(req, s->err);
		return;
	}

	if (off < 0 || (size_t)off >= s->len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > s->len - (size_t)off)
		size = s->len - (size_t)off;
	/* Reply from a copy: once the kernel has the reply, the reader may
	 * close and our release free the copy before writev() has even
	 * returned here (ASan's writev check runs after the call).  Texts
	 * over a page (textfile_open_text) are copied to the heap. */
	if (size > sizeof(stack) && !(copy = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memcpy(copy, s->text + off, size);
	fuse_reply_buf(req, copy, size);
	if (copy != stack)
		free(copy);
}

void textfile_release(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct text_copy *s = (struct text_copy *)(uintptr_t)fi->fh;

	if (s)
		text_copy_free(s);
	fuse_reply_err(req, 0);
}

off_t textfile_size(struct node *n, textfile_show_fn show)
{
	char buf[TEXTFILE_MAX];
	int len = show(n, buf, sizeof(buf));

	if (len < 0)
		return 0;
	handoff_put(n, buf, len);
	return len;
}
