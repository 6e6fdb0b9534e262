/* A parked write (fuse/parkedwrite.c) gets exactly one reply: its answer,
 * or EINTR when an interrupt comes first - before it is parked, while it
 * is being parked (between the callback's registration and the park),
 * once parked - and nothing from an interrupt after the answer; then the
 * answer and the interrupt from two threads at once, many times.  A parked
 * open (the issm file's) likewise: its fi and the fh given at the answer,
 * and whether the answer was the reply. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "fakefuse.h"
#include "umadfs/fuse/parkedwrite.h"

#define SIZE 42 /* the write's bytes */

/* When an interrupt comes: never, before the write is parked, between
 * the callback's registration and the park, once parked, its callback
 * running (held up) when the answer comes, after the answer. */
enum moment { NONE, BEFORE, PARKING, PARKED, ANSWERING, ANSWERED };

static void *interrupt_thread(void *req)
{
	fakefuse_interrupt(req);
	return NULL;
}

/* Parks a write, interrupted when said, and answers it with err: one
 * reply, want_err (and want_written bytes for a write's). */
static void one(enum moment when, int err, int want_err, size_t want_written)
{
	struct fuse_req req;
	struct parkedwrite *pw;
	pthread_t t;

	fakefuse_init(&req);
	if (when == BEFORE)
		fakefuse_interrupt(&req);
	if (when == PARKING)
		req.after_register = fakefuse_interrupt;
	pw = parkedwrite_new(&req, SIZE);
	CHECK(pw != NULL);
	if (when == PARKED)
		fakefuse_interrupt(&req);
	if (when == ANSWERING) {
		req.callback_delay_us = 20000;
		pthread_create(&t, NULL, interrupt_thread, &req);
		fakefuse_wait_interrupting(&req);
	}
	parkedwrite_answer(pw, err);
	if (when == ANSWERING) {
		/* The answer waited the callback out (pw is gone now). */
		CHECK_INT(fakefuse_callbacks(&req), 1);
		pthread_join(t, NULL);
	}
	if (when == ANSWERED)
		fakefuse_interrupt(&req);
	CHECK_INT(fakefuse_replies(&req), 1);
	CHECK_INT(req.err, want_err);
	CHECK_INT(req.written, want_written);
	/* Only a parked write's interrupt replies from its callback (the
	 * others run under the request's lock, or found nothing parked). */
	CHECK_INT(req.by_callback, when == PARKED);
	fakefuse_destroy(&req);
}

static void test_moments(void)
{
	one(NONE, 0, 0, SIZE);
	one(NONE, EIO, EIO, 0);
	one(BEFORE, 0, EINTR, 0);
	one(PARKING, 0, EINTR, 0);
	one(PARKED, 0, EINTR, 0);
	one(PARKED, ETIMEDOUT, EINTR, 0);
	one(ANSWERING, 0, 0, SIZE);
	one(ANSWERING, EIO, EIO, 0);
	one(ANSWERED, 0, 0, SIZE);
	one(ANSWERED, EPROTO, EPROTO, 0);
}

/* A parked open: answered with its fi (the fh the answer gives), or EINTR
 * when interrupted first; parkedwrite_pending() and the answer's result
 * say which. */
static void one_open(enum moment when, int want_err)
{
	struct fuse_file_info fi = { .flags = 1, .direct_io = 1 };
	struct fuse_req req;
	struct parkedwrite *pw;
	bool replied;

	fakefuse_init(&req);
	if (when == BEFORE)
		fakefuse_interrupt(&req);
	pw = parkedwrite_new_open(&req, &fi);
	CHECK(pw != NULL);
	if (when == PARKED)
		fakefuse_interrupt(&req);
	CHECK(parkedwrite_pending(pw) == (when == NONE));
	replied = parkedwrite_answer_fh(pw, 0, 77);
	CHECK(replied == (when == NONE));
	CHECK_INT(fakefuse_replies(&req), 1);
	CHECK_INT(req.err, want_err);
	CHECK_INT(req.opened_fh, want_err ? 0 : 77);
	CHECK_INT(req.written, 0);
	fakefuse_destroy(&req);
}

static void test_opens(void)
{
	one_open(NONE, 0);
	one_open(BEFORE, EINTR);
	one_open(PARKED, EINTR);
}

/* -- the race ---------------------------------------------------------------- */

/* Where the parking thread is: the interrupting thread, spinning, waits
 * for one of these, then a random while: whatever the machine's load,
 * interrupts come near each step. */
enum phase { AT_START, AT_PARK, AT_ANSWER, AT_END };

struct race {
	struct fuse_req req;
	_Atomic int phase;           /* the parking thread's */
	_Atomic bool ready;          /* the interrupting thread's: it watches */
	int target;                  /* the phase the interrupt waits for */
	unsigned spin_answer, spin_interrupt; /* iterations before each */
};

static void spin(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

static void *parker(void *arg)
{
	struct race *r = arg;
	struct parkedwrite *pw;

	while (!r->ready)
		;
	r->phase = AT_PARK;
	pw = parkedwrite_new(&r->req, SIZE);
	r->phase = AT_ANSWER;
	spin(r->spin_answer);
	if (pw)
		parkedwrite_answer(pw, 0);
	r->phase = AT_END;
	return pw ? r : NULL;
}

static void *interrupter(void *arg)
{
	struct race *r = arg;

	r->ready = true;
	while (r->phase < r->target)
		;
	spin(r->spin_interrupt);
	fakefuse_interrupt(&r->req);
	return NULL;
}

/* The answer and an interrupt from two threads, the interrupt near each
 * step of the parking thread in turn, n times: one reply each; the
 * answer's, EINTR from the parking thread (interrupted before the park)
 * and EINTR from the callback each seen. */
static void test_race(unsigned n)
{
	unsigned answered = 0, early = 0, interrupted = 0, bad = 0;

	srand(29);
	for (unsigned i = 0; i < n; i++) {
		/* The park takes a few hundred iterations' time: an
		 * interrupt aimed at it comes within that. */
		struct race r = { .target = AT_PARK + (int)(i % 3),
				  .spin_answer = (unsigned)rand() % 4000,
				  .spin_interrupt = (unsigned)rand() % (i % 3 ? 4000 : 400) };
		pthread_t a, b;
		void *parked;

		fakefuse_init(&r.req);
		pthread_create(&b, NULL, interrupter, &r);
		pthread_create(&a, NULL, parker, &r);
		pthread_join(a, &parked);
		pthread_join(b, NULL);
		if (!parked || fakefuse_replies(&r.req) != 1)
			bad++;
		else if (r.req.err == EINTR && r.req.by_callback)
			interrupted++;
		else if (r.req.err == EINTR)
			early++;
		else if (r.req.err == 0 && r.req.written == SIZE)
			answered++;
		else
			bad++;
		fakefuse_destroy(&r.req);
	}
	fprintf(stderr, "%u races: %u answered, %u interrupted before the park, "
		"%u once parked\n", n, answered, early, interrupted);
	CHECK_INT(bad, 0);
	CHECK(answered > 0 && early > 0 && interrupted > 0);
}

int main(void)
{
	test_moments();
	test_opens();
	test_race(3000);
	CHECK_DONE();
}
