/* A port's issm file (issm.h): its IsSM capability held by whoever holds
 * the file open for writing, as the kernel's issm device does, and a
 * reader's line saying whether it is held and by whom.
 *
 * The holder is one open at a time: the first opener for writing takes a
 * hold of the engine's (engine_issm_hold(): the port's issm device, open
 * while any hold is taken, the registered agents' under the simulator
 * too), and its RELEASE (its last close, or its death) gives it to the
 * next opener waiting, or gives the hold back.  A second opener waits in
 * a parked open (parkedwrite.h: EINTR on a signal), or fails at once with
 * EAGAIN under O_NONBLOCK, as the kernel's ib_umad_sm_open(). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/log.h"
#include "umadfs/ca/issm.h"
#include "umadfs/device/device.h"
#include "umadfs/device/sysfmt.h"
#include "umadfs/engine/engine.h"
#include "umadfs/fuse/parkedwrite.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"

#define ISSM_WAITERS_MAX 256 /* opens parked at once, beyond: EBUSY */

struct issm_wait {
	struct issm_wait *next;
	struct parkedwrite *pw; /* the parked open */
	pid_t pid;
};

struct issm {
	struct ca_port *port;
	pthread_mutex_t lock;     /* guards what follows */
	pid_t holder;             /* the holder's opener, 0: none */
	uint64_t holder_fh;       /* its open's fh (a token, not a pointer) */
	uint64_t tokens;          /* the last fh given */
	struct issm_wait *waiters, **tail; /* first come, first served */
	unsigned nwaiters;
	bool gone;                /* the CA went: no more holders */
};

static bool opens_for_writing(const struct fuse_file_info *fi)
{
	return (fi->flags & O_ACCMODE) != O_RDONLY;
}

/* "0", "1 PID" (held through this file) or "1 umadfs" (held by the
 * daemon for its agents, under the simulator). */
static int issm_show(struct node *n, char *buf, size_t cap)
{
	struct issm *st = n->owner;
	struct mad_engine *engine;
	pid_t holder;
	bool agents = false;

	pthread_mutex_lock(&st->lock);
	holder = st->holder;
	pthread_mutex_unlock(&st->lock);
	if (holder)
		return sysfmt_line(buf, cap, "1 %d\n", (int)holder);
	engine = ca_port_engine(st->port, NULL);
	if (engine) {
		agents = engine_issm_agents(engine);
		ca_port_engine_done(st->port);
	}
	return sysfmt_line(buf, cap, agents ? "1 umadfs\n" : "0\n");
}

/* The engine's hold for a new holder: 0 or -errno.  st->lock held. */
static int hold_engine(struct issm *st, bool nonblock)
{
	int err = -ENODEV;
	struct mad_engine *engine = ca_port_engine(st->port, &err);
	int r;

	if (!engine)
		return err ? err : -ENODEV;
	r = engine_issm_hold(engine);
	ca_port_engine_done(st->port);
	if (r == -EAGAIN) {
		log_warn("%s port %d: issm: the issm device is held outside the "
			 "mount (an SM?)", st->port->ca->name, st->port->portnum);
		return nonblock ? -EAGAIN : -EBUSY;
	}
	if (r < 0)
		log_warn("%s port %d: issm: cannot open the issm device: %s",
			 st->port->ca->name, st->port->portnum, strerror(-r));
	return r;
}

static void release_engine(struct issm *st)
{
	struct mad_engine *engine = ca_port_engine(st->port, NULL);

	if (engine) {
		engine_issm_release(engine);
		ca_port_engine_done(st->port);
	}
}

/* Makes pid the holder: its open's fh.  st->lock held. */
static uint64_t make_holder(struct issm *st, pid_t pid)
{
	st->holder = pid;
	st->holder_fh = ++st->tokens;
	log_info("%s port %d: issm held by pid %d", st->port->ca->name,
		 st->port->portnum, (int)pid);
	return st->holder_fh;
}

/* Waiters an interrupt answered leave the queue.  st->lock held. */
static void drop_answered(struct issm *st)
{
	struct issm_wait **pp = &st->waiters;

	st->tail = &st->waiters;
	while (*pp) {
		struct issm_wait *w = *pp;

		if (parkedwrite_pending(w->pw)) {
			st->tail = &w->next;
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		parkedwrite_answer(w->pw, EINTR); /* frees it only */
		free(w);
		st->nwaiters--;
	}
}

/* Parks the open until the holder goes: 0 (parked) or -errno.  st->lock
 * held. */
static int park_open(struct issm *st, fuse_req_t req, struct fuse_file_info *fi,
		     pid_t pid)
{
	struct issm_wait *w;

	drop_answered(st);
	if (st->nwaiters >= ISSM_WAITERS_MAX)
		return -EBUSY;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->pid = pid;
	w->pw = parkedwrite_new_open(req, fi);
	if (!w->pw) {
		free(w);
		return -ENOMEM;
	}
	*st->tail = w;
	st->tail = &w->next;
	st->nwaiters++;
	return 0;
}

static void issm_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct issm *st = n->owner;
	pid_t pid = fuse_req_ctx(req)->pid;
	bool nonblock = fi->flags & O_NONBLOCK;
	int r = 0;

	if (!opens_for_writing(fi)) {
		textfile_open(req, n, fi, issm_show);
		return;
	}
	fi->direct_io = 1;
	fi->nonseekable = 1;
	pthread_mutex_lock(&st->lock);
	if (st->gone)
		r = -ENODEV;
	else if (!st->holder)
		r = hold_engine(st, nonblock);
	else if (nonblock)
		r = -EAGAIN;
	else if ((r = park_open(st, req, fi, pid)) == 0)
		r = 1; /* parked: answered by hand_over() or an interrupt */
	if (r == 0)
		fi->fh = make_holder(st, pid);
	pthread_mutex_unlock(&st->lock);
	if (r == 0)
		fuse_reply_open(req, fi);
	else if (r < 0)
		fuse_reply_err(req, -r);
}

/* The holder went: the next waiter holds it, or the hold is given back.
 * st->lock held. */
static void hand_over(struct issm *st)
{
	log_info("%s port %d: issm released by pid %d", st->port->ca->name,
		 st->port->portnum, (int)st->holder);
	while (st->waiters) {
		struct issm_wait *w = st->waiters;
		uint64_t fh;

		st->waiters = w->next;
		if (!st->waiters)
			st->tail = &st->waiters;
		st->nwaiters--;
		fh = make_holder(st, w->pid);
		/* The new holder's release waits for st->lock. */
		if (parkedwrite_answer_fh(w->pw, 0, fh)) {
			free(w);
			return;
		}
		free(w); /* interrupted meanwhile */
	}
	st->holder = 0;
	st->holder_fh = 0;
	release_engine(st);
}

static void issm_release(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct issm *st = n->owner;

	if (!opens_for_writing(fi)) {
		textfile_release(req, n, fi);
		return;
	}
	pthread_mutex_lock(&st->lock);
	if (st->holder && st->holder_fh == fi->fh)
		hand_over(st);
	pthread_mutex_unlock(&st->lock);
	fuse_reply_err(req, 0);
}

static void issm_read(fuse_req_t req, struct node *n, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	if (opens_for_writing(fi))
		fuse_reply_err(req, EBADF); /* the holder's open has no text */
	else
		textfile_read(req, n, size, off, fi);
}

/* The kernel's issm device has no write: holding it open is all. */
static void issm_write(fuse_req_t req, struct node *n, const char *buf,
		       size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)n, (void)buf, (void)size, (void)off, (void)fi;
	fuse_reply_err(req, EINVAL);
}

static const struct node_ops issm_ops = {
	.open = issm_open,
	.read = issm_read,
	.write = issm_write,
	.release = issm_release,
	.show = issm_show,
};

int issm_add_file(struct node *port_dir, struct ca_port *port)
{
	struct issm *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->port = port;
	st->tail = &st->waiters;
	pthread_mutex_init(&st->lock, NULL);
	port->issm = st;
	if (!tree_add(port_dir, "issm", S_IFREG | 0600, &issm_ops, st, 0))
		return -ENOMEM;
	return 0;
}

void issm_port_gone(struct ca_port *port)
{
	struct issm *st = port->issm;

	if (!st)
		return;
	pthread_mutex_lock(&st->lock);
	st->gone = true;
	while (st->waiters) {
		struct issm_wait *w = st->waiters;

		st->waiters = w->next;
		parkedwrite_answer(w->pw, ENODEV);
		free(w);
	}
	st->tail = &st->waiters;
	st->nwaiters = 0;
	pthread_mutex_unlock(&st->lock);
}

void issm_port_free(struct ca_port *port)
{
	issm_port_gone(port);
	if (port->issm) {
		pthread_mutex_destroy(&port->issm->lock);
		free(port->issm);
		port->issm = NULL;
	}
}
