/* Channels: bounded queues of received MADs, each item for the readers of
 * the sink it came to, read as text lines or umad frames (readq.c parks). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/log.h"
#include "umadfs/channel/channel.h"
#include "umadfs/device/device.h"
#include "umadfs/mad/mad.h"
#include "umadfs/mad/madtext.h"

struct channel_item {
	struct channel_item *next; /* first: find_item's links */
	const struct mad_sink *sink; /* which readers may take it */
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

static bool channel_queue(struct channel_sink *cs, const void *frame, size_t mad_len);
static struct mad_sink *answers_of(struct channel_open *of);

/* The engine queues a drain's worth of frames, then flushes once. */
static void channel_sink_deliver(struct mad_sink *sink, const void *frame,
				 size_t mad_len)
{
	channel_queue((struct channel_sink *)sink, frame, mad_len);
}

static void channel_sink_flush(struct mad_sink *sink)
{
	readq_wake(&((struct channel_sink *)sink)->ch->q);
}

static const struct mad_sink_ops channel_sink_ops = {
	.deliver = channel_sink_deliver, .flush = channel_sink_flush,
};

static void channel_sink_init(struct channel_sink *cs, struct channel *ch)
{
	cs->sink.ops = &channel_sink_ops;
	cs->ch = ch;
}

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

struct channel *channel_new(struct ca_port *port, const char *name)
{
	struct channel *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	channel_sink_init(&ch->unsolicited, ch);
	channel_sink_init(&ch->text, ch);
	ch->port = port;
	if (port)
		snprintf(ch->where, sizeof(ch->where), "%s/%d %s", port->ca->name,
			 port->portnum, name);
	else
		snprintf(ch->where, sizeof(ch->where), "%s", name);
	ch->refs = 1;
	ch->limit = channel_queue_limit;
	ch->timeout_ms = CHANNEL_TIMEOUT_DEFAULT;
	ch->retries = CHANNEL_RETRIES_DEFAULT;
	ch->decode_flags = MADTEXT_FIELDS;
	readq_init(&ch->q, &channel_readq_ops);
	return ch;
}

struct mad_engine *channel_engine(struct channel *ch, int *err)
{
	return ch->port ? ca_port_engine(ch->port, err) : NULL;
}

void channel_engine_done(struct channel *ch)
{
	ca_port_engine_done(ch->port);
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
		engine_unregister_sink(engine, &ch->unsolicited.sink);
		engine_cancel_sink(engine, &ch->text.sink);
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
	channel_open_free((struct channel_open *)ro);
}

struct transport_change {
	struct ca_port *port;
	int err;
};

static void set_transport_one(struct readq *q, void *ctx)
{
	struct channel *ch = channel_of_queue(q);
	const struct transport_change *tc = ctx;

	if (ch->port == tc->port)
		readq_set_error(q, tc->err);
}

void channel_port_set_transport(struct ca_port *port, int err)
{
	struct transport_change tc = { port, err };

	readq_for_each(&channel_readq_ops, set_transport_one, &tc);
}

/* Its port is gone: reads fail with EIO for good, nothing stays queued. */
static void port_gone_one(struct readq *q, void *ctx)
{
	struct channel *ch = channel_of_queue(q);
	struct channel_item *items;

	if (ch->port != ctx)
		return;
	readq_set_error(q, EIO);
	pthread_mutex_lock(&q->lock);
	items = ch->head;
	ch->head = ch->tail = NULL;
	ch->queued = 0;
	pthread_mutex_unlock(&q->lock);
	free_items(items);
}

void channel_port_gone(struct ca_port *port)
{
	readq_for_each(&channel_readq_ops, port_gone_one, port);
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
	log_info("%s: %s", ch->where, msg);
}

struct channel_open *channel_open_new(struct channel *ch, bool frames, size_t size,
				      void (*fini)(struct channel_open *of))
{
	struct channel_open *of = calloc(1, size);

	if (!of)
		return NULL;
	of->ch = ch;
	channel_sink_init(&of->answers, ch);
	of->frames = frames;
	of->fini = fini;
	__atomic_add_fetch(&ch->nusers, 1, __ATOMIC_RELAXED);
	readq_open_link(&ch->q, &of->ro);
	return of;
}

/* Drops the items only sink's reader could take.  q.lock held. */
static void drop_items_of(struct channel *ch, const struct mad_sink *sink)
{
	struct channel_item **pp = &ch->head, *it;

	ch->tail = NULL;
	while ((it = *pp)) {
		if (it->sink != sink) {
			ch->tail = it;
			pp = &it->next;
			continue;
		}
		*pp = it->next;
		ch->queued--;
		free(it);
	}
}

/* No answer comes to of any more, and none it did not read stays. */
static void forget_answers(struct channel_open *of)
{
	struct channel *ch = of->ch;
	struct mad_engine *engine = channel_engine(ch, NULL);

	if (engine) {
		engine_cancel_sink(engine, &of->answers.sink);
		channel_engine_done(ch);
	}
	pthread_mutex_lock(&ch->q.lock);
	drop_items_of(ch, &of->answers.sink);
	pthread_mutex_unlock(&ch->q.lock);
}

void channel_open_free(struct channel_open *of)
{
	struct channel *ch = of->ch;

	if (of->frames)
		forget_answers(of);
	readq_open_unlink(&of->ro);
	readq_line_rest_clear(&of->rest);
	if (of->fini)
		of->fini(of);
	if (__atomic_sub_fetch(&ch->nusers, 1, __ATOMIC_ACQ_REL) == 0)
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

/* Where the answer to a request written on of goes. */
static struct mad_sink *answers_of(struct channel_open *of)
{
	return of->frames ? &of->answers.sink : &of->ch->text.sink;
}

int channel_send(struct channel_open *of, void *frame, size_t mad_len,
		 int timeout_ms, int retries)
{
	struct channel *ch = of->ch;
	struct mad_engine *engine = channel_engine(ch, NULL);
	struct mad_sink *sink;
	int r;

	if (!engine)
		return -EIO;
	/* A response names the registered agent (agent_for); a request, who
	 * gets its answer. */
	sink = mad_is_response((uint8_t *)frame + UMAD_FRAME_HDR_SIZE) ?
		&ch->unsolicited.sink : answers_of(of);
	r = engine_send(engine, sink, frame, mad_len, timeout_ms, retries);
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

	if (r == -EIO && (engine = channel_engine(ch, NULL)) == NULL && ch->port) {
		snprintf(buf, len, "%s (the port has no umad device: its CA is "
			 "gone or could not be opened)", strerror(EIO));
		return;
	}
	if (r == -EIO && ch->port) {
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

/* The link to the oldest item of may read: an unsolicited MAD, or an
 * answer to a request it (its view) sent; NULL if none.  q.lock held. */
static struct channel_item **find_item(struct channel_open *of)
{
	struct channel *ch = of->ch;
	const struct mad_sink *own = answers_of(of);
	struct channel_item **pp;

	for (pp = &ch->head; *pp; pp = &(*pp)->next) {
		if ((*pp)->sink == &ch->unsolicited.sink || (*pp)->sink == own)
			return pp;
	}
	return NULL;
}

/* Takes *pp off the queue, kept for reuse if it is of the common size.
 * q.lock held. */
static void pop_item_at(struct channel *ch, struct channel_item **pp)
{
	struct channel_item *it = *pp;

	*pp = it->next;
	if (ch->tail == it) /* next is first: pp is the previous item */
		ch->tail = pp == &ch->head ? NULL : (struct channel_item *)pp;
	ch->queued--;
	if (it->mad_len <= MAD_SIZE && ch->nspare < SPARE_MAX) {
		it->next = ch->spare;
		ch->spare = it;
		ch->nspare++;
	} else {
		free(it);
	}
}

/* The open's next item as a text line (line_source.peek).  q.lock held. */
static ssize_t peek_line(void *ctx, char *scratch, size_t cap, char **line,
			 bool *owned)
{
	struct channel_item **pp = find_item(ctx);
	unsigned flags = ((struct channel_open *)ctx)->ch->decode_flags;
	const struct channel_item *it;
	size_t need;
	ssize_t n;

	if (!pp)
		return 0;
	it = *pp;
	need = madtext_format_need(it->frame, it->mad_len, flags);
	*line = scratch;
	*owned = need > cap;
	if (*owned) {
		*line = malloc(need);
		if (!*line)
			return -ENOMEM;
		cap = need;
	}
	n = madtext_format(it->frame, it->mad_len,
			   mad_tid(it->frame + UMAD_FRAME_HDR_SIZE), flags, *line,
			   cap);
	if (n <= 0 && *owned)
		free(*line);
	return n;
}

static void pop_line(void *ctx)
{
	struct channel_open *of = ctx;

	pop_item_at(of->ch, find_item(of));
}

/* Whole lines, with partial-line carry-over per open file.  q.lock held. */
static ssize_t fill_text(struct channel_open *of, char *buf, size_t size)
{
	const struct line_source src = {
		.peek = peek_line, .pop = pop_line, .ctx = of,
	};

	return readq_fill_lines(&of->rest, buf, size, &src);
}

/* One frame per read, as the kernel's umad device: EINVAL when even one
 * MAD does not fit, ENOSPC when a longer RMPP message does not; the frame
 * stays queued either way.  q.lock held. */
static ssize_t fill_frame(struct channel_open *of, char *buf, size_t size)
{
	struct channel_item **pp = find_item(of);
	size_t len;

	if (!pp)
		return 0;
	len = UMAD_FRAME_HDR_SIZE + (*pp)->mad_len;
	if (size < len) {
		if ((*pp)->mad_len <= MAD_SIZE || size < UMAD_FRAME_MAX)
			return -EINVAL;
		return -ENOSPC;
	}
	memcpy(buf, (*pp)->frame, len);
	pop_item_at(of->ch, pp);
	return (ssize_t)len;
}

static ssize_t channel_fill(struct readq_open *ro, char *buf, size_t size)
{
	struct channel_open *of = (struct channel_open *)ro;

	return of->frames ? fill_frame(of, buf, size) : fill_text(of, buf, size);
}

static bool channel_readable(struct readq_open *ro)
{
	struct channel_open *of = (struct channel_open *)ro;

	return of->rest.buf || find_item(of);
}

/* ---- delivery (receiver thread) ---- */

/* A free item for mad_len bytes, or NULL when the queue is full (with no
 * read waiting) or dead.  q.lock held. */
static struct channel_item *take_item(struct channel *ch, size_t mad_len)
{
	struct channel_item *it = ch->spare;

	if (ch->q.dead || (ch->queued >= ch->limit && !readq_has_parked(&ch->q)))
		return NULL;
	if (it && mad_len <= MAD_SIZE) {
		ch->spare = it->next;
		ch->nspare--;
		return it;
	}
	/* Rare (first use, RMPP): not worth unlocking for. */
	return malloc(ITEM_SIZE(mad_len));
}

/* Queues a copy of the frame for cs's readers, or counts it dropped; true
 * if queued.  Receiver thread. */
static bool channel_queue(struct channel_sink *cs, const void *frame, size_t mad_len)
{
	const struct ib_user_mad *hdr = frame;
	struct channel *ch = cs->ch;
	struct channel_item *it;

	pthread_mutex_lock(&ch->q.lock);
	if (hdr->status == ETIMEDOUT)
		ch->stats.timeouts++;
	else
		ch->stats.received++;
	it = take_item(ch, mad_len);
	if (!it) {
		/* Full (or no memory): the newest item is the one dropped,
		 * and counted. */
		ch->stats.dropped++;
		pthread_mutex_unlock(&ch->q.lock);
		return false;
	}
	it->next = NULL;
	it->sink = &cs->sink;
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
