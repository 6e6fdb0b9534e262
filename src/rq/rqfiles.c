/* The files of rq/NAME: recv and recv_bin (streams of received datagrams
 * for readers parked in readq) and the small value files. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "umadfs/base/log.h"
#include "umadfs/base/number.h"
#include "umadfs/fuse/stream.h"
#include "umadfs/fuse/textfile.h"
#include "rq_priv.h"

/* ---- recv and recv_bin ---- */

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
	return (ssize_t)rq_format_line(rq->head, *line);
}

static void pop_line(void *ctx)
{
	rq_pop_head(ctx);
}

/* Whole lines, with partial-line carry-over per open file.  q.lock held. */
static ssize_t fill_text(struct rq_open *of, char *buf, size_t size)
{
	const struct line_source src = {
		.peek = peek_line, .pop = pop_line, .ctx = of->rq,
	};

	return readq_fill_lines(&of->rest, buf, size, &src);
}

/* One record per read; EINVAL (the record stays) when it does not fit.
 * q.lock held. */
static ssize_t fill_frame(struct rq_open *of, char *buf, size_t size)
{
	struct rq *rq = of->rq;
	struct rq_buf *b = rq->head;
	struct rq_record rec;
	uint32_t len;

	if (!b)
		return 0;
	len = rq_payload_len(b);
	if (size < sizeof(rec) + len)
		return -EINVAL;
	rq_format_record(b, &rec);
	memcpy(buf, &rec, sizeof(rec));
	memcpy(buf + sizeof(rec), b->data + RQ_GRH_BYTES, len);
	rq_pop_head(rq);
	return (ssize_t)(sizeof(rec) + len);
}

static ssize_t rq_fill(struct readq_open *ro, char *buf, size_t size)
{
	struct rq_open *of = (struct rq_open *)ro;

	return of->frames ? fill_frame(of, buf, size) : fill_text(of, buf, size);
}

static bool rq_readable(struct readq_open *ro)
{
	struct rq_open *of = (struct rq_open *)ro;

	return of->rq->head || of->rest.buf;
}

const struct readq_ops rq_readq_ops = {
	.fill = rq_fill, .readable = rq_readable,
};

static void rq_open_free(struct rq_open *of)
{
	struct rq *rq = of->rq;
	bool last;

	readq_open_unlink(&of->ro);
	pthread_mutex_lock(&rq->q.lock);
	last = --rq->nusers == 0;
	pthread_mutex_unlock(&rq->q.lock);
	if (last)
		readq_released();
	readq_line_rest_clear(&of->rest);
	free(of);
}

static void recv_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct rq *rq = n->owner;
	struct rq_open *of = stream_open_read_only(req, fi, sizeof(*of));
	int r;

	if (!of)
		return;
	of->rq = rq;
	of->frames = n->file == RF_RECV_BIN;
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
	/* Text is read as lines (seekable, for head and read); records are
	 * a stream, one per read. */
	r = of->frames ? stream_reply_open(req, fi) : stream_reply_open_lines(req, fi);
	if (r == -ENOENT)
		rq_open_free(of); /* interrupted: no release will come */
}

static void recv_release(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	rq_open_free((struct rq_open *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

const struct node_ops rq_recv_ops = {
	.open = recv_open, .read = readq_fh_read, .release = recv_release,
	.poll = readq_fh_poll,
};

/* ---- the small files ---- */

static int show_stats(const struct rq *rq, char *buf, size_t cap)
{
	return snprintf(buf, cap,
			"posted %u\ncompleted %" PRIu64 "\nerrors %" PRIu64
			"\nqueued %u\ndropped %" PRIu64 "\nread %" PRIu64
			"\nflushed %" PRIu64 "\nresets %" PRIu64 "\n",
			rq->nposted, rq->stats.completed, rq->stats.errors,
			rq->nqueued, rq->stats.dropped, rq->stats.read,
			rq->stats.flushed, rq->stats.resets);
}

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
		rq_put_gid(gid, rq->gid.raw);
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
		len = show_stats(rq, buf, cap);
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

/* Sets qkey, depth or msg_size.  q.lock held. */
static int value_set(struct rq *rq, int file, uint64_t v)
{
	if (rq->shut)
		return -ENODEV;
	switch (file) {
	case RF_QKEY:
		return rq_set_qkey(rq, (uint32_t)v);
	case RF_DEPTH:
		return rq_set_depth(rq, (unsigned)v);
	case RF_MSG_SIZE:
		return rq_set_msg_size(rq, (uint32_t)v);
	}
	return -EBADF;
}

static void value_write(fuse_req_t req, struct node *n, const char *buf,
			size_t size, off_t off, struct fuse_file_info *fi)
{
	struct rq *rq = n->owner;
	uint64_t v;
	int r;

	r = number_parse_value(buf, size, 0, n->file == RF_QKEY ? UINT32_MAX :
			       0xffffff, &v);
	if (r < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_mutex_lock(&rq->q.lock);
	r = value_set(rq, n->file, v);
	pthread_mutex_unlock(&rq->q.lock);
	if (r < 0) {
		log_info("%s/%d rq %s: %s=%" PRIu64 ": %s", rq->ca, rq->portnum,
			 rq->name, n->name, v, strerror(-r));
		fuse_reply_err(req, -r);
		return;
	}
	fuse_reply_write(req, size);
}

const struct node_ops rq_value_ops = {
	.show = value_show, .open = value_open, .write = value_write,
};
