/* The MAD engine of one port: umad fd, agents, pending requests, receiver.
 *
 * Wire TIDs: the kernel (and umad2sim) own the upper 32 bits of a request's
 * TID (the agent's hi_tid), so the daemon keeps only the lower 32 bits for
 * itself: (generation << PENDING_BITS) | slot.  The slot finds the pending
 * entry in O(1); the generation tells a late answer for a slot since reused
 * from the answer it is waiting for.  The caller's full 64-bit TID is saved
 * in the entry and put back before delivery. */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mad.h>

#include "umadfs/engine/ibumad.h"
#include "umadfs/engine/localmad.h"
#include "umadfs/base/log.h"
#include "umadfs/engine/engine.h"
#include "umadfs/mad/mad.h"

#define PENDING_BITS 12
#define PENDING_MAX (1u << PENDING_BITS) /* requests in flight per port */
#define AGENTS_MAX 32                     /* the kernel's IB_UMAD_MAX_AGENTS */
#define RECV_POLL_MS 100                  /* bounds how long stopping takes */
#define RECV_BUF_MAX (16u << 20)          /* largest RMPP message accepted */
#define EXPIRE_GRACE_MS 1000              /* past the deadline, before the engine gives up */
#define DRAIN_MAX 64    /* frames received before the readers are woken */
#define TOUCHED_MAX 16  /* sinks waiting for a flush at once */

/* The liveness probe (see liveness_step()): a NodeInfo SMP to the port's
 * own SMA, which answers within microseconds, link up or down. */
#define PROBE_TIMEOUT_MS 500
#define PROBE_RETRIES 2
#define PROBE_GRACE_MS 200
#define PROBE_DOWN_INTERVAL_MS 1000 /* while down: how often to try again */

struct pending {
	struct mad_sink *sink; /* NULL: slot free */
	uint64_t caller_tid;
	uint32_t wire_tid;
	int agent, timeout_ms, retries_left;
	int64_t deadline_ms; /* when the kernel would give up: timeout x (retries + 1) */
	int grace_ms;        /* then how long the engine waits to be told */
	/* The request's umad header and MAD header, for the timeout item the
	 * engine makes itself if the transport never reports one. */
	uint8_t head[IBUMAD_HDR_SIZE + 24];
};

/* A timeout that came back before its deadline, waiting for it (see
 * dispatch()).  Owned by the receiver thread. */
struct held {
	struct held *next;
	struct mad_sink *sink;
	int64_t due_ms;
	size_t mad_len;
	uint8_t frame[];
};

struct agent {
	uint8_t mgmt_class, class_version;
	uint32_t oui;
	int id;
	struct mad_sink *sink; /* who registered it; NULL: send-only agent */
	uint64_t methods[2];   /* methods it serves (registered agents) */
	bool rmpp;
};

struct mad_engine {
	char ca[UMAD_CA_NAME_LEN];
	int portnum;
	int fd; /* umad "portid"; set before the receiver starts, then fixed */
	int issm_fd; /* umad2sim only, while agents are registered (lock) */
	pthread_t receiver;
	volatile int stopping; /* written once by engine_close */
	struct held *held;     /* by due time; receiver thread only */

	/* Held by the receiver from looking up a pending entry until its sink
	 * has been called and flushed, so engine_cancel_sink can wait a delivery
	 * out.  It also guards touched[]: the sinks given frames since their
	 * last flush, empty whenever the lock is free. */
	pthread_mutex_t dispatch_lock;
	struct mad_sink *touched[TOUCHED_MAX];
	unsigned ntouched;

	/* Liveness of the transport (see liveness_step()); receiver only. */
	engine_transport_fn on_transport;
	void *transport_ctx;
	struct mad_sink probe_sink;
	bool probe_sent;
	int probe_result;       /* by probe_deliver: 1 answered, -1 not */
	int64_t next_probe_ms;  /* while down */
	int probe_wanted;       /* any thread (atomic) */

	pthread_mutex_t lock; /* guards everything below */
	bool down;            /* written by the receiver only */
	char trigger[160];    /* what made the engine probe last */
	char why[320];        /* why it is down */
	struct pending pending[PENDING_MAX];
	uint32_t free_slots[PENDING_MAX];
	unsigned nfree;
	uint32_t generation;
	struct agent agents[AGENTS_MAX];
	unsigned nagents;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The kernel's ib_is_mad_class_rmpp(): classes whose agents may use RMPP. */
static bool class_has_rmpp(unsigned mgmt_class)
{
	return mgmt_class == IB_SA_CLASS || mgmt_class == IB_DEVICE_MGMT_CLASS ||
	       mgmt_class == 0x10 /* DevAdm */ || mgmt_class == 0x12 /* BIS */ ||
	       (mgmt_class >= 0x30 && mgmt_class <= 0x4f);
}

static uint32_t mad_oui(const uint8_t *mad)
{
	return (uint32_t)mad[37] << 16 | (uint32_t)mad[38] << 8 | mad[39];
}

/* The agent a MAD goes out through.  A response from a channel that
 * registered its class goes through that registered agent, as a C program
 * answers with the agent that received the request: the kernel routes an
 * RMPP response's ACKs (sent back as requests) to the registered agent,
 * which must be the one sending.  Anything else goes through the shared
 * send-only agent of its class and version (and OUI, for vendor classes
 * 0x30-0x4F), registered when first needed.  p->lock held. */
static int agent_for(struct mad_engine *p, struct mad_sink *sink, const uint8_t *mad)
{
	unsigned mgmt_class = mad[1], version = mad[2];
	uint32_t oui = mgmt_class >= 0x30 && mgmt_class <= 0x4f ? mad_oui(mad) : 0;
	struct agent *a;
	int id;

	if (sink && mad_is_response(mad)) {
		for (unsigned i = 0; i < p->nagents; i++) {
			a = &p->agents[i];
			if (a->sink == sink && a->mgmt_class == mgmt_class &&
			    a->class_version == version && a->oui == oui)
				return a->id;
		}
	}

	for (unsigned i = 0; i < p->nagents; i++) {
		a = &p->agents[i];
		if (!a->sink && a->mgmt_class == mgmt_class &&
		    a->class_version == version && a->oui == oui)
			return a->id;
	}
	if (p->nagents == AGENTS_MAX)
		return -ENOSPC;
	id = ibumad_register(p->fd, (int)mgmt_class, (int)version,
			     class_has_rmpp(mgmt_class) ? 1 : 0, oui, NULL);
	if (id < 0) {
		log_warn("%s/%u: registering a send agent for class 0x%02x "
			 "version %u failed: %s", p->ca, p->portnum, mgmt_class,
			 version, strerror(-id));
		return id;
	}
	a = &p->agents[p->nagents++];
	memset(a, 0, sizeof(*a));
	a->mgmt_class = (uint8_t)mgmt_class;
	a->class_version = (uint8_t)version;
	a->oui = oui;
	a->id = id;
	return id;
}

static bool is_vendor2(unsigned mgmt_class)
{
	return mgmt_class >= 0x30 && mgmt_class <= 0x4f;
}

int engine_register(struct mad_engine *p, struct mad_sink *sink,
		  const struct engine_registration *reg, char *why, size_t whylen)
{
	struct agent *a;
	int id;

	if (is_vendor2(reg->mgmt_class) && !reg->oui) {
		snprintf(why, whylen, "vendor class 0x%02x needs an oui=",
			 reg->mgmt_class);
		return -EINVAL;
	}
	if (reg->rmpp && !class_has_rmpp(reg->mgmt_class)) {
		snprintf(why, whylen, "class 0x%02x has no RMPP", reg->mgmt_class);
		return -EINVAL;
	}
	if (!reg->methods[0] && !reg->methods[1]) {
		snprintf(why, whylen, "no method to register");
		return -EINVAL;
	}
	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < p->nagents; i++) {
		a = &p->agents[i];
		if (a->sink && a->mgmt_class == reg->mgmt_class &&
		    a->class_version == reg->class_version &&
		    (!is_vendor2(a->mgmt_class) || a->oui == reg->oui) &&
		    ((a->methods[0] & reg->methods[0]) ||
		     (a->methods[1] & reg->methods[1]))) {
			/* The kernel's answer to a method already in use. */
			snprintf(why, whylen, "class 0x%02x version %u: a method is "
				 "already registered (agent %d%s)", reg->mgmt_class,
				 reg->class_version, a->id,
				 a->sink == sink ? ", this channel" : ", another channel");
			pthread_mutex_unlock(&p->lock);
			return -EINVAL;
		}
	}
	if (p->nagents == AGENTS_MAX) {
		snprintf(why, whylen, "the port's %d agents are all in use", AGENTS_MAX);
		pthread_mutex_unlock(&p->lock);
		return -ENOSPC;
	}
	id = ibumad_register(p->fd, reg->mgmt_class, reg->class_version,
			     reg->rmpp ? 1 : 0, is_vendor2(reg->mgmt_class) ? reg->oui : 0,
			     reg->methods);
	if (id < 0) {
		snprintf(why, whylen, "the kernel refused the registration: %s",
			 strerror(-id));
		pthread_mutex_unlock(&p->lock);
		return id == -ENOMEM ? -ENOSPC : id;
	}
	/* ibsim hands unsolicited GSI requests only to a client holding the
	 * port's issm device.  Under the simulator only (on a real port this
	 * would announce an SM), hold it while anything is registered. */
	if (p->issm_fd < 0 && ibumad_simulated()) {
		/* Holding issm makes ibsim send this client the SM's SMPs
		 * (opensm probes SMInfo at once), and umad2sim's receiver
		 * crashes on a class the process has no agent for. */
		uint8_t smp[IBUMAD_MAD_SIZE] = { 0 };

		smp[2] = 1;
		smp[1] = IB_SMI_CLASS;
		agent_for(p, NULL, smp);
		smp[1] = IB_SMI_DIRECT_CLASS;
		agent_for(p, NULL, smp);
		p->issm_fd = ibumad_open_issm(p->ca, p->portnum);
		if (p->issm_fd < 0)
			log_warn("%s/%u: cannot open the issm device under the "
				 "simulator: %s", p->ca, p->portnum,
				 strerror(-p->issm_fd));
	}
	a = &p->agents[p->nagents++];
	a->mgmt_class = (uint8_t)reg->mgmt_class;
	a->class_version = (uint8_t)reg->class_version;
	a->oui = is_vendor2(reg->mgmt_class) ? reg->oui : 0;
	a->id = id;
	a->sink = sink;
	a->methods[0] = reg->methods[0];
	a->methods[1] = reg->methods[1];
	a->rmpp = reg->rmpp;
	pthread_mutex_unlock(&p->lock);
	return id;
}

/* umad2sim forgets a whole class when one of its agents goes: register
 * the class's other agents again (new ids).  p->lock held. */
static void reregister_class(struct mad_engine *p, struct mad_sink *leaving,
			     unsigned mgmt_class)
{
	for (unsigned j = 0; j < p->nagents; j++) {
		struct agent *o = &p->agents[j];
		int id;

		if (o->mgmt_class != mgmt_class || (leaving && o->sink == leaving))
			continue;
		ibumad_unregister(p->fd, o->id);
		id = ibumad_register(p->fd, o->mgmt_class, o->class_version,
				     o->sink ? o->rmpp : class_has_rmpp(o->mgmt_class),
				     o->oui, o->sink ? o->methods : NULL);
		if (id < 0)
			log_warn("%s/%u: registering agent of class 0x%02x again: %s",
				 p->ca, p->portnum, mgmt_class, strerror(-id));
		else
			o->id = id;
	}
}

void engine_unregister_sink(struct mad_engine *p, struct mad_sink *sink)
{
	bool registered = false;

	pthread_mutex_lock(&p->lock);

	for (unsigned i = 0; i < p->nagents;) {
		if (p->agents[i].sink == sink) {
			unsigned mgmt_class = p->agents[i].mgmt_class;

			ibumad_unregister(p->fd, p->agents[i].id);
			p->agents[i] = p->agents[--p->nagents];
			if (ibumad_simulated())
				reregister_class(p, sink, mgmt_class);
		} else {
			registered |= p->agents[i].sink != NULL;
			i++;
		}
	}
	if (!registered && p->issm_fd >= 0) {
		close(p->issm_fd);
		p->issm_fd = -1;
	}
	pthread_mutex_unlock(&p->lock);
	engine_cancel_sink(p, sink);
}

int engine_list_registrations(struct mad_engine *p, struct mad_sink *sink,
			    struct engine_registration *out, int *ids, int max)
{
	int n = 0;

	pthread_mutex_lock(&p->lock);
	for (unsigned i = 0; i < p->nagents && n < max; i++) {
		struct agent *a = &p->agents[i];

		if (a->sink != sink)
			continue;
		out[n].mgmt_class = a->mgmt_class;
		out[n].class_version = a->class_version;
		out[n].oui = a->oui;
		out[n].rmpp = a->rmpp;
		out[n].methods[0] = a->methods[0];
		out[n].methods[1] = a->methods[1];
		ids[n++] = a->id;
	}
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* The sink registered for an unsolicited MAD, as the kernel matches it:
 * class, version, method (and OUI in vendor range 2).  p->lock held. */
static struct mad_sink *registered_sink(struct mad_engine *p, const uint8_t *mad)
{
	unsigned mgmt_class = mad[1], version = mad[2], method = mad[3] & 0x7f;
	uint32_t oui = is_vendor2(mgmt_class) ? mad_oui(mad) : 0;

	for (unsigned i = 0; i < p->nagents; i++) {
		struct agent *a = &p->agents[i];

		if (a->sink && a->mgmt_class == mgmt_class &&
		    a->class_version == version && a->oui == oui &&
		    (a->methods[method / 64] >> (method % 64) & 1))
			return a->sink;
	}
	return NULL;
}

/* Errors of umad_send/umad_recv that say something about one MAD, the
 * moment or memory, not about the transport.  Any other makes the engine
 * probe the transport. */
static bool transient(int err)
{
	switch (err) {
	case EAGAIN: case EINTR: case ENOMEM: case ENOBUFS: case EINVAL:
	case EMSGSIZE: case EBUSY: case ENOSPC: case ETIMEDOUT:
		return true;
	default:
		return false;
	}
}

/* Asks the receiver thread for a liveness probe, saying why.  Any thread. */
static void want_probe(struct mad_engine *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void want_probe(struct mad_engine *p, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&p->lock);
	if (!p->down) {
		va_start(ap, fmt);
		vsnprintf(p->trigger, sizeof(p->trigger), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&p->lock);
	__atomic_store_n(&p->probe_wanted, 1, __ATOMIC_RELEASE);
}

/* engine_send(), and the probe's own send (probe: even while down). */
static int send_request(struct mad_engine *p, struct mad_sink *sink, void *frame,
			size_t mad_len, int timeout_ms, int retries, bool probe)
{
	uint8_t *mad = (uint8_t *)frame + IBUMAD_HDR_SIZE;
	bool answered = timeout_ms > 0 && !mad_is_response(mad);
	uint32_t slot = 0;
	int agent, r;

	pthread_mutex_lock(&p->lock);
	if (p->down && !probe) {
		pthread_mutex_unlock(&p->lock);
		return -EIO;
	}
	agent = agent_for(p, sink, mad);
	if (agent < 0) {
		pthread_mutex_unlock(&p->lock);
		return agent;
	}
	if (answered) {
		struct pending *e;

		if (!p->nfree) {
			pthread_mutex_unlock(&p->lock);
			return -EBUSY;
		}
		slot = p->free_slots[--p->nfree];
		e = &p->pending[slot];
		e->sink = sink;
		e->caller_tid = mad_tid(mad);
		e->agent = agent;
		e->timeout_ms = timeout_ms;
		e->retries_left = retries;
		e->deadline_ms = now_ms() + (int64_t)timeout_ms * (retries + 1);
		e->grace_ms = probe ? PROBE_GRACE_MS : EXPIRE_GRACE_MS;
		p->generation++;
		e->wire_tid = (p->generation << PENDING_BITS) | slot;
		memcpy(e->head, frame, sizeof(e->head));
		mad_set_tid(mad, (e->caller_tid & ~0xffffffffull) | e->wire_tid);
	}
	pthread_mutex_unlock(&p->lock);

	r = ibumad_send(p->fd, agent, frame, mad_len, answered ? timeout_ms : 0,
			retries);
	if (r < 0) {
		pthread_mutex_lock(&p->lock);
		if (answered) {
			/* Undo the TID rewrite too: the caller may retry. */
			mad_set_tid(mad, p->pending[slot].caller_tid);
			p->pending[slot].sink = NULL;
			p->free_slots[p->nfree++] = slot;
		}
		pthread_mutex_unlock(&p->lock);
		if (!transient(-r)) {
			/* The device or the simulator refused it: as the
			 * kernel's umad device once the port is gone, EIO. */
			want_probe(p, "umad_send failed: %s", strerror(-r));
			r = -EIO;
		}
	}
	return r;
}

int engine_send(struct mad_engine *p, struct mad_sink *sink, void *frame,
	      size_t mad_len, int timeout_ms, int retries)
{
	return send_request(p, sink, frame, mad_len, timeout_ms, retries, false);
}

void engine_cancel_sink(struct mad_engine *p, struct mad_sink *sink)
{
	pthread_mutex_lock(&p->lock);
	for (uint32_t i = 0; i < PENDING_MAX; i++) {
		if (p->pending[i].sink == sink) {
			p->pending[i].sink = NULL;
			p->free_slots[p->nfree++] = i;
		}
	}
	pthread_mutex_unlock(&p->lock);
	/* Wait out a delivery to sink that may have begun before, and drop
	 * the timeouts held for it (the list is guarded by dispatch_lock). */
	pthread_mutex_lock(&p->dispatch_lock);
	for (struct held **hp = &p->held; *hp;) {
		struct held *h = *hp;

		if (h->sink == sink) {
			*hp = h->next;
			free(h);
		} else {
			hp = &h->next;
		}
	}
	pthread_mutex_unlock(&p->dispatch_lock);
}

/* Wakes the readers of every sink given frames since the last flush.
 * dispatch_lock held. */
static void flush_touched(struct mad_engine *p)
{
	for (unsigned i = 0; i < p->ntouched; i++)
		p->touched[i]->ops->flush(p->touched[i]);
	p->ntouched = 0;
}

/* Hands a frame to its sink.  A sink with a flush op is woken later, once
 * for all the frames of a drain (one FUSE reply with many lines instead of
 * one per MAD).  dispatch_lock held. */
static void deliver(struct mad_engine *p, struct mad_sink *sink, const void *frame,
		    size_t mad_len)
{
	sink->ops->deliver(sink, frame, mad_len);
	if (!sink->ops->flush)
		return;
	for (unsigned i = 0; i < p->ntouched; i++) {
		if (p->touched[i] == sink)
			return;
	}
	if (p->ntouched == TOUCHED_MAX)
		flush_touched(p);
	p->touched[p->ntouched++] = sink;
}

/* Keeps a timeout that came early until its deadline.  dispatch_lock held. */
static void hold(struct mad_engine *p, struct mad_sink *sink, const uint8_t *frame,
		 size_t mad_len, int64_t due_ms)
{
	struct held *h = malloc(sizeof(*h) + IBUMAD_HDR_SIZE + mad_len), **hp;

	if (!h) {
		deliver(p, sink, frame, mad_len); /* early beats lost */
		return;
	}
	h->sink = sink;
	h->due_ms = due_ms;
	h->mad_len = mad_len;
	memcpy(h->frame, frame, IBUMAD_HDR_SIZE + mad_len);
	for (hp = &p->held; *hp && (*hp)->due_ms <= due_ms; hp = &(*hp)->next)
		;
	h->next = *hp;
	*hp = h;
}

/* A request neither answered nor given back long after its deadline (the
 * kernel always gives it back; a transport may not: ibsim after it drops
 * the client): the engine ends it itself with a timeout item, the
 * request's headers with status ETIMEDOUT, as the kernel's.  all: every
 * pending request, now (the transport went down).  Returns how many
 * requests other than the probe it ended.  Receiver thread. */
static unsigned expire_pending(struct mad_engine *p, bool all)
{
	int64_t now = now_ms();
	uint8_t frame[IBUMAD_HDR_SIZE + 24];
	unsigned ended = 0;

	pthread_mutex_lock(&p->dispatch_lock);
	for (;;) {
		struct mad_sink *sink = NULL;

		pthread_mutex_lock(&p->lock);
		for (uint32_t i = 0; i < PENDING_MAX && !sink; i++) {
			struct pending *e = &p->pending[i];

			if (!e->sink || (!all && now <= e->deadline_ms + e->grace_ms))
				continue;
			sink = e->sink;
			memcpy(frame, e->head, sizeof(frame));
			((struct ib_user_mad *)frame)->status = ETIMEDOUT;
			mad_set_tid(frame + IBUMAD_HDR_SIZE, e->caller_tid);
			e->sink = NULL;
			p->free_slots[p->nfree++] = i;
		}
		pthread_mutex_unlock(&p->lock);
		if (!sink)
			break;
		ended += sink != &p->probe_sink;
		deliver(p, sink, frame, 24);
	}
	flush_touched(p);
	pthread_mutex_unlock(&p->dispatch_lock);
	return ended;
}

/* Delivers the held timeouts that are due (all: every one, now); returns
 * ms until the next. */
static int release_held(struct mad_engine *p, bool all)
{
	int64_t now = now_ms();
	int wait = RECV_POLL_MS;

	pthread_mutex_lock(&p->dispatch_lock);
	while (p->held && (all || p->held->due_ms <= now)) {
		struct held *h = p->held;

		p->held = h->next;
		deliver(p, h->sink, h->frame, h->mad_len);
		free(h);
	}
	flush_touched(p);
	if (p->held && p->held->due_ms - now < wait)
		wait = (int)(p->held->due_ms - now);
	pthread_mutex_unlock(&p->dispatch_lock);
	return wait;
}

/* A resend failed: deliver the timeout now.  dispatch_lock held. */
static void resend_failed(struct mad_engine *p, uint8_t *frame, size_t mad_len, uint32_t wire)
{
	uint32_t slot = wire & (PENDING_MAX - 1);
	struct mad_sink *sink = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->pending[slot].sink && p->pending[slot].wire_tid == wire) {
		sink = p->pending[slot].sink;
		mad_set_tid(frame + IBUMAD_HDR_SIZE, p->pending[slot].caller_tid);
		p->pending[slot].sink = NULL;
		p->free_slots[p->nfree++] = slot;
	}
	pthread_mutex_unlock(&p->lock);
	if (sink)
		deliver(p, sink, frame, mad_len);
}

/* Hands one received frame to the sink of its request, if any.
 * dispatch_lock held. */
static void dispatch(struct mad_engine *p, uint8_t *frame, size_t mad_len)
{
	struct ib_user_mad *hdr = (struct ib_user_mad *)frame;
	uint8_t *mad = frame + IBUMAD_HDR_SIZE;
	struct mad_sink *sink = NULL;
	uint32_t wire, slot;
	int64_t due = 0;
	bool resend = false;
	int agent = 0, timeout_ms = 0, retries = 0;

	if (mad_len < 24)
		return;
	wire = (uint32_t)mad_tid(mad);
	slot = wire & (PENDING_MAX - 1);

	pthread_mutex_lock(&p->lock);
	/* Answers: responses, and our own requests given back with a status. */
	if ((hdr->status || mad_is_response(mad)) && p->pending[slot].sink &&
	    p->pending[slot].wire_tid == wire) {
		struct pending *e = &p->pending[slot];
		int64_t now = now_ms();

		/* The kernel gives a request back with ETIMEDOUT only after
		 * timeout x (retries + 1).  A transport that reports a loss at
		 * once (ibsim drops with status 110 immediately) gets the same
		 * semantics here: retries are spent by resending, and the
		 * final timeout is held until the deadline. */
		if (hdr->status == ETIMEDOUT && now + e->timeout_ms / 2 < e->deadline_ms) {
			if (e->retries_left > 0) {
				e->retries_left--;
				resend = true;
				agent = e->agent;
				timeout_ms = e->timeout_ms;
				retries = e->retries_left;
			} else {
				due = e->deadline_ms;
			}
		}
		if (!resend) {
			sink = e->sink;
			mad_set_tid(mad, e->caller_tid);
			e->sink = NULL;
			p->free_slots[p->nfree++] = slot;
		}
	} else if (!hdr->status && !mad_is_response(mad) &&
		   (sink = registered_sink(p, mad))) {
		/* an unsolicited request for a registered agent */
	} else {
		log_dbg("%s/%u: unmatched MAD: status %u method 0x%02x tid 0x%016llx",
			p->ca, p->portnum, hdr->status, mad[3],
			(unsigned long long)mad_tid(mad));
	}
	pthread_mutex_unlock(&p->lock);
	if (resend) {
		hdr->status = 0;
		if (ibumad_send(p->fd, agent, frame, mad_len, timeout_ms, retries) < 0) {
			/* Cannot retry: this timeout is final. */
			hdr->status = ETIMEDOUT;
			resend_failed(p, frame, mad_len, wire);
		}
	} else if (sink && due) {
		hold(p, sink, frame, mad_len, due);
	} else if (sink) {
		deliver(p, sink, frame, mad_len);
	}
}

/* ---- liveness of the transport ----
 *
 * The transport (the kernel's umad device, or umad2sim's socket to ibsim)
 * can die under the engine: the device goes away, ibsim is killed (sends
 * fail with ECONNREFUSED), or ibsim drops the client (`X` on its console:
 * MADs then vanish without a word).  Three things make the engine doubt
 * it: a send refused with an error that is not about the MAD (transient()),
 * a receive error of that kind, and a request neither answered nor given
 * back past its deadline (the kernel always gives it back).  The receiver
 * thread then sends a probe, a NodeInfo SMP to the port's own SMA (hop 0,
 * answered link up or down, on a real HCA too); if it is not answered, the
 * transport is down: logged once, every pending request ends at once with
 * its timeout item, the channels fail their reads (parked ones included)
 * with EIO and poll POLLERR, and sends fail with EIO - the kernel's umad
 * device after its port is removed.  While down, a probe goes out every
 * second; the first one answered brings the port back. */

static void probe_deliver(struct mad_sink *s, const void *frame, size_t mad_len)
{
	struct mad_engine *p = (struct mad_engine *)((char *)s - offsetof(struct mad_engine, probe_sink));
	const struct ib_user_mad *hdr = frame;

	p->probe_result = !hdr->status && mad_len >= 24 &&
			  mad_is_response((const uint8_t *)frame + IBUMAD_HDR_SIZE) ? 1 : -1;
}

static const struct mad_sink_ops probe_sink_ops = { .deliver = probe_deliver };

/* Receiver thread only.  how: what became of the probe, when down. */
static void set_transport(struct mad_engine *p, bool up, const char *how)
{
	char why[sizeof(p->why)];

	pthread_mutex_lock(&p->lock);
	p->down = !up;
	if (up)
		p->trigger[0] = '\0';
	else
		snprintf(p->why, sizeof(p->why), "%s; a probe of the port's own "
			 "SMA %s", p->trigger[0] ? p->trigger : "no answers", how);
	memcpy(why, p->why, sizeof(why));
	pthread_mutex_unlock(&p->lock);
	if (up) {
		log_info("%s/%u: the transport is back (the port's own SMA "
			 "answered a probe)", p->ca, p->portnum);
	} else {
		log_warn("%s/%u: the transport is down (%s): MAD files fail with "
			 "EIO until it answers again", p->ca, p->portnum, why);
		p->next_probe_ms = now_ms() + PROBE_DOWN_INTERVAL_MS;
	}
	if (p->on_transport)
		p->on_transport(p->transport_ctx, up ? 0 : EIO);
	if (!up) {
		expire_pending(p, true);
		release_held(p, true);
	}
}

/* One step of the probe's life, each turn of the receiver loop. */
static void liveness_step(struct mad_engine *p)
{
	uint8_t frame[IBUMAD_HDR_SIZE + IBUMAD_MAD_SIZE];
	bool down = p->down; /* written by this thread only */
	int r;

	if (p->probe_sent) {
		if (!p->probe_result)
			return;
		p->probe_sent = false;
		if ((p->probe_result > 0) == down)
			set_transport(p, p->probe_result > 0, "got no answer");
		else if (down)
			p->next_probe_ms = now_ms() + PROBE_DOWN_INTERVAL_MS;
		return;
	}
	if (!__atomic_exchange_n(&p->probe_wanted, 0, __ATOMIC_ACQ_REL) &&
	    !(down && now_ms() >= p->next_probe_ms))
		return;
	localmad_smp_frame(frame, IB_ATTR_NODE_INFO, 0);
	p->probe_result = 0;
	r = send_request(p, &p->probe_sink, frame, IBUMAD_MAD_SIZE,
			 PROBE_TIMEOUT_MS, PROBE_RETRIES, true);
	if (r == 0) {
		p->probe_sent = true;
	} else if (r == -EIO) {
		__atomic_store_n(&p->probe_wanted, 0, __ATOMIC_RELEASE);
		if (!down)
			set_transport(p, false, "could not be sent");
		else
			p->next_probe_ms = now_ms() + PROBE_DOWN_INTERVAL_MS;
	} else {
		/* No room for it now (EBUSY...): next turn. */
		__atomic_store_n(&p->probe_wanted, 1, __ATOMIC_RELEASE);
	}
}

int engine_transport(struct mad_engine *p, char *why, size_t len)
{
	int err;

	pthread_mutex_lock(&p->lock);
	err = p->down ? EIO : 0;
	if (why && len)
		snprintf(why, len, "%s", p->down ? p->why : p->trigger);
	pthread_mutex_unlock(&p->lock);
	return err;
}

static void *receiver_main(void *arg)
{
	struct mad_engine *p = arg;
	size_t cap = IBUMAD_MAD_SIZE;
	uint8_t *buf = malloc(IBUMAD_HDR_SIZE + cap);
	int64_t next_expiry = 0;
	const struct timespec backoff = { 0, 50 * 1000 * 1000 };

	if (!buf) {
		log_err("%s/%u: no memory for the receive buffer", p->ca, p->portnum);
		return NULL;
	}
	while (!p->stopping) {
		size_t len;
		int r;

		if (now_ms() >= next_expiry) {
			unsigned n = expire_pending(p, false);

			if (n && !p->down)
				want_probe(p, "%u request%s neither answered nor given "
					   "back", n, n > 1 ? "s" : "");
			next_expiry = now_ms() + RECV_POLL_MS;
		}
		liveness_step(p);
		r = ibumad_poll(p->fd, release_held(p, false));

		if (r == -ETIMEDOUT)
			continue;
		if (r < 0) {
			log_dbg("%s/%u: poll: %s", p->ca, p->portnum, strerror(-r));
			if (!transient(-r) && !p->down)
				want_probe(p, "umad_poll failed: %s", strerror(-r));
			nanosleep(&backoff, NULL);
			continue;
		}
		/* Everything queued (up to DRAIN_MAX frames), then one wake-up
		 * per channel for all of it. */
		unsigned n = 0;

		pthread_mutex_lock(&p->dispatch_lock);
		while (n < DRAIN_MAX) {
			len = cap;
			r = ibumad_recv(p->fd, buf, &len);
			if (r == -ENOSPC && len > cap && len <= RECV_BUF_MAX) {
				uint8_t *bigger = realloc(buf, IBUMAD_HDR_SIZE + len);

				if (!bigger)
					break;
				buf = bigger;
				cap = len;
				continue;
			}
			if (r < 0) {
				if (r != -EAGAIN && !transient(-r)) {
					/* A removed device fails every read at
					 * once: no busy loop. */
					if (!p->down)
						want_probe(p, "umad_recv failed: %s",
							   strerror(-r));
					nanosleep(&backoff, NULL);
				}
				break;
			}
			dispatch(p, buf, len);
			n++;
		}
		flush_touched(p);
		pthread_mutex_unlock(&p->dispatch_lock);
		/* Answers were coming and more are awaited: let the threads
		 * bringing them (umad2sim's, the simulator) run before sleeping
		 * in umad_poll, whose sleep and wake-up cost more than a yield
		 * after which they are there. */
		if (n && n < DRAIN_MAX) {
			bool awaited;

			pthread_mutex_lock(&p->lock);
			awaited = p->nfree < PENDING_MAX;
			pthread_mutex_unlock(&p->lock);
			if (awaited)
				sched_yield();
		}
	}
	free(buf);
	return NULL;
}

int engine_open(struct mad_engine **out, const char *ca, int portnum,
	      engine_transport_fn on_transport, void *ctx)
{
	struct mad_engine *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	snprintf(p->ca, sizeof(p->ca), "%s", ca);
	p->portnum = portnum;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->dispatch_lock, NULL);
	for (uint32_t i = 0; i < PENDING_MAX; i++)
		p->free_slots[i] = PENDING_MAX - 1 - i;
	p->nfree = PENDING_MAX;
	p->issm_fd = -1;
	p->on_transport = on_transport;
	p->transport_ctx = ctx;
	p->probe_sink.ops = &probe_sink_ops;

	p->fd = ibumad_open_port(ca, portnum);
	if (p->fd < 0) {
		r = p->fd;
		goto err_free;
	}
	r = -pthread_create(&p->receiver, NULL, receiver_main, p);
	if (r)
		goto err_close;
	*out = p;
	return 0;

err_close:
	ibumad_close_port(p->fd);
err_free:
	pthread_mutex_destroy(&p->dispatch_lock);
	pthread_mutex_destroy(&p->lock);
	free(p);
	return r;
}

void engine_close(struct mad_engine *p)
{
	if (!p)
		return;
	p->stopping = 1;
	pthread_join(p->receiver, NULL);
	while (p->held) {
		struct held *h = p->held;

		p->held = h->next;
		free(h);
	}
	if (p->issm_fd >= 0)
		close(p->issm_fd);
	ibumad_close_port(p->fd);
	pthread_mutex_destroy(&p->dispatch_lock);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* A one-shot sink for engine_query's caller, who waits on it. */
struct query_sink {
	struct mad_sink sink;
	pthread_mutex_t lock;
	pthread_cond_t done_cond;
	bool done;      /* guarded by lock */
	uint8_t *frame; /* the caller's buffer, cap bytes */
	size_t cap, mad_len;
	int status;
};

static void query_deliver(struct mad_sink *s, const void *frame, size_t mad_len)
{
	struct query_sink *q = (struct query_sink *)s;
	const struct ib_user_mad *hdr = frame;
	size_t n = IBUMAD_HDR_SIZE + mad_len;

	pthread_mutex_lock(&q->lock);
	if (n > q->cap)
		n = q->cap;
	memcpy(q->frame, frame, n);
	q->mad_len = n - IBUMAD_HDR_SIZE;
	q->status = hdr->status ? -(int)hdr->status : 0;
	q->done = true;
	pthread_cond_signal(&q->done_cond);
	pthread_mutex_unlock(&q->lock);
}

static const struct mad_sink_ops query_sink_ops = { .deliver = query_deliver };

int engine_query(struct mad_engine *p, void *frame, size_t cap, size_t *mad_len,
	       int timeout_ms, int retries)
{
	struct query_sink q = {
		.sink = { &query_sink_ops }, .frame = frame, .cap = cap,
	};
	struct timespec deadline;
	/* Longer than the engine takes to end the request itself, so that a
	 * request not given back always makes it probe the transport. */
	long long wait_ms = (long long)timeout_ms * (retries + 1) +
			    EXPIRE_GRACE_MS + 500;
	int r = 0;

	pthread_mutex_init(&q.lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q.done_cond, &ca);
	pthread_condattr_destroy(&ca);

	r = engine_send(p, &q.sink, frame, *mad_len, timeout_ms, retries);
	if (r < 0)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += wait_ms / 1000;
	deadline.tv_nsec += (wait_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&q.lock);
	while (!q.done && !p->stopping) {
		if (pthread_cond_timedwait(&q.done_cond, &q.lock, &deadline) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&q.lock);
	engine_cancel_sink(p, &q.sink);
	if (!q.done && !p->stopping)
		want_probe(p, "a query of the port got no answer");
	if (!q.done)
		r = p->stopping ? -ENODEV : -ETIMEDOUT;
	else if (q.status)
		r = q.status;
	else
		*mad_len = q.mad_len;
out:
	pthread_cond_destroy(&q.done_cond);
	pthread_mutex_destroy(&q.lock);
	return r;
}
