/* libfuse's requests for the C unit tests (fakefuse.h): the three calls
 * of a parked write's, interposed, and the INTERRUPT of libfuse 3.14's
 * fuse_lowlevel.c (find_interrupted(), fuse_req_interrupt_func(),
 * fuse_free_req()) with the same locks: the session's, then the
 * request's. */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "fakefuse.h"

static pthread_mutex_t session = PTHREAD_MUTEX_INITIALIZER; /* se->lock */
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;   /* a reply, an
							     * interrupt (session) */
static _Thread_local struct fuse_req *in_callback; /* the request whose callback runs */

void fakefuse_init(struct fuse_req *req)
{
	*req = (struct fuse_req){ .err = -1 };
	pthread_mutex_init(&req->lock, NULL);
}

void fakefuse_destroy(struct fuse_req *req)
{
	pthread_mutex_destroy(&req->lock);
}

static void call(fuse_req_t req, fuse_interrupt_func_t func, void *data)
{
	in_callback = req;
	func(req, data);
	in_callback = NULL;
	pthread_mutex_lock(&session);
	req->callbacks++;
	pthread_mutex_unlock(&session);
}

void fuse_req_interrupt_func(fuse_req_t req, fuse_interrupt_func_t func, void *data)
{
	pthread_mutex_lock(&req->lock);
	pthread_mutex_lock(&session);
	req->func = func;
	req->data = data;
	pthread_mutex_unlock(&session);
	if (req->interrupted && func)
		call(req, func, data);
	pthread_mutex_unlock(&req->lock);
	if (func && req->after_register)
		req->after_register(req);
}

void fakefuse_interrupt(struct fuse_req *req)
{
	fuse_interrupt_func_t func;
	void *data;

	pthread_mutex_lock(&session);
	if (req->replies) { /* gone from the session's list */
		pthread_mutex_unlock(&session);
		return;
	}
	pthread_mutex_unlock(&session);
	pthread_mutex_lock(&req->lock);
	pthread_mutex_lock(&session);
	req->interrupted = true;
	func = req->func;
	data = req->data;
	req->interrupting = true;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&session);
	if (req->callback_delay_us)
		usleep(req->callback_delay_us);
	if (func)
		call(req, func, data);
	pthread_mutex_unlock(&req->lock);
}

/* A reply: counted, and the callback forgotten (fuse_free_req()). */
static int reply(fuse_req_t req, int err, size_t count)
{
	pthread_mutex_lock(&session);
	if (!req->replies++) {
		req->err = err;
		req->written = count;
		req->by_callback = in_callback == req;
	}
	req->func = NULL;
	req->data = NULL;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&session);
	return 0;
}

int fuse_reply_err(fuse_req_t req, int err)
{
	return reply(req, err, 0);
}

int fuse_reply_write(fuse_req_t req, size_t count)
{
	return reply(req, 0, count);
}

int fuse_reply_open(fuse_req_t req, const struct fuse_file_info *fi)
{
	req->opened_fh = fi->fh; /* before the reply: the test reads it after */
	return reply(req, 0, 0);
}

bool fakefuse_wait_reply(struct fuse_req *req, int timeout_ms)
{
	struct timespec until;
	bool got;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&session);
	while (!req->replies &&
	       pthread_cond_timedwait(&changed, &session, &until) != ETIMEDOUT)
		;
	got = req->replies > 0;
	pthread_mutex_unlock(&session);
	return got;
}

void fakefuse_wait_interrupting(struct fuse_req *req)
{
	pthread_mutex_lock(&session);
	while (!req->interrupting)
		pthread_cond_wait(&changed, &session);
	pthread_mutex_unlock(&session);
}

/* A count of a request's, read under the session's lock. */
static unsigned count(const unsigned *n)
{
	unsigned v;

	pthread_mutex_lock(&session);
	v = *n;
	pthread_mutex_unlock(&session);
	return v;
}

unsigned fakefuse_callbacks(struct fuse_req *req)
{
	return count(&req->callbacks);
}

unsigned fakefuse_replies(struct fuse_req *req)
{
	return count(&req->replies);
}
