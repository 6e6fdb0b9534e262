/* The MAD files of a channel directory: send and recv (text lines), umad
 * (frames), the settings timeout_ms and retries, last_error and stats. */
#include <endian.h>
#include <errno.h>
#include <infiniband/mad.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/array.h"
#include "umadfs/base/number.h"
#include "umadfs/channel/access.h"
#include "umadfs/channel/channel.h"
#include "umadfs/channel/madfiles.h"
#include "umadfs/device/device.h"
#include "umadfs/engine/engine.h"
#include "umadfs/fuse/stream.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/mad.h"
#include "umadfs/mad/madtext.h"
#include "umadfs/mad/umadframe.h"

enum madfile_kind { MF_SEND, MF_RECV, MF_UMAD };

static uint64_t next_text_tid = 1; /* TIDs for lines that gave none */

/* A MAD file's open state: the channel's view, and for send the line a
 * write left unfinished.  Writes of one open file come one at a time (the
 * kernel holds the inode's lock across a write), FLUSH beside them. */
struct madfile_open {
	struct channel_open co; /* first */
	char *send_frag;     /* a written line not yet ended by '\n' */
	size_t send_frag_len;
	bool send_refused;   /* the last write was refused: last_error says why */
};

static struct madfile_open *madfile_open_of(struct fuse_file_info *fi)
{
	return (struct madfile_open *)(uintptr_t)fi->fh;
}

static void madfile_open_fini(struct channel_open *of)
{
	free(((struct madfile_open *)of)->send_frag);
}

static void mad_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct channel *ch = n->owner;
	struct channel_open *of;
	int r;

	of = channel_open_new(ch, n->file == MF_UMAD, sizeof(struct madfile_open),
			      madfile_open_fini);
	if (!of) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* Judged now, once: what the descriptor may send is what its opener
	 * may, whoever writes to it later (the kernel's f_cred). */
	of->privileged = access_opener_privileged(req);
	fi->fh = (uintptr_t)of;
	/* recv is read as lines (seekable, for head and read); umad and send
	 * are streams: a writer must not wait for a reader's position lock.
	 * Only send has a close to report (mad_flush). */
	fi->noflush = n->file != MF_SEND;
	r = n->file == MF_RECV ? stream_reply_open_lines(req, fi)
			       : stream_reply_open(req, fi);
	if (r == -ENOENT)
		channel_open_free(of); /* interrupted: no release will come */
}

/* A close of send that leaves an unfinished line says so in last_error
 * before close(2) returns (FLUSH; RELEASE comes after it returned, too
 * late for `printf ... > send; cat last_error`), unless the last write
 * was refused: its reason stays (a line over the limit, written in
 * chunks, leaves its first 16384 bytes as the tail).  The tail stays
 * until the last close, for a write through another descriptor of the
 * same open (a shell's forked command) may still end it. */
static void mad_flush(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct madfile_open *mo = madfile_open_of(fi);

	if (mo->send_frag && !mo->send_refused)
		channel_set_error(mo->co.ch, "closed with an unfinished line (no "
				  "'\\n'): %zu bytes discarded", mo->send_frag_len);
	fuse_reply_err(req, 0);
}

static void mad_release(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct madfile_open *mo = madfile_open_of(fi);

	channel_open_free(&mo->co);
	fuse_reply_err(req, 0);
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

	if (ARRAY_GROW(a->buf, a->cap, at + n, 32 * UMAD_FRAME_MAX) < 0)
		return -ENOMEM;
	a->len = at + n;
	*off = at;
	return 0;
}

/* One write to send, parsed whole before anything is sent. */
struct write_parse {
	struct channel *ch;
	bool privileged;
	int timeout_ms, retries; /* the channel's, when the write began */
	struct out_mad *out;
	size_t nout, cap;
	struct frame_arena frames;
	size_t lineno;
};

/* Sends the parsed lines: the bytes of the write to report (all of them,
 * or those of the lines sent before one that was not: a short write), or
 * -errno if none was sent; last_error says why. */
static ssize_t send_parsed(struct channel_open *of, const struct write_parse *wp,
			   size_t written)
{
	for (size_t i = 0; i < wp->nout; i++) {
		const struct out_mad *o = &wp->out[i];
		int r = channel_send(of, wp->frames.buf + o->off, o->mad_len,
				     o->timeout_ms, o->retries);

		if (r < 0) {
			char why[400];

			channel_strerror(of->ch, r, why, sizeof(why));
			channel_set_error(of->ch, "MAD %zu of the write not sent: %s",
					  i + 1, why);
			/* What went out stays out: report a short write. */
			if (i && wp->out[i - 1].end)
				return (ssize_t)wp->out[i - 1].end;
			return r == -EBUSY ? -EAGAIN : r;
		}
	}
	return (ssize_t)written;
}

/* The umad header of a parsed line: its timeout and retries (the line's,
 * else the channel's; a response waits for nothing), QP1's Q_Key, a TID. */
static void finish_frame(const struct write_parse *wp, struct out_mad *o,
			 uint8_t *frame, const struct madtext_request *mr)
{
	struct ib_user_mad *hdr = (struct ib_user_mad *)frame;
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;

	o->mad_len = mr->mad_len;
	if (mr->timeout_ms >= 0)
		o->timeout_ms = mr->timeout_ms;
	else
		o->timeout_ms = mad_is_response(mad) ? 0 : wp->timeout_ms;
	o->retries = mr->retries >= 0 ? mr->retries : wp->retries;
	/* QP1's Q_Key is always the well-known one (IBA 13.5.3.1); a received
	 * line may show 0 where the source did not report it, so a reply
	 * written from it still arrives. */
	if (hdr->addr.qpn == htobe32(1) && !hdr->addr.qkey)
		hdr->addr.qkey = htobe32(IB_DEFAULT_QP1_QKEY);
	if (!mr->tid_given)
		mad_set_tid(mad, __atomic_fetch_add(&next_text_tid, 1,
						    __ATOMIC_RELAXED));
}

/* Room for one more MAD in wp->out. */
static int out_grow(struct write_parse *wp)
{
	return ARRAY_GROW(wp->out, wp->cap, wp->nout + 1, 32);
}

/* Parses one line that is not blank into wp's next MAD: 0, or -errno with
 * last_error naming the line (but for ENOMEM). */
static int parse_line(struct write_parse *wp, const char *line, size_t len)
{
	/* Parsed here first, then kept at its own size in the arena: 320
	 * bytes for one MAD, not the 8.5 KB the longest line could need. */
	_Alignas(8) uint8_t scratch[UMAD_FRAME_HDR_SIZE + MADTEXT_LINE_MAX / 2 + MAD_SIZE];
	struct madtext_request mr;
	struct out_mad *o;
	char err[256];
	int r;

	if (out_grow(wp) < 0)
		return -ENOMEM;
	r = madtext_parse(line, len, scratch, sizeof(scratch), &mr, err, sizeof(err));
	if (r < 0) {
		channel_set_error(wp->ch, "line %zu: %s", wp->lineno, err);
		return r == -EMSGSIZE ? r : -EINVAL;
	}
	if (!wp->privileged &&
	    access_check_mad(scratch + UMAD_FRAME_HDR_SIZE, err, sizeof(err)) < 0) {
		channel_set_error(wp->ch, "line %zu: %s", wp->lineno, err);
		return -EPERM;
	}
	o = &wp->out[wp->nout];
	if (arena_take(&wp->frames, UMAD_FRAME_HDR_SIZE + mr.mad_len, &o->off) < 0)
		return -ENOMEM;
	memcpy(wp->frames.buf + o->off, scratch, UMAD_FRAME_HDR_SIZE + mr.mad_len);
	finish_frame(wp, o, wp->frames.buf + o->off, &mr);
	wp->nout++;
	return 0;
}

static int line_too_long(struct write_parse *wp, size_t lineno)
{
	channel_set_error(wp->ch, "line %zu: longer than %d bytes", lineno,
			  MADTEXT_LINE_MAX);
	return -EMSGSIZE;
}

/* Parses every whole line of t[0..total), whose first frag_len bytes an
 * earlier write gave; *tail is where the unfinished last line begins. */
static int parse_lines(struct write_parse *wp, const char *t, size_t total,
		       size_t frag_len, size_t *tail)
{
	size_t start = 0;

	while (start < total) {
		const char *nl = memchr(t + start, '\n', total - start);
		size_t len, end;
		int r;

		if (!nl)
			break; /* unfinished: kept for the next write */
		len = (size_t)(nl - (t + start));
		end = (size_t)(nl - t) + 1;
		wp->lineno++;
		if (len > MADTEXT_LINE_MAX)
			return line_too_long(wp, wp->lineno);
		if (!madtext_is_blank(t + start, len)) {
			r = parse_line(wp, t + start, len);
			if (r < 0)
				return r;
			/* A line the previous write began counts as sent
			 * with this one. */
			wp->out[wp->nout - 1].end = end > frag_len ? end - frag_len : 0;
		}
		start = end;
	}
	*tail = start;
	if (total - start > MADTEXT_LINE_MAX)
		return line_too_long(wp, wp->lineno + 1);
	if (!wp->nout && start == total) {
		channel_set_error(wp->ch, "the write holds no MAD line");
		return -EINVAL;
	}
	return 0;
}

/* Keeps the unfinished tail of a write for the next one. */
static int keep_fragment(struct madfile_open *mo, const char *tail, size_t len)
{
	char *frag = NULL;

	if (len) {
		frag = malloc(len);
		if (!frag)
			return -ENOMEM;
		memcpy(frag, tail, len);
	}
	free(mo->send_frag);
	mo->send_frag = frag;
	mo->send_frag_len = len;
	return 0;
}

/* Text send: the whole write (after the unfinished line of the previous
 * one) is parsed and checked before anything is sent; a bad line anywhere
 * fails the write with nothing sent. */
static void text_write(fuse_req_t req, struct madfile_open *mo, const char *buf,
		       size_t size)
{
	struct channel *ch = mo->co.ch;
	size_t frag_len = mo->send_frag_len, total = frag_len + size, tail = 0;
	struct write_parse wp = { .ch = ch, .privileged = mo->co.privileged };
	char *joined = NULL;
	const char *t = buf;
	ssize_t done;
	int r;

	pthread_mutex_lock(&ch->q.lock);
	wp.timeout_ms = ch->timeout_ms;
	wp.retries = ch->retries;
	pthread_mutex_unlock(&ch->q.lock);
	if (frag_len) {
		joined = malloc(total);
		if (!joined) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		memcpy(joined, mo->send_frag, frag_len);
		memcpy(joined + frag_len, buf, size);
		t = joined;
	}
	r = parse_lines(&wp, t, total, frag_len, &tail);
	if (r == 0)
		r = keep_fragment(mo, t + tail, total - tail);
	done = r < 0 ? r : send_parsed(&mo->co, &wp, size);
	/* Before the reply: the next write may follow it at once. */
	mo->send_refused = done < (ssize_t)size;
	if (done < 0)
		fuse_reply_err(req, (int)-done);
	else
		fuse_reply_write(req, (size_t)done);
	free(wp.frames.buf);
	free(wp.out);
	free(joined);
}

/* Binary umad: one frame per write, as the kernel's device. */
static void umad_write(fuse_req_t req, struct channel_open *of, const char *buf,
		       size_t size)
{
	struct channel *ch = of->ch;
	const struct ib_user_mad *in = (const void *)buf;
	size_t mad_len;
	uint8_t *frame;
	char why[400];
	int r;

	r = umadframe_check(buf, size, &mad_len, why, sizeof(why));
	if (r < 0) {
		channel_set_error(ch, "%s", why);
		fuse_reply_err(req, -r);
		return;
	}
	if (!of->privileged) {
		r = access_check_mad((const uint8_t *)buf + UMAD_FRAME_HDR_SIZE, why,
				     sizeof(why));
		if (r < 0) {
			channel_set_error(ch, "frame not sent: %s", why);
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
	r = channel_send(of, frame, mad_len, (int)in->timeout_ms, (int)in->retries);
	free(frame);
	if (r < 0) {
		channel_strerror(ch, r, why, sizeof(why));
		channel_set_error(ch, "frame not sent: %s", why);
		fuse_reply_err(req, r == -EBUSY ? EAGAIN : -r);
		return;
	}
	fuse_reply_write(req, size);
}

static void mad_write(fuse_req_t req, struct node *n, const char *buf,
		      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct madfile_open *mo = madfile_open_of(fi);

	if (n->file == MF_UMAD)
		umad_write(req, &mo->co, buf, size);
	else if (n->file == MF_SEND)
		text_write(req, mo, buf, size);
	else
		fuse_reply_err(req, EBADF);
}

static const struct node_ops mad_ops = {
	.open = mad_open, .read = readq_fh_read, .write = mad_write,
	.flush = mad_flush, .release = mad_release, .poll = readq_fh_poll,
};

/* ---- settings and reports ---- */

enum { SET_TIMEOUT, SET_RETRIES, SET_DECODE };

static int setting_show(struct node *n, char *buf, size_t cap)
{
	struct channel *ch = n->owner;
	int v;

	pthread_mutex_lock(&ch->q.lock);
	v = n->file == SET_TIMEOUT ? ch->timeout_ms :
	    n->file == SET_RETRIES ? ch->retries : (int)ch->decode_flags;
	pthread_mutex_unlock(&ch->q.lock);
	if (n->file == SET_DECODE)
		return snprintf(buf, cap, "%s\n", v ? "fields" : "none");
	return snprintf(buf, cap, "%d\n", v);
}

static void setting_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_open_settable(req, n, fi, setting_show, NULL);
}

/* decode: "fields" (the default) or "none"; unfinished, one of them or a
 * beginning of one waits for its end. */
static int decode_take(struct channel *ch, const char *text, size_t len,
		       bool complete)
{
	unsigned flags;

	if (!complete && len && ((len <= 6 && !memcmp(text, "fields", len)) ||
				 (len <= 4 && !memcmp(text, "none", len)))) {
		return -EAGAIN;
	} else if (len == 6 && !memcmp(text, "fields", 6)) {
		flags = MADTEXT_FIELDS;
	} else if (len == 4 && !memcmp(text, "none", 4)) {
		flags = 0;
	} else if (memchr(text, '\n', len)) {
		channel_set_error(ch, "decode: expected one word, fields or none");
		return -EINVAL;
	} else {
		channel_set_error(ch, "decode: '%.*s' is not fields or none",
				  (int)(len < 32 ? len : 32), text);
		return -EINVAL;
	}
	pthread_mutex_lock(&ch->q.lock);
	ch->decode_flags = flags;
	pthread_mutex_unlock(&ch->q.lock);
	return 0;
}

/* A setting's value (textfile_value_fn). */
static int setting_take(struct node *n, const char *text, size_t len,
			bool complete)
{
	struct channel *ch = n->owner;
	uint64_t max = n->file == SET_TIMEOUT ? 3600000 : 100, v;
	char why[96];
	int r;

	if (n->file == SET_DECODE)
		return decode_take(ch, text, len, complete);
	r = number_parse_setting(text, len, max, complete, &v, why, sizeof(why));
	if (r == -EINVAL)
		channel_set_error(ch, "%s: %s", n->name, why);
	if (r < 0 || !complete)
		return r < 0 ? r : -EAGAIN;
	pthread_mutex_lock(&ch->q.lock);
	if (n->file == SET_TIMEOUT)
		ch->timeout_ms = (int)v;
	else
		ch->retries = (int)v;
	pthread_mutex_unlock(&ch->q.lock);
	return 0;
}

static void setting_write(fuse_req_t req, struct node *n, const char *buf,
			  size_t size, off_t off, struct fuse_file_info *fi)
{
	textfile_write_value(req, n, buf, size, fi, setting_take);
}

static void setting_flush(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_flush_value(req, n, fi, setting_take);
}

static const struct node_ops setting_ops = {
	.show = setting_show, .open = setting_open, .write = setting_write,
	.flush = setting_flush,
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

static const struct node_ops report_ops = { .show = report_show };

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
	{ "decode", S_IFREG | 0600, &setting_ops, SET_DECODE, true },
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
