/* The MAD engine of one port: its lifetime (the umad fd, the tables, the
 * receiver thread), from engine_open() to engine_close().  The mechanisms
 * live beside it: agent_table.c, pending.c, delivery.c, liveness.c,
 * receiver.c, query.c. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "umadfs/engine/engine.h"
#include "umadfs/engine/ibumad.h"
#include "engine_priv.h"

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
	for (uint32_t i = 0; i < PENDING_MAX; i++)
		engine->free_slots[i] = PENDING_MAX - 1 - i;
	engine->nfree = PENDING_MAX;
	engine->issm_fd = -1;
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
	engine_stop(engine);
	delivery_drop_held(engine, NULL);
	if (engine->issm_fd >= 0)
		close(engine->issm_fd);
	ibumad_close_port(engine->fd);
	pthread_mutex_destroy(&engine->dispatch_lock);
	pthread_mutex_destroy(&engine->lock);
	free(engine);
}
