/* A sweep's requests (discover_priv.h): the table they live in, their
 * slots reused as they end, the queue (a ring) of those not yet sent,
 * which discover.c sends as the window has room, and when what a sweep
 * keeps from the one before is due to be asked again. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/array.h"

#include "discover_priv.h"

struct req *sweepreq_enqueue(struct discover *d, enum req_kind kind, uint32_t node,
			     unsigned port, unsigned hops, const uint8_t *path)
{
	uint32_t i;

	if (d->qlen == d->qcap) {
		size_t cap = d->qcap ? d->qcap * 2 : 1024;
		uint32_t *q = malloc(cap * sizeof(*q));

		if (!q)
			return NULL;
		for (size_t k = 0; k < d->qlen; k++)
			q[k] = d->queue[(d->qhead + k) % d->qcap];
		free(d->queue);
		d->queue = q;
		d->qhead = 0;
		d->qcap = cap;
	}
	if (d->free_head == NO_NODE) {
		if (ARRAY_GROW(d->reqs, d->cap, d->nreqs + 1u, 1024) < 0)
			return NULL;
		i = d->nreqs++;
	} else {
		i = d->free_head;
		d->free_head = d->reqs[i].next_free;
	}
	d->reqs[i] = (struct req){ .kind = (uint8_t)kind, .port = (uint8_t)port,
				   .hops = (uint8_t)hops, .node = node };
	if (path)
		memcpy(d->reqs[i].path, path, FAB_PATH_MAX);
	d->queue[(d->qhead + d->qlen++) % d->qcap] = i;
	return &d->reqs[i];
}

int sweepreq_ask(struct discover *d, enum req_kind kind, uint32_t node,
		 unsigned port, unsigned hops, const uint8_t *path)
{
	return sweepreq_enqueue(d, kind, node, port, hops, path) ? 0 : -ENOMEM;
}

uint32_t sweepreq_head(const struct discover *d)
{
	return d->queue[d->qhead];
}

void sweepreq_pop(struct discover *d)
{
	d->qhead = (d->qhead + 1) % d->qcap;
	d->qlen--;
}

void sweepreq_reset(struct discover *d)
{
	d->nreqs = 0;
	d->qlen = d->qhead = 0;
	d->free_head = NO_NODE;
}

void sweepreq_free(struct discover *d, uint32_t i)
{
	d->reqs[i].next_free = d->free_head;
	d->free_head = i;
}

int64_t sweepreq_due_ms(uint64_t guid, int64_t since, unsigned max_ms)
{
	uint64_t spread = (guid * 0x9e3779b97f4a7c15ull) >> 32;

	if (max_ms < 2)
		return since + max_ms;
	return since + max_ms - (int64_t)(spread % (max_ms / 2));
}
