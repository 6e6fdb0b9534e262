/* struct mad_engine, the state of a port's engine that its modules share:
 * each field says which module owns it and the lock that guards it.  The
 * modules' functions are in their own headers (delivery.h, agent_table.h,
 * pending.h, liveness.h, receiver.h), each module calling only those
 * below it; this header declares none but engine_doubt().  Not for use
 * outside src/engine/. */
#ifndef UMADFS_ENGINE_PRIV_H
#define UMADFS_ENGINE_PRIV_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/umad.h>

#include "umadfs/engine/sink.h"
#include "umadfs/mad/mad.h"
#include "pending_table.h"

#define AGENTS_MAX 32     /* the kernel's IB_UMAD_MAX_AGENTS */
#define RECV_POLL_MS 100  /* bounds how long stopping takes */
#define TOUCHED_MAX 16    /* sinks waiting for a flush at once */

/* A timeout that came back before its deadline, waiting for it
 * (delivery.c). */
struct held {
	struct held *next;
	struct mad_sink *sink;
	int64_t due_ms;
	size_t mad_len;
	uint8_t frame[];
};

/* One umad agent of the port's fd (agent_table.c). */
struct agent {
	uint8_t mgmt_class, class_version;
	uint32_t oui;
	int id;
	struct mad_sink *sink; /* who registered it; NULL: send-only agent */
	uint64_t methods[2];   /* methods it serves (registered agents) */
	bool rmpp;
};

struct mad_engine {
	/* engine.c's: set before the receiver starts, then fixed. */
	char ca[UMAD_CA_NAME_LEN];
	int portnum;
	int fd; /* umad "portid" */
	pthread_t receiver;
	volatile int stopping; /* written once by engine_stop */
	bool joined;           /* the receiver is gone (engine_stop's caller) */

	/* Held by the receiver from looking up a pending entry until its sink
	 * has been called and flushed, so pending_cancel() can wait a
	 * delivery out.  It also guards delivery.c's touched[] (the sinks
	 * given frames since their last flush, empty whenever the lock is
	 * free) and held (by due time). */
	pthread_mutex_t dispatch_lock;
	struct mad_sink *touched[TOUCHED_MAX];
	unsigned ntouched;
	struct held *held;

	/* Answers from elsewhere (pending.c); receiver thread only. */
	unsigned lmc;            /* the port's LMC when last read (0 before) */
	unsigned long misrouted; /* answers not from where their request went */

	/* The probe (liveness.c); receiver thread only. */
	engine_transport_fn on_transport;
	void *transport_ctx;
	struct mad_sink probe_sink;
	bool probe_sent;
	int probe_result;      /* by the probe's sink: 1 answered, -1 not */
	int64_t next_probe_ms; /* while down */
	/* The doubt: set by engine_doubt() (any thread, atomic), taken by
	 * liveness.c. */
	int probe_wanted;

	pthread_mutex_t lock; /* guards everything below */
	bool down;            /* written by liveness.c (receiver thread) only */
	char trigger[160];    /* what made the engine doubt last (engine_doubt()) */
	char why[320];        /* why it is down (liveness.c) */
	struct pending_table pending; /* pending.c's */
	pthread_cond_t idle;          /* pending.c: the table emptied */
	bool requests_closed; /* pending.c: engine_request()s ended, no more */
	struct agent agents[AGENTS_MAX]; /* agent_table.c's, and below */
	unsigned nagents;
	/* The port's issm device (agent_table.c): open while issm_holds > 0;
	 * one hold is the registered agents' (agents_issm, umad2sim only),
	 * the others engine_issm_hold()'s (the issm file's holder). */
	int issm_fd;
	unsigned issm_holds;
	bool agents_issm;
};

/* Notes why the transport is in doubt (unless it is down already: then
 * why says more) and asks the receiver thread for a probe, which
 * liveness.c sends.  Any thread, engine->lock not held. */
static inline void engine_doubt(struct mad_engine *engine, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void engine_doubt(struct mad_engine *engine, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&engine->lock);
	if (!engine->down) {
		va_start(ap, fmt);
		vsnprintf(engine->trigger, sizeof(engine->trigger), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&engine->lock);
	__atomic_store_n(&engine->probe_wanted, 1, __ATOMIC_RELEASE);
}

#endif
