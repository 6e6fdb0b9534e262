/* Requests from their send to their one delivery (the answer, or the
 * request given back or ended with ETIMEDOUT): the send with its TID
 * rewritten (pending_table.c), answer matching (the TID, then the class
 * and the source), early timeouts resent or held, expiry, and the
 * requests whose sink was cancelled, still on the wire, kept until their
 * answer or their expiry so that the port is let go only when quiet. */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "umadfs/base/clock.h"
#include "umadfs/base/log.h"
#include "umadfs/engine/ibumad.h"
#include "umadfs/engine/setlog.h"
#include "umadfs/engine/sink.h"
#include "agent_table.h"
#include "delivery.h"
#include "engine_priv.h"
#include "pending.h"

#define MISROUTED_LOGGED 16 /* answers from elsewhere logged one by one */

/* The sink of a request whose own sink was cancelled while it was on the
 * wire: its answer, or its expiry, frees the slot and goes nowhere.
 * Never called (no ops). */
static struct mad_sink orphaned;

/* Frees e's slot (pending_table_end()): its sink, or NULL for an
 * orphaned request; the last slot freed wakes pending_quiesce().
 * engine->lock held. */
static struct mad_sink *end_entry(struct mad_engine *engine, struct pending *e,
				  uint8_t *mad)
{
	struct mad_sink *sink = pending_table_end(&engine->pending, e, mad);

	if (engine->pending.nfree == PENDING_MAX)
		pthread_cond_broadcast(&engine->idle);
	return sink == &orphaned ? NULL : sink;
}

/* Takes a free slot for a request of sink and puts its wire TID in the
 * MAD: 0, or -EBUSY when the table is full.  engine->lock held. */
static int pending_start(struct mad_engine *engine, struct mad_sink *sink,
			 uint8_t *frame, int agent, int timeout_ms, int retries,
			 unsigned flags, uint32_t *wire)
{
	struct pending *e;
	int r;

	r = pending_table_take(&engine->pending, sink, frame + UMAD_FRAME_HDR_SIZE, &e);
	if (r < 0)
		return r;
	e->flags = flags;
	e->agent = agent;
	e->timeout_ms = timeout_ms;
	e->retries_left = retries;
	e->deadline_ms = clock_now_ms() + (int64_t)timeout_ms * (retries + 1);
	e->grace_ms = flags & PENDING_PROBE ? PROBE_GRACE_MS : EXPIRE_GRACE_MS;
	memcpy(e->head, frame, sizeof(e->head));
	*wire = e->wire_tid;
	return 0;
}

/* Chooses the agent a request goes out through and, when an answer is
 * awaited, takes its slot (*wire: its wire TID).  Returns the agent id or
 * -errno. */
static int send_prepare(struct mad_engine *engine, struct mad_sink *sink,
			uint8_t *frame, int timeout_ms, int retries, unsigned flags,
			bool awaited, uint32_t *wire)
{
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;
	int agent, r;

	pthread_mutex_lock(&engine->lock);
	if (engine->down && !(flags & PENDING_PROBE))
		agent = -EIO;
	else if (engine->requests_closed && (flags & PENDING_REQUEST))
		agent = -ENODEV; /* the receiver ended them: none would end this */
	else
		agent = agent_table_pick(engine, sink, mad);
	if (agent >= 0 && awaited) {
		r = pending_start(engine, sink, frame, agent, timeout_ms, retries,
				  flags, wire);
		if (r < 0)
			agent = r;
	}
	pthread_mutex_unlock(&engine->lock);
	return agent;
}

/* A send failed: the request's slot, if it still has it, is free again;
 * false when it had not (the request was ended meanwhile, its sink told:
 * the transport went down between the slot and the send). */
static bool send_undo(struct mad_engine *engine, uint32_t wire)
{
	struct pending *e;

	pthread_mutex_lock(&engine->lock);
	e = pending_table_find(&engine->pending, wire);
	if (e)
		end_entry(engine, e, NULL);
	pthread_mutex_unlock(&engine->lock);
	return e != NULL;
}

int pending_send(struct mad_engine *engine, struct mad_sink *sink, void *frame,
		 size_t mad_len, int timeout_ms, int retries, unsigned flags)
{
	uint8_t *mad = (uint8_t *)frame + UMAD_FRAME_HDR_SIZE;
	uint64_t caller_tid = mad_tid(mad);
	bool awaited = timeout_ms > 0 && !mad_is_response(mad);
	uint32_t wire = 0;
	int agent, r;

	agent = send_prepare(engine, sink, frame, timeout_ms, retries, flags,
			     awaited, &wire);
	if (agent < 0)
		return agent;
	r = ibumad_send(engine->fd, agent, frame, mad_len, awaited ? timeout_ms : 0,
			retries);
	if (r >= 0) {
		setlog_note(engine, frame);
		return r;
	}
	if (awaited) {
		/* Undo the TID rewrite too: the caller may retry.  A request
		 * already ended has had its one answer: the send is then done. */
		mad_set_tid(mad, caller_tid);
		if (!send_undo(engine, wire))
			return 0;
	}
	if (ibumad_transient(-r))
		return r;
	/* The device or the simulator refused it: as the kernel's umad
	 * device once the port is gone, EIO. */
	engine_doubt(engine, "umad_send failed: %s", strerror(-r));
	return -EIO;
}

void pending_cancel(struct mad_engine *engine, struct mad_sink *sink)
{
	struct pending_table *t = &engine->pending;

	pthread_mutex_lock(&engine->lock);
	for (uint32_t i = 0; i < PENDING_MAX; i++) {
		if (sink && t->entries[i].sink == sink)
			t->entries[i].sink = &orphaned;
	}
	pthread_mutex_unlock(&engine->lock);
	/* Wait out a delivery to sink that may have begun before, and drop
	 * the timeouts held for it. */
	pthread_mutex_lock(&engine->dispatch_lock);
	delivery_drop_held(engine, sink);
	pthread_mutex_unlock(&engine->dispatch_lock);
}

/* Sends a request given back early once more.  If that fails, the
 * timeout, in frame with its status, is final: delivered now.
 * dispatch_lock held. */
static void resend(struct mad_engine *engine, uint8_t *frame, size_t mad_len,
		   int agent, int timeout_ms, int retries)
{
	struct ib_user_mad *hdr = (struct ib_user_mad *)frame;
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;
	uint32_t wire = (uint32_t)mad_tid(mad);
	struct mad_sink *sink = NULL;
	struct pending *e;

	hdr->status = 0;
	if (ibumad_send(engine->fd, agent, frame, mad_len, timeout_ms, retries) >= 0)
		return;
	hdr->status = ETIMEDOUT;
	pthread_mutex_lock(&engine->lock);
	e = pending_table_find(&engine->pending, wire);
	if (e)
		sink = end_entry(engine, e, mad);
	pthread_mutex_unlock(&engine->lock);
	if (sink)
		delivery_add(engine, sink, frame, mad_len);
}

enum answer_fate { ANSWER_DELIVER, ANSWER_HOLD, ANSWER_RESEND };

/* The port's LMC now, or the one read before if it cannot be read. */
static unsigned port_lmc(struct mad_engine *engine)
{
	umad_port_t port;
	unsigned lmc = engine->lmc;

	if (ibumad_get_port(engine->ca, engine->portnum, &port) == 0) {
		lmc = port.lmc;
		ibumad_release_port(&port);
	}
	return lmc;
}

/* Whether a response is the answer of the request its TID names
 * (mad_answer_matches(): of its class, from where it went), the port's
 * LMC read again before saying no (the SM may have set it since).  Not:
 * dropped as an unmatched response, counted and logged, and the request
 * waits on (a timeout if nothing else answers).  True when no request
 * waits under the TID (the caller finds none either).  Receiver thread. */
static bool answer_matches(struct mad_engine *engine, const uint8_t *frame)
{
	const uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;
	uint8_t head[UMAD_FRAME_HDR_SIZE + MAD_HDR_SIZE];
	struct ib_user_mad to, from;
	struct pending *e;
	bool waits;

	pthread_mutex_lock(&engine->lock);
	e = pending_table_find(&engine->pending, (uint32_t)mad_tid(mad));
	waits = e != NULL;
	if (waits)
		memcpy(head, e->head, sizeof(head));
	pthread_mutex_unlock(&engine->lock);
	if (!waits || mad_answer_matches(head, frame, engine->lmc))
		return true;
	engine->lmc = port_lmc(engine);
	if (mad_answer_matches(head, frame, engine->lmc))
		return true;
	if (++engine->misrouted <= MISROUTED_LOGGED || !(engine->misrouted % 1024)) {
		memcpy(&to, head, UMAD_FRAME_HDR_SIZE);
		memcpy(&from, frame, UMAD_FRAME_HDR_SIZE);
		log_warn("%s/%u: dropped an answer not from where its request went "
			 "(%lu so far): class 0x%02x to LID 0x%x, answered by class "
			 "0x%02x from LID 0x%x", engine->ca, engine->portnum,
			 engine->misrouted, head[UMAD_FRAME_HDR_SIZE + 1],
			 be16toh(to.addr.lid), mad[1], be16toh(from.addr.lid));
	}
	return false;
}

/* A request given back (frame, with a status) is made the request it was
 * again - its address, its MAD header with its wire TID - as the kernel
 * gives back what it was sent.  umad2sim gives back the simulator's copy:
 * addressed from where it was dropped (this port's own LID), and a resend
 * of that went to this port's own agents, whose answer passed for the
 * destination's; or, when the destination's answer could not be routed
 * back, that answer (a GetResp), which a resend bounced off the
 * destination back here.  engine->lock held. */
static void given_back(const struct pending *e, uint8_t *frame)
{
	size_t at = offsetof(struct ib_user_mad, addr);
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;

	memcpy(frame + at, e->head + at, sizeof(struct ib_mad_addr));
	memcpy(mad, e->head + UMAD_FRAME_HDR_SIZE, MAD_HDR_SIZE);
	mad_set_tid(mad, pending_table_tid(e));
}

/* The kernel gives a request back with ETIMEDOUT only after timeout x
 * (retries + 1).  A transport that reports a loss at once (ibsim drops
 * with status 110 immediately) gets the same semantics here: retries are
 * spent by resending, and the final timeout is held until the deadline. */
static enum answer_fate answer_fate(const struct pending *e, unsigned status)
{
	if (status != ETIMEDOUT || e->sink == &orphaned ||
	    clock_now_ms() + e->timeout_ms / 2 >= e->deadline_ms)
		return ANSWER_DELIVER;
	return e->retries_left > 0 ? ANSWER_RESEND : ANSWER_HOLD;
}

/* Hands an answer (a response, or a request given back with a status) to
 * the sink of its pending request.  Returns false when no request waits
 * for it.  dispatch_lock held. */
bool pending_answer(struct mad_engine *engine, uint8_t *frame, size_t mad_len)
{
	struct ib_user_mad *hdr = (struct ib_user_mad *)frame;
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;
	int agent, timeout_ms, retries;
	struct mad_sink *sink;
	struct pending *e;
	int64_t due = 0;

	if (!hdr->status && !answer_matches(engine, frame))
		return false;
	pthread_mutex_lock(&engine->lock);
	e = pending_table_find(&engine->pending, (uint32_t)mad_tid(mad));
	if (!e) {
		pthread_mutex_unlock(&engine->lock);
		return false;
	}
	if (hdr->status)
		given_back(e, frame);
	switch (answer_fate(e, hdr->status)) {
	case ANSWER_RESEND:
		retries = --e->retries_left;
		agent = e->agent;
		timeout_ms = e->timeout_ms;
		pthread_mutex_unlock(&engine->lock);
		resend(engine, frame, mad_len, agent, timeout_ms, retries);
		return true;
	case ANSWER_HOLD:
		due = e->deadline_ms;
		break;
	case ANSWER_DELIVER:
		break;
	}
	sink = end_entry(engine, e, mad);
	pthread_mutex_unlock(&engine->lock);
	if (!sink)
		return true; /* orphaned: the answer ends it, no more */
	if (due)
		delivery_hold(engine, sink, frame, mad_len, due);
	else
		delivery_add(engine, sink, frame, mad_len);
	return true;
}

/* Ends the next request from slot *next on that is past its deadline and
 * grace (all: any request; only: with these flags), making its timeout
 * item in frame; returns its sink (*flags: its flags), NULL when none is
 * left. */
static struct mad_sink *expire_next(struct mad_engine *engine, bool all, int64_t now,
				    uint32_t *next, uint8_t *frame, unsigned only,
				    unsigned *flags)
{
	struct pending_table *t = &engine->pending;
	struct mad_sink *sink = NULL;

	pthread_mutex_lock(&engine->lock);
	for (; *next < PENDING_MAX && !sink; (*next)++) {
		struct pending *e = &t->entries[*next];

		if (!e->sink || (!all && now <= e->deadline_ms + e->grace_ms) ||
		    (e->flags & only) != only)
			continue;
		memcpy(frame, e->head, sizeof(e->head));
		((struct ib_user_mad *)frame)->status = ETIMEDOUT;
		*flags = e->flags;
		sink = end_entry(engine, e, frame + UMAD_FRAME_HDR_SIZE);
	}
	pthread_mutex_unlock(&engine->lock);
	return sink;
}

/* A request neither answered nor given back long after its deadline (the
 * kernel always gives it back; a transport may not: ibsim after it drops
 * the client): the engine ends it itself with a timeout item, the
 * request's headers with status ETIMEDOUT, as the kernel's.  all: every
 * pending request, now (the transport went down).  Returns how many
 * requests other than the probe it ended.  Receiver thread. */
static unsigned expire(struct mad_engine *engine, bool all, unsigned only)
{
	uint8_t frame[UMAD_FRAME_HDR_SIZE + MAD_HDR_SIZE];
	int64_t now = clock_now_ms();
	struct mad_sink *sink;
	unsigned ended = 0, flags = 0;
	uint32_t next = 0;

	pthread_mutex_lock(&engine->dispatch_lock);
	while ((sink = expire_next(engine, all, now, &next, frame, only, &flags))) {
		ended += !(flags & PENDING_PROBE);
		delivery_add(engine, sink, frame, MAD_HDR_SIZE);
	}
	delivery_flush(engine);
	pthread_mutex_unlock(&engine->dispatch_lock);
	return ended;
}

unsigned pending_expire(struct mad_engine *engine, bool all)
{
	return expire(engine, all, 0);
}

void pending_end_requests(struct mad_engine *engine)
{
	pthread_mutex_lock(&engine->lock);
	engine->requests_closed = true;
	pthread_mutex_unlock(&engine->lock);
	expire(engine, true, PENDING_REQUEST);
}

void pending_quiesce(struct mad_engine *engine, int max_ms)
{
	int64_t until = clock_now_ms() + max_ms;
	int r = 0;

	pthread_mutex_lock(&engine->lock);
	while (engine->pending.nfree < PENDING_MAX && !engine->down && r != ETIMEDOUT)
		r = clock_wait_until(&engine->idle, &engine->lock, until);
	pthread_mutex_unlock(&engine->lock);
}

bool pending_awaited(struct mad_engine *engine)
{
	bool awaited;

	pthread_mutex_lock(&engine->lock);
	awaited = engine->pending.nfree < PENDING_MAX;
	pthread_mutex_unlock(&engine->lock);
	return awaited;
}
