/* The sweeps (sweeper.h): the sweep thread, the port it goes out of, the
 * current snapshot and its swap, and the writes of fabric/sweep parked
 * until their sweep is complete.
 *
 * A parked write follows readq.c's protocol for parked reads: its
 * interrupt callback is registered before it is parked; one that comes
 * first only sets a flag, one that comes later takes it off the list and
 * replies EINTR; the sweep thread takes it off the list under fab.lock,
 * then waits out a running callback (fuse_req_interrupt_func(req, NULL,
 * NULL), never under fab.lock) before it replies. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/base/clock.h"
#include "umadfs/device/device.h"
#include "umadfs/engine/query.h"
#include "umadfs/fabric/discover.h"
#include "umadfs/fabric/fabsnap.h"
#include "umadfs/fabric/fabtext.h"
#include "umadfs/fabric/refresh.h"
#include "umadfs/fabric/sweeper.h"

#define FIRST_SWEEP_WAIT_S 60 /* a first reader waits at most this long */
#define AGAIN_TRIES 10 /* a refresh asked again (refresh.h) this many times at most */

struct parked_write {
	struct parked_write *next;
	fuse_req_t req;
	size_t size;      /* what the write answers */
	uint64_t number;  /* the sweep it waits for */
	bool parked;      /* on fab.writers (fab.lock) */
	bool interrupted; /* the interrupt came before parking (fab.lock) */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;     /* the sweep thread: asked, interval, stop */
	pthread_cond_t done;     /* first readers: a sweep completed, or stop */
	struct fab_snap *snap;   /* the current snapshot (lock) */
	uint64_t started, completed; /* sweeps, by number (lock) */
	bool asked, running, stopping; /* (lock) */
	struct parked_write *writers; /* (lock) */
	/* Nodes to refresh (traps, actions); a full list asks a sweep. */
	struct refresh_ask asks[SWEEPER_ASKS_MAX]; /* (lock) */
	unsigned nasks;          /* (lock) */
	/* Asked again at again_ms: ports the SM brings up, or that changed
	 * (refresh_run() says when). */
	struct refresh_ask again[SWEEPER_ASKS_MAX]; /* (lock) */
	unsigned nagain, again_tries; /* (lock) */
	int64_t again_ms;        /* CLOCK_MONOTONIC (lock) */
	int64_t due_ms;          /* the next timed sweep (CLOCK_MONOTONIC), 0:
				  * from the next wait on (lock) */
	unsigned nwriters;       /* on writers (lock) */
	unsigned interval_ms;    /* (lock) */
	unsigned interval_min_ms; /* the floor of interval_ms but 0 (option) */
	struct discover *disc;   /* the sweep thread's */
	pthread_t thread;
	bool thread_started;
	/* Before the swap: what the new snapshot is judged by (old: the
	 * current one, or NULL); after it: the files follow. */
	void (*on_judge)(const struct fab_snap *old, struct fab_snap *snap);
	void (*on_swap)(struct fab_snap *old, struct fab_snap *snap);
	sweeper_ports_fn ports; /* the host's ports now */
	/* Options, set before the thread starts. */
	char port_ca[UMAD_CA_NAME_LEN]; /* "": the first ACTIVE port */
	int port_num;
} fab = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

/* Whether port p is the one to sweep out of. */
static bool usable_port(struct ca_port *p)
{
	uint8_t data[IB_SMP_DATA_SIZE];

	if (fab.port_ca[0])
		return !strcmp(p->ca->name, fab.port_ca) && p->portnum == fab.port_num;
	if (ca_port_smp_get(p, IB_ATTR_PORT_INFO, (unsigned)p->portnum, data) < 0)
		return false;
	return mad_get_field(data, 0, IB_PORT_STATE_F) == 4; /* ACTIVE */
}

/* The port to sweep out of, or NULL with the reason in snap->error. */
static struct ca_port *pick_port(struct fab_snap *snap)
{
	struct ca_port *ports[64];
	int n = fab.ports(ports, 64);

	for (int i = 0; i < n; i++) {
		if (usable_port(ports[i])) {
			snprintf(snap->via, sizeof(snap->via), "%s/%d",
				 ports[i]->ca->name, ports[i]->portnum);
			return ports[i];
		}
	}
	if (fab.port_ca[0])
		snprintf(snap->error, sizeof(snap->error),
			 "port %s/%d not found", fab.port_ca, fab.port_num);
	else
		snprintf(snap->error, sizeof(snap->error), "no ACTIVE port");
	return NULL;
}

struct ca_port *sweeper_port(const struct fab_snap *snap)
{
	struct ca_port *ports[64];
	int n = fab.ports(ports, 64);
	char name[sizeof(snap->via)];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s/%d", ports[i]->ca->name,
			 ports[i]->portnum);
		if (!strcmp(name, snap->via))
			return ports[i];
	}
	return NULL;
}

/* Discovery out of port, its engine held (a CA removed meanwhile waits
 * for the sweep, whose requests then time out). */
static int sweep_port(struct ca_port *port, const struct fab_snap *prev,
		      struct fab_snap *snap)
{
	int err = 0;
	struct mad_engine *e = ca_port_engine(port, &err);
	int r;

	if (!e) {
		snprintf(snap->error, sizeof(snap->error), "%s: %s", snap->via,
			 strerror(-err));
		return 0;
	}
	r = discover_run(fab.disc, e, prev, snap, QUERY_TIMEOUT_MS, QUERY_RETRIES);
	ca_port_engine_done(port);
	if (r == 0 && !snap->nnodes)
		snprintf(snap->error, sizeof(snap->error),
			 "the local port's SMA did not answer");
	return r;
}

/* One sweep into a new snapshot, prev the current one (or NULL); NULL
 * when stopped (or out of memory). */
static struct fab_snap *sweep_once(const struct fab_snap *prev)
{
	struct fab_snap *snap = fabsnap_new();
	int64_t start = clock_now_ms();
	struct ca_port *port;

	if (!snap)
		return NULL;
	port = pick_port(snap);
	if (port && sweep_port(port, prev, snap) < 0) {
		fabsnap_put(snap);
		return NULL;
	}
	snap->ok = snap->nnodes > 0;
	fabsnap_count(snap);
	clock_gettime(CLOCK_REALTIME, &snap->time);
	snap->mono_ms = clock_now_ms();
	snap->duration_ms = (unsigned)(snap->mono_ms - start);
	return snap;
}

/* Queues a refresh of a, unless it is queued already; the last slot
 * full makes try_refresh() sweep instead.  fab.lock held. */
static void ask_refresh(const struct refresh_ask *a)
{
	for (unsigned i = 0; i < fab.nasks; i++)
		if (fab.asks[i].guid == a->guid && fab.asks[i].lid == a->lid) {
			fab.asks[i].desc |= a->desc;
			fab.asks[i].gone &= a->gone;
			return;
		}
	if (fab.nasks < SWEEPER_ASKS_MAX)
		fab.asks[fab.nasks++] = *a;
}

/* The refreshes asked again are due: asked now.  fab.lock held. */
static void again_due(void)
{
	for (unsigned i = 0; i < fab.nagain; i++)
		ask_refresh(&fab.again[i]);
	fab.nagain = 0;
}

/* Waits (lock held) until a sweep or refresh is asked for, the interval
 * passed since the last sweep (refreshes do not put it off), a refresh is
 * due again, or stop; true to work. */
static bool wait_for_work(void)
{
	while (!fab.asked && !fab.nasks && !fab.stopping) {
		int64_t now = clock_now_ms(), until_ms = -1;

		if (fab.interval_ms && !fab.due_ms)
			fab.due_ms = now + fab.interval_ms;
		if (fab.interval_ms && now >= fab.due_ms) {
			fab.asked = true;
			break;
		}
		if (fab.nagain && now >= fab.again_ms) {
			again_due();
			break;
		}
		if (fab.interval_ms)
			until_ms = fab.due_ms;
		if (fab.nagain && (until_ms < 0 || fab.again_ms < until_ms))
			until_ms = fab.again_ms;
		if (until_ms < 0) {
			pthread_cond_wait(&fab.wake, &fab.lock);
			continue;
		}
		clock_wait_until(&fab.wake, &fab.lock, until_ms);
	}
	return !fab.stopping;
}

/* Takes off the list the writers whose sweep is complete, or all.
 * fab.lock held. */
static struct parked_write *take_writers(bool all)
{
	struct parked_write *done = NULL, **pp = &fab.writers;

	while (*pp) {
		struct parked_write *w = *pp;

		if (!all && w->number > fab.completed) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		w->parked = false;
		w->next = done;
		done = w;
		fab.nwriters--;
	}
	return done;
}

/* Answers writers taken off the list: done, or err.  No lock held. */
static void answer_writers(struct parked_write *list, int err)
{
	while (list) {
		struct parked_write *w = list;

		list = w->next;
		fuse_req_interrupt_func(w->req, NULL, NULL);
		if (err)
			fuse_reply_err(w->req, err);
		else
			fuse_reply_write(w->req, w->size);
		free(w);
	}
}

/* Judges snap and makes it current; returns the snapshot before. */
static struct fab_snap *install(struct fab_snap *snap)
{
	struct fab_snap *old;

	/* fab.snap changes on this thread only: read without the lock. */
	fab.on_judge(fab.snap, snap);
	pthread_mutex_lock(&fab.lock);
	old = fab.snap;
	fab.snap = snap;
	pthread_mutex_unlock(&fab.lock);
	fab.on_swap(old, snap);
	return old;
}

static bool stopping(void)
{
	bool stop;

	pthread_mutex_lock(&fab.lock);
	stop = fab.stopping;
	pthread_mutex_unlock(&fab.lock);
	return stop;
}

/* The nodes asked for, again, into a snapshot after prev (refresh.c);
 * NULL when only a sweep will do. */
static struct fab_snap *refresh_once(const struct fab_snap *prev,
				     const struct refresh_ask *asks, size_t n,
				     unsigned *again_ms)
{
	struct ca_port *port = sweeper_port(prev);
	int64_t start = clock_now_ms();
	struct fab_snap *snap;
	struct mad_engine *e;
	bool need_sweep;
	int err;

	e = port ? ca_port_engine(port, &err) : NULL;
	if (!e)
		return NULL;
	snap = refresh_run(e, prev, asks, n, stopping, &need_sweep, again_ms);
	ca_port_engine_done(port);
	if (!snap)
		return NULL;
	/* Its time is the change's; its clock (age, sm_stalled) the sweep's. */
	clock_gettime(CLOCK_REALTIME, &snap->time);
	snap->duration_ms = (unsigned)(clock_now_ms() - start);
	snap->refreshes = prev->refreshes + 1;
	return snap;
}

/* A refresh, when asked and there is a snapshot to refresh; false when a
 * sweep must be made instead.  fab.lock held (dropped meanwhile). */
static bool try_refresh(void)
{
	struct refresh_ask asks[SWEEPER_ASKS_MAX];
	unsigned n = fab.nasks;
	struct fab_snap *snap, *old;
	unsigned again = 0;

	if (fab.asked || !n || n >= SWEEPER_ASKS_MAX || !fab.snap || !fab.snap->ok)
		return false;
	memcpy(asks, fab.asks, n * sizeof(asks[0]));
	fab.nasks = 0;
	pthread_mutex_unlock(&fab.lock);
	snap = refresh_once(fab.snap, asks, n, &again);
	if (snap) {
		old = install(snap);
		fabtext_make_ahead(snap, old);
		fabsnap_put(old);
	}
	pthread_mutex_lock(&fab.lock);
	if (snap && again && fab.again_tries < AGAIN_TRIES) {
		fab.again_tries++;
		fab.again_ms = clock_now_ms() + again;
		for (unsigned i = 0; i < n && fab.nagain < SWEEPER_ASKS_MAX; i++)
			fab.again[fab.nagain++] = asks[i];
	} else if (snap && !again) {
		fab.again_tries = 0;
	}
	return snap != NULL;
}

static void *sweep_thread(void *arg)
{
	pthread_mutex_lock(&fab.lock);
	while (wait_for_work()) {
		struct fab_snap *snap, *old = NULL;
		uint64_t number;
		struct parked_write *done;

		if (try_refresh())
			continue;
		number = ++fab.started;
		fab.asked = false;
		fab.nasks = fab.nagain = fab.again_tries = 0; /* the sweep asks all */
		fab.due_ms = 0; /* the period runs from this sweep */
		fab.running = true;
		pthread_mutex_unlock(&fab.lock);
		snap = sweep_once(fab.snap);
		if (snap)
			old = install(snap);
		pthread_mutex_lock(&fab.lock);
		fab.running = false;
		fab.completed = number;
		pthread_cond_broadcast(&fab.done);
		done = take_writers(false);
		pthread_mutex_unlock(&fab.lock);
		answer_writers(done, 0);
		if (snap && old)
			fabtext_make_ahead(snap, old);
		fabsnap_put(old);
		pthread_mutex_lock(&fab.lock);
	}
	pthread_mutex_unlock(&fab.lock);
	return NULL;
}

void sweeper_refresh(const struct refresh_ask *a)
{
	pthread_mutex_lock(&fab.lock);
	ask_refresh(a);
	pthread_cond_signal(&fab.wake);
	pthread_mutex_unlock(&fab.lock);
}

void sweeper_refresh_node(uint64_t guid)
{
	struct refresh_ask a = { .guid = guid };

	sweeper_refresh(&a);
}

int sweeper_start(void (*on_judge)(const struct fab_snap *old, struct fab_snap *snap),
		  void (*on_swap)(struct fab_snap *old, struct fab_snap *snap),
		  sweeper_ports_fn ports)
{
	int r;

	fab.on_judge = on_judge;
	fab.on_swap = on_swap;
	fab.ports = ports;
	fab.disc = discover_new();
	if (!fab.disc)
		return -ENOMEM;
	r = -pthread_create(&fab.thread, NULL, sweep_thread, NULL);
	if (r < 0)
		return r;
	fab.thread_started = true;
	return 0;
}

void sweeper_shutdown(void)
{
	struct parked_write *writers;

	pthread_mutex_lock(&fab.lock);
	fab.stopping = true;
	pthread_cond_broadcast(&fab.wake);
	pthread_cond_broadcast(&fab.done);
	writers = take_writers(true);
	pthread_mutex_unlock(&fab.lock);
	answer_writers(writers, ENODEV);
	if (fab.disc)
		discover_abort(fab.disc);
}

void sweeper_stop(void)
{
	sweeper_shutdown();
	if (fab.thread_started)
		pthread_join(fab.thread, NULL);
	fab.thread_started = false;
	fabsnap_put(fab.snap);
	fab.snap = NULL;
	discover_free(fab.disc);
	fab.disc = NULL;
}

int sweeper_configure(unsigned interval_ms, unsigned interval_min_ms,
		      const char *ca, int portnum)
{
	if (ca && strlen(ca) >= sizeof(fab.port_ca))
		return -EINVAL;
	fab.interval_ms = interval_ms;
	fab.interval_min_ms = interval_min_ms;
	snprintf(fab.port_ca, sizeof(fab.port_ca), "%s", ca ? ca : "");
	fab.port_num = portnum;
	return 0;
}

/* Asks for a sweep that starts after now and returns its number (lock). */
static uint64_t ask_sweep(void)
{
	fab.asked = true;
	pthread_cond_signal(&fab.wake);
	return fab.started + 1;
}

struct fab_snap *sweeper_snapshot(void)
{
	struct fab_snap *snap;

	pthread_mutex_lock(&fab.lock);
	snap = fab.snap;
	if (snap)
		fabsnap_get(snap);
	pthread_mutex_unlock(&fab.lock);
	return snap;
}

static void on_first_interrupt(fuse_req_t req, void *data)
{
	pthread_mutex_lock(&fab.lock);
	*(bool *)data = true;
	pthread_cond_broadcast(&fab.done);
	pthread_mutex_unlock(&fab.lock);
}

int sweeper_first_snapshot(fuse_req_t req, struct fab_snap **out)
{
	bool interrupted = false;
	int64_t until;
	uint64_t number;

	/* Before the lock: it calls on_first_interrupt at once if already
	 * interrupted. */
	fuse_req_interrupt_func(req, on_first_interrupt, &interrupted);
	pthread_mutex_lock(&fab.lock);
	if (!fab.snap && !fab.stopping) {
		number = fab.running ? fab.started : ask_sweep();
		until = clock_now_ms() + FIRST_SWEEP_WAIT_S * 1000;
		while (fab.completed < number && !fab.stopping && !interrupted &&
		       clock_wait_until(&fab.done, &fab.lock, until) != ETIMEDOUT)
			;
	}
	*out = interrupted ? NULL : fab.snap;
	if (*out)
		fabsnap_get(*out);
	pthread_mutex_unlock(&fab.lock);
	/* No interrupt may reach our stack once we return. */
	fuse_req_interrupt_func(req, NULL, NULL);
	return interrupted ? -EINTR : 0;
}

static void on_write_interrupt(fuse_req_t req, void *data)
{
	struct parked_write *w = data, **pp;
	bool reply = false;

	pthread_mutex_lock(&fab.lock);
	if (w->parked) {
		for (pp = &fab.writers; *pp != w; pp = &(*pp)->next)
			;
		*pp = w->next;
		fab.nwriters--;
		reply = true;
	} else {
		w->interrupted = true;
	}
	pthread_mutex_unlock(&fab.lock);
	if (reply) {
		fuse_reply_err(req, EINTR);
		free(w);
	}
}

int sweeper_park_write(fuse_req_t req, size_t size)
{
	struct parked_write *w = calloc(1, sizeof(*w));
	int err = 0;

	if (!w)
		return -ENOMEM;
	w->req = req;
	w->size = size;
	fuse_req_interrupt_func(req, on_write_interrupt, w);
	pthread_mutex_lock(&fab.lock);
	if (w->interrupted)
		err = EINTR;
	else if (fab.stopping)
		err = ENODEV;
	else if (fab.nwriters >= SWEEPER_WRITERS_MAX)
		err = EAGAIN;
	if (!err) {
		w->number = ask_sweep();
		w->parked = true;
		w->next = fab.writers;
		fab.writers = w;
		fab.nwriters++;
	}
	pthread_mutex_unlock(&fab.lock);
	if (!err)
		return 0;
	/* Waits out a running callback, which will not reply: not parked. */
	fuse_req_interrupt_func(req, NULL, NULL);
	free(w);
	return -err;
}

unsigned sweeper_interval_ms(void)
{
	unsigned ms;

	pthread_mutex_lock(&fab.lock);
	ms = fab.interval_ms;
	pthread_mutex_unlock(&fab.lock);
	return ms;
}

int sweeper_set_interval_ms(unsigned ms, char *why, size_t cap)
{
	unsigned last;
	int r = 0;

	pthread_mutex_lock(&fab.lock);
	last = fab.snap ? fab.snap->duration_ms : 0;
	if (ms && ms < fab.interval_min_ms) {
		snprintf(why, cap, "%u ms is below the floor of %u ms (mount option "
			 "fabric_interval_min=); 0 sweeps only when asked", ms,
			 fab.interval_min_ms);
		r = -EINVAL;
	} else if (ms && ms < last) {
		snprintf(why, cap, "%u ms is shorter than the last sweep (%u ms): "
			 "sweeps would run back to back", ms, last);
		r = -EINVAL;
	} else {
		fab.interval_ms = ms;
		fab.due_ms = 0;
		pthread_cond_signal(&fab.wake);
	}
	pthread_mutex_unlock(&fab.lock);
	return r;
}
