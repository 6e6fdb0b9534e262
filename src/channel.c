/* Channels: bounded queues of received MADs, parked reads, poll handles.
 *
 * Parked reads and interrupts (see docs/architecture.md): a read that
 * finds nothing is parked as its fuse_req_t and answered later by the
 * receiver thread.  Its interrupt callback is registered before the read
 * becomes visible to that thread.  libfuse calls the callback at once, under
 * the request's own lock, if the interrupt came first: then the callback
 * only sets a flag that the parking code checks.  Once the read is parked,
 * the callback takes it off the list and replies EINTR.  A thread that
 * answers a parked read first clears the callback with
 * fuse_req_interrupt_func(req, NULL, NULL), which waits out a running one,
 * and never while holding the channel lock the callback takes. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/channel.h"
#include "umadfs/device.h"
#include "umadfs/ibumad.h"
#include "umadfs/log.h"
#include "umadfs/madtext.h"

struct channel_item {
	struct channel_item *next;
	size_t mad_len;
	uint8_t frame[]; /* 64-byte umad header + mad_len bytes */
};

struct parked_read {
	struct parked_read *next;
	fuse_req_t req;
	struct chan_open *of;
	size_t size;
	bool parked;      /* on ch's list (ch->lock) */
	bool interrupted; /* the interrupt came before parking (ch->lock) */
};

unsigned channel_queue_limit = CHANNEL_QUEUE_DEFAULT;

static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct channel *all_channels; /* guarded by all_lock */
static bool all_released;            /* guarded by all_lock */

static void channel_sink_deliver(struct mad_sink *sink, const void *frame,
				 size_t mad_len)
{
	channel_deliver((struct channel *)sink, frame, mad_len);
}

static const struct mad_sink_ops channel_sink_ops = {
	.deliver = channel_sink_deliver,
};

struct channel *channel_new(struct port_dev *pd, const char *name)
{
	struct channel *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	ch->sink.ops = &channel_sink_ops;
	ch->pd = pd;
	snprintf(ch->name, sizeof(ch->name), "%s", name);
	pthread_mutex_init(&ch->lock, NULL);
	ch->limit = channel_queue_limit;
	ch->timeout_ms = CHANNEL_TIMEOUT_DEFAULT;
	ch->retries = CHANNEL_RETRIES_DEFAULT;
	pthread_mutex_lock(&all_lock);
	ch->dead = all_released;
	ch->next_all = all_channels;
	all_channels = ch;
	pthread_mutex_unlock(&all_lock);
	return ch;
}

/* Takes every parked read off ch (ch->lock held); the caller answers them. */
static struct parked_read *take_parked(struct channel *ch)
{
	struct parked_read *list = ch->parked_head;

	for (struct parked_read *pr = list; pr; pr = pr->next)
		pr->parked = false;
	ch->parked_head = ch->parked_tail = NULL;
	return list;
}

/* Answers reads taken off a channel with an error.  No lock held. */
static void fail_reads(struct parked_read *list, int err)
{
	while (list) {
		struct parked_read *pr = list;

		list = pr->next;
		fuse_req_interrupt_func(pr->req, NULL, NULL);
		fuse_reply_err(pr->req, err);
		free(pr);
	}
}

void channel_free(struct channel *ch)
{
	struct channel **pp;
	struct parked_read *parked;

	if (ch->pd && ch->pd->engine)
		port_cancel_sink(ch->pd->engine, &ch->sink);
	pthread_mutex_lock(&all_lock);
	for (pp = &all_channels; *pp; pp = &(*pp)->next_all) {
		if (*pp == ch) {
			*pp = ch->next_all;
			break;
		}
	}
	pthread_mutex_unlock(&all_lock);
	pthread_mutex_lock(&ch->lock);
	ch->dead = true;
	parked = take_parked(ch);
	pthread_mutex_unlock(&ch->lock);
	fail_reads(parked, ENODEV);
	while (ch->head) {
		struct channel_item *it = ch->head;

		ch->head = it->next;
		free(it);
	}
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}

void channels_release_all(void)
{
	pthread_mutex_lock(&all_lock);
	all_released = true;
	for (struct channel *ch = all_channels; ch; ch = ch->next_all) {
		struct parked_read *parked;

		pthread_mutex_lock(&ch->lock);
		ch->dead = true;
		parked = take_parked(ch);
		pthread_mutex_unlock(&ch->lock);
		fail_reads(parked, ENODEV);
	}
	pthread_mutex_unlock(&all_lock);
}

void channel_set_error(struct channel *ch, const char *fmt, ...)
{
	char msg[sizeof(ch->last_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&ch->lock);
	memcpy(ch->last_error, msg, sizeof(msg));
	ch->stats.errors++;
	pthread_mutex_unlock(&ch->lock);
	log_info("%s/%d %s: %s", ch->pd ? ch->pd->ca->name : "?",
		 ch->pd ? ch->pd->portnum : -1, ch->name, msg);
}

struct chan_open *chan_open_new(struct channel *ch, bool text, bool private_channel)
{
	struct chan_open *of = calloc(1, sizeof(*of));

	if (!of)
		return NULL;
	of->ch = ch;
	of->text = text;
	of->private_channel = private_channel;
	pthread_mutex_lock(&ch->lock);
	of->next = ch->opens;
	ch->opens = of;
	ch->nopen++;
	pthread_mutex_unlock(&ch->lock);
	return of;
}

void chan_open_free(struct chan_open *of)
{
	struct channel *ch = of->ch;
	struct chan_open **pp;

	pthread_mutex_lock(&ch->lock);
	for (pp = &ch->opens; *pp; pp = &(*pp)->next) {
		if (*pp == of) {
			*pp = of->next;
			break;
		}
	}
	ch->nopen--;
	if (of->ph)
		fuse_pollhandle_destroy(of->ph);
	of->ph = NULL;
	pthread_mutex_unlock(&ch->lock);
	free(of->partial);
	free(of->send_frag);
	if (of->private_channel)
		channel_free(ch);
	free(of);
}

int channel_send(struct channel *ch, void *frame, size_t mad_len,
		 int timeout_ms, int retries)
{
	int r;

	if (!ch->pd || !ch->pd->engine)
		return -EIO;
	r = port_send(ch->pd->engine, &ch->sink, frame, mad_len, timeout_ms,
		      retries);
	if (r == 0) {
		pthread_mutex_lock(&ch->lock);
		ch->stats.sent++;
		pthread_mutex_unlock(&ch->lock);
	}
	return r;
}

/* ---- reading ---- */

/* Formats one item as a text line into a buffer of its own (malloc'd when
 * the stack one is too small).  Returns the length or -errno. */
static ssize_t format_item(const struct channel_item *it, char *stack,
			   size_t stack_cap, char **out)
{
	size_t cap = madtext_format_max(it->mad_len);
	const uint8_t *mad = it->frame + IBUMAD_HDR_SIZE;
	uint64_t tid = 0;
	ssize_t n;

	for (int i = 0; i < 8; i++)
		tid = tid << 8 | mad[8 + i];
	*out = stack;
	if (cap > stack_cap) {
		*out = malloc(cap);
		if (!*out)
			return -ENOMEM;
	}
	n = madtext_format(it->frame, it->mad_len, tid, *out, cap);
	if (n < 0 && *out != stack) {
		free(*out);
		*out = NULL;
	}
	return n;
}

/* Fills buf (size bytes) from the open file's partial line and whole queued
 * lines; a first line longer than size is cut and its rest kept in the
 * open file.  ch->lock held.  Returns the bytes filled or -errno. */
static ssize_t fill_text(struct chan_open *of, char *buf, size_t size)
{
	struct channel *ch = of->ch;
	char stack[2048];
	size_t n = 0;

	if (of->partial) {
		size_t left = of->partial_len - of->partial_off;
		size_t take = left < size ? left : size;

		memcpy(buf, of->partial + of->partial_off, take);
		of->partial_off += take;
		n = take;
		if (of->partial_off == of->partial_len) {
			free(of->partial);
			of->partial = NULL;
		}
	}
	while (n < size && ch->head) {
		struct channel_item *it = ch->head;
		char *line;
		ssize_t len = format_item(it, stack, sizeof(stack), &line);

		if (len < 0)
			return n ? (ssize_t)n : len;
		if (n + (size_t)len > size) {
			if (n) {
				if (line != stack)
					free(line);
				break;
			}
			/* Only part of this line fits: keep the rest. */
			of->partial = malloc((size_t)len - size);
			if (!of->partial) {
				if (line != stack)
					free(line);
				return -ENOMEM;
			}
			memcpy(of->partial, line + size, (size_t)len - size);
			of->partial_len = (size_t)len - size;
			of->partial_off = 0;
			len = (ssize_t)size;
		}
		memcpy(buf + n, line, (size_t)len);
		n += (size_t)len;
		if (line != stack)
			free(line);
		ch->head = it->next;
		if (!ch->head)
			ch->tail = NULL;
		ch->queued--;
		free(it);
	}
	return (ssize_t)n;
}

/* One frame per read, as the kernel's umad device: EINVAL when even one
 * MAD does not fit, ENOSPC when a longer RMPP message does not; the frame
 * stays queued either way.  ch->lock held. */
static ssize_t fill_frame(struct chan_open *of, char *buf, size_t size)
{
	struct channel *ch = of->ch;
	struct channel_item *it = ch->head;
	size_t len;

	if (!it)
		return 0;
	len = IBUMAD_HDR_SIZE + it->mad_len;
	if (size < len) {
		if (it->mad_len <= IBUMAD_MAD_SIZE ||
		    size < IBUMAD_HDR_SIZE + IBUMAD_MAD_SIZE)
			return -EINVAL;
		return -ENOSPC;
	}
	memcpy(buf, it->frame, len);
	ch->head = it->next;
	if (!ch->head)
		ch->tail = NULL;
	ch->queued--;
	free(it);
	return (ssize_t)len;
}

static ssize_t fill(struct chan_open *of, char *buf, size_t size)
{
	return of->text ? fill_text(of, buf, size) : fill_frame(of, buf, size);
}

static void on_interrupt(fuse_req_t req, void *data)
{
	struct parked_read *pr = data;
	struct chan_open *of = pr->of;
	struct channel *ch = of->ch;
	bool reply = false;

	pthread_mutex_lock(&ch->lock);
	if (pr->parked) {
		struct parked_read **pp;

		for (pp = &ch->parked_head; *pp; pp = &(*pp)->next) {
			if (*pp == pr) {
				*pp = pr->next;
				break;
			}
		}
		ch->parked_tail = NULL;
		for (struct parked_read *p = ch->parked_head; p; p = p->next)
			ch->parked_tail = p;
		pr->parked = false;
		reply = true;
	} else {
		pr->interrupted = true;
	}
	pthread_mutex_unlock(&ch->lock);
	if (reply) {
		fuse_reply_err(req, EINTR);
		free(pr);
	}
}

void channel_read(fuse_req_t req, struct chan_open *of, size_t size, bool nonblock)
{
	struct channel *ch = of->ch;
	struct parked_read *pr;
	char *buf = malloc(size ? size : 1);
	ssize_t n;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&ch->lock);
	n = fill(of, buf, size);
	if (n != 0 || ch->dead || nonblock || size == 0) {
		pthread_mutex_unlock(&ch->lock);
		if (n > 0)
			fuse_reply_buf(req, buf, (size_t)n);
		else if (n < 0)
			fuse_reply_err(req, (int)-n);
		else if (size == 0)
			fuse_reply_buf(req, NULL, 0);
		else
			fuse_reply_err(req, ch->dead ? ENODEV : EAGAIN);
		free(buf);
		return;
	}
	pthread_mutex_unlock(&ch->lock);
	free(buf);

	pr = calloc(1, sizeof(*pr));
	if (!pr) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pr->req = req;
	pr->of = of;
	pr->size = size;
	fuse_req_interrupt_func(req, on_interrupt, pr);

	pthread_mutex_lock(&ch->lock);
	if (pr->interrupted || ch->dead || ch->head) {
		/* Interrupted already, shut down, or data came meanwhile:
		 * answer here instead of parking. */
		bool interrupted = pr->interrupted, dead = ch->dead;

		pthread_mutex_unlock(&ch->lock);
		fuse_req_interrupt_func(req, NULL, NULL);
		free(pr);
		if (interrupted || dead) {
			fuse_reply_err(req, interrupted ? EINTR : ENODEV);
			return;
		}
		channel_read(req, of, size, nonblock);
		return;
	}
	pr->parked = true;
	if (ch->parked_tail)
		ch->parked_tail->next = pr;
	else
		ch->parked_head = pr;
	ch->parked_tail = pr;
	pthread_mutex_unlock(&ch->lock);
}

void channel_poll(fuse_req_t req, struct chan_open *of, struct fuse_pollhandle *ph)
{
	struct channel *ch = of->ch;
	unsigned revents = POLLOUT | POLLWRNORM;

	pthread_mutex_lock(&ch->lock);
	if (ch->head || of->partial)
		revents |= POLLIN | POLLRDNORM;
	if (ch->dead)
		revents |= POLLERR;
	if (ph) {
		/* Keep the newest handle only; the kernel re-polls anyway. */
		if (of->ph)
			fuse_pollhandle_destroy(of->ph);
		of->ph = ph;
	}
	pthread_mutex_unlock(&ch->lock);
	fuse_reply_poll(req, revents);
}

/* ---- delivery (receiver thread) ---- */

void channel_deliver(struct channel *ch, const void *frame, size_t mad_len)
{
	const struct ib_user_mad *hdr = frame;
	struct fuse_pollhandle **notify;
	unsigned nnotify = 0;
	struct channel_item *it;
	struct parked_read *pr;

	it = malloc(sizeof(*it) + IBUMAD_HDR_SIZE + mad_len);
	pthread_mutex_lock(&ch->lock);
	if (hdr->status == ETIMEDOUT)
		ch->stats.timeouts++;
	else
		ch->stats.received++;
	if (ch->dead || !it || (ch->queued >= ch->limit && !ch->parked_head)) {
		/* Full: the newest item is the one dropped, and counted. */
		ch->stats.dropped++;
		pthread_mutex_unlock(&ch->lock);
		free(it);
		return;
	}
	it->next = NULL;
	it->mad_len = mad_len;
	memcpy(it->frame, frame, IBUMAD_HDR_SIZE + mad_len);
	if (ch->tail)
		ch->tail->next = it;
	else
		ch->head = it;
	ch->tail = it;
	ch->queued++;

	pr = ch->parked_head;
	if (pr) {
		char *buf = malloc(pr->size);
		ssize_t n;

		ch->parked_head = pr->next;
		if (!ch->parked_head)
			ch->parked_tail = NULL;
		pr->parked = false;
		n = buf ? fill(pr->of, buf, pr->size) : -ENOMEM;
		pthread_mutex_unlock(&ch->lock);
		fuse_req_interrupt_func(pr->req, NULL, NULL);
		if (n > 0)
			fuse_reply_buf(pr->req, buf, (size_t)n);
		else
			fuse_reply_err(pr->req, n < 0 ? (int)-n : EAGAIN);
		free(buf);
		free(pr);
		return;
	}
	/* Wake pollers.  Notifications go out from this thread, which
	 * handles no FUSE request. */
	notify = ch->nopen ? malloc(ch->nopen * sizeof(*notify)) : NULL;
	for (struct chan_open *of = ch->opens; notify && of; of = of->next) {
		if (of->ph) {
			notify[nnotify++] = of->ph;
			of->ph = NULL;
		}
	}
	pthread_mutex_unlock(&ch->lock);
	for (unsigned i = 0; i < nnotify; i++) {
		fuse_lowlevel_notify_poll(notify[i]);
		fuse_pollhandle_destroy(notify[i]);
	}
	free(notify);
}
