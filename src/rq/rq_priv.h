/* What the files of src/rq/ share: a receive queue, its buffers, the
 * open recv files, and the functions of each file that the others call. */
#ifndef UMADFS_RQ_PRIV_H
#define UMADFS_RQ_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "umadfs/fuse/readq.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/rq/rq.h"

#define RQ_NAME_MAX 63
/* A text line: fields, GRH and 2 hex digits per payload byte. */
#define RQ_LINE_MAX (512 + 2 * RQ_MSG_SIZE_MAX)

struct rq_chunk;

struct rq_buf {
	struct rq_buf *next;    /* in the queue or the idle list (q.lock) */
	struct rq_chunk *chunk;
	unsigned index;         /* in rq->bufv; with qp_gen, the WR id */
	uint8_t *data;          /* msg_size bytes: 40 of GRH, then the payload */
	bool posted;            /* on the QP (q.lock) */
	struct ibv_wc wc;       /* its completion, while queued (q.lock) */
	uint64_t seq;           /* q.lock */
};

/* Buffers registered together. */
struct rq_chunk {
	struct rq_chunk *next;  /* q.lock */
	struct ibv_mr *mr;
	void *mem;
	unsigned nbufs;
	uint32_t msg_size;
	bool retired;           /* of an older msg_size: never posted again (q.lock) */
	struct rq_buf bufs[];
};

struct rq_stats {
	uint64_t completed, errors, dropped, read, flushed, resets;
};

/* A receive queue.  Every buffer is in exactly one of three places:
 * posted on the QP (nposted), queued with its completion for readers
 * (head..tail, nqueued), or idle (rqpool.c says how they move). */
struct rq {
	/* Readers; q.lock guards every field below not said otherwise. */
	struct readq q;
	unsigned refs;          /* creator + nodes (atomic); freed at zero */
	char name[RQ_NAME_MAX + 1];
	char ca[64];            /* the verbs device; fixed */
	int portnum;            /* fixed */

	/* Verbs objects: made at mkdir, destroyed by rq_teardown. */
	struct ibv_context *ctx;
	struct ibv_pd *pd;      /* the protection domain of the buffers and QP */
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t qpn;           /* fixed */
	union ibv_gid gid;      /* port GID 0 at mkdir; fixed */
	uint16_t lid;           /* port LID at mkdir; fixed */
	unsigned depth_max;     /* fixed */

	pthread_t thread;
	bool thread_started;    /* only rq_thread_start and rq_thread_stop touch it */
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
	bool frames;            /* recv_bin: whole records, not text lines */
	struct line_rest rest;  /* of a line a short read cut (q.lock) */
};

/* The files of rq/NAME; node->index of each. */
enum rq_file {
	RF_RECV, RF_RECV_BIN, RF_QPN, RF_QKEY, RF_GID, RF_LID, RF_DEPTH,
	RF_MSG_SIZE, RF_STATS,
};

/* rqverbs.c: the queue's verbs objects and references.  Functions that
 * change the QP are called with q.lock held. */
bool rq_have_verbs_device(const char *ca);
/* A queue with its verbs objects, everything up to the first posted
 * buffers (its thread not started): 0, or -errno (logged). */
int rq_verbs_create(const char *ca, int portnum, const char *name, struct rq **out);
/* Destroys what rq_verbs_create made, in reverse order (the thread is
 * stopped already); rq_free frees the struct. */
void rq_verbs_destroy(struct rq *rq);
void rq_free(struct rq *rq);
int rq_qp_reset(struct rq *rq);
int rq_set_qkey(struct rq *rq, uint32_t qkey);

/* rqpool.c: the buffers.  q.lock held (or no thread yet). */
int rq_pool_grow(struct rq *rq, unsigned n);
void rq_pool_free(struct rq *rq);
void rq_pool_unpost(struct rq *rq);
void rq_replenish(struct rq *rq);
void rq_buf_release(struct rq *rq, struct rq_buf *b);
void rq_pop_head(struct rq *rq);
int rq_set_depth(struct rq *rq, unsigned depth);
int rq_pool_resize(struct rq *rq, uint32_t msg_size);

/* rqcq.c: the completion thread; msg_size, which resets the QP. */
int rq_thread_start(struct rq *rq);
void rq_thread_stop(struct rq *rq);
int rq_drain_cq(struct rq *rq);
void rq_mark_broken(struct rq *rq);
int rq_set_msg_size(struct rq *rq, uint32_t msg_size);

/* rqformat.c: received datagrams as text and as records. */
void rq_put_gid(char *out, const uint8_t *gid);
uint32_t rq_payload_len(const struct rq_buf *b);
size_t rq_format_line(const struct rq_buf *b, char *out);
void rq_format_record(const struct rq_buf *b, struct rq_record *rec);

/* rqfiles.c: the files of rq/NAME. */
extern const struct readq_ops rq_readq_ops;
extern const struct node_ops rq_recv_ops, rq_value_ops;

#endif
