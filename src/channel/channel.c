/* Channels: bounded queues of received MADs, read as text lines or as
 * umad frames.  Parking, interrupts and poll live in readq.c. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/channel/channel.h"
#include "umadfs/ca/device.h"
#include "umadfs/mad/mad.h"
#include "umadfs/base/log.h"
#include "umadfs/mad/madtext.h"

struct channel_item {
	struct channel_item *next;
	size_t mad_len;
	uint8_t frame[]; /* 64-byte umad header + mad_len bytes */
};

unsigned channel_queue_limit = CHANNEL_QUEUE_DEFAULT;

/* Items of one MAD (the common size) are kept for reuse once read, up to
 * this many per channel: a malloc and a free per MAD, one in each thread,
 * cost more than the rest of the queueing. */
#define SPARE_MAX 64
#define ITEM_SIZE(mad_len) (sizeof(struct channel_item) + UMAD_FRAME_HDR_SIZE + \
			    ((mad_len) > MAD_SIZE ? (mad_len) : MAD_SIZE))

static bool channel_queue(struct channel *ch, const void *frame, size_t mad_len);

/* The engine queues a drain's worth of frames, then flushes once. */
static void channel_sink_deliver(struct mad_sink *sink, const void *frame,
				 size_t mad_len)
{
	channel_queue((struct channel *)sink, frame, mad_len);
}

static void channel_sink_flush(struct mad_sink *sink)
{
	readq_wake(&((struct channel *)sink)->q);
}

static const struct mad_sink_ops channel_sink_ops = {
	.deliver = channel_sink_deliver, .flush = channel_sink_flush,
};

static struct channel *channel_of_queue(struct readq *q)
{
	return (struct channel *)((char *)q - offsetof(struct channel, q));
}

static ssize_t channel_fill(struct readq_open *ro, char *buf, size_t size);
static bool channel_readable(struct readq_open *ro);
static int channel_initial_error(struct readq *q);
static void channel_drop_open(struct readq_open *ro);

static const struct readq_ops channel_readq_ops = {
	.fill = channel_fill, .readable = channel_readable,
	.initial_error = channel_initial_error, .drop_open = channel_drop_open,
};

struct channel *channel_new(struct ca_port *pd, const char *name)
{
	struct channel *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	ch->sink.ops = &channel_sink_ops;
	ch->pd = pd;
	snprintf(ch->name, sizeof(ch->name), "%s", name);
	ch->refs = 1;
	ch->limit = channel_queue_limit;
	ch->timeout_ms = CHANNEL_TIMEOUT_DEFAULT;
	ch->retries = CHANNEL_RETRIES_DEFAULT;
	readq_init(&ch->q, &channel_readq_ops);
	return ch;
}

struct mad_engine *channel_engine(struct channel *ch, int *err)
{
	return ch->pd ? ca_port_engine(ch->pd, err) : NULL;
}

void channel_engine_done(struct channel *ch)
{
	ca_port_engine_done(ch->pd);
}

/* A new channel starts with its port's transport state (readq_ops). */
static int channel_initial_error(struct readq *q)
{
	struct channel *ch = channel_of_queue(q);
	int err = 0;
	struct mad_engine *engine = channel_engine(ch, &err);

	/* A port whose CA is gone (-ENODEV) fails reads as its channels
	 * did; one whose device never opened waits, as it always has. */
	if (!engine)
		return err == -ENODEV ? EIO : 0;
	err = engine_transport(engine, NULL, 0);
	channel_engine_done(ch);
	return err;
}

static void channel_unregister(struct channel *ch)
{
	struct mad_engine *engine = channel_engine(ch, NULL);

	if (engine) {
		engine_unregister_sink(engine, &ch->sink);
		channel_engine_done(ch);
	}
}

void channel_shut(struct channel *ch)
{
	channel_unregister(ch);
	readq_kill(&ch->q, ENODEV);
}

void channel_get(struct channel *ch)
{
	__atomic_add_fetch(&ch->refs, 1, __ATOMIC_RELAXED);
}

static void free_items(struct channel_item *it)
{
	while (it) {
		struct channel_item *next = it->next;

		free(it);
		it = next;
	}
}

static void channel_free(struct channel *ch)
{
	channel_unregister(ch);
	readq_destroy(&ch->q);
	free_items(ch->head);
	free_items(ch->spare);
	free(ch);
}

void channel_put(struct channel *ch)
{
	if (__atomic_sub_fetch(&ch->refs, 1, __ATOMIC_ACQ_REL) == 0)
		channel_free(ch);
}

/* At exit (readq_drop_opens): may free its private channel. */
static void channel_drop_open(struct readq_open *ro)
{
	chan_open_free((struct chan_open *)ro);
}

struct transport_change {
	struct ca_port *pd;
	int err;
};

static void channel_set_transport(struct readq *q, void *ctx)
{
	struct channel *ch = channel_of_queue(q);
	const struct transport_change *tc = ctx;

	if (ch->pd == tc->pd)
		readq_set_error(q, tc->err);
}

void channels_set_transport(struct ca_port *pd, int err)
{
	struct transport_change tc = { pd, err };

	readq_for_each(&channel_readq_ops, channel_set_transport, &tc);
}

/* Its port is gone: reads fail with EIO for good, nothing stays queued. */
static void channel_port_gone(struct readq *q, void *ctx)
{
	struct channel *ch = channel_of_queue(q);
	struct channel_item *items;

	if (ch->pd != ctx)
		return;
	readq_set_error(q, EIO);
	pthread_mutex_lock(&q->lock);
	items = ch->head;
	ch->head = ch->tail = NULL;
	ch->queued = 0;
	pthread_mutex_unlock(&q->lock);
	free_items(items);
}

void channels_port_gone(struct ca_port *pd)
{
	readq_for_each(&channel_readq_ops, channel_port_gone, pd);
}

void channel_set_error(struct channel *ch, const char *fmt, ...)
{
	char msg[sizeof(ch->last_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&ch->q.lock);
	memcpy(ch->last_error, msg, sizeof(msg));
	ch->stats.errors++;
	pthread_mutex_unlock(&ch->q.lock);
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
	readq_open_link(&ch->q, &of->ro);
	return of;
}

void chan_open_free(struct chan_open *of)
{
	struct channel *ch = of->ch;

	readq_open_unlink(&of->ro);
	line_rest_clear(&of->rest);
	free(of->send_frag);
	if (of->private_channel)
		channel_put(ch);
	if (of->user_of &&
	    __atomic_sub_fetch(&of->user_of->nusers, 1, __ATOMIC_ACQ_REL) == 0)
		readq_released();
	free(of);
}

static bool channel_in_use(void *ctx)
{
	struct channel *ch = ctx;

	return __atomic_load_n(&ch->nusers, __ATOMIC_ACQUIRE) != 0;
}

int channel_wait_unused(struct channel *ch)
{
	return readq_wait_released(channel_in_use, ch, READQ_RELEASE_WAIT_MS) ?
		-EBUSY : 0;
}

int channel_send(struct channel *ch, void *frame, size_t mad_len,
		 int timeout_ms, int retries)
{
	struct mad_engine *engine = channel_engine(ch, NULL);
	int r;

	if (!engine)
		return -EIO;
	r = engine_send(engine, &ch->sink, frame, mad_len, timeout_ms, retries);
	channel_engine_done(ch);
	/* Not under q.lock, which the receiver takes for every answer. */
	if (r == 0)
		__atomic_add_fetch(&ch->sent, 1, __ATOMIC_RELAXED);
	return r;
}

void channel_strerror(struct channel *ch, int r, char *buf, size_t len)
{
	char why[320] = "";
	struct mad_engine *engine;
	int down;

	if (r == -EIO && (engine = channel_engine(ch, NULL)) == NULL && ch->pd) {
		snprintf(buf, len, "%s (the port has no umad device: its CA is "
			 "gone or could not be opened)", strerror(EIO));
		return;
	}
	if (r == -EIO && ch->pd) {
		down = engine_transport(engine, why, sizeof(why));
		channel_engine_done(ch);
		if (down)
			snprintf(buf, len, "%s (the port's transport is down: %s)",
				 strerror(EIO), why);
		else if (why[0])
			snprintf(buf, len, "%s (%s)", strerror(EIO), why);
		else
			snprintf(buf, len, "%s", strerror(EIO));
		return;
	}
	snprintf(buf, len, "%s", strerror(-r));
}

/* ---- reading ---- */

/* The head item as a text line (line_source.peek).  q.lock held. */
static ssize_t peek_line(void *ctx, char *scratch, size_t cap, char **line,
			 bool *owned)
{
	struct channel *ch = ctx;
	const struct channel_item *it = ch->head;
	const uint8_t *mad;
	size_t need;
	uint64_t tid = 0;
	ssize_t n;

	if (!it)
		return 0;
	mad = it->frame + UMAD_FRAME_HDR_SIZE;
	for (int i = 0; i < 8; i++)
		tid = tid << 8 | mad[8 + i];
	need = madtext_format_max(it->mad_len);
	*line = scratch;
	*owned = need > cap;
	if (*owned) {
		*line = malloc(need);
		if (!*line)
			return -ENOMEM;
		cap = need;
	}
	n = madtext_format(it->frame, it->mad_len, tid, *line, cap);
	if (n <= 0 && *owned)
		free(*line);
	return n;
}

static void pop_item(void *ctx)
{
	struct channel *ch = ctx;
	struct channel_item *it = ch->head;

	ch->head = it->next;
	if (!ch->head)
		ch->tail = NULL;
	ch->queued--;
	if (it->mad_len <= MAD_SIZE && ch->nspare < SPARE_MAX) {
		it->next = ch->spare;
		ch->spare = it;
		ch->nspare++;
	} else {
		free(it);
	}
}

/* Whole lines, with partial-line carry-over per open file.  q.lock held. */
static ssize_t fill_text(struct chan_open *of, char *buf, size_t size)
{
	const struct line_source src = {
		.peek = peek_line, .pop = pop_item, .ctx = of->ch,
	};

	return readq_fill_lines(&of->rest, buf, size, &src);
}

/* One frame per read, as the kernel's umad device: EINVAL when even one
 * MAD does not fit, ENOSPC when a longer RMPP message does not; the frame
 * stays queued either way.  q.lock held. */
static ssize_t fill_frame(struct chan_open *of, char *buf, size_t size)
{
	struct channel *ch = of->ch;
	struct channel_item *it = ch->head;
	size_t len;

	if (!it)
		return 0;
	len = UMAD_FRAME_HDR_SIZE + it->mad_len;
	if (size < len) {
		if (it->mad_len <= MAD_SIZE ||
		    size < UMAD_FRAME_MAX)
			return -EINVAL;
		return -ENOSPC;
	}
	memcpy(buf, it->frame, len);
	pop_item(ch);
	return (ssize_t)len;
}

static ssize_t channel_fill(struct readq_open *ro, char *buf, size_t size)
{
	struct chan_open *of = (struct chan_open *)ro;

	return of->text ? fill_text(of, buf, size) : fill_frame(of, buf, size);
}

static bool channel_readable(struct readq_open *ro)
{
	struct chan_open *of = (struct chan_open *)ro;

	return of->ch->head || of->rest.buf;
}

/* ---- delivery (receiver thread) ---- */

/* Queues a copy of the frame, or counts it dropped; true if queued. */
static bool channel_queue(struct channel *ch, const void *frame, size_t mad_len)
{
	const struct ib_user_mad *hdr = frame;
	struct channel_item *it;

	pthread_mutex_lock(&ch->q.lock);
	if (hdr->status == ETIMEDOUT)
		ch->stats.timeouts++;
	else
		ch->stats.received++;
	it = NULL;
	if (!ch->q.dead &&
	    (ch->queued < ch->limit || readq_has_parked(&ch->q))) {
		it = ch->spare;
		if (it && mad_len <= MAD_SIZE) {
			ch->spare = it->next;
			ch->nspare--;
		} else {
			/* Rare (first use, RMPP): not worth unlocking for. */
			it = malloc(ITEM_SIZE(mad_len));
		}
	}
	if (!it) {
		/* Full (or no memory): the newest item is the one dropped,
		 * and counted. */
		ch->stats.dropped++;
		pthread_mutex_unlock(&ch->q.lock);
		return false;
	}
	it->next = NULL;
	it->mad_len = mad_len;
	memcpy(it->frame, frame, UMAD_FRAME_HDR_SIZE + mad_len);
	if (ch->tail)
		ch->tail->next = it;
	else
		ch->head = it;
	ch->tail = it;
	ch->queued++;
	pthread_mutex_unlock(&ch->q.lock);
	return true;
}

void channel_deliver(struct channel *ch, const void *frame, size_t mad_len)
{
	if (channel_queue(ch, frame, mad_len))
		readq_wake(&ch->q);
}
