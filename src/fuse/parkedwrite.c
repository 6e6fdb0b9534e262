/* Writes parked until another thread answers them (parkedwrite.h).
 *
 * readq.c's protocol for one request: the interrupt callback is
 * registered when parked; the first of the callback and the answer to
 * take the write (pw->lock) replies.  The answering thread then waits
 * out a running callback (fuse_req_interrupt_func(req, NULL, NULL), no
 * lock held) before it replies or frees. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "umadfs/fuse/parkedwrite.h"

struct parked_write {
	pthread_mutex_t lock;
	fuse_req_t req;
	size_t size;
	bool answered; /* by the interrupt or the answer (lock) */
};

static void on_interrupt(fuse_req_t req, void *data)
{
	struct parked_write *pw = data;
	bool reply;

	pthread_mutex_lock(&pw->lock);
	reply = !pw->answered;
	pw->answered = true;
	pthread_mutex_unlock(&pw->lock);
	/* pw is the answering thread's to free, after this callback. */
	if (reply)
		fuse_reply_err(req, EINTR);
}

struct parked_write *parked_write_new(fuse_req_t req, size_t size)
{
	struct parked_write *pw = calloc(1, sizeof(*pw));

	if (!pw)
		return NULL;
	pthread_mutex_init(&pw->lock, NULL);
	pw->req = req;
	pw->size = size;
	fuse_req_interrupt_func(req, on_interrupt, pw);
	return pw;
}

void parked_write_answer(struct parked_write *pw, int err)
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
		else
			fuse_reply_write(pw->req, pw->size);
	}
	/* Else the callback replied, and the request is gone: it may still be
	 * running (past its unlock, touching only req); the lock waits it. */
	pthread_mutex_lock(&pw->lock);
	pthread_mutex_unlock(&pw->lock);
	pthread_mutex_destroy(&pw->lock);
	free(pw);
}
