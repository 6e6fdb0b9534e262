/* What every queue the daemon serves to readers has in common: reads
 * parked as FUSE requests until data comes, their interrupts, one poll
 * handle per open file, and release on shutdown.  The owner (a MAD
 * channel, a verbs receive queue) keeps its own items and says how to
 * fill a read from them. */
#ifndef UMADFS_READQ_H
#define UMADFS_READQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <fuse_lowlevel.h>

struct readq;
struct readq_open;
struct parked_read;

struct readq_ops {
	/* Fills buf (size bytes) for the open file from the owner's items,
	 * taking what it returns off the queue.  Called with q->lock held.
	 * Returns the bytes filled, 0 when there is nothing, or -errno
	 * (which leaves the data queued). */
	ssize_t (*fill)(struct readq_open *of, char *buf, size_t size);
	/* Whether a read of the open file would return data now (q->lock). */
	bool (*readable)(struct readq_open *of);
	/* Optional: the error reads start with (see readq_set_error), asked
	 * by readq_init under the lock of the list of all queues, so that a
	 * readq_for_each() that follows a change cannot miss this queue. */
	int (*initial_error)(struct readq *q);
	/* Optional: frees an open file whose RELEASE will never come
	 * (readq_drop_opens); it unlinks the file from its queue. */
	void (*drop_open)(struct readq_open *of);
};

struct readq {
	/* Guards the owner's items as well as the fields below. */
	pthread_mutex_t lock;
	const struct readq_ops *ops;
	struct parked_read *parked_head, *parked_tail;
	struct readq_open *opens; /* for poll notifications */
	unsigned nopen;
	bool dead;    /* shut down: reads fail with dead_err, POLLERR */
	int dead_err; /* ENODEV (shutdown, rmdir), EIO (the device is gone) */
	int err;   /* while set (and not dead): reads fail with it, poll POLLERR */
	struct readq *next_all; /* the list of all queues (its own lock) */
};

struct readq_open {
	struct readq *q;
	struct fuse_pollhandle *ph; /* the newest one (q->lock) */
	struct readq_open *next;    /* in q->opens (q->lock) */
};

/* Every queue is on one list from readq_init to readq_destroy, so that
 * shutdown reaches them all; after readq_shutdown_all() new ones start dead. */
void readq_init(struct readq *q, const struct readq_ops *ops);
/* Fails every parked read with err and marks the queue dead: later reads
 * fail with err too (the first kill's). */
void readq_kill(struct readq *q, int err);
void readq_destroy(struct readq *q);
/* Shutdown of the daemon: every parked read of every queue, and each later
 * read, fails with ENODEV.  A thread that handles no FUSE request. */
void readq_shutdown_all(void);
/* Calls fn on each queue of ops, under the list's lock (fn may take
 * q->lock and reply to requests, but not create or destroy queues). */
void readq_for_each(const struct readq_ops *ops,
		    void (*fn)(struct readq *q, void *ctx), void *ctx);
/* At exit after an aborted connection: drops every open file the kernel
 * will never release, of the queues whose ops have drop_open. */
void readq_drop_opens(void);
/* err != 0: fails every parked read and each later read with err, and
 * wakes pollers (POLLERR), until called again with 0.  Queued items stay
 * for reads after that.  A thread that handles no FUSE request. */
void readq_set_error(struct readq *q, int err);

void readq_open_link(struct readq *q, struct readq_open *of);
/* Destroys the open file's poll handle too. */
void readq_open_unlink(struct readq_open *of);

/* The FUSE side; each replies exactly once. */
void readq_read(fuse_req_t req, struct readq_open *of, size_t size, bool nonblock);
void readq_poll(fuse_req_t req, struct readq_open *of, struct fuse_pollhandle *ph);

/* The same as node_ops handlers, for files whose fi->fh points to a
 * struct that starts with its struct readq_open. */
struct node;
void readq_fh_read(fuse_req_t req, struct node *n, size_t size, off_t off,
		   struct fuse_file_info *fi);
void readq_fh_poll(fuse_req_t req, struct node *n, struct fuse_file_info *fi,
		   struct fuse_pollhandle *ph);

/* After the owner queued data (q->lock not held): answers parked reads or
 * wakes pollers.  Call from a thread that handles no FUSE request. */
void readq_wake(struct readq *q);

/* rmdir of a directory whose files are open fails with EBUSY, but close(2)
 * returns before the kernel sends the file's RELEASE: a script that closes
 * and removes at once would find its files still counted.  So rmdir waits
 * this long for files just closed, woken by readq_released(). */
#define READQ_RELEASE_WAIT_MS 500

/* An owner's count of open files fell to 0 (after RELEASE). */
void readq_released(void);
/* Waits until busy(ctx) is false or timeout_ms passed; returns busy(ctx).
 * busy runs under the wait's own lock and may take its owner's lock;
 * readq_released() must be called with the owner's lock dropped. */
bool readq_wait_released(bool (*busy)(void *ctx), void *ctx, int timeout_ms);
/* True when reads are waiting (q->lock held): the owner may then queue
 * past its limit, as the data leaves at once. */
bool readq_has_parked(const struct readq *q);

/* Text queues (MAD recv, rq recv, fabric events) read as whole lines; what
 * a short read cut off a line is kept for the next read of that open file.
 * A read of at least READQ_BATCH_MIN bytes takes as many whole lines as
 * fit; a smaller one takes one line (or what is left of one).  What a read
 * returns is gone from the queue, and the daemon never learns how much of
 * it the reader used: line readers (head, sed, awk, bash's read, stdio and
 * every language's buffered reader) read 4-8 KiB and stop after a line, so
 * they get no line they may not use; batch readers (cat, the examples, the
 * benchmark) read 64 KiB and more. */
#define READQ_BATCH_MIN (32u << 10)
struct line_rest {
	char *buf; /* NULL: nothing kept */
	size_t len, off;
};

struct line_source {
	/* Formats the queue's head line: returns its length and sets *line
	 * (scratch, or malloc'd with *owned set), 0 when the queue is empty,
	 * or -errno.  q.lock held. */
	ssize_t (*peek)(void *ctx, char *scratch, size_t cap, char **line,
			bool *owned);
	void (*pop)(void *ctx); /* removes the head line */
	void *ctx;
};

/* Fills buf with the kept rest first, then whole lines while they fit
 * (one, for a read smaller than READQ_BATCH_MIN); a first line longer than
 * size is cut and its rest kept.  q.lock held.  Returns the bytes filled
 * or -errno (with nothing filled). */
ssize_t readq_fill_lines(struct line_rest *rest, char *buf, size_t size,
			 const struct line_source *src);
void readq_line_rest_clear(struct line_rest *rest);

#endif
