/* MAD files: the FUSE side of channels. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/channel/access.h"
#include "umadfs/channel/channel.h"
#include "umadfs/ca/device.h"
#include "umadfs/channel/madfile.h"
#include "umadfs/mad/mad.h"
#include "umadfs/mad/madtext.h"
#include "umadfs/engine/engine.h"
#include "umadfs/fuse/stream.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/umadframe.h"

enum madfile_kind { MF_SEND, MF_RECV, MF_UMAD };

static uint64_t next_text_tid = 1; /* TIDs for lines that gave none */

/* Root passes the kernel's checks; the mode bits still say what a file is
 * for, so an open against them fails as on a read-only sysfs file. */
static bool open_allowed(const struct node *n, int flags)
{
	int acc = flags & O_ACCMODE;

	if ((acc == O_RDONLY || acc == O_RDWR) && !(n->mode & 0444))
		return false;
	if ((acc == O_WRONLY || acc == O_RDWR) && !(n->mode & 0222))
		return false;
	return true;
}

static void mad_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct channel *ch = n->owner;
	struct chan_open *of;

	if (!open_allowed(n, fi->flags)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	if (n->file == MF_UMAD) {
		/* Answers to a request written on this fd come back on it. */
		struct channel *priv = channel_new(ch->pd, "umad");

		if (!priv) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		priv->timeout_ms = ch->timeout_ms;
		priv->retries = ch->retries;
		of = chan_open_new(priv, false, true);
		if (!of)
			channel_put(priv);
	} else {
		of = chan_open_new(ch, true, false);
	}
	if (!of) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* Judged now, once: what the descriptor may send is what its opener
	 * may, whoever writes to it later (the kernel's f_cred). */
	of->privileged = access_opener_privileged(req);
	/* rmdir of the channel's directory waits for these to close. */
	of->user_of = ch;
	__atomic_add_fetch(&ch->nusers, 1, __ATOMIC_RELAXED);
	fi->fh = (uintptr_t)of;
	if (reply_open_stream(req, fi) == -ENOENT)
		chan_open_free(of); /* interrupted: no release will come */
}

static void mad_release(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct chan_open *of = (struct chan_open *)(uintptr_t)fi->fh;

	if (of->send_frag)
		channel_set_error(of->ch, "closed with an unfinished line (no '\\n'): "
				  "%zu bytes discarded", of->send_frag_len);
	chan_open_free(of);
	fuse_reply_err(req, 0);
}

static void mad_read(fuse_req_t req, struct node *n, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct chan_open *of = (struct chan_open *)(uintptr_t)fi->fh;

	readq_read(req, &of->ro, size, fi->flags & O_NONBLOCK);
}

static void mad_poll(fuse_req_t req, struct node *n, struct fuse_file_info *fi,
		     struct fuse_pollhandle *ph)
{
	struct chan_open *of = (struct chan_open *)(uintptr_t)fi->fh;

	readq_poll(req, &of->ro, ph);
}

/* A parsed line waiting to be sent. */
struct out_mad {
	size_t mad_len;
	int timeout_ms, retries;
	size_t end; /* offset in the write just past this line */
	size_t off; /* of its frame in the write's frame arena */
};

/* The frames of one write, back to back in one buffer: one allocation
 * per write instead of one per line (malloc and free showed as a tenth
 * of the daemon's time at 100,000 lines/s). */
struct frame_arena {
	uint8_t *buf;
	size_t len, cap;
};

/* Room for n more bytes at a.buf + a.len, 8-byte aligned; its offset. */
static int arena_take(struct frame_arena *a, size_t n, size_t *off)
{
	size_t at = (a->len + 7) & ~(size_t)7;

	if (at + n > a->cap) {
		size_t ncap = a->cap ? a->cap : 32 * UMAD_FRAME_MAX;
		uint8_t *bigger;

		while (ncap < at + n)
			ncap *= 2;
		bigger = realloc(a->buf, ncap);
		if (!bigger)
			return -ENOMEM;
		a->buf = bigger;
		a->cap = ncap;
	}
	a->len = at + n;
	*off = at;
	return 0;
}

static int send_parsed(fuse_req_t req, struct channel *ch, struct out_mad *out,
		       size_t nout, uint8_t *frames, size_t written)
{
	for (size_t i = 0; i < nout; i++) {
		int r = channel_send(ch, frames + out[i].off, out[i].mad_len,
				     out[i].timeout_ms, out[i].retries);

		if (r < 0) {
			char why[400];

			channel_strerror(ch, r, why, sizeof(why));
			channel_set_error(ch, "MAD %zu of the write not sent: %s",
					  i + 1, why);
			/* What went out stays out: report a short write. */
			if (i && out[i - 1].end)
				return fuse_reply_write(req, out[i - 1].end);
			return fuse_reply_err(req, -r == EBUSY ? EAGAIN : -r);
		}
	}
	return fuse_reply_write(req, written);
}

/* Text send: the whole write is parsed before anything is sent. */
static void text_write(fuse_req_t req, struct chan_open *of, const char *buf,
		       size_t size)
{
	struct channel *ch = of->ch;
	size_t frag_len = of->send_frag_len, total = frag_len + size;
	struct out_mad *out = NULL;
	struct frame_arena frames = { 0 };
	size_t nout = 0, cap = 0, start = 0, lineno = 0;
	char *text = NULL, err[256];
	/* Each line is parsed here first. */
	_Alignas(8) uint8_t scratch[UMAD_FRAME_HDR_SIZE + MADTEXT_LINE_MAX / 2 + MAD_SIZE];
	const char *t;
	int timeout_ms, retries, r;

	pthread_mutex_lock(&ch->q.lock);
	timeout_ms = ch->timeout_ms;
	retries = ch->retries;
	pthread_mutex_unlock(&ch->q.lock);

	/* The unfinished line of the previous write comes first. */
	if (frag_len) {
		text = malloc(total);
		if (!text) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		memcpy(text, of->send_frag, frag_len);
		memcpy(text + frag_len, buf, size);
		t = text;
	} else {
		t = buf;
	}
	while (start < total) {
		const char *nl = memchr(t + start, '\n', total - start);
		size_t len, end;
		struct madtext_request mr;
		struct out_mad *o;
		uint8_t *frame;

		if (!nl)
			break; /* unfinished: kept for the next write */
		len = (size_t)(nl - (t + start));
		end = (size_t)(nl - t) + 1;
		lineno++;
		if (len > MADTEXT_LINE_MAX) {
			channel_set_error(ch, "line %zu: longer than %d bytes", lineno,
					  MADTEXT_LINE_MAX);
			goto err_msgsize;
		}
		if (madtext_is_blank(t + start, len)) {
			start = end;
			continue;
		}
		if (nout == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			struct out_mad *bigger = realloc(out, ncap * sizeof(*out));

			if (!bigger)
				goto err_nomem;
			out = bigger;
			cap = ncap;
		}
		r = madtext_parse(t + start, len, scratch, sizeof(scratch), &mr,
				  err, sizeof(err));
		if (r < 0) {
			channel_set_error(ch, "line %zu: %s", lineno, err);
			if (r == -EMSGSIZE)
				goto err_msgsize;
			goto err_inval;
		}
		if (!of->privileged) {
			r = access_check_mad(scratch + UMAD_FRAME_HDR_SIZE, err, sizeof(err));
			if (r < 0) {
				channel_set_error(ch, "line %zu: %s", lineno, err);
				goto err_perm;
			}
		}
		/* Kept at its own size: 320 bytes for one MAD, not the 8.5 KB
		 * the longest line could need (which costs page faults). */
		o = &out[nout];
		if (arena_take(&frames, UMAD_FRAME_HDR_SIZE + mr.mad_len, &o->off) < 0)
			goto err_nomem;
		frame = frames.buf + o->off;
		memcpy(frame, scratch, UMAD_FRAME_HDR_SIZE + mr.mad_len);
		nout++;
		o->mad_len = mr.mad_len;
		if (mr.timeout_ms >= 0)
			o->timeout_ms = mr.timeout_ms;
		else
			o->timeout_ms = mad_is_response(frame + UMAD_FRAME_HDR_SIZE) ?
						0 : timeout_ms;
		o->retries = mr.retries >= 0 ? mr.retries : retries;
		{
			/* QP1's Q_Key is always the well-known one (IBA 13.5.3.1);
			 * a received line may show 0 where the source did not
			 * report it, so a reply written from it still arrives. */
			struct ib_user_mad *hdr = (struct ib_user_mad *)frame;

			if (hdr->addr.qpn == htobe32(1) && !hdr->addr.qkey)
				hdr->addr.qkey = htobe32(0x80010000);
		}
		if (!mr.tid_given) {
			uint64_t tid = __atomic_fetch_add(&next_text_tid, 1,
							  __ATOMIC_RELAXED);
			uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;

			for (int i = 7; i >= 0; i--, tid >>= 8)
				mad[8 + i] = (uint8_t)tid;
		}
		/* A line the previous write began counts as sent with this one. */
		o->end = end > frag_len ? end - frag_len : 0;
		start = end;
	}
	if (total - start > MADTEXT_LINE_MAX) {
		channel_set_error(ch, "line %zu: longer than %d bytes", lineno + 1,
				  MADTEXT_LINE_MAX);
		goto err_msgsize;
	}
	if (!nout && start == total) {
		channel_set_error(ch, "the write holds no MAD line");
		goto err_inval;
	}
	/* Keep the unfinished tail for the next write. */
	{
		char *frag = NULL;

		if (total > start) {
			frag = malloc(total - start);
			if (!frag)
				goto err_nomem;
			memcpy(frag, t + start, total - start);
		}
		free(of->send_frag);
		of->send_frag = frag;
		of->send_frag_len = total - start;
	}
	send_parsed(req, ch, out, nout, frames.buf, size);
	goto out;

err_nomem:
	fuse_reply_err(req, ENOMEM);
	goto out;
err_inval:
	fuse_reply_err(req, EINVAL);
	goto out;
err_msgsize:
	fuse_reply_err(req, EMSGSIZE);
	goto out;
err_perm:
	fuse_reply_err(req, EPERM);
out:
	free(frames.buf);
	free(out);
	free(text);
}

/* Binary umad: one frame per write, as the kernel's device. */
static void umad_write(fuse_req_t req, struct chan_open *of, const char *buf,
		       size_t size)
{
	struct channel *ch = of->ch;
	/* Errors show in the last_error of the directory the fd was opened
	 * in: the fd's private channel has no file of its own. */
	struct channel *err_ch = of->user_of ? of->user_of : ch;
	const struct ib_user_mad *in = (const void *)buf;
	size_t mad_len;
	uint8_t *frame;
	char why[400];
	int r;

	r = umadframe_check(buf, size, &mad_len, why, sizeof(why));
	if (r < 0) {
		channel_set_error(err_ch, "%s", why);
		fuse_reply_err(req, -r);
		return;
	}
	if (!of->privileged) {
		r = access_check_mad((const uint8_t *)buf + UMAD_FRAME_HDR_SIZE, why,
				     sizeof(why));
		if (r < 0) {
			channel_set_error(err_ch, "frame not sent: %s", why);
			fuse_reply_err(req, -r);
			return;
		}
	}
	/* A frame shorter than one MAD is sent zero-padded to 256 bytes. */
	frame = calloc(1, UMAD_FRAME_HDR_SIZE + mad_len);
	if (!frame) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memcpy(frame, buf, size);
	r = channel_send(ch, frame, mad_len, (int)in->timeout_ms, (int)in->retries);
	free(frame);
	if (r < 0) {
		channel_strerror(ch, r, why, sizeof(why));
		channel_set_error(err_ch, "frame not sent: %s", why);
		fuse_reply_err(req, r == -EBUSY ? EAGAIN : -r);
		return;
	}
	fuse_reply_write(req, size);
}

static void mad_write(fuse_req_t req, struct node *n, const char *buf,
		      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct chan_open *of = (struct chan_open *)(uintptr_t)fi->fh;

	if (n->file == MF_UMAD)
		umad_write(req, of, buf, size);
	else if (n->file == MF_SEND)
		text_write(req, of, buf, size);
	else
		fuse_reply_err(req, EBADF);
}

static const struct node_ops mad_ops = {
	.open = mad_open, .read = mad_read, .write = mad_write,
	.release = mad_release, .poll = mad_poll,
};

/* ---- settings and reports ---- */

enum { SET_TIMEOUT, SET_RETRIES };

static int setting_show(struct node *n, char *buf, size_t cap)
{
	struct channel *ch = n->owner;
	int v;

	pthread_mutex_lock(&ch->q.lock);
	v = n->file == SET_TIMEOUT ? ch->timeout_ms : ch->retries;
	pthread_mutex_unlock(&ch->q.lock);
	return snprintf(buf, cap, "%d\n", v);
}

static void setting_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_open_settable(req, n, fi, setting_show, NULL);
}

static void setting_write(fuse_req_t req, struct node *n, const char *buf,
			  size_t size, off_t off, struct fuse_file_info *fi)
{
	struct channel *ch = n->owner;
	long long max = n->file == SET_TIMEOUT ? 3600000 : 100;
	char text[32], *end;
	long long v;
	size_t len = size;

	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	if (!len || len >= sizeof(text)) {
		channel_set_error(ch, "%s: expected one number", n->name);
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(text, buf, len);
	text[len] = '\0';
	errno = 0;
	v = strtoll(text, &end, 0);
	if (errno || *end || v < 0 || v > max) {
		channel_set_error(ch, "%s: '%s' is not a number from 0 to %lld",
				  n->name, text, max);
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_mutex_lock(&ch->q.lock);
	if (n->file == SET_TIMEOUT)
		ch->timeout_ms = (int)v;
	else
		ch->retries = (int)v;
	pthread_mutex_unlock(&ch->q.lock);
	fuse_reply_write(req, size);
}

static off_t setting_size(struct node *n)
{
	return textfile_size(n, setting_show);
}

static const struct node_ops setting_ops = {
	.open = setting_open, .read = textfile_read, .write = setting_write,
	.release = textfile_release, .size = setting_size,
};

static int last_error_show(struct node *n, char *buf, size_t cap)
{
	struct channel *ch = n->owner;
	int len;

	pthread_mutex_lock(&ch->q.lock);
	len = ch->last_error[0] ? snprintf(buf, cap, "%s\n", ch->last_error) : 0;
	pthread_mutex_unlock(&ch->q.lock);
	return len;
}

static int stats_show(struct node *n, char *buf, size_t cap)
{
	struct channel *ch = n->owner;
	struct channel_stats s;
	unsigned queued, limit;

	pthread_mutex_lock(&ch->q.lock);
	s = ch->stats;
	queued = ch->queued;
	limit = ch->limit;
	pthread_mutex_unlock(&ch->q.lock);
	s.sent = __atomic_load_n(&ch->sent, __ATOMIC_RELAXED);
	return snprintf(buf, cap,
			"sent %" PRIu64 "\nreceived %" PRIu64 "\ntimeouts %" PRIu64
			"\nerrors %" PRIu64 "\ndropped %" PRIu64 "\nqueued %u\n"
			"queue_limit %u\n",
			s.sent, s.received, s.timeouts, s.errors, s.dropped, queued,
			limit);
}

static int report_show(struct node *n, char *buf, size_t cap)
{
	return n->file ? stats_show(n, buf, cap) : last_error_show(n, buf, cap);
}

static void report_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_open(req, n, fi, report_show);
}

static off_t report_size(struct node *n)
{
	return textfile_size(n, report_show);
}

static const struct node_ops report_ops = {
	.open = report_open, .read = textfile_read, .release = textfile_release,
	.size = report_size,
};

static const struct {
	const char *name;
	mode_t mode;
	const struct node_ops *ops;
	int index;
	bool shared; /* with -o mad_group= */
} mad_files[] = {
	{ "send", S_IFREG | 0200, &mad_ops, MF_SEND, true },
	{ "recv", S_IFREG | 0400, &mad_ops, MF_RECV, true },
	{ "umad", S_IFREG | 0600, &mad_ops, MF_UMAD, true },
	{ "timeout_ms", S_IFREG | 0600, &setting_ops, SET_TIMEOUT, true },
	{ "retries", S_IFREG | 0600, &setting_ops, SET_RETRIES, true },
	{ "last_error", S_IFREG | 0444, &report_ops, 0, false },
	{ "stats", S_IFREG | 0444, &report_ops, 1, false },
};

int madfiles_add(struct node *dir, struct channel *ch, uid_t owner)
{
	for (size_t i = 0; i < sizeof(mad_files) / sizeof(mad_files[0]); i++) {
		struct node *n = tree_add(dir, mad_files[i].name, mad_files[i].mode,
					  mad_files[i].ops, ch, mad_files[i].index);

		if (!n)
			return -ENOMEM;
		if (mad_files[i].shared)
			access_share_file(n, owner);
		else
			n->uid = owner;
	}
	return 0;
}
