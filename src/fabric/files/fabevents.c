/* fabric/events and fabric/events.log (fabevents.h): the ring of event
 * lines with the byte offset of each, each reader's place in it, and the
 * comparison of two snapshots that makes the lines. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/clock.h"
#include "umadfs/fabric/files/fabevents.h"
#include "umadfs/fabric/files/fabtext.h"
#include "umadfs/fabric/problems/problem.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/mcast.h"
#include "umadfs/fuse/readq.h"
#include "umadfs/fuse/stream.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/pmacounters.h"

#define QUOTED_DESC (4 * FAB_DESC_LEN + 3)

static struct {
	struct readq q;             /* its lock guards the fields below */
	char *lines[FABEVENTS_MAX]; /* line seq at lines[seq % FABEVENTS_MAX] */
	uint64_t start[FABEVENTS_MAX]; /* its offset in events.log */
	uint64_t head;              /* the seq of the next line */
	uint64_t bytes;             /* written in all: events.log's size */
	time_t mtime;               /* of the last line (events.log) */
	bool ready;
} ev;

/* An open file of either: events reads by seq, events.log by offset.
 * Both are on ev.q's list of opens, which frees them at exit if their
 * RELEASE never comes. */
struct ev_open {
	struct readq_open ro;
	uint64_t next;         /* the seq of the next line to read (q.lock) */
	struct line_rest rest; /* what a short read left of a line (q.lock) */
	int64_t skew;          /* events.log: what its offsets lag the log's */
};

/* The oldest seq still kept.  q.lock held. */
static uint64_t oldest(void)
{
	return ev.head > FABEVENTS_MAX ? ev.head - FABEVENTS_MAX : 0;
}

static ssize_t peek_line(void *ctx, char *scratch, size_t cap, char **line,
			 bool *owned)
{
	struct ev_open *of = ctx;
	int n;

	*owned = false;
	if (of->next < oldest()) {
		n = snprintf(scratch, cap, "event=dropped count=%" PRIu64 "\n",
			     oldest() - of->next);
		*line = scratch;
		return n;
	}
	if (of->next >= ev.head)
		return 0;
	*line = ev.lines[of->next % FABEVENTS_MAX];
	return (ssize_t)strlen(*line);
}

static void pop_line(void *ctx)
{
	struct ev_open *of = ctx;

	of->next = of->next < oldest() ? oldest() : of->next + 1;
}

static ssize_t ev_fill(struct readq_open *ro, char *buf, size_t size)
{
	struct ev_open *of = (struct ev_open *)ro;
	const struct line_source src = {
		.peek = peek_line, .pop = pop_line, .ctx = of,
	};

	return readq_fill_lines(&of->rest, buf, size, &src);
}

static bool ev_readable(struct readq_open *ro)
{
	struct ev_open *of = (struct ev_open *)ro;

	return of->next < ev.head || of->rest.buf;
}

static void ev_open_free(struct ev_open *of)
{
	readq_open_unlink(&of->ro);
	readq_line_rest_clear(&of->rest);
	free(of);
}

static void ev_drop_open(struct readq_open *ro)
{
	ev_open_free((struct ev_open *)ro);
}

static const struct readq_ops ev_readq_ops = {
	.fill = ev_fill, .readable = ev_readable, .drop_open = ev_drop_open,
};

/* A new open file of either, linked; NULL with the error replied. */
static struct ev_open *ev_open_new(fuse_req_t req, struct fuse_file_info *fi)
{
	struct ev_open *of = stream_open_read_only(req, fi, sizeof(*of));

	if (!of)
		return NULL;
	pthread_mutex_lock(&ev.q.lock);
	of->next = ev.head; /* events: from now on */
	pthread_mutex_unlock(&ev.q.lock);
	readq_open_link(&ev.q, &of->ro);
	fi->fh = (uintptr_t)of;
	return of;
}

static void events_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct ev_open *of = ev_open_new(req, fi);

	if (of && stream_reply_open_lines(req, fi) == -ENOENT)
		ev_open_free(of); /* interrupted: no release will come */
}

static void events_release(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	ev_open_free((struct ev_open *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static const struct node_ops events_ops = {
	.open = events_open, .read = readq_fh_read, .poll = readq_fh_poll,
	.release = events_release,
};

/* events.log: a regular file of every line ever written, of which the
 * ring keeps the last FABEVENTS_MAX.  Direct I/O, so that no read is
 * served stale from the page cache. */
static void log_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct ev_open *of = ev_open_new(req, fi);

	if (!of)
		return;
	fi->direct_io = 1;
	if (fuse_reply_open(req, fi) == -ENOENT)
		ev_open_free(of);
}

/* The log offset of the oldest line kept (ev.bytes when none).  q.lock. */
static uint64_t window_start(void)
{
	return ev.head > oldest() ? ev.start[oldest() % FABEVENTS_MAX] : ev.bytes;
}

/* The seq of the kept line holding log offset pos (window_start() <= pos
 * < ev.bytes).  q.lock held. */
static uint64_t line_at(uint64_t pos)
{
	uint64_t lo = oldest(), hi = ev.head - 1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;

		if (ev.start[mid % FABEVENTS_MAX] <= pos)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Copies the log from offset pos into buf, up to size bytes or its end.
 * q.lock held. */
static size_t log_copy(uint64_t pos, char *buf, size_t size)
{
	size_t n = 0;

	for (uint64_t seq = pos < ev.bytes ? line_at(pos) : ev.head;
	     seq < ev.head && n < size; seq++) {
		const char *line = ev.lines[seq % FABEVENTS_MAX];
		size_t skip = (size_t)(pos - ev.start[seq % FABEVENTS_MAX]);
		size_t len = strlen(line) - skip;

		if (len > size - n)
			len = size - n;
		memcpy(buf + n, line + skip, len);
		n += len;
		pos += len;
	}
	return n;
}

/* A read of the open file at its offset off.  Below the ring's window
 * (a reader from offset 0 after more than FABEVENTS_MAX lines, or one
 * that fell that far behind): a line `event=dropped bytes=N`, then the
 * window from its start, and the open file's later offsets follow on
 * from there (its skew).  q.lock held. */
static size_t log_fill(struct ev_open *of, off_t off, char *buf, size_t size)
{
	int64_t at = (int64_t)off + of->skew;
	uint64_t pos = at > 0 ? (uint64_t)at : 0, start = window_start();
	int k;

	if (pos >= start)
		return log_copy(pos, buf, size);
	k = snprintf(buf, size, "event=dropped bytes=%" PRIu64 "\n", start - pos);
	if (k < 0 || (size_t)k >= size)
		k = 0; /* a read too short for it: the window only */
	of->skew = (int64_t)start - (int64_t)off - k;
	return (size_t)k + log_copy(start, buf + k, size - (size_t)k);
}

static void log_read(fuse_req_t req, struct node *n, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct ev_open *of = (struct ev_open *)(uintptr_t)fi->fh;
	char *buf = malloc(size ? size : 1);
	size_t len;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&ev.q.lock);
	len = log_fill(of, off, buf, size);
	pthread_mutex_unlock(&ev.q.lock);
	fuse_reply_buf(req, buf, len);
	free(buf);
}

/* st_size: every byte ever written, so that it only grows (tail -f). */
static off_t log_size(struct node *n)
{
	uint64_t bytes;

	pthread_mutex_lock(&ev.q.lock);
	bytes = ev.bytes;
	pthread_mutex_unlock(&ev.q.lock);
	return (off_t)bytes;
}

static time_t log_mtime(struct node *n)
{
	time_t t;

	pthread_mutex_lock(&ev.q.lock);
	t = ev.mtime;
	pthread_mutex_unlock(&ev.q.lock);
	return t;
}

static const struct node_ops log_ops = {
	.open = log_open, .read = log_read, .release = events_release,
	.size = log_size, .mtime = log_mtime,
};

int fabevents_add(struct node *fabric_dir)
{
	readq_init(&ev.q, &ev_readq_ops);
	ev.mtime = time(NULL);
	ev.ready = true;
	if (!tree_add(fabric_dir, "events", S_IFREG | 0444, &events_ops, NULL, 0) ||
	    !tree_add(fabric_dir, "events.log", S_IFREG | 0444, &log_ops, NULL, 0))
		return -ENOMEM;
	return 0;
}

/* Orders fabevents_note() (any thread: an action's answer may come on a
 * port's receiver thread at unmount) against fabevents_close(). */
static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER;

void fabevents_close(void)
{
	pthread_mutex_lock(&note_lock);
	if (!ev.ready) {
		pthread_mutex_unlock(&note_lock);
		return;
	}
	ev.ready = false;
	pthread_mutex_unlock(&note_lock);
	readq_destroy(&ev.q);
	for (size_t i = 0; i < FABEVENTS_MAX; i++) {
		free(ev.lines[i]);
		ev.lines[i] = NULL;
	}
}

/* The sweep whose comparison is being made: every line carries its time
 * (the sweep thread's; set by fabevents_diff). */
static const struct fab_snap *finder;

/* Appends one line stamped at when (the ring drops its oldest).  Any
 * thread: ev.q.lock orders the lines. */
static void append(const struct timespec *when, const char *fmt, va_list ap)
{
	char line[1024], stamp[32];
	char *copy;
	int n;

	clock_iso_time(stamp, sizeof(stamp), when);
	n = snprintf(line, sizeof(line), "time=%s ", stamp);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	strcat(line, "\n");
	copy = strdup(line);
	if (!copy)
		return;
	pthread_mutex_lock(&ev.q.lock);
	free(ev.lines[ev.head % FABEVENTS_MAX]);
	ev.lines[ev.head % FABEVENTS_MAX] = copy;
	ev.start[ev.head % FABEVENTS_MAX] = ev.bytes;
	ev.bytes += strlen(copy);
	ev.mtime = when->tv_sec;
	ev.head++;
	pthread_mutex_unlock(&ev.q.lock);
}

/* One line of the comparison, at its sweep's time.  The sweep thread. */
static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void emit(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	append(&finder->time, fmt, ap);
	va_end(ap);
}

void fabevents_note(const char *fmt, ...)
{
	struct timespec now;
	va_list ap;

	pthread_mutex_lock(&note_lock);
	if (ev.ready) {
		clock_gettime(CLOCK_REALTIME, &now);
		va_start(ap, fmt);
		append(&now, fmt, ap);
		va_end(ap);
		readq_wake(&ev.q);
	}
	pthread_mutex_unlock(&note_lock);
}

/* "guid=0x... port=N node_desc=\"...\"" of a node's port into buf. */
static void port_end(char *buf, size_t cap, const char *prefix,
		     const struct fab_node *n, unsigned port)
{
	char q[QUOTED_DESC];

	fabsnap_quote(q, sizeof(q), n->desc);
	snprintf(buf, cap, "%sguid=0x%016" PRIx64 " %sport=%u %snode_desc=%s",
		 prefix, n->guid, prefix, port, prefix, q);
}

static void node_events(const struct fab_snap *a, const struct fab_snap *b,
			const char *what)
{
	for (size_t i = 0; i < b->nnodes; i++) {
		const struct fab_node *n = &b->nodes[i];
		char q[QUOTED_DESC];

		if (fabsnap_find(a, n->guid))
			continue;
		fabsnap_quote(q, sizeof(q), n->desc);
		emit("event=%s guid=0x%016" PRIx64 " node_desc=%s node_type=%s",
		     what, n->guid, q, fabsnap_type_name(n->type));
	}
}

/* Link lines of the ports of b's nodes whose peer a does not have: up
 * (a old, b new) or down (a new, b old); the peer as b has it. */
static void link_events(const struct fab_snap *a, const struct fab_snap *b,
			const char *what)
{
	for (size_t i = 0; i < b->nnodes; i++) {
		const struct fab_node *n = &b->nodes[i];
		const struct fab_node *na = fabsnap_find(a, n->guid);

		for (unsigned p = 1; na && p <= n->nports && p <= na->nports; p++) {
			const struct fab_port *pb = &n->ports[p], *pa = &na->ports[p];
			const struct fab_node *peer = NULL;
			char me[400], other[400];

			if (!pb->peer_guid || (pa->peer_guid == pb->peer_guid &&
					       pa->peer_port == pb->peer_port))
				continue;
			if (!fabsnap_peer(b, pb, &peer))
				continue;
			port_end(me, sizeof(me), "", n, p);
			port_end(other, sizeof(other), "peer_", peer, pb->peer_port);
			emit("event=%s %s %s", what, me, other);
		}
	}
}

/* A port's error counters that grew from pa (old) to pb (new). */
static void counter_events(const struct fab_snap *b, const struct fab_node *na,
			   const struct fab_node *n, unsigned p)
{
	const struct fab_port *pa = &na->ports[p], *pb = &n->ports[p];

	if (!pa->has_counters || !pb->has_counters)
		return;
	for (unsigned i = 0; i < pmacounters_count(); i++) {
		const struct fab_node *peer = NULL;
		char me[400], other[400] = "";
		uint64_t va, vb;

		if (!pmacounters_is_error(i) ||
		    !pmacounters_value(i, pa->basic, NULL, 0, &va) ||
		    !pmacounters_value(i, pb->basic, NULL, 0, &vb) || vb <= va)
			continue;
		port_end(me, sizeof(me), "", n, p);
		if (fabsnap_peer(b, pb, &peer)) {
			other[0] = ' ';
			port_end(other + 1, sizeof(other) - 1, "peer_", peer,
				 pb->peer_port);
		}
		emit("event=counter_increased %s counter=%s delta=%" PRIu64
		     " value=%" PRIu64 "%s", me, pmacounters_name(i), vb - va, vb, other);
	}
}

static void problem_event(const char *what, const struct fab_problem *p)
{
	char keys[1024];

	problem_keys(p, keys, sizeof(keys));
	emit("event=%s %s", what, keys);
}

/* The problems new has and old had not (raised), and the other way
 * (cleared): a merge of the two lists, both in identity order. */
static void problem_events(const struct fab_snap *old, const struct fab_snap *new)
{
	size_t a = 0, b = 0, na = old ? old->nproblems : 0;

	while (a < na || b < new->nproblems) {
		int c = a == na ? 1 : b == new->nproblems ? -1 :
			problem_cmp(&old->problems[a], &new->problems[b]);

		if (c < 0)
			problem_event("problem_cleared", &old->problems[a++]);
		else if (c > 0)
			problem_event("problem_raised", &new->problems[b++]);
		else
			a++, b++;
	}
}

/* A member come or gone between two sweeps (fabmcast_diff()). */
static void mcast_event(void *ctx, bool join, const struct fab_mgroup *g,
			const struct fab_mcmember *m)
{
	const struct fab_node *n = m->node_guid ? fabsnap_find(ctx, m->node_guid) : NULL;
	char mgid[FAB_GID_TEXT], gid[FAB_GID_TEXT], q[QUOTED_DESC];

	fabmcast_gid_text(mgid, g->mgid);
	fabmcast_member_gid_text(gid, m);
	fabsnap_quote(q, sizeof(q), n ? n->desc : "");
	emit("event=%s mlid=0x%04x mgid=%s gid=%s join_state=%s node_desc=%s",
	     join ? "mcast_join" : "mcast_leave", g->mlid, mgid, gid,
	     fabmcast_join_name(m->join_state), q);
}

/* The changes between two complete sweeps. */
static void change_events(const struct fab_snap *old, const struct fab_snap *new)
{
	/* node_gone and link_down compare the other way */
	node_events(new, old, "node_gone");
	link_events(new, old, "link_down");
	node_events(old, new, "node_appeared");
	link_events(old, new, "link_up");
	/* a member gone is found in the old snapshot, one come in the new */
	fabmcast_diff(old->mcast, new->mcast, mcast_event, (void *)new);
	for (size_t i = 0; i < new->nnodes; i++) {
		const struct fab_node *n = &new->nodes[i];
		const struct fab_node *na = fabsnap_find(old, n->guid);

		for (unsigned p = 0; na && p <= n->nports && p <= na->nports; p++)
			counter_events(new, na, n, p);
	}
}

void fabevents_diff(const struct fab_snap *old, const struct fab_snap *new)
{
	if (!ev.ready)
		return;
	finder = new;
	if (old && old->ok && new->ok)
		change_events(old, new);
	problem_events(old, new);
	readq_wake(&ev.q);
}
