/* The MAD engine of one port, its public face (engine.h): its lifetime (the
 * umad fd, the tables, the receiver thread) from engine_open() to
 * engine_close(), and each call handed to the module that owns the
 * mechanism, all of them below this file: agent_table.c, pending.c,
 * delivery.c, liveness.c, receiver.c.  query.c, above it, makes the
 * daemon's own requests of engine_send()s. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "umadfs/engine/engine.h"
#include "umadfs/engine/ibumad.h"
#include "agent_table.h"
#include "delivery.h"
#include "engine_priv.h"
#include "liveness.h"
#include "pending.h"
#include "pending_table.h"
#include "receiver.h"

#define CLOSE_QUIET_MS 1000 /* the longest engine_close() waits for answers */

int engine_open(struct mad_engine **out, const char *ca, int portnum,
		engine_transport_fn on_transport, void *ctx)
{
	struct mad_engine *engine = calloc(1, sizeof(*engine));
	int r;

	if (!engine)
		return -ENOMEM;
	snprintf(engine->ca, sizeof(engine->ca), "%s", ca);
	engine->portnum = portnum;
	pthread_mutex_init(&engine->lock, NULL);
	pthread_mutex_init(&engine->dispatch_lock, NULL);
	pthread_cond_init(&engine->idle, NULL);
	pending_table_init(&engine->pending);
	agent_table_init(engine);
	liveness_init(engine, on_transport, ctx);

	engine->fd = ibumad_open_port(ca, portnum);
	if (engine->fd < 0) {
		r = engine->fd;
		goto err_free;
	}
	r = -pthread_create(&engine->receiver, NULL, receiver_main, engine);
	if (r)
		goto err_close;
	*out = engine;
	return 0;

err_close:
	ibumad_close_port(engine->fd);
err_free:
	pthread_cond_destroy(&engine->idle);
	pthread_mutex_destroy(&engine->dispatch_lock);
	pthread_mutex_destroy(&engine->lock);
	free(engine);
	return r;
}

void engine_stop(struct mad_engine *engine)
{
	if (!engine || engine->joined)
		return;
	engine->stopping = 1;
	pthread_join(engine->receiver, NULL);
	engine->joined = true;
}

void engine_close(struct mad_engine *engine)
{
	if (!engine)
		return;
	/* What is still on the wire comes back to the agents it left from
	 * (the receiver drops it) before they go. */
	if (!engine->joined)
		pending_quiesce(engine, CLOSE_QUIET_MS);
	engine_stop(engine);
	delivery_drop_held(engine, NULL);
	agent_table_close(engine);
	/* Under the simulator the fd is left to the process's exit, whose
	 * umad2sim handler stops umad2sim's receiver thread before freeing
	 * the fd's queue: that thread crashes on a MAD for a class whose fd
	 * is closed (ibsim 0.10 locks the mutex of a NULL fd's data), and an
	 * SM's SMP or a late answer may come at any time.  (The simulator's
	 * CAs never go while the daemon runs: only its exit gets here.) */
	if (!ibumad_simulated())
		ibumad_close_port(engine->fd);
	pthread_cond_destroy(&engine->idle);
	pthread_mutex_destroy(&engine->dispatch_lock);
	pthread_mutex_destroy(&engine->lock);
	free(engine);
}

int engine_send(struct mad_engine *engine, struct mad_sink *sink, void *frame,
		size_t mad_len, int timeout_ms, int retries)
{
	return pending_send(engine, sink, frame, mad_len, timeout_ms, retries, 0);
}

void engine_cancel_sink(struct mad_engine *engine, struct mad_sink *sink)
{
	pending_cancel(engine, sink);
}

int engine_register(struct mad_engine *engine, struct mad_sink *sink,
		    const struct engine_registration *reg, char *why, size_t whylen)
{
	return agent_table_register(engine, sink, reg, why, whylen);
}

void engine_unregister_sink(struct mad_engine *engine, struct mad_sink *sink)
{
	agent_table_unregister(engine, sink);
	pending_cancel(engine, sink);
}

int engine_list_registrations(struct mad_engine *engine, struct mad_sink *sink,
			      struct engine_registration *out, int *ids, int max)
{
	return agent_table_list(engine, sink, out, ids, max);
}

bool engine_holds_issm(struct mad_engine *engine)
{
	return agent_table_holds_issm(engine);
}

int engine_issm_hold(struct mad_engine *engine)
{
	return agent_table_issm_hold(engine);
}

void engine_issm_release(struct mad_engine *engine)
{
	agent_table_issm_release(engine);
}

bool engine_issm_agents(struct mad_engine *engine)
{
	return agent_table_issm_agents(engine);
}

int engine_transport(struct mad_engine *engine, char *why, size_t len)
{
	return liveness_transport(engine, why, len);
}
