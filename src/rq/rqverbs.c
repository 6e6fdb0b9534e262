/* The verbs objects of a receive queue (device context, PD, CQ, UD QP)
 * from mkdir to rmdir: creating them, resetting the QP, destroying them.
 * The queue's life around them (its thread, its references) is rq.c's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/log.h"
#include "rq_priv.h"

/* libibverbs returns an errno value, or (older providers) -1 with errno. */
static int verbs_err(int ret)
{
	if (ret > 0)
		return -ret;
	return ret < 0 ? (errno ? -errno : -EIO) : 0;
}

/* A verbs call that returned NULL: logs what failed.  Returns -errno. */
static int verbs_fail(struct rq *rq, const char *what)
{
	int r = errno ? -errno : -ENOMEM;

	log_warn("%s/%d rq %s: %s: %s", rq->ca, rq->portnum, rq->name, what,
		 strerror(-r));
	return r;
}

/* ---- the QP's state ---- */

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
int rq_qp_reset(struct rq *rq)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	int r = verbs_err(ibv_modify_qp(rq->qp, &attr, IBV_QP_STATE));

	if (r < 0)
		return r;
	/* Completions of the old WRs still in the CQ are told apart by it. */
	rq->qp_gen++;
	rq_pool_unpost(rq);
	return qp_to_rts(rq);
}

/* On the live QP (RTS to RTS).  q.lock held. */
int rq_set_qkey(struct rq *rq, uint32_t qkey)
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

/* ---- each verbs object ---- */

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

bool rq_have_verbs_device(const char *ca)
{
	struct ibv_device **list;
	bool found = false;
	int n;

	list = ibv_get_device_list(&n);
	if (!list)
		return false;
	for (int i = 0; i < n && !found; i++)
		found = strcmp(ibv_get_device_name(list[i]), ca) == 0;
	ibv_free_device_list(list);
	return found;
}

static int rq_open_device(struct rq *rq)
{
	int r;

	rq->ctx = open_verbs_device(rq->ca);
	if (!rq->ctx) {
		r = -errno;
		log_warn("%s/%d rq %s: no verbs device %s: %s", rq->ca,
			 rq->portnum, rq->name, rq->ca, strerror(-r));
		return r;
	}
	return 0;
}

static void rq_close_device(struct rq *rq)
{
	if (rq->ctx)
		ibv_close_device(rq->ctx);
	rq->ctx = NULL;
}

/* The port's LID and GID 0, the depth limit and the defaults of depth and
 * msg_size, from the device. */
static int rq_query_device(struct rq *rq)
{
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	int r;

	if ((r = verbs_err(ibv_query_device(rq->ctx, &dattr))) < 0 ||
	    (r = verbs_err(ibv_query_port(rq->ctx, (uint8_t)rq->portnum, &pattr))) < 0 ||
	    (r = verbs_err(ibv_query_gid(rq->ctx, (uint8_t)rq->portnum, 0, &rq->gid))) < 0) {
		log_warn("%s/%d rq %s: querying the device: %s", rq->ca,
			 rq->portnum, rq->name, strerror(-r));
		return r;
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
	return 0;
}

static int rq_alloc_pd(struct rq *rq)
{
	rq->pd = ibv_alloc_pd(rq->ctx);
	return rq->pd ? 0 : verbs_fail(rq, "allocating a PD");
}

static void rq_dealloc_pd(struct rq *rq)
{
	if (rq->pd)
		ibv_dealloc_pd(rq->pd);
	rq->pd = NULL;
}

static void rq_destroy_cq(struct rq *rq)
{
	if (rq->cq && ibv_destroy_cq(rq->cq))
		log_warn("%s/%d rq %s: destroying the CQ failed", rq->ca,
			 rq->portnum, rq->name);
	rq->cq = NULL;
	if (rq->chan)
		ibv_destroy_comp_channel(rq->chan);
	rq->chan = NULL;
}

/* The CQ and its completion channel, whose fd does not block. */
static int rq_create_cq(struct rq *rq)
{
	int r, flags;

	rq->chan = ibv_create_comp_channel(rq->ctx);
	if (!rq->chan)
		return verbs_fail(rq, "creating a completion channel");
	/* The thread polls it first; a spurious wake must not block. */
	flags = fcntl(rq->chan->fd, F_GETFL);
	if (flags < 0 || fcntl(rq->chan->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		r = verbs_fail(rq, "making the completion channel non-blocking");
		goto err_chan;
	}
	/* At most depth_max receives are ever outstanding, and no send. */
	rq->cq = ibv_create_cq(rq->ctx, (int)rq->depth_max, rq, rq->chan, 0);
	if (!rq->cq) {
		r = verbs_fail(rq, "creating the CQ");
		goto err_chan;
	}
	return 0;

err_chan:
	rq_destroy_cq(rq);
	return r;
}

static void rq_destroy_qp(struct rq *rq)
{
	if (rq->qp && ibv_destroy_qp(rq->qp))
		log_warn("%s/%d rq %s: destroying the QP failed", rq->ca,
			 rq->portnum, rq->name);
	rq->qp = NULL;
}

/* The UD QP, in RTS. */
static int rq_create_qp(struct rq *rq)
{
	struct ibv_qp_init_attr init;
	int r;

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
		return verbs_fail(rq, "creating the QP");
	rq->qpn = rq->qp->qp_num;
	r = qp_to_rts(rq);
	if (r < 0) {
		log_warn("%s/%d rq %s: bringing the QP to RTS: %s", rq->ca,
			 rq->portnum, rq->name, strerror(-r));
		rq_destroy_qp(rq);
	}
	return r;
}

void rq_verbs_destroy(struct rq *rq)
{
	rq_destroy_qp(rq);
	rq_destroy_cq(rq);
	rq_pool_free(rq);
	rq_dealloc_pd(rq);
	rq_close_device(rq);
}

/* ---- the queue ---- */

/* A queue with no verbs object yet; its one reference is the creator's. */
static struct rq *rq_alloc(const char *ca, int portnum, const char *name)
{
	struct rq *rq = calloc(1, sizeof(*rq));

	if (!rq)
		return NULL;
	readq_init(&rq->q, &rq_readq_ops);
	rq->refs = 1;
	snprintf(rq->name, sizeof(rq->name), "%s", name);
	snprintf(rq->ca, sizeof(rq->ca), "%s", ca);
	rq->portnum = portnum;
	rq->qkey = RQ_QKEY_DEFAULT;
	return rq;
}

void rq_free(struct rq *rq)
{
	readq_destroy(&rq->q);
	free(rq);
}

int rq_verbs_create(const char *ca, int portnum, const char *name, struct rq **out)
{
	struct rq *rq;
	int r;

	rq = rq_alloc(ca, portnum, name);
	if (!rq)
		return -ENOMEM;
	r = rq_open_device(rq);
	if (r < 0)
		goto err_free;
	r = rq_query_device(rq);
	if (r < 0)
		goto err_device;
	r = rq_alloc_pd(rq);
	if (r < 0)
		goto err_device;
	r = rq_pool_grow(rq, rq->depth);
	if (r < 0)
		goto err_pool;
	r = rq_create_cq(rq);
	if (r < 0)
		goto err_pool;
	r = rq_create_qp(rq);
	if (r < 0)
		goto err_cq;
	rq_replenish(rq);
	if (ibv_req_notify_cq(rq->cq, 0)) {
		r = verbs_fail(rq, "arming the CQ");
		goto err_qp;
	}
	*out = rq;
	return 0;

err_qp:
	rq_destroy_qp(rq);
err_cq:
	rq_destroy_cq(rq);
err_pool:
	rq_pool_free(rq);
	rq_dealloc_pd(rq);
err_device:
	rq_close_device(rq);
err_free:
	rq_free(rq);
	return r;
}
