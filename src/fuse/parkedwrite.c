/* Writes (and opens) parked until another thread answers them
 * (parkedwrite.h).
 *
 * readq.c's protocol for one request: the interrupt callback is
 * registered before the write counts as parked; one that comes first
 * (libfuse calls it at once, inside the registration, with the request's
 * lock held: it must not reply there) only sets a flag, and the parking
 * thread replies EINTR.  Once parked, the first of the callback and the
 * answer to take the write (pw->lock) replies.  The answering thread
 * waits out a running callback (fuse_req_interrupt_func(req, NULL, NULL),
 * no lock held) before it replies or frees. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "umadfs/fuse/parkedwrite.h"

struct parkedwrite {
	pthread_mutex_t lock;
	fuse_req_t req;
	size_t size;
	bool open;                 /* an open: answered with fi */
	struct fuse_file_info fi;  /* an open's (its fh the answerer's) */
	bool parked;      /* registered: the callback may reply (lock) */
	bool interrupted; /* the callback came before (lock) */
	bool answered;    /* by the interrupt or the answer (lock) */
};

static void on_interrupt(fuse_req_t req, void *data)
{
	struct parkedwrite *pw = data;
	bool reply;

	pthread_mutex_lock(&pw->lock);
	reply = pw->parked && !pw->answered;
	pw->interrupted = true;
	if (reply)
		pw->answered = true;
	pthread_mutex_unlock(&pw->lock);
	/* pw is the answering thread's to free, after this callback. */
	if (reply)
		fuse_reply_err(req, EINTR);
}

static struct parkedwrite *park(struct parkedwrite *pw, fuse_req_t req)
{
	bool early;

	pthread_mutex_init(&pw->lock, NULL);
	pw->req = req;
	fuse_req_interrupt_func(req, on_interrupt, pw);
	pthread_mutex_lock(&pw->lock);
	early = pw->interrupted;
	pw->parked = true;
	pw->answered = early;
	pthread_mutex_unlock(&pw->lock);
	if (early) {
		/* Interrupted already: answered here, outside the callback; the
		 * answer to come finds it answered. */
		fuse_req_interrupt_func(req, NULL, NULL);
		fuse_reply_err(req, EINTR);
	}
	return pw;
}

struct parkedwrite *parkedwrite_new(fuse_req_t req, size_t size)
{
	struct parkedwrite *pw = calloc(1, sizeof(*pw));

	if (!pw)
		return NULL;
	pw->size = size;
	return park(pw, req);
}

struct parkedwrite *parkedwrite_new_open(fuse_req_t req,
					 const struct fuse_file_info *fi)
{
	struct parkedwrite *pw = calloc(1, sizeof(*pw));

	if (!pw)
		return NULL;
	pw->open = true;
	pw->fi = *fi;
	return park(pw, req);
}

bool parkedwrite_pending(struct parkedwrite *pw)
{
	bool pending;

	pthread_mutex_lock(&pw->lock);
	pending = !pw->answered;
	pthread_mutex_unlock(&pw->lock);
	return pending;
}

bool parkedwrite_answer_fh(struct parkedwrite *pw, int err, uint64_t fh)
{
	pw->fi.fh = fh;
	return parkedwrite_answer(pw, err);
}

bool parkedwrite_answer(struct parkedwrite *pw, int err)
{
	bool reply;

	pthread_mutex_lock(&pw->lock);
	reply = !pw->answered;
	pw->answered = true;
	pthread_mutex_unlock(&pw->lock);
	if (reply) {
		/* Waits out a running callback, which will not reply. */
		fuse_req_interrupt_func(pw->req, NULL, NULL);
		if (err)
			fuse_reply_err(pw->req, err);
		else if (pw->open)
			fuse_reply_open(pw->req, &pw->fi);
		else
			fuse_reply_write(pw->req, pw->size);
	}
	/* Else the request is gone, replied EINTR: by the callback, which may
	 * still be running (past its unlock, touching only req; the lock
	 * waits it out), or by parkedwrite_new(). */
	pthread_mutex_lock(&pw->lock);
	pthread_mutex_unlock(&pw->lock);
	pthread_mutex_destroy(&pw->lock);
	free(pw);
	return reply;
}
