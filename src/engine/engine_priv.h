/* What the engine's own files share: struct mad_engine, its tables, and the
 * functions one mechanism (agents, pending table, delivery, liveness,
 * receiver) offers the others.  Not for use outside src/engine/. */
#ifndef UMADFS_ENGINE_PRIV_H
#define UMADFS_ENGINE_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <infiniband/umad.h>

#include "umadfs/base/clock.h"
#include "umadfs/engine/sink.h"
#include "umadfs/mad/mad.h"

#define PENDING_BITS 12
#define PENDING_MAX (1u << PENDING_BITS) /* requests in flight per port */
#define AGENTS_MAX 32                     /* the kernel's IB_UMAD_MAX_AGENTS */
#define RECV_POLL_MS 100                  /* bounds how long stopping takes */
#define EXPIRE_GRACE_MS 1000 /* past the deadline, before the engine gives up */
#define TOUCHED_MAX 16       /* sinks waiting for a flush at once */
#define PROBE_GRACE_MS 200   /* EXPIRE_GRACE_MS of the liveness probe */

/* A request awaiting its answer, in the slot its wire TID names. */
struct pending {
	struct mad_sink *sink; /* NULL: slot free */
	uint64_t caller_tid;
	uint32_t wire_tid;
	int agent, timeout_ms, retries_left;
	int64_t deadline_ms; /* when the kernel would give up: timeout x (retries + 1) */
	int grace_ms;        /* then how long the engine waits to be told */
	/* The request's umad header and MAD header, for the timeout item the
	 * engine makes itself if the transport never reports one. */
	uint8_t head[UMAD_FRAME_HDR_SIZE + MAD_HDR_SIZE];
};

/* A timeout that came back before its deadline, waiting for it (see
 * pending_answer()). */
struct held {
	struct held *next;
	struct mad_sink *sink;
	int64_t due_ms;
	size_t mad_len;
	uint8_t frame[];
};

/* One umad agent of the port's fd. */
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
	pthread_t receiver;
	volatile int stopping; /* written once by engine_stop */
	bool joined;           /* the receiver is gone (engine_stop's caller) */

	/* Held by the receiver from looking up a pending entry until its sink
	 * has been called and flushed, so engine_cancel_sink can wait a
	 * delivery out.  It also guards touched[] (the sinks given frames
	 * since their last flush, empty whenever the lock is free) and held
	 * (by due time). */
	pthread_mutex_t dispatch_lock;
	struct mad_sink *touched[TOUCHED_MAX];
	unsigned ntouched;
	struct held *held;

	/* Answers from elsewhere (pending.c); receiver thread only. */
	unsigned lmc;            /* the port's LMC when last read (0 before) */
	unsigned long misrouted; /* answers not from where their request went */

	/* Liveness of the transport (liveness.c); receiver thread only,
	 * but probe_wanted (any thread, atomic). */
	engine_transport_fn on_transport;
	void *transport_ctx;
	struct mad_sink probe_sink;
	bool probe_sent;
	int probe_result;      /* by the probe's sink: 1 answered, -1 not */
	int64_t next_probe_ms; /* while down */
	int probe_wanted;

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
	int issm_fd; /* umad2sim only, while agents are registered */
	bool requests_closed; /* the receiver ended engine_request()s: no more */
};

/* agent_table.c, engine->lock held: the agent a MAD goes out through (-errno
 * if none can be had), the sink registered for an unsolicited MAD. */
int agent_table_pick(struct mad_engine *engine, struct mad_sink *sink, const uint8_t *mad);
struct mad_sink *agent_table_sink(struct mad_engine *engine, const uint8_t *mad);

/* pending.c: sending (probe: even while down), an answer to its request
 * (false: none waits for it; dispatch_lock held), requests ended past
 * their deadline (all: every one; receiver thread). */
int pending_send(struct mad_engine *engine, struct mad_sink *sink, void *frame,
		 size_t mad_len, int timeout_ms, int retries, bool probe);
bool pending_answer(struct mad_engine *engine, uint8_t *frame, size_t mad_len);
/* Answers an SMInfo Get the simulator hands the engine's issm (true), as
 * a port with no SM behind it (agent_table.c).  Receiver thread. */
bool agent_table_sim_answer(struct mad_engine *engine, uint8_t *frame);
unsigned pending_expire(struct mad_engine *engine, bool all);
/* Ends (as timed out) every pending request of the sinks of ops, and
 * refuses new ones (-ENODEV): at the receiver's end, for
 * engine_request()'s callers, who wait for nothing else.  Receiver
 * thread, after the held timeouts went out. */
void pending_end_requests(struct mad_engine *engine, const struct mad_sink_ops *ops);
/* engine_request()'s sinks' ops (query.c). */
extern const struct mad_sink_ops request_sink_ops;

/* delivery.c, dispatch_lock held (delivery_release_held takes it). */
void delivery_add(struct mad_engine *engine, struct mad_sink *sink, const void *frame,
	     size_t mad_len);
void delivery_flush(struct mad_engine *engine);
void delivery_hold(struct mad_engine *engine, struct mad_sink *sink, const uint8_t *frame,
	  size_t mad_len, int64_t due_ms);
void delivery_drop_held(struct mad_engine *engine, struct mad_sink *sink);
int delivery_release_held(struct mad_engine *engine, bool all);

/* liveness.c: liveness_want_probe() asks for a probe (any thread);
 * liveness_step() runs the probe (receiver thread). */
void liveness_init(struct mad_engine *engine, engine_transport_fn on_transport,
		   void *ctx);
void liveness_want_probe(struct mad_engine *engine, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void liveness_step(struct mad_engine *engine);

/* receiver.c: the receiver thread's function. */
void *receiver_main(void *arg);

#endif
