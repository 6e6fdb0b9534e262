/* The completion thread of a receive queue: it takes completions off the
 * CQ onto the queue for readers, and resets a QP that went to the error
 * state, or on a change of msg_size.  It polls the CQ with q.lock held, so
 * a FUSE handler holding q.lock (msg_size) sees no completion half-taken. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/clock.h"
#include "umadfs/base/log.h"
#include "rq_priv.h"

#define RQ_POLL_MS 200   /* the completion thread sees its stop flag this often */
#define RQ_WC_BATCH 32

static double now_s(void)
{
	return (double)clock_now_ms() / 1e3;
}

/* The QP is in the error state: the completion thread resets it.  q.lock
 * held. */
void rq_mark_broken(struct rq *rq)
{
	rq->qp_broken = true;
	rq->broken_since = now_s();
}

static void take_completion(struct rq *rq, const struct ibv_wc *wc)
{
	uint32_t index = (uint32_t)wc->wr_id, gen = (uint32_t)(wc->wr_id >> 32);
	struct rq_buf *b;

	if (index >= rq->nbufv) {
		log_warn("%s/%d rq %s: a completion for no buffer (WR id 0x%" PRIx64
			 ")", rq->ca, rq->portnum, rq->name, (uint64_t)wc->wr_id);
		return;
	}
	b = rq->bufv[index];
	if (gen != rq->qp_gen) {
		/* A WR from before a reset, which took it back.  A flush says
		 * nothing; a datagram that landed just before a msg_size reset
		 * is real, and its buffer (retired) was not reused. */
		if (wc->status == IBV_WC_WR_FLUSH_ERR || !b->chunk->retired)
			return;
	} else if (b->posted) {
		b->posted = false;
		rq->nposted--;
	}
	if (wc->status == IBV_WC_WR_FLUSH_ERR) {
		/* Not a datagram: the QP went to the error state. */
		rq->check_until = now_s() + 1.0;
		rq->stats.flushed++;
		rq_buf_release(rq, b);
		return;
	}
	rq->used = true;
	rq->stats.completed++;
	if (wc->status != IBV_WC_SUCCESS) {
		/* Some (rxe on a datagram too large for the buffer) take the
		 * QP to the error state with it. */
		rq->stats.errors++;
		rq->check_until = now_s() + 1.0;
	}
	if (rq->nqueued >= rq->depth) {
		/* Only after depth shrank: the buffer was posted before. */
		rq->stats.dropped++;
		rq_buf_release(rq, b);
		return;
	}
	b->wc = *wc;
	b->seq = rq->stats.completed;
	b->next = NULL;
	if (rq->tail)
		rq->tail->next = b;
	else
		rq->head = b;
	rq->tail = b;
	rq->nqueued++;
}

/* Takes everything the CQ holds.  q.lock held.  Returns how many. */
int rq_drain_cq(struct rq *rq)
{
	struct ibv_wc wc[RQ_WC_BATCH];
	int total = 0, n;

	do {
		n = ibv_poll_cq(rq->cq, RQ_WC_BATCH, wc);
		if (n < 0) {
			log_warn("%s/%d rq %s: polling the CQ failed", rq->ca,
				 rq->portnum, rq->name);
			break;
		}
		for (int i = 0; i < n; i++)
			take_completion(rq, &wc[i]);
		total += n;
	} while (n == RQ_WC_BATCH);
	return total;
}

/* After an error completion, some providers (rxe, for a datagram larger
 * than the buffer) take the QP to the error state and flush every posted
 * WR: reset it and post again, the same QPN.  q.lock held. */
static void check_qp_state(struct rq *rq)
{
	int r;

	if (!rq->qp_broken && rq->check_until) {
		struct ibv_qp_init_attr init;
		struct ibv_qp_attr attr;

		if (ibv_query_qp(rq->qp, &attr, IBV_QP_STATE, &init) == 0 &&
		    attr.qp_state == IBV_QPS_ERR) {
			rq_mark_broken(rq);
			rq->check_until = 0;
			log_info("%s/%d rq %s: the QP went to the error state; "
				 "resetting it", rq->ca, rq->portnum, rq->name);
		} else if (now_s() > rq->check_until) {
			rq->check_until = 0;
		}
	}
	if (!rq->qp_broken || rq->shut)
		return;
	/* The flushes give the buffers back; not every provider sends them,
	 * so not waited for long. */
	if (rq->nposted && now_s() - rq->broken_since < 0.5)
		return;
	r = rq_qp_reset(rq);
	if (r < 0) {
		log_warn("%s/%d rq %s: resetting the QP: %s (retrying)", rq->ca,
			 rq->portnum, rq->name, strerror(-r));
		rq->broken_since = now_s();
		return;
	}
	rq->qp_broken = false;
	rq->stats.resets++;
	rq_replenish(rq);
}

static void *cq_thread(void *arg)
{
	struct rq *rq = arg;

	while (!__atomic_load_n(&rq->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd = { .fd = rq->chan->fd, .events = POLLIN };
		struct ibv_cq *cq;
		void *cq_ctx;
		int n;

		/* Finite: rq_thread_stop's flag is seen within RQ_POLL_MS. */
		if (poll(&pfd, 1, RQ_POLL_MS) > 0 &&
		    ibv_get_cq_event(rq->chan, &cq, &cq_ctx) == 0)
			ibv_ack_cq_events(cq, 1);
		/* Re-arm before draining: a completion after the drain then
		 * raises an event rather than waiting for the timeout. */
		if (ibv_req_notify_cq(rq->cq, 0))
			log_warn("%s/%d rq %s: arming the CQ failed", rq->ca,
				 rq->portnum, rq->name);
		pthread_mutex_lock(&rq->q.lock);
		n = rq_drain_cq(rq);
		check_qp_state(rq);
		pthread_mutex_unlock(&rq->q.lock);
		if (n > 0)
			readq_wake(&rq->q);
	}
	return NULL;
}

int rq_thread_start(struct rq *rq)
{
	int r = pthread_create(&rq->thread, NULL, cq_thread, rq);

	if (r)
		return -r;
	rq->thread_started = true;
	return 0;
}

/* Returns once the thread has left, if one was started. */
void rq_thread_stop(struct rq *rq)
{
	if (!rq->thread_started)
		return;
	__atomic_store_n(&rq->stop, 1, __ATOMIC_RELEASE);
	pthread_join(rq->thread, NULL);
	rq->thread_started = false;
}

/* Until first use: the posted WRs are taken back by a reset of the QP
 * (same QPN) and buffers of the new size posted. */
int rq_set_msg_size(struct rq *rq, uint32_t msg_size)
{
	int r;

	if (msg_size < RQ_MSG_SIZE_MIN || msg_size > RQ_MSG_SIZE_MAX)
		return -EINVAL;
	rq_drain_cq(rq);
	if (rq->used || rq->qp_broken)
		return -EBUSY;
	if (msg_size == rq->msg_size)
		return 0;
	r = rq_pool_resize(rq, msg_size);
	if (r < 0)
		return r;
	r = rq_qp_reset(rq);
	if (r < 0) {
		log_warn("%s/%d rq %s: resetting the QP for msg_size: %s",
			 rq->ca, rq->portnum, rq->name, strerror(-r));
		/* The completion thread tries again. */
		rq_mark_broken(rq);
		return -EIO;
	}
	rq_drain_cq(rq);
	rq_replenish(rq);
	return 0;
}
