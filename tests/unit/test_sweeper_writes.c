/* The writes of fabric/sweep (watch/sweeper.c, sweeper_park_write(): each
 * a parked write of fuse/parkedwrite.c): answered once, by the sweep
 * thread when a sweep that started after the write is complete, or EINTR
 * by an interrupt; EAGAIN past SWEEPER_WRITERS_MAX waiting; ENODEV at
 * shutdown, for those waiting and those that come after; threads writing
 * while sweeps complete, each write answered once.
 *
 * The sweeps go out of no port (the host has none here: each is a
 * snapshot that says so), and pass through a gate in the judge hook, one
 * sweep a ticket, so that the test holds a sweep where it wants it. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "check.h"
#include "fakefuse.h"
#include "umadfs/fabric/watch/sweeper.h"

#define SIZE 6      /* "sweep\n" */
#define WAIT_MS 10000

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned tickets; /* sweeps that may pass (lock) */
	unsigned held;    /* sweeps waiting for one (lock) */
	unsigned passed;  /* (lock) */
} gate = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void judge(const struct fab_snap *old, struct fab_snap *snap)
{
	pthread_mutex_lock(&gate.lock);
	gate.held++;
	pthread_cond_broadcast(&gate.cond);
	while (!gate.tickets)
		pthread_cond_wait(&gate.cond, &gate.lock);
	gate.tickets--;
	gate.held--;
	gate.passed++;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
}

static void nothing(struct fab_snap *old, struct fab_snap *snap)
{
}

static int no_ports(struct ca_port **out, int max)
{
	return 0;
}

/* n sweeps may pass (UINT_MAX: all from now on; 0: none). */
static void tickets(unsigned n)
{
	pthread_mutex_lock(&gate.lock);
	gate.tickets = n;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
}

/* Waits until a sweep waits at the gate. */
static void wait_held(void)
{
	pthread_mutex_lock(&gate.lock);
	while (!gate.held)
		pthread_cond_wait(&gate.cond, &gate.lock);
	pthread_mutex_unlock(&gate.lock);
}

/* Lets the sweep held through, and waits until it has passed. */
static void let_one_through(void)
{
	pthread_mutex_lock(&gate.lock);
	unsigned want = gate.passed + 1;

	gate.tickets = 1;
	pthread_cond_broadcast(&gate.cond);
	while (gate.passed < want)
		pthread_cond_wait(&gate.cond, &gate.lock);
	pthread_mutex_unlock(&gate.lock);
}

/* A write of fabric/sweep, what sweeper_park_write() returned, and the
 * reply it should have if parked: an errno, or 0 for its size. */
struct writer {
	struct fuse_req req;
	int r;
	int want;
};

static struct writer *writers_new(unsigned n)
{
	struct writer *w = calloc(n, sizeof(*w));

	for (unsigned i = 0; i < n; i++)
		fakefuse_init(&w[i].req);
	return w;
}

/* Each of w[0..n) parked answered once with its want, and each refused
 * (with -refused) not at all; frees them.  Waits WAIT_MS for the first
 * missing reply, not for the others. */
static void writers_check(struct writer *w, unsigned n, int refused)
{
	unsigned bad = 0;
	int wait = WAIT_MS;

	for (unsigned i = 0; i < n; i++) {
		struct fuse_req *req = &w[i].req;

		if (w[i].r == 0 && !fakefuse_wait_reply(req, wait))
			wait = 0;
		if (w[i].r == 0 && (fakefuse_replies(req) != 1 || req->err != w[i].want ||
				    req->written != (w[i].want ? 0 : SIZE)))
			bad++;
		if (w[i].r && (w[i].r != -refused || fakefuse_replies(req)))
			bad++;
		fakefuse_destroy(req);
	}
	CHECK_INT(bad, 0);
	free(w);
}

/* -- the tests ------------------------------------------------------------ */

/* A write waits for a sweep that started after it: one parked while a
 * sweep runs waits for the next. */
static void test_answered_after_their_sweep(void)
{
	struct writer *w = writers_new(4);

	tickets(0);
	CHECK_INT(w[0].r = sweeper_park_write(&w[0].req, SIZE), 0);
	wait_held(); /* sweep 1, asked by w[0], started */
	CHECK_INT(w[1].r = sweeper_park_write(&w[1].req, SIZE), 0);
	CHECK_INT(fakefuse_replies(&w[0].req) + fakefuse_replies(&w[1].req), 0);
	let_one_through();
	CHECK(fakefuse_wait_reply(&w[0].req, WAIT_MS));
	wait_held(); /* sweep 2, asked by w[1] */
	CHECK_INT(fakefuse_replies(&w[1].req), 0);
	/* Interrupted while it waits: EINTR, and nothing when its sweep ends. */
	CHECK_INT(w[2].r = sweeper_park_write(&w[2].req, SIZE), 0);
	fakefuse_interrupt(&w[2].req);
	w[2].want = EINTR;
	CHECK_INT(fakefuse_replies(&w[2].req), 1);
	let_one_through();
	CHECK(fakefuse_wait_reply(&w[1].req, WAIT_MS));
	wait_held(); /* sweep 3, asked by w[2] */
	let_one_through();
	CHECK_INT(w[3].r = sweeper_park_write(&w[3].req, SIZE), 0);
	wait_held(); /* sweep 4: sweep 3 has answered its writers */
	tickets(UINT_MAX);
	writers_check(w, 4, 0);
}

/* SWEEPER_WRITERS_MAX wait; the next is refused (EAGAIN), not parked. */
static void test_too_many_writers(void)
{
	unsigned n = SWEEPER_WRITERS_MAX + 1;
	struct writer *w = writers_new(n);

	tickets(0);
	for (unsigned i = 0; i < n; i++)
		w[i].r = sweeper_park_write(&w[i].req, SIZE);
	CHECK_INT(w[n - 2].r, 0);
	CHECK_INT(w[n - 1].r, -EAGAIN);
	tickets(UINT_MAX);
	writers_check(w, n, EAGAIN);
}

/* -- writers on threads ---------------------------------------------------- */

#define THREADS 8
#define EACH 100

struct thread_writes {
	struct writer *w;   /* EACH of them */
	bool interrupt;     /* every third interrupted as soon as parked */
	void (*midway)(void); /* called halfway, or NULL */
};

static void *write_thread(void *arg)
{
	struct thread_writes *t = arg;

	for (unsigned i = 0; i < EACH; i++) {
		if (i == EACH / 2 && t->midway)
			t->midway();
		t->w[i].r = sweeper_park_write(&t->w[i].req, SIZE);
		if (t->interrupt && i % 3 == 0 && t->w[i].r == 0)
			fakefuse_interrupt(&t->w[i].req);
	}
	return NULL;
}

/* THREADS threads, EACH writes each, into w. */
static void run_threads(struct writer *w, bool interrupt, void (*midway)(void))
{
	struct thread_writes t[THREADS];
	pthread_t id[THREADS];

	for (unsigned i = 0; i < THREADS; i++) {
		t[i] = (struct thread_writes){ .w = w + i * EACH, .interrupt = interrupt,
					       .midway = i ? NULL : midway };
		pthread_create(&id[i], NULL, write_thread, &t[i]);
	}
	for (unsigned i = 0; i < THREADS; i++)
		pthread_join(id[i], NULL);
}

/* Threads writing while sweeps come and go: each write answered once,
 * by its sweep or (every third) by its interrupt. */
static void test_threads(void)
{
	struct writer *w = writers_new(THREADS * EACH);
	unsigned bad = 0;
	int wait = WAIT_MS;

	tickets(UINT_MAX);
	run_threads(w, true, NULL);
	for (unsigned i = 0; i < THREADS * EACH; i++) {
		bool replied = w[i].r == 0 && fakefuse_wait_reply(&w[i].req, wait);
		int err = w[i].req.err;

		if (!replied)
			wait = 0;
		if (!replied || fakefuse_replies(&w[i].req) != 1 ||
		    (err != 0 && !(err == EINTR && (i % EACH) % 3 == 0)))
			bad++;
		fakefuse_destroy(&w[i].req);
	}
	CHECK_INT(bad, 0);
	free(w);
}

/* Shutdown answers the writes waiting (ENODEV), those parked as it comes
 * too, and refuses those after it. */
static void test_shutdown(void)
{
	unsigned n = 1 + THREADS * EACH + 1;
	struct writer *w = writers_new(n);

	for (unsigned i = 0; i < n; i++)
		w[i].want = ENODEV;
	tickets(0);
	CHECK_INT(w[0].r = sweeper_park_write(&w[0].req, SIZE), 0);
	wait_held();
	run_threads(w + 1, false, sweeper_shutdown);
	CHECK_INT(w[n - 1].r = sweeper_park_write(&w[n - 1].req, SIZE), -ENODEV);
	writers_check(w, n, ENODEV);
	tickets(UINT_MAX);
	sweeper_stop();
}

int main(void)
{
	const struct sweeper_hooks hooks = { .judge = judge, .swap = nothing,
					     .settled = nothing };

	CHECK_INT(sweeper_configure(0, 0, 0, NULL, 0), 0);
	CHECK_INT(sweeper_start(&hooks, no_ports), 0);
	test_answered_after_their_sweep();
	test_too_many_writers();
	test_threads();
	test_shutdown(); /* the last: shutdown is for good */
	CHECK_DONE();
}
