/* The buffers of a receive queue: registering them, posting them on the
 * QP, taking read ones back, and changing depth and buffer size.
 *
 * A read takes a datagram off the queue and re-posts its buffer at once
 * while posted + queued < depth, so depth buffers stay posted and never
 * more than depth datagrams wait in the daemon.  After depth shrank,
 * buffers that were posted before keep coming back: a datagram landing in
 * one while depth are queued already is dropped (and counted), and the
 * buffer retires to the idle list. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/log.h"
#include "rq_priv.h"

/* Registers n buffers of the current msg_size. */
int rq_pool_grow(struct rq *rq, unsigned n)
{
	size_t stride = ((size_t)rq->msg_size + 63) & ~(size_t)63;
	size_t len = stride * n;
	struct rq_buf **bufv;
	struct rq_chunk *c;
	int r;

	bufv = realloc(rq->bufv, (rq->nbufv + n) * sizeof(*bufv));
	if (!bufv)
		return -ENOMEM;
	rq->bufv = bufv;
	c = calloc(1, sizeof(*c) + n * sizeof(c->bufs[0]));
	if (!c)
		return -ENOMEM;
	c->mem = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!c->mem) {
		r = -ENOMEM;
		goto err_chunk;
	}
	memset(c->mem, 0, len);
	c->mr = ibv_reg_mr(rq->pd, c->mem, len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr) {
		r = -errno;
		log_warn("%s/%d rq %s: registering %zu bytes: %s", rq->ca,
			 rq->portnum, rq->name, len, strerror(errno));
		goto err_mem;
	}
	c->nbufs = n;
	c->msg_size = rq->msg_size;
	for (unsigned i = 0; i < n; i++) {
		struct rq_buf *b = &c->bufs[i];

		b->chunk = c;
		b->index = rq->nbufv + i;
		rq->bufv[b->index] = b;
		b->data = (uint8_t *)c->mem + i * stride;
		b->next = rq->idle;
		rq->idle = b;
	}
	c->next = rq->chunks;
	rq->chunks = c;
	rq->nbufs += n;
	rq->nbufv += n;
	return 0;

err_mem:
	free(c->mem);
err_chunk:
	free(c);
	return r;
}

/* Deregisters and frees every buffer; safe on a pool half made. */
void rq_pool_free(struct rq *rq)
{
	while (rq->chunks) {
		struct rq_chunk *c = rq->chunks;

		rq->chunks = c->next;
		ibv_dereg_mr(c->mr);
		free(c->mem);
		free(c);
	}
	free(rq->bufv);
	rq->bufv = NULL;
	rq->idle = rq->head = rq->tail = NULL;
	rq->nbufs = rq->nbufv = rq->nqueued = rq->nposted = 0;
}

/* A reset of the QP took every posted WR back: their buffers go idle,
 * retired ones nowhere. */
void rq_pool_unpost(struct rq *rq)
{
	for (struct rq_chunk *c = rq->chunks; c; c = c->next) {
		for (unsigned i = 0; i < c->nbufs; i++) {
			struct rq_buf *b = &c->bufs[i];

			if (!b->posted)
				continue;
			b->posted = false;
			if (!c->retired) {
				b->next = rq->idle;
				rq->idle = b;
			}
		}
	}
	rq->nposted = 0;
}

static int post_buf(struct rq *rq, struct rq_buf *b)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)b->data,
		.length = b->chunk->msg_size,
		.lkey = b->chunk->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = (uint64_t)rq->qp_gen << 32 | b->index, .sg_list = &sge, .num_sge = 1,
	}, *bad;
	int r = ibv_post_recv(rq->qp, &wr, &bad);

	if (r)
		return -r;
	b->posted = true;
	rq->nposted++;
	return 0;
}

/* Posts idle buffers until depth are posted or queued. */
void rq_replenish(struct rq *rq)
{
	while (!rq->shut && !rq->qp_broken && rq->idle &&
	       rq->nposted + rq->nqueued < rq->depth) {
		struct rq_buf *b = rq->idle;
		int r;

		rq->idle = b->next;
		b->next = NULL;
		r = post_buf(rq, b);
		if (r < 0) {
			b->next = rq->idle;
			rq->idle = b;
			log_warn("%s/%d rq %s: posting a receive: %s", rq->ca,
				 rq->portnum, rq->name, strerror(-r));
			break;
		}
	}
}

/* A buffer whose datagram was read or dropped. */
void rq_buf_release(struct rq *rq, struct rq_buf *b)
{
	if (b->chunk->retired)
		return;
	b->next = rq->idle;
	rq->idle = b;
	rq_replenish(rq);
}

/* Takes the head datagram off the queue and gives its buffer back. */
void rq_pop_head(struct rq *rq)
{
	struct rq_buf *b = rq->head;

	rq->head = b->next;
	if (!rq->head)
		rq->tail = NULL;
	rq->nqueued--;
	rq->stats.read++;
	b->next = NULL;
	rq_buf_release(rq, b);
}

int rq_set_depth(struct rq *rq, unsigned depth)
{
	unsigned old = rq->depth;

	if (depth == 0 || depth > rq->depth_max)
		return -EINVAL;
	if (depth > rq->nbufs) {
		int r = rq_pool_grow(rq, depth - rq->nbufs);

		if (r < 0)
			return r;
	}
	rq->depth = depth;
	/* Shrinking: the extra posted buffers retire as they come back. */
	if (depth > old)
		rq_replenish(rq);
	return 0;
}

/* Buffers of msg_size for the whole depth, first on their own idle list:
 * on failure nothing changes.  The old buffers retire: never posted again,
 * they stay until the queue goes, since a datagram that landed in one
 * just before the QP's reset is still in the CQ and is delivered from
 * there.  For an unused queue (nothing queued, every buffer posted or
 * idle), before its QP is reset. */
int rq_pool_resize(struct rq *rq, uint32_t msg_size)
{
	struct rq_chunk *old = rq->chunks, **tail;
	struct rq_buf *old_idle = rq->idle;
	unsigned old_nbufs = rq->nbufs;
	int r;

	rq->chunks = NULL;
	rq->idle = NULL;
	rq->msg_size = msg_size;
	r = rq_pool_grow(rq, rq->depth);
	if (r < 0) {
		rq->chunks = old;
		rq->idle = old_idle;
		rq->msg_size = old->msg_size;
		return r;
	}
	for (struct rq_chunk *c = old; c; c = c->next)
		c->retired = true;
	rq->nbufs -= old_nbufs;
	for (tail = &rq->chunks; *tail; tail = &(*tail)->next)
		;
	*tail = old;
	return 0;
}
