/* The sweeps (sweeper.h): the sweep thread, the port it goes out of, the
 * current snapshot and its swap, the light sweeps between sweeps, and the
 * writes of fabric/sweep waiting for their sweep (each a parked write of
 * fuse/parkedwrite.c, answered once: by the sweep thread when its sweep is
 * complete, or by an interrupt). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/base/clock.h"
#include "umadfs/device/device.h"
#include "umadfs/engine/query.h"
#include "umadfs/fabric/snapshot/discover.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/lightsweep.h"
#include "umadfs/fabric/snapshot/refresh.h"
#include "umadfs/fabric/watch/sweeper.h"
#include "umadfs/fuse/parkedwrite.h"
#include "umadfs/mad/ibcodes.h"

#define FIRST_SWEEP_WAIT_S 60 /* a first reader waits at most this long */
#define AGAIN_TRIES 10 /* a refresh asked again (refresh.h) this many times at most */

/* A write of fabric/sweep waiting for its sweep. */
struct sweep_writer {
	struct sweep_writer *next;
	struct parked_write *pw;
	uint64_t number;  /* the sweep it waits for */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;     /* the sweep thread: asked, interval, stop */
	pthread_cond_t done;     /* first readers: a sweep completed, or stop */
	struct fab_snap *snap;   /* the current snapshot (lock) */
	uint64_t started, completed; /* sweeps, by number (lock) */
	bool asked, running, stopping; /* (lock) */
	bool light_now;          /* a light sweep is due (lock) */
	bool sm_silent;          /* the master stopped answering (lock) */
	struct sweep_writer *writers; /* (lock) */
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
	unsigned light_ms;       /* the light sweep's cycle, 0: off (option) */
	int64_t light_due_ms;    /* the next light sweep (CLOCK_MONOTONIC), 0:
				  * none due (lock) */
	struct discover *disc;   /* the sweep thread's */
	struct lightsweep *light; /* the sweep thread's */
	pthread_t thread;
	bool thread_started;
	/* Before the swap: what the new snapshot is judged by (old: the
	 * current one, or NULL); after it: the files follow. */
	struct sweeper_hooks hooks;
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
	return mad_get_field(data, 0, IB_PORT_STATE_F) == IB_LINK_ACTIVE;
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

/* Whether light sweeps run now: on, a complete snapshot to check, and no
 * timed sweeps as often as a light sweep's cycle.  fab.lock held. */
static bool light_on(void)
{
	return fab.light_ms && fab.snap && fab.snap->ok &&
	       !(fab.interval_ms && fab.interval_ms <= fab.light_ms);
}

/* The earlier of two deadlines, -1 being none. */
static int64_t earlier(int64_t a, int64_t b)
{
	return a < 0 || (b >= 0 && b < a) ? b : a;
}

/* Waits (lock held) until a sweep or refresh is asked for, the interval
 * passed since the last sweep (refreshes do not put it off), a refresh is
 * due again, a light sweep is due, or stop; true to work. */
static bool wait_for_work(void)
{
	while (!fab.asked && !fab.nasks && !fab.light_now && !fab.stopping) {
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
		if (!light_on())
			fab.light_due_ms = 0;
		else if (!fab.light_due_ms)
			fab.light_due_ms = now + LIGHTSWEEP_PERIOD_MS;
		if (fab.light_due_ms && now >= fab.light_due_ms) {
			fab.light_now = true;
			break;
		}
		if (fab.interval_ms)
			until_ms = fab.due_ms;
		if (fab.nagain)
			until_ms = earlier(until_ms, fab.again_ms);
		if (fab.light_due_ms)
			until_ms = earlier(until_ms, fab.light_due_ms);
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
static struct sweep_writer *take_writers(bool all)
{
	struct sweep_writer *done = NULL, **pp = &fab.writers;

	while (*pp) {
		struct sweep_writer *w = *pp;

		if (!all && w->number > fab.completed) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		w->next = done;
		done = w;
		fab.nwriters--;
	}
	return done;
}

/* Answers writers taken off the list: done, or err.  No lock held. */
static void answer_writers(struct sweep_writer *list, int err)
{
	while (list) {
		struct sweep_writer *w = list;

		list = w->next;
		parked_write_answer(w->pw, err);
		free(w);
	}
}

/* Judges snap and makes it current; returns the snapshot before.  seen_ms:
 * when all its ports were asked (a sweep's start), 0 for a refresh's. */
static struct fab_snap *install(struct fab_snap *snap, int64_t seen_ms)
{
	struct fab_snap *old;

	/* fab.snap changes on this thread only: read without the lock. */
	fab.hooks.judge(fab.snap, snap);
	pthread_mutex_lock(&fab.lock);
	old = fab.snap;
	fab.snap = snap;
	pthread_mutex_unlock(&fab.lock);
	fab.hooks.swap(old, snap);
	/* Without memory for its ports the light sweep watches none. */
	if (lightsweep_watch(fab.light, snap, seen_ms) < 0)
		lightsweep_watch(fab.light, NULL, 0);
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
 * NULL when only a sweep will do (*need_sweep) or nothing changed. */
static struct fab_snap *refresh_once(const struct fab_snap *prev,
				     const struct refresh_ask *asks, size_t n,
				     unsigned *again_ms, bool *need_sweep)
{
	struct ca_port *port = sweeper_port(prev);
	int64_t start = clock_now_ms();
	struct fab_snap *snap;
	struct mad_engine *e;
	int err;

	*need_sweep = true;
	e = port ? ca_port_engine(port, &err) : NULL;
	if (!e)
		return NULL;
	snap = refresh_run(e, prev, asks, n, stopping, need_sweep, again_ms);
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
	bool need_sweep;

	if (fab.asked || !n || n >= SWEEPER_ASKS_MAX || !fab.snap || !fab.snap->ok)
		return false;
	memcpy(asks, fab.asks, n * sizeof(asks[0]));
	fab.nasks = 0;
	pthread_mutex_unlock(&fab.lock);
	snap = refresh_once(fab.snap, asks, n, &again, &need_sweep);
	if (snap) {
		old = install(snap, 0);
		fab.hooks.settled(old, snap);
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
	return snap || !need_sweep;
}

/* The current snapshot without its SMs, made current at once: the master
 * did not answer the traps thread's SMInfo (the sweep asked with it will
 * ask again).  fab.lock held (dropped meanwhile). */
static void sm_silent_once(void)
{
	struct fab_snap *snap, *old;

	fab.sm_silent = false;
	if (!fab.snap || !fab.snap->ok)
		return;
	pthread_mutex_unlock(&fab.lock);
	snap = fabsnap_copy(fab.snap, NULL, NULL);
	if (snap) {
		free(snap->sms);
		snap->sms = NULL;
		snap->nsms = 0;
		snap->stats.mads = 0;
		snap->refreshes = fab.snap->refreshes + 1;
		clock_gettime(CLOCK_REALTIME, &snap->time);
		old = install(snap, 0);
		fab.hooks.settled(old, snap);
		fabsnap_put(old);
	}
	pthread_mutex_lock(&fab.lock);
}

/* A light sweep of the current snapshot; the nodes it finds changed are
 * asked to be refreshed.  fab.lock held (dropped meanwhile). */
static void light_once(void)
{
	struct refresh_ask asks[SWEEPER_ASKS_MAX];
	struct ca_port *port = sweeper_port(fab.snap);
	struct mad_engine *e;
	int n = 0, err;

	fab.light_now = false;
	fab.light_due_ms = clock_now_ms() + LIGHTSWEEP_PERIOD_MS;
	pthread_mutex_unlock(&fab.lock);
	e = port ? ca_port_engine(port, &err) : NULL;
	if (e) {
		n = lightsweep_run(fab.light, e, fab.light_ms, asks, SWEEPER_ASKS_MAX);
		ca_port_engine_done(port);
	}
	pthread_mutex_lock(&fab.lock);
	for (int i = 0; i < n; i++)
		ask_refresh(&asks[i]);
}

static void *sweep_thread(void *arg)
{
	pthread_mutex_lock(&fab.lock);
	while (wait_for_work()) {
		struct fab_snap *snap, *old = NULL;
		uint64_t number;
		struct sweep_writer *done;

		if (fab.sm_silent) {
			sm_silent_once();
			continue;
		}
		if (fab.light_now && !fab.asked) {
			light_once();
			continue;
		}
		if (try_refresh())
			continue;
		number = ++fab.started;
		fab.asked = fab.light_now = fab.sm_silent = false;
		fab.nasks = fab.nagain = fab.again_tries = 0; /* the sweep asks all */
		fab.due_ms = 0; /* the period runs from this sweep */
		fab.running = true;
		pthread_mutex_unlock(&fab.lock);
		snap = sweep_once(fab.snap);
		if (snap)
			old = install(snap, snap->mono_ms - snap->duration_ms);
		pthread_mutex_lock(&fab.lock);
		fab.running = false;
		fab.completed = number;
		pthread_cond_broadcast(&fab.done);
		done = take_writers(false);
		pthread_mutex_unlock(&fab.lock);
		answer_writers(done, 0);
		if (snap)
			fab.hooks.settled(old, snap);
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

int sweeper_start(const struct sweeper_hooks *hooks, sweeper_ports_fn ports)
{
	int r;

	fab.hooks = *hooks;
	fab.ports = ports;
	fab.disc = discover_new();
	fab.light = lightsweep_new();
	if (!fab.disc || !fab.light)
		return -ENOMEM;
	r = -pthread_create(&fab.thread, NULL, sweep_thread, NULL);
	if (r < 0)
		return r;
	fab.thread_started = true;
	return 0;
}

void sweeper_shutdown(void)
{
	struct sweep_writer *writers;

	pthread_mutex_lock(&fab.lock);
	fab.stopping = true;
	pthread_cond_broadcast(&fab.wake);
	pthread_cond_broadcast(&fab.done);
	writers = take_writers(true);
	pthread_mutex_unlock(&fab.lock);
	answer_writers(writers, ENODEV);
	if (fab.disc)
		discover_abort(fab.disc);
	if (fab.light)
		lightsweep_abort(fab.light);
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
	lightsweep_free(fab.light);
	fab.light = NULL;
}

int sweeper_configure(unsigned interval_ms, unsigned interval_min_ms,
		      unsigned light_ms, const char *ca, int portnum)
{
	if (ca && strlen(ca) >= sizeof(fab.port_ca))
		return -EINVAL;
	fab.interval_ms = interval_ms;
	fab.light_ms = light_ms;
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

void sweeper_sm_silent(void)
{
	pthread_mutex_lock(&fab.lock);
	if (fab.snap) {
		fab.sm_silent = true;
		ask_sweep();
	}
	pthread_mutex_unlock(&fab.lock);
}

void sweeper_sweep(void)
{
	pthread_mutex_lock(&fab.lock);
	if (fab.snap)
		ask_sweep();
	pthread_mutex_unlock(&fab.lock);
}

int sweeper_guard_text(char *buf, size_t cap, bool traps)
{
	struct lightsweep_stats st = { 0 };
	char guard[64] = "";
	bool light;
	int n;

	pthread_mutex_lock(&fab.lock);
	light = light_on() || (!fab.snap && fab.light_ms);
	if (traps)
		strcat(guard, "+traps");
	if (light)
		strcat(guard, "+light_sweep");
	if (fab.interval_ms)
		strcat(guard, "+sweeps");
	if (fab.light)
		lightsweep_stats(fab.light, &st);
	pthread_mutex_unlock(&fab.lock);
	n = snprintf(buf, cap, "guard %s\nlight_sweep_ms %u\nlight_sweeps %" PRIu64
		     "\nlight_sweep_mads %" PRIu64 "\nlight_sweep_changes %" PRIu64
		     "\nconfirmed_age_ms %" PRId64 "\n", guard[0] ? guard + 1 : "none",
		     light ? fab.light_ms : 0, st.slices, st.mads, st.changes,
		     st.confirmed_ms ? clock_now_ms() - st.confirmed_ms : -1);
	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
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

int sweeper_park_write(fuse_req_t req, size_t size)
{
	struct sweep_writer *w = calloc(1, sizeof(*w));
	int err = 0;

	if (!w)
		return -ENOMEM;
	pthread_mutex_lock(&fab.lock);
	if (fab.stopping)
		err = ENODEV;
	else if (fab.nwriters >= SWEEPER_WRITERS_MAX)
		err = EAGAIN;
	else
		fab.nwriters++; /* its place, before it is parked */
	pthread_mutex_unlock(&fab.lock);
	if (!err && !(w->pw = parked_write_new(req, size)))
		err = ENOMEM;
	if (err) {
		if (err == ENOMEM) {
			pthread_mutex_lock(&fab.lock);
			fab.nwriters--;
			pthread_mutex_unlock(&fab.lock);
		}
		free(w);
		return -err;
	}
	pthread_mutex_lock(&fab.lock);
	if (fab.stopping) { /* after shutdown took the writers */
		fab.nwriters--;
		pthread_mutex_unlock(&fab.lock);
		answer_writers(w, ENODEV);
		return 0;
	}
	w->number = ask_sweep();
	w->next = fab.writers;
	fab.writers = w;
	pthread_mutex_unlock(&fab.lock);
	return 0;
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
