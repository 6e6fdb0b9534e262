/* libfuse's requests as the C unit tests play them: the test executable's
 * fuse_req_interrupt_func(), fuse_reply_err(), fuse_reply_write() and
 * fuse_reply_open() take
 * the place of libfuse's (an executable's definitions come before a shared
 * library's), record each reply, and run a request's interrupt callback
 * as libfuse 3.14 does: under the request's lock, at once when the
 * callback is registered on a request interrupted already, never once the
 * request is answered.  See fakefuse.c. */
#ifndef UMADFS_TEST_FAKEFUSE_H
#define UMADFS_TEST_FAKEFUSE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fuse_lowlevel.h>

struct fuse_req {
	pthread_mutex_t lock;        /* libfuse's req->lock: the callback runs under it */
	fuse_interrupt_func_t func;  /* (the session's lock) */
	void *data;                  /* (the session's lock) */
	bool interrupted;            /* (set under both locks) */
	unsigned replies;            /* (the session's lock) */
	int err;                     /* the first reply's errno, 0 for a write's */
	bool by_callback;            /* the first reply came from the callback */
	unsigned callback_delay_us;  /* an interrupt's wait, its lock held, before
				      * it calls the callback */
	bool interrupting;           /* an interrupt has the lock (the session's) */
	unsigned callbacks;          /* callbacks returned (the session's lock) */
	size_t written;              /* the first reply's count, for a write's */
	uint64_t opened_fh;          /* an open's reply: its fh */
	/* Called once a callback is registered, no lock held: an interrupt
	 * there comes between the registration and what follows it. */
	void (*after_register)(struct fuse_req *req);
};

/* A request as libfuse hands it to an operation. */
void fakefuse_init(struct fuse_req *req);
void fakefuse_destroy(struct fuse_req *req);
/* The kernel's INTERRUPT for req, as libfuse handles it (do_interrupt):
 * nothing once req is answered; else req is marked interrupted and its
 * callback, if any, called under its lock. */
void fakefuse_interrupt(struct fuse_req *req);
/* Waits until an interrupt holds req's lock, to call its callback. */
void fakefuse_wait_interrupting(struct fuse_req *req);
/* How many callbacks of req's have returned. */
unsigned fakefuse_callbacks(struct fuse_req *req);
/* Waits until req has a reply, at most timeout_ms: whether it has. */
bool fakefuse_wait_reply(struct fuse_req *req, int timeout_ms);
/* req's replies so far. */
unsigned fakefuse_replies(struct fuse_req *req);

#endif
