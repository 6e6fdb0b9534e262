/* Parked reads, interrupts and poll handles, for any queue of the daemon.
 *
 * A read that finds nothing is parked as its fuse_req_t and answered later
 * from the thread that queues data.  Its interrupt callback is registered
 * before the read becomes visible to that thread.  If the interrupt came
 * first, libfuse calls the callback at once under the request's own lock,
 * where replying would free the request under libfuse's feet: the callback
 * then only sets a flag that the parking code checks.  Once the read is
 * parked, the callback takes it off the list and replies EINTR.  A thread
 * that answers a parked read first clears the callback with
 * fuse_req_interrupt_func(req, NULL, NULL), which waits out a running one
 * - never while holding q->lock, which the callback takes. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/clock.h"
#include "umadfs/fuse/readq.h"
#include "umadfs/fuse/stream.h"

struct parked_read {
	struct parked_read *next;
	fuse_req_t req;
	struct readq_open *of;
	size_t size;
	bool parked;      /* on q's list (q->lock) */
	bool interrupted; /* the interrupt came before parking (q->lock) */
};

/* Every queue, for readq_shutdown_all() and readq_for_each(). */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct readq *all_queues; /* guarded by all_lock */
static bool all_shut_down;        /* guarded by all_lock */

void readq_init(struct readq *q, const struct readq_ops *ops)
{
	pthread_mutex_init(&q->lock, NULL);
	q->ops = ops;
	q->parked_head = q->parked_tail = NULL;
	q->opens = NULL;
	q->nopen = 0;
	pthread_mutex_lock(&all_lock);
	q->dead = all_shut_down;
	q->dead_err = ENODEV;
	q->err = ops->initial_error ? ops->initial_error(q) : 0;
	q->next_all = all_queues;
	all_queues = q;
	pthread_mutex_unlock(&all_lock);
}

static void readq_unlist(struct readq *q)
{
	pthread_mutex_lock(&all_lock);
	for (struct readq **pp = &all_queues; *pp; pp = &(*pp)->next_all) {
		if (*pp == q) {
			*pp = q->next_all;
			break;
		}
	}
	pthread_mutex_unlock(&all_lock);
}

static void unlink_parked(struct readq *q, struct parked_read *pr)
{
	struct parked_read **pp, *prev = NULL;

	for (pp = &q->parked_head; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp == pr) {
			*pp = pr->next;
			if (q->parked_tail == pr)
				q->parked_tail = prev;
			break;
		}
	}
	pr->next = NULL;
	pr->parked = false;
}

/* Answers a read taken off the list.  No lock held. */
static void answer(struct parked_read *pr, const char *buf, ssize_t n)
{
	fuse_req_interrupt_func(pr->req, NULL, NULL);
	if (n >= 0)
		fuse_reply_buf(pr->req, buf, (size_t)n);
	else
		fuse_reply_err(pr->req, (int)-n);
	free(pr);
}

/* Takes every parked read off the list.  q->lock held. */
static struct parked_read *take_parked(struct readq *q)
{
	struct parked_read *list = q->parked_head;

	for (struct parked_read *pr = list; pr; pr = pr->next)
		pr->parked = false;
	q->parked_head = q->parked_tail = NULL;
	return list;
}

static void fail_all(struct parked_read *list, int err)
{
	while (list) {
		struct parked_read *pr = list;

		list = pr->next;
		answer(pr, NULL, -err);
	}
}

/* Notifies and drops the poll handles of the open files that are readable
 * (or all).  q->lock not held. */
static void notify_pollers(struct readq *q, bool all)
{
	struct fuse_pollhandle *few[8], **notify;
	unsigned nnotify = 0;

	pthread_mutex_lock(&q->lock);
	notify = q->nopen <= 8 ? few : malloc(q->nopen * sizeof(*notify));
	for (struct readq_open *of = q->opens; notify && of; of = of->next) {
		if (of->ph && (all || q->ops->readable(of))) {
			notify[nnotify++] = of->ph;
			of->ph = NULL;
		}
	}
	pthread_mutex_unlock(&q->lock);
	for (unsigned i = 0; i < nnotify; i++) {
		fuse_lowlevel_notify_poll(notify[i]);
		fuse_pollhandle_destroy(notify[i]);
	}
	if (notify != few)
		free(notify);
}

void readq_kill(struct readq *q, int err)
{
	struct parked_read *list;

	pthread_mutex_lock(&q->lock);
	if (!q->dead)
		q->dead_err = err;
	q->dead = true;
	list = take_parked(q);
	pthread_mutex_unlock(&q->lock);
	fail_all(list, err);
}

void readq_set_error(struct readq *q, int err)
{
	struct parked_read *list = NULL;

	pthread_mutex_lock(&q->lock);
	q->err = err;
	if (err)
		list = take_parked(q);
	pthread_mutex_unlock(&q->lock);
	if (err) {
		fail_all(list, err);
		notify_pollers(q, true);
	}
}

void readq_destroy(struct readq *q)
{
	readq_unlist(q);
	readq_kill(q, ENODEV);
	pthread_mutex_destroy(&q->lock);
}

void readq_shutdown_all(void)
{
	pthread_mutex_lock(&all_lock);
	all_shut_down = true;
	for (struct readq *q = all_queues; q; q = q->next_all)
		readq_kill(q, ENODEV);
	pthread_mutex_unlock(&all_lock);
}

void readq_for_each(const struct readq_ops *ops,
		    void (*fn)(struct readq *q, void *ctx), void *ctx)
{
	pthread_mutex_lock(&all_lock);
	for (struct readq *q = all_queues; q; q = q->next_all)
		if (q->ops == ops)
			fn(q, ctx);
	pthread_mutex_unlock(&all_lock);
}

void readq_drop_opens(void)
{
	for (;;) {
		struct readq_open *of = NULL;
		struct readq *q;

		/* Dropping an open file may destroy its queue: unlocked. */
		pthread_mutex_lock(&all_lock);
		for (q = all_queues; q && !of; q = q->next_all)
			if (q->ops->drop_open)
				of = q->opens;
		pthread_mutex_unlock(&all_lock);
		if (!of)
			return;
		of->q->ops->drop_open(of);
	}
}

void readq_open_link(struct readq *q, struct readq_open *of)
{
	of->q = q;
	of->ph = NULL;
	pthread_mutex_lock(&q->lock);
	of->next = q->opens;
	q->opens = of;
	q->nopen++;
	pthread_mutex_unlock(&q->lock);
}

void readq_open_unlink(struct readq_open *of)
{
	struct readq *q = of->q;
	struct readq_open **pp;

	pthread_mutex_lock(&q->lock);
	for (pp = &q->opens; *pp; pp = &(*pp)->next) {
		if (*pp == of) {
			*pp = of->next;
			q->nopen--;
			break;
		}
	}
	if (of->ph)
		fuse_pollhandle_destroy(of->ph);
	of->ph = NULL;
	pthread_mutex_unlock(&q->lock);
}

bool readq_has_parked(const struct readq *q)
{
	return q->parked_head != NULL;
}

static void on_interrupt(fuse_req_t req, void *data)
{
	struct parked_read *pr = data;
	struct readq *q = pr->of->q;
	bool reply = false;

	pthread_mutex_lock(&q->lock);
	if (pr->parked) {
		unlink_parked(q, pr);
		reply = true;
	} else {
		pr->interrupted = true;
	}
	pthread_mutex_unlock(&q->lock);
	if (reply) {
		fuse_reply_err(req, EINTR);
		free(pr);
	}
}

/* Answers the read now if it can: with data, the queue's error, ENODEV
 * once it is dead, EAGAIN for a nonblocking read.  Returns false, with
 * nothing sent, when the read has to wait. */
static bool read_now(fuse_req_t req, struct readq_open *of, size_t size,
		     bool nonblock, char *buf)
{
	struct readq *q = of->q;
	ssize_t n;
	bool dead;
	int dead_err;

	pthread_mutex_lock(&q->lock);
	if (q->err && !q->dead) {
		/* As the kernel's umad device once its port is gone: EIO,
		 * queued data or not. */
		int err = q->err;

		pthread_mutex_unlock(&q->lock);
		fuse_reply_err(req, err);
		return true;
	}
	n = q->ops->fill(of, buf, size);
	dead = q->dead;
	dead_err = q->dead_err;
	pthread_mutex_unlock(&q->lock);
	if (n > 0 || size == 0)
		fuse_reply_buf(req, buf, n > 0 ? (size_t)n : 0);
	else if (n < 0)
		fuse_reply_err(req, (int)-n);
	else if (dead || nonblock)
		fuse_reply_err(req, dead ? dead_err : EAGAIN);
	else
		return false;
	return true;
}

/* Parks the read for readq_wake().  Returns false, with nothing sent, if
 * the queue changed since read_now() looked (shut down, failed, data
 * came): the caller goes round. */
static bool park(fuse_req_t req, struct readq_open *of, size_t size)
{
	struct readq *q = of->q;
	struct parked_read *pr = calloc(1, sizeof(*pr));
	bool interrupted;

	if (!pr) {
		fuse_reply_err(req, ENOMEM);
		return true;
	}
	pr->req = req;
	pr->of = of;
	pr->size = size;
	fuse_req_interrupt_func(req, on_interrupt, pr);

	pthread_mutex_lock(&q->lock);
	if (!pr->interrupted && !q->dead && !q->err && !q->ops->readable(of)) {
		pr->parked = true;
		if (q->parked_tail)
			q->parked_tail->next = pr;
		else
			q->parked_head = pr;
		q->parked_tail = pr;
		pthread_mutex_unlock(&q->lock);
		return true;
	}
	pthread_mutex_unlock(&q->lock);
	/* Waits out a running callback: pr->interrupted is final after. */
	fuse_req_interrupt_func(req, NULL, NULL);
	interrupted = pr->interrupted;
	free(pr);
	if (interrupted)
		fuse_reply_err(req, EINTR);
	return interrupted;
}

void readq_read(fuse_req_t req, struct readq_open *of, size_t size, bool nonblock)
{
	char *buf = stream_read_buf(size);

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	while (!read_now(req, of, size, nonblock, buf) && !park(req, of, size))
		; /* the queue changed meanwhile: go round */
	stream_read_buf_done(buf, size);
}

void readq_poll(fuse_req_t req, struct readq_open *of, struct fuse_pollhandle *ph)
{
	struct readq *q = of->q;
	unsigned revents = POLLOUT | POLLWRNORM;

	pthread_mutex_lock(&q->lock);
	if (q->ops->readable(of))
		revents |= POLLIN | POLLRDNORM;
	if (q->dead)
		revents |= POLLERR;
	else if (q->err)
		revents = POLLERR; /* the kernel's umad poll, port gone */
	if (ph) {
		/* Keep the newest handle only; the kernel polls again anyway. */
		if (of->ph)
			fuse_pollhandle_destroy(of->ph);
		of->ph = ph;
	}
	pthread_mutex_unlock(&q->lock);
	fuse_reply_poll(req, revents);
}

void readq_fh_read(fuse_req_t req, struct node *n, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	readq_read(req, (struct readq_open *)(uintptr_t)fi->fh, size,
		   fi->flags & O_NONBLOCK);
}

void readq_fh_poll(fuse_req_t req, struct node *n, struct fuse_file_info *fi,
		   struct fuse_pollhandle *ph)
{
	readq_poll(req, (struct readq_open *)(uintptr_t)fi->fh, ph);
}

void readq_wake(struct readq *q)
{
	/* Parked reads first, oldest first, while there is data for them
	 * (an owner may keep items for some open files only). */
	for (;;) {
		struct parked_read *pr;
		size_t size;
		char *buf;
		ssize_t n;

		pthread_mutex_lock(&q->lock);
		pr = q->parked_head;
		while (pr && !q->ops->readable(pr->of))
			pr = pr->next;
		if (!pr) {
			pthread_mutex_unlock(&q->lock);
			break;
		}
		size = pr->size;
		buf = stream_read_buf(size);
		if (!buf) {
			pthread_mutex_unlock(&q->lock);
			break;
		}
		unlink_parked(q, pr);
		n = q->ops->fill(pr->of, buf, size);
		pthread_mutex_unlock(&q->lock);
		answer(pr, buf, n ? n : -EAGAIN);
		stream_read_buf_done(buf, size);
	}

	/* Then pollers.  Notifications go out from this thread, which
	 * handles no FUSE request. */
	notify_pollers(q, false);
}

/* One condition for every owner: RELEASEs are rare next to reads, and a
 * waiter checks its own count when woken. */
static pthread_mutex_t released_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t released = PTHREAD_COND_INITIALIZER;

void readq_released(void)
{
	pthread_mutex_lock(&released_lock);
	pthread_cond_broadcast(&released);
	pthread_mutex_unlock(&released_lock);
}

bool readq_wait_released(bool (*busy)(void *ctx), void *ctx, int timeout_ms)
{
	int64_t until = clock_now_ms() + timeout_ms;
	bool still;
	int r = 0;

	/* The count falls before readq_released() takes the lock, so a fall
	 * after our check under the lock still wakes us. */
	pthread_mutex_lock(&released_lock);
	while ((still = busy(ctx)) && r != ETIMEDOUT)
		r = clock_wait_until(&released, &released_lock, until);
	pthread_mutex_unlock(&released_lock);
	return still;
}

void readq_line_rest_clear(struct line_rest *rest)
{
	free(rest->buf);
	rest->buf = NULL;
	rest->len = rest->off = 0;
}

ssize_t readq_fill_lines(struct line_rest *rest, char *buf, size_t size,
			 const struct line_source *src)
{
	/* Room for a line with named fields (a PortInfo line is ~2 KiB, an
	 * SA record's more): one that does not fit costs a malloc. */
	char scratch[8192];
	bool one_line = size < READQ_BATCH_MIN;
	size_t n = 0;

	if (rest->buf) {
		size_t take = rest->len - rest->off;

		if (take > size)
			take = size;
		memcpy(buf, rest->buf + rest->off, take);
		rest->off += take;
		n = take;
		if (rest->off == rest->len)
			readq_line_rest_clear(rest);
		if (one_line && n)
			return (ssize_t)n; /* the rest of a line is its line */
	}
	while (n < size) {
		bool owned = false;
		char *line;
		ssize_t len = src->peek(src->ctx, scratch, sizeof(scratch), &line, &owned);

		if (len <= 0)
			return n ? (ssize_t)n : len;
		if (n + (size_t)len > size) {
			if (n) {
				if (owned)
					free(line);
				break;
			}
			/* Only part of this line fits: keep the rest. */
			rest->buf = malloc((size_t)len - size);
			if (!rest->buf) {
				if (owned)
					free(line);
				return -ENOMEM;
			}
			memcpy(rest->buf, line + size, (size_t)len - size);
			rest->len = (size_t)len - size;
			rest->off = 0;
			len = (ssize_t)size;
		}
		memcpy(buf + n, line, (size_t)len);
		n += (size_t)len;
		if (owned)
			free(line);
		src->pop(src->ctx);
		if (one_line)
			break;
	}
	return (ssize_t)n;
}
