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
	liveness_init(p, on_transport, ctx);

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
	drop_held(p, NULL);
	if (p->issm_fd >= 0)
		close(p->issm_fd);
	ibumad_close_port(p->fd);
	pthread_mutex_destroy(&p->dispatch_lock);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
