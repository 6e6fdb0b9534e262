/* Receive queues: rq/NAME directories, each a UD QP with posted buffers.
 *
 * Every buffer is in exactly one of three places: posted on the QP
 * (nposted), queued with its completion for readers (head..tail, nqueued),
 * or idle.  A read takes a datagram off the queue and re-posts its buffer
 * at once while posted + queued < depth, so depth buffers stay posted and
 * never more than depth datagrams wait in the daemon.  After depth shrank,
 * buffers that were posted before keep coming back: a datagram landing in
 * one while depth are queued already is dropped (and counted), and the
 * buffer retires to the idle list.
 *
 * The completion thread polls the CQ with q.lock held, so a FUSE handler
 * holding q.lock (msg_size) sees no completion half-taken.
 *
 * Lifetime: the creator and every node of the directory hold a reference
 * (node->on_free drops it).  rmdir shuts the queue down at once (thread,
 * QP, memory); the struct itself lives until the kernel forgot the last
 * node, so a handler that found the node before the rmdir still finds a
 * queue - marked shut - behind it. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "umadfs/ca/device.h"
#include "umadfs/base/log.h"
#include "umadfs/fuse/readq.h"
#include "umadfs/rq/rq.h"
#include "umadfs/fuse/stream.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"

#define RQ_NAME_MAX 63
#define RQ_POLL_MS 200   /* the completion thread sees its stop flag this often */
#define RQ_WC_BATCH 32
/* A text line: fields, GRH and 2 hex digits per payload byte. */
#define RQ_LINE_MAX (512 + 2 * RQ_MSG_SIZE_MAX)

_Static_assert(sizeof(struct rq_record) == 80, "rq_record is 80 bytes");

struct rq_chunk;

struct rq_buf {
	struct rq_buf *next;    /* in the queue or the idle list (q.lock) */
	struct rq_chunk *chunk;
	unsigned index;         /* in rq->bufv; with qp_gen, the WR id */
	uint8_t *data;          /* msg_size bytes: 40 of GRH, then the payload */
	bool posted;            /* on the QP (q.lock) */
	struct ibv_wc wc;       /* its completion, while queued */
	uint64_t seq;
};

/* Buffers registered together. */
struct rq_chunk {
	struct rq_chunk *next;
	struct ibv_mr *mr;
	void *mem;
	unsigned nbufs;
	uint32_t msg_size;
	bool retired;           /* of an older msg_size: never posted again */
	struct rq_buf bufs[];
};

struct rq_stats {
	uint64_t completed, errors, dropped, read, flushed, resets;
};

struct rq {
	/* Readers; q.lock guards every field below not said otherwise. */
	struct readq q;
	unsigned refs;          /* creator + nodes (atomic); freed at zero */
	char name[RQ_NAME_MAX + 1];
	char ca[64];            /* for messages; fixed */
	int portnum;            /* fixed */

	/* Verbs objects: made at mkdir, destroyed by rq_teardown. */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t qpn;           /* fixed */
	union ibv_gid gid;      /* port GID 0 at mkdir; fixed */
	uint16_t lid;           /* port LID at mkdir; fixed */
	unsigned depth_max;     /* fixed */

	pthread_t thread;
	bool thread_started;    /* only rq_create and rq_teardown touch it */
	int stop;               /* atomic: the completion thread leaves */

	uint32_t qkey;
	unsigned depth;
	uint32_t msg_size;
	bool used;              /* a completion came or recv was opened */
	bool qp_broken;         /* the QP is in the error state */
	double check_until;     /* after an error completion: is the QP in
				 * the error state?  Asked until then. */
	double broken_since;    /* when qp_broken was found */
	uint32_t qp_gen;        /* resets so far: WRs of older ones are stale */
	bool shut;              /* rmdir or exit: no verbs object left */
	unsigned nusers;        /* open recv/recv_bin files: rmdir EBUSY */

	struct rq_chunk *chunks;
	struct rq_buf **bufv;   /* every buffer by index, retired ones too */
	unsigned nbufv;
	struct rq_buf *idle;
	struct rq_buf *head, *tail;
	unsigned nposted, nqueued, nbufs; /* nbufs: of current chunks */
	struct rq_stats stats;
};

/* What an open recv or recv_bin keeps. */
struct rq_open {
	struct readq_open ro;   /* first: readq hands this back */
	struct rq *rq;
	bool bin;
	struct line_rest rest;  /* of a line a short read cut (q.lock) */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int qp_reset(struct rq *rq);

/* ---- buffers ---- */

/* Registers n buffers of the current msg_size.  q.lock held or no thread
 * yet. */
static int pool_grow(struct rq *rq, unsigned n)
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

static void pool_free(struct rq *rq)
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

/* Posts idle buffers until depth are posted or queued.  q.lock held. */
static void replenish(struct rq *rq)
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

/* A buffer whose datagram was read or dropped.  q.lock held. */
static void buf_release(struct rq *rq, struct rq_buf *b)
{
	if (b->chunk->retired)
		return;
	b->next = rq->idle;
	rq->idle = b;
	replenish(rq);
}

/* ---- completions ---- */

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
		buf_release(rq, b);
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
		buf_release(rq, b);
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
static int drain_cq(struct rq *rq)
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
			rq->qp_broken = true;
			rq->broken_since = now_s();
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
	r = qp_reset(rq);
	if (r < 0) {
		log_warn("%s/%d rq %s: resetting the QP: %s (retrying)", rq->ca,
			 rq->portnum, rq->name, strerror(-r));
		rq->broken_since = now_s();
		return;
	}
	rq->qp_broken = false;
	rq->stats.resets++;
	replenish(rq);
}

static void *cq_thread(void *arg)
{
	struct rq *rq = arg;

	while (!__atomic_load_n(&rq->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd = { .fd = rq->chan->fd, .events = POLLIN };
		struct ibv_cq *cq;
		void *cq_ctx;
		int n;

		/* Finite: rq_teardown's stop flag is seen within RQ_POLL_MS. */
		if (poll(&pfd, 1, RQ_POLL_MS) > 0 &&
		    ibv_get_cq_event(rq->chan, &cq, &cq_ctx) == 0)
			ibv_ack_cq_events(cq, 1);
		/* Re-arm before draining: a completion after the drain then
		 * raises an event rather than waiting for the timeout. */
		if (ibv_req_notify_cq(rq->cq, 0))
			log_warn("%s/%d rq %s: arming the CQ failed", rq->ca,
				 rq->portnum, rq->name);
		pthread_mutex_lock(&rq->q.lock);
		n = drain_cq(rq);
		check_qp_state(rq);
		pthread_mutex_unlock(&rq->q.lock);
		if (n > 0)
			readq_wake(&rq->q);
	}
	return NULL;
}

/* ---- the QP ---- */

/* libibverbs returns an errno value, or (older providers) -1 with errno. */
static int verbs_err(int ret)
{
	if (ret > 0)
		return -ret;
	return ret < 0 ? (errno ? -errno : -EIO) : 0;
}

static int qp_to_rts(struct rq *rq)
{
	struct ibv_qp_attr attr;
	int r;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = (uint8_t)rq->portnum;
	attr.qkey = rq->qkey;
	r = verbs_err(ibv_modify_qp(rq->qp, &attr, IBV_QP_STATE |
				    IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY));
	if (r < 0)
		return r;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	r = verbs_err(ibv_modify_qp(rq->qp, &attr, IBV_QP_STATE));
	if (r < 0)
		return r;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	return verbs_err(ibv_modify_qp(rq->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN));
}

/* Takes every posted WR back (a reset completes none of them) and brings
 * the QP up again, same QPN; their buffers go idle.  q.lock held. */
static int qp_reset(struct rq *rq)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	int r = verbs_err(ibv_modify_qp(rq->qp, &attr, IBV_QP_STATE));

	if (r < 0)
		return r;
	/* Completions of the old WRs still in the CQ are told apart by it. */
	rq->qp_gen++;
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
	return qp_to_rts(rq);
}

static struct ibv_context *open_verbs_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n, err = ENODEV;

	list = ibv_get_device_list(&n);
	if (!list) {
		errno = ENODEV;
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name) == 0) {
			ctx = ibv_open_device(list[i]);
			err = ctx ? 0 : errno;
			break;
		}
	}
	ibv_free_device_list(list);
	errno = err;
	return ctx;
}

static bool have_verbs_device(const char *name)
{
	struct ibv_device **list;
	bool found = false;
	int n;

	list = ibv_get_device_list(&n);
	if (!list)
		return false;
	for (int i = 0; i < n && !found; i++)
		found = strcmp(ibv_get_device_name(list[i]), name) == 0;
	ibv_free_device_list(list);
	return found;
}

/* Destroys what rq_create made, in reverse order; safe on a half-made
 * queue.  The thread is stopped already. */
static void verbs_destroy(struct rq *rq)
{
	if (rq->qp && ibv_destroy_qp(rq->qp))
		log_warn("%s/%d rq %s: destroying the QP failed", rq->ca,
			 rq->portnum, rq->name);
	rq->qp = NULL;
	pool_free(rq);
	if (rq->cq && ibv_destroy_cq(rq->cq))
		log_warn("%s/%d rq %s: destroying the CQ failed", rq->ca,
			 rq->portnum, rq->name);
	rq->cq = NULL;
	if (rq->chan)
		ibv_destroy_comp_channel(rq->chan);
	rq->chan = NULL;
	if (rq->pd)
		ibv_dealloc_pd(rq->pd);
	rq->pd = NULL;
	if (rq->ctx)
		ibv_close_device(rq->ctx);
	rq->ctx = NULL;
}

static ssize_t rq_fill(struct readq_open *ro, char *buf, size_t size);
static bool rq_readable(struct readq_open *ro);

static const struct readq_ops rq_readq_ops = {
	.fill = rq_fill, .readable = rq_readable,
};

static void rq_free(struct rq *rq)
{
	readq_destroy(&rq->q);
	free(rq);
}

/* Marks the queue shut: opens and writes fail from now on.  Returns
 * false if it was already. */
static bool rq_mark_shut(struct rq *rq)
{
	bool was;

	pthread_mutex_lock(&rq->q.lock);
	was = rq->shut;
	rq->shut = true;
	pthread_mutex_unlock(&rq->q.lock);
	return !was;
}

/* Stops the thread, fails reads, destroys the QP and frees the buffers of
 * a queue marked shut.  The struct stays for the nodes that still point
 * at it. */
static void rq_teardown(struct rq *rq)
{
	if (rq->thread_started) {
		__atomic_store_n(&rq->stop, 1, __ATOMIC_RELEASE);
		pthread_join(rq->thread, NULL);
		rq->thread_started = false;
	}
	readq_kill(&rq->q, ENODEV);
	/* No thread and no reader now, but handlers of nodes found before
	 * the rmdir read the fields under the lock. */
	pthread_mutex_lock(&rq->q.lock);
	verbs_destroy(rq);
	pthread_mutex_unlock(&rq->q.lock);
	log_info("%s/%d rq %s: removed (QPN %u)", rq->ca, rq->portnum, rq->name,
		 rq->qpn);
}

static void rq_get(struct rq *rq)
{
	__atomic_add_fetch(&rq->refs, 1, __ATOMIC_RELAXED);
}

static void rq_put(struct rq *rq)
{
	if (__atomic_sub_fetch(&rq->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		/* At exit (tree_destroy) the queue is still up. */
		if (rq_mark_shut(rq))
			rq_teardown(rq);
		rq_free(rq);
	}
}

/* The verbs side of mkdir: everything up to the first posted buffers
 * and the running completion thread. */
static int rq_create(struct ca_port *pd, const char *name, struct rq **out)
{
	struct ibv_qp_init_attr init;
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct rq *rq;
	int r, flags;

	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return -ENOMEM;
	readq_init(&rq->q, &rq_readq_ops);
	rq->refs = 1;
	snprintf(rq->name, sizeof(rq->name), "%s", name);
	snprintf(rq->ca, sizeof(rq->ca), "%s", pd->ca->name);
	rq->portnum = pd->portnum;
	rq->qkey = RQ_QKEY_DEFAULT;

	rq->ctx = open_verbs_device(pd->ca->name);
	if (!rq->ctx) {
		r = -errno;
		log_warn("%s/%d rq %s: no verbs device %s: %s", rq->ca,
			 rq->portnum, name, pd->ca->name, strerror(-r));
		goto err;
	}
	if ((r = verbs_err(ibv_query_device(rq->ctx, &dattr))) < 0 ||
	    (r = verbs_err(ibv_query_port(rq->ctx, (uint8_t)rq->portnum, &pattr))) < 0 ||
	    (r = verbs_err(ibv_query_gid(rq->ctx, (uint8_t)rq->portnum, 0, &rq->gid))) < 0) {
		log_warn("%s/%d rq %s: querying the device: %s", rq->ca,
			 rq->portnum, name, strerror(-r));
		goto err;
	}
	rq->lid = pattr.lid;
	rq->depth_max = RQ_DEPTH_MAX;
	if (dattr.max_qp_wr > 0 && (unsigned)dattr.max_qp_wr < rq->depth_max)
		rq->depth_max = (unsigned)dattr.max_qp_wr;
	if (dattr.max_cqe > 0 && (unsigned)dattr.max_cqe < rq->depth_max)
		rq->depth_max = (unsigned)dattr.max_cqe;
	rq->depth = RQ_DEPTH_DEFAULT < rq->depth_max ? RQ_DEPTH_DEFAULT : rq->depth_max;
	/* The largest datagram the port takes now, plus the GRH area. */
	rq->msg_size = (128u << pattr.active_mtu) + RQ_GRH_BYTES;
	if (rq->msg_size > RQ_MSG_SIZE_MAX)
		rq->msg_size = RQ_MSG_SIZE_MAX;

	r = -ENOMEM;
	rq->pd = ibv_alloc_pd(rq->ctx);
	if (!rq->pd)
		goto err_errno;
	rq->chan = ibv_create_comp_channel(rq->ctx);
	if (!rq->chan)
		goto err_errno;
	/* The thread polls it first; a spurious wake must not block. */
	flags = fcntl(rq->chan->fd, F_GETFL);
	if (flags < 0 || fcntl(rq->chan->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		goto err_errno;
	/* At most depth_max receives are ever outstanding, and no send. */
	rq->cq = ibv_create_cq(rq->ctx, (int)rq->depth_max, rq, rq->chan, 0);
	if (!rq->cq)
		goto err_errno;
	memset(&init, 0, sizeof(init));
	init.send_cq = rq->cq;
	init.recv_cq = rq->cq;
	init.qp_type = IBV_QPT_UD;
	init.cap.max_send_wr = 1;
	init.cap.max_recv_wr = rq->depth_max;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	rq->qp = ibv_create_qp(rq->pd, &init);
	if (!rq->qp)
		goto err_errno;
	rq->qpn = rq->qp->qp_num;
	r = qp_to_rts(rq);
	if (r < 0) {
		log_warn("%s/%d rq %s: bringing the QP to RTS: %s", rq->ca,
			 rq->portnum, name, strerror(-r));
		goto err;
	}
	r = pool_grow(rq, rq->depth);
	if (r < 0)
		goto err;
	replenish(rq);
	if (ibv_req_notify_cq(rq->cq, 0))
		goto err_errno;

	r = -pthread_create(&rq->thread, NULL, cq_thread, rq);
	if (r < 0)
		goto err_teardown;
	rq->thread_started = true;
	log_info("%s/%d rq %s: QPN %u qkey 0x%08x depth %u msg_size %u",
		 rq->ca, rq->portnum, name, rq->qpn, rq->qkey, rq->depth,
		 rq->msg_size);
	*out = rq;
	return 0;

err_teardown:
	rq_mark_shut(rq);
	rq_teardown(rq); /* destroys the verbs objects */
	rq_free(rq);
	return r;
err_errno:
	r = errno ? -errno : r;
	log_warn("%s/%d rq %s: %s", rq->ca, rq->portnum, name, strerror(-r));
err:
	verbs_destroy(rq);
	rq_free(rq);
	return r;
}

/* ---- recv and recv_bin ---- */

static void put_gid(char *out, const uint8_t *g)
{
	/* sysfs's %pI6: eight groups of four hex digits. */
	sprintf(out, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		"%02x%02x:%02x%02x", g[0], g[1], g[2], g[3], g[4], g[5], g[6],
		g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

struct grh_info {
	uint8_t sgid[16], dgid[16];
	uint32_t flow_label;
	uint8_t traffic_class, hop_limit;
	bool ipv4;
};

/* The GRH area of a UD buffer: an IB GRH / IPv6 header in its 40 bytes,
 * or (RoCEv2 over IPv4) 20 zero bytes and then the IPv4 header, whose
 * addresses become IPv4-mapped GIDs as the kernel's GID table has them. */
static void parse_grh(const uint8_t *d, struct grh_info *g)
{
	memset(g, 0, sizeof(*g));
	if ((d[0] >> 4) != 6 && (d[20] >> 4) == 4) {
		const uint8_t *ip = d + 20;

		g->ipv4 = true;
		g->traffic_class = ip[1];
		g->hop_limit = ip[8];
		g->sgid[10] = g->sgid[11] = 0xff;
		g->dgid[10] = g->dgid[11] = 0xff;
		memcpy(g->sgid + 12, ip + 12, 4);
		memcpy(g->dgid + 12, ip + 16, 4);
		return;
	}
	{
		uint32_t vtf = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 |
			       (uint32_t)d[2] << 8 | d[3];

		g->traffic_class = (uint8_t)(vtf >> 20);
		g->flow_label = vtf & 0xfffff;
		g->hop_limit = d[7];
		memcpy(g->sgid, d + 8, 16);
		memcpy(g->dgid, d + 24, 16);
	}
}

static uint32_t payload_len(const struct rq_buf *b)
{
	if (b->wc.status != IBV_WC_SUCCESS || b->wc.byte_len < RQ_GRH_BYTES)
		return 0;
	return b->wc.byte_len - RQ_GRH_BYTES;
}

/* One datagram as a text line into out (RQ_LINE_MAX bytes). */
static size_t format_line(const struct rq_buf *b, char *out)
{
	const struct ibv_wc *wc = &b->wc;
	static const char hex[] = "0123456789abcdef";
	uint32_t len = payload_len(b);
	const uint8_t *p = b->data + RQ_GRH_BYTES;
	char *o = out;

	if (wc->status != IBV_WC_SUCCESS)
		return (size_t)sprintf(out, "status=%d vendor_err=0x%x error=%s\n",
				       (int)wc->status, wc->vendor_err,
				       ibv_wc_status_str(wc->status));
	o += sprintf(o, "src_qp=%u slid=0x%x sl=%u pkey_index=%u", wc->src_qp,
		     wc->slid, wc->sl, wc->pkey_index);
	if (wc->wc_flags & IBV_WC_GRH) {
		struct grh_info g;
		char sgid[40], dgid[40];

		parse_grh(b->data, &g);
		put_gid(sgid, g.sgid);
		put_gid(dgid, g.dgid);
		o += sprintf(o, " sgid=%s dgid=%s flow_label=0x%x traffic_class=%u "
			     "hop_limit=%u", sgid, dgid, g.flow_label,
			     g.traffic_class, g.hop_limit);
	}
	if (wc->wc_flags & IBV_WC_WITH_IMM)
		o += sprintf(o, " imm=0x%08x", be32toh(wc->imm_data));
	o += sprintf(o, " len=%u data=", len);
	for (uint32_t i = 0; i < len; i++) {
		*o++ = hex[p[i] >> 4];
		*o++ = hex[p[i] & 15];
	}
	*o++ = '\n';
	return (size_t)(o - out);
}

/* Takes the head datagram off the queue and gives its buffer back.
 * q.lock held. */
static void pop_head(struct rq *rq)
{
	struct rq_buf *b = rq->head;

	rq->head = b->next;
	if (!rq->head)
		rq->tail = NULL;
	rq->nqueued--;
	rq->stats.read++;
	b->next = NULL;
	buf_release(rq, b);
}

/* The head datagram as a text line (line_source.peek).  q.lock held. */
static ssize_t peek_line(void *ctx, char *scratch, size_t cap, char **line,
			 bool *owned)
{
	struct rq *rq = ctx;

	if (!rq->head)
		return 0;
	*line = malloc(RQ_LINE_MAX); /* a datagram's line outgrows scratch */
	if (!*line)
		return -ENOMEM;
	*owned = true;
	return (ssize_t)format_line(rq->head, *line);
}

static void pop_line(void *ctx)
{
	pop_head(ctx);
}

/* Whole lines, with partial-line carry-over per open file.  q.lock held. */
static ssize_t fill_text(struct rq_open *of, char *buf, size_t size)
{
	const struct line_source src = {
		.peek = peek_line, .pop = pop_line, .ctx = of->rq,
	};

	return readq_fill_lines(&of->rest, buf, size, &src);
}

/* One record per read; EINVAL (the record stays) when it does not fit. */
static ssize_t fill_bin(struct rq_open *of, char *buf, size_t size)
{
	struct rq *rq = of->rq;
	struct rq_buf *b = rq->head;
	const struct ibv_wc *wc;
	struct rq_record rec;
	uint32_t len;
	uint16_t flags = 0;

	if (!b)
		return 0;
	wc = &b->wc;
	len = payload_len(b);
	if (size < sizeof(rec) + len)
		return -EINVAL;
	memset(&rec, 0, sizeof(rec));
	rec.hdr_len = htole16(sizeof(rec));
	rec.len = htole32(len);
	rec.status = htole32((uint32_t)wc->status);
	rec.vendor_err = htole32(wc->vendor_err);
	rec.seq = htole64(b->seq);
	if (wc->status == IBV_WC_SUCCESS) {
		rec.src_qp = htole32(wc->src_qp);
		rec.slid = htole16(wc->slid);
		rec.pkey_index = htole16(wc->pkey_index);
		rec.sl = wc->sl;
		rec.dlid_path_bits = wc->dlid_path_bits;
		if (wc->wc_flags & IBV_WC_WITH_IMM) {
			flags |= RQ_REC_IMM;
			rec.imm = htole32(be32toh(wc->imm_data));
		}
		if (wc->wc_flags & IBV_WC_GRH) {
			struct grh_info g;

			parse_grh(b->data, &g);
			flags |= RQ_REC_GRH | (g.ipv4 ? RQ_REC_IPV4 : 0);
			rec.traffic_class = g.traffic_class;
			rec.hop_limit = g.hop_limit;
			rec.flow_label = htole32(g.flow_label);
			memcpy(rec.sgid, g.sgid, 16);
			memcpy(rec.dgid, g.dgid, 16);
		}
	}
	rec.flags = htole16(flags);
	memcpy(buf, &rec, sizeof(rec));
	memcpy(buf + sizeof(rec), b->data + RQ_GRH_BYTES, len);
	pop_head(rq);
	return (ssize_t)(sizeof(rec) + len);
}

static ssize_t rq_fill(struct readq_open *ro, char *buf, size_t size)
{
	struct rq_open *of = (struct rq_open *)ro;

	return of->bin ? fill_bin(of, buf, size) : fill_text(of, buf, size);
}

static bool rq_readable(struct readq_open *ro)
{
	struct rq_open *of = (struct rq_open *)ro;

	return of->rq->head || of->rest.buf;
}

static void rq_open_free(struct rq_open *of)
{
	struct rq *rq = of->rq;

	readq_open_unlink(&of->ro);
	bool last;

	pthread_mutex_lock(&rq->q.lock);
	last = --rq->nusers == 0;
	pthread_mutex_unlock(&rq->q.lock);
	if (last)
		readq_released();
	line_rest_clear(&of->rest);
	free(of);
}

enum rq_file {
	RF_RECV, RF_RECV_BIN, RF_QPN, RF_QKEY, RF_GID, RF_LID, RF_DEPTH,
	RF_MSG_SIZE, RF_STATS,
};

static void recv_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct rq *rq = n->owner;
	struct rq_open *of;

	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return;
	}
	of = calloc(1, sizeof(*of));
	if (!of) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	of->rq = rq;
	of->bin = n->file == RF_RECV_BIN;
	pthread_mutex_lock(&rq->q.lock);
	if (rq->shut) {
		pthread_mutex_unlock(&rq->q.lock);
		free(of);
		fuse_reply_err(req, ENOENT);
		return;
	}
	rq->nusers++;
	rq->used = true; /* msg_size is fixed from now on */
	pthread_mutex_unlock(&rq->q.lock);
	readq_open_link(&rq->q, &of->ro);
	fi->fh = (uintptr_t)of;
	if (reply_open_stream(req, fi) == -ENOENT)
		rq_open_free(of); /* interrupted: no release will come */
}

static void recv_read(fuse_req_t req, struct node *n, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	struct rq_open *of = (struct rq_open *)(uintptr_t)fi->fh;

	readq_read(req, &of->ro, size, fi->flags & O_NONBLOCK);
}

static void recv_poll(fuse_req_t req, struct node *n, struct fuse_file_info *fi,
		      struct fuse_pollhandle *ph)
{
	struct rq_open *of = (struct rq_open *)(uintptr_t)fi->fh;

	readq_poll(req, &of->ro, ph);
}

static void recv_release(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	rq_open_free((struct rq_open *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static const struct node_ops recv_ops = {
	.open = recv_open, .read = recv_read, .release = recv_release,
	.poll = recv_poll,
};

/* ---- the small files ---- */

static int value_show(struct node *n, char *buf, size_t cap)
{
	struct rq *rq = n->owner;
	char gid[40];
	int len = -ENOENT;

	pthread_mutex_lock(&rq->q.lock);
	if (rq->shut)
		goto out;
	switch (n->file) {
	case RF_QPN:
		len = snprintf(buf, cap, "%u\n", rq->qpn);
		break;
	case RF_QKEY:
		len = snprintf(buf, cap, "0x%08x\n", rq->qkey);
		break;
	case RF_GID:
		put_gid(gid, rq->gid.raw);
		len = snprintf(buf, cap, "%s\n", gid);
		break;
	case RF_LID:
		len = snprintf(buf, cap, "0x%x\n", rq->lid);
		break;
	case RF_DEPTH:
		len = snprintf(buf, cap, "%u\n", rq->depth);
		break;
	case RF_MSG_SIZE:
		len = snprintf(buf, cap, "%u\n", rq->msg_size);
		break;
	case RF_STATS:
		len = snprintf(buf, cap,
			       "posted %u\ncompleted %" PRIu64 "\nerrors %" PRIu64
			       "\nqueued %u\ndropped %" PRIu64 "\nread %" PRIu64
			       "\nflushed %" PRIu64 "\nresets %" PRIu64 "\n",
			       rq->nposted, rq->stats.completed, rq->stats.errors,
			       rq->nqueued, rq->stats.dropped, rq->stats.read,
			       rq->stats.flushed, rq->stats.resets);
		break;
	}
out:
	pthread_mutex_unlock(&rq->q.lock);
	return len;
}

/* Write opens keep no text; reads of them fail with EBADF. */
static void value_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_open_settable(req, n, fi, value_show, NULL);
}

static off_t value_size(struct node *n)
{
	return textfile_size(n, value_show);
}

/* One number, decimal or 0x-hex, optionally followed by a newline. */
static int parse_number(const char *buf, size_t size, unsigned long long max,
			unsigned long long *out)
{
	char text[32], *end;
	size_t len = size;

	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	if (!len || len >= sizeof(text))
		return -EINVAL;
	memcpy(text, buf, len);
	text[len] = '\0';
	if (text[0] == '-' || text[0] == '+')
		return -EINVAL;
	errno = 0;
	*out = strtoull(text, &end, 0);
	if (errno || *end || *out > max)
		return -EINVAL;
	return 0;
}

static int set_qkey(struct rq *rq, uint32_t qkey)
{
	struct ibv_qp_attr attr;
	int r;

	memset(&attr, 0, sizeof(attr));
	attr.qkey = qkey;
	r = verbs_err(ibv_modify_qp(rq->qp, &attr, IBV_QP_QKEY));
	if (r < 0)
		return r;
	rq->qkey = qkey;
	return 0;
}

static int set_depth(struct rq *rq, unsigned depth)
{
	unsigned old = rq->depth;

	if (depth == 0 || depth > rq->depth_max)
		return -EINVAL;
	if (depth > rq->nbufs) {
		int r = pool_grow(rq, depth - rq->nbufs);

		if (r < 0)
			return r;
	}
	rq->depth = depth;
	/* Shrinking: the extra posted buffers retire as they come back. */
	if (depth > old)
		replenish(rq);
	return 0;
}

/* Until first use: the posted WRs are taken back by a reset of the QP
 * (same QPN) and buffers of the new size posted. */
static int set_msg_size(struct rq *rq, uint32_t msg_size)
{
	struct rq_chunk *old = rq->chunks, **tail;
	struct rq_buf *old_idle = rq->idle;
	unsigned old_nbufs = rq->nbufs;
	int r;

	if (msg_size < RQ_MSG_SIZE_MIN || msg_size > RQ_MSG_SIZE_MAX)
		return -EINVAL;
	drain_cq(rq);
	if (rq->used || rq->qp_broken)
		return -EBUSY;
	if (msg_size == rq->msg_size)
		return 0;
	/* Unused: nothing is queued, every old buffer is posted or idle.
	 * The new buffers first, on their own idle list: failing here
	 * changes nothing. */
	rq->chunks = NULL;
	rq->idle = NULL;
	rq->msg_size = msg_size;
	r = pool_grow(rq, rq->depth);
	if (r < 0) {
		rq->chunks = old;
		rq->idle = old_idle;
		rq->msg_size = old->msg_size;
		return r;
	}
	/* The old buffers are never posted again, but stay until the queue
	 * goes: a datagram that landed in one just before the reset is
	 * still in the CQ, and is delivered from there. */
	for (struct rq_chunk *c = old; c; c = c->next)
		c->retired = true;
	rq->nbufs -= old_nbufs;
	for (tail = &rq->chunks; *tail; tail = &(*tail)->next)
		;
	*tail = old;
	r = qp_reset(rq);
	if (r < 0) {
		log_warn("%s/%d rq %s: resetting the QP for msg_size: %s",
			 rq->ca, rq->portnum, rq->name, strerror(-r));
		/* The completion thread tries again. */
		rq->qp_broken = true;
		rq->broken_since = now_s();
		return -EIO;
	}
	drain_cq(rq);
	replenish(rq);
	return 0;
}

static void value_write(fuse_req_t req, struct node *n, const char *buf,
			size_t size, off_t off, struct fuse_file_info *fi)
{
	struct rq *rq = n->owner;
	unsigned long long v;
	int r;

	r = parse_number(buf, size, n->file == RF_QKEY ? 0xffffffffull :
			 0xffffffull, &v);
	if (r < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_mutex_lock(&rq->q.lock);
	if (rq->shut) {
		r = -ENODEV;
	} else if (n->file == RF_QKEY) {
		r = set_qkey(rq, (uint32_t)v);
	} else if (n->file == RF_DEPTH) {
		r = set_depth(rq, (unsigned)v);
	} else if (n->file == RF_MSG_SIZE) {
		r = set_msg_size(rq, (uint32_t)v);
	} else {
		r = -EBADF;
	}
	pthread_mutex_unlock(&rq->q.lock);
	if (r < 0) {
		log_info("%s/%d rq %s: %s=%llu: %s", rq->ca, rq->portnum,
			 rq->name, n->name, v, strerror(-r));
		fuse_reply_err(req, -r);
		return;
	}
	fuse_reply_write(req, size);
}

static const struct node_ops value_ops = {
	.open = value_open, .read = textfile_read, .write = value_write,
	.release = textfile_release, .size = value_size,
};

/* ---- rq/ ---- */

static const struct {
	const char *name;
	mode_t mode;
	const struct node_ops *ops;
	enum rq_file kind;
} rq_files[] = {
	{ "qpn", S_IFREG | 0444, &value_ops, RF_QPN },
	{ "qkey", S_IFREG | 0644, &value_ops, RF_QKEY },
	{ "gid", S_IFREG | 0444, &value_ops, RF_GID },
	{ "lid", S_IFREG | 0444, &value_ops, RF_LID },
	{ "depth", S_IFREG | 0644, &value_ops, RF_DEPTH },
	{ "msg_size", S_IFREG | 0644, &value_ops, RF_MSG_SIZE },
	{ "recv", S_IFREG | 0400, &recv_ops, RF_RECV },
	{ "recv_bin", S_IFREG | 0400, &recv_ops, RF_RECV_BIN },
	{ "stats", S_IFREG | 0444, &value_ops, RF_STATS },
};

static void rq_node_get(struct node *n)
{
	rq_get(n->owner);
}

static void rq_node_put(struct node *n)
{
	rq_put(n->owner);
}

static bool name_ok(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > RQ_NAME_MAX || name[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

/* rq/ is root's (0755, whatever -o mad_group= says): creator is root. */
static int rq_mkdir(struct node *dir, const char *name, uid_t creator,
		    struct node **out)
{
	struct ca_port *pd = dir->owner;
	struct node *qdir;
	struct rq *rq;
	bool exists;
	int r;

	if (!name_ok(name))
		return -EINVAL;
	/* Before making a QP for nothing. */
	tree_rdlock();
	exists = tree_child(dir, name) != NULL;
	tree_unlock();
	if (exists)
		return -EEXIST;
	r = rq_create(pd, name, &rq);
	if (r < 0)
		return r;

	tree_wrlock();
	if (tree_child(dir, name)) {
		r = -EEXIST;
		goto err_unlock;
	}
	r = -ENOMEM;
	qdir = tree_add(dir, name, S_IFDIR | 0555, NULL, rq, 0);
	if (!qdir)
		goto err_unlock;
	for (size_t i = 0; i < sizeof(rq_files) / sizeof(rq_files[0]); i++) {
		if (!tree_add(qdir, rq_files[i].name, rq_files[i].mode,
			      rq_files[i].ops, rq, (int)rq_files[i].kind)) {
			tree_unlink(qdir); /* no references yet: freed now */
			goto err_unlock;
		}
	}
	/* Each node holds a reference from here: the struct outlives the
	 * last node the kernel knows. */
	tree_hold_owner(qdir, rq_node_get, rq_node_put);
	tree_unlock();
	rq_put(rq); /* the creator's */
	*out = qdir;
	return 0;

err_unlock:
	tree_unlock();
	rq_put(rq);
	return r;
}

static bool rq_in_use(void *ctx)
{
	struct rq *rq = ctx;
	bool used;

	pthread_mutex_lock(&rq->q.lock);
	used = rq->nusers != 0;
	pthread_mutex_unlock(&rq->q.lock);
	return used;
}

static int rq_rmdir(struct node *dir, struct node *child)
{
	struct rq *rq = child->owner;

	/* child is alive (the kernel holds it for the rmdir), so is rq. */
	rq_get(rq);
	/* Files closed just before: their RELEASE may still be coming. */
	readq_wait_released(rq_in_use, rq, READQ_RELEASE_WAIT_MS);
	pthread_mutex_lock(&rq->q.lock);
	if (rq->shut) {
		pthread_mutex_unlock(&rq->q.lock);
		rq_put(rq);
		return -ENOENT;
	}
	if (rq->nusers) {
		pthread_mutex_unlock(&rq->q.lock);
		rq_put(rq);
		return -EBUSY;
	}
	/* New opens now fail: shut is set before the lock is dropped. */
	rq->shut = true;
	pthread_mutex_unlock(&rq->q.lock);
	tree_wrlock();
	tree_unlink(child);
	tree_unlock();
	rq_teardown(rq);
	rq_put(rq);
	return 0;
}

static const struct dir_ops rq_dir_ops = {
	.mkdir = rq_mkdir, .rmdir = rq_rmdir,
};

int rq_add_dir(struct node *port_dir, struct ca_port *pd)
{
	struct node *dir;

	/* Under the simulator (or without rdma_rxe/HCA drivers) the CA has no
	 * verbs device: no rq/ at all rather than one that cannot work. */
	if (!have_verbs_device(pd->ca->name))
		return 0;
	dir = tree_add(port_dir, "rq", S_IFDIR | 0755, NULL, pd, 0);
	if (!dir)
		return -ENOMEM;
	dir->dops = &rq_dir_ops;
	return 0;
}
