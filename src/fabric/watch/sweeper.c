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
	struct parkedwrite *pw;
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
	int portnum;
} sw = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

/* Whether port p is the one to sweep out of. */
static bool usable_port(struct ca_port *p)
{
	uint8_t data[IB_SMP_DATA_SIZE];

	if (sw.port_ca[0])
		return !strcmp(p->ca->name, sw.port_ca) && p->portnum == sw.portnum;
	if (ca_port_smp_get(p, IB_ATTR_PORT_INFO, (unsigned)p->portnum, data) < 0)
		return false;
	return mad_get_field(data, 0, IB_PORT_STATE_F) == IB_LINK_ACTIVE;
}

/* The port to sweep out of, or NULL with the reason in snap->error. */
static struct ca_port *pick_port(struct fab_snap *snap)
{
	struct ca_port *ports[64];
	int n = sw.ports(ports, 64);

	for (int i = 0; i < n; i++) {
		if (usable_port(ports[i])) {
			snprintf(snap->via, sizeof(snap->via), "%s/%d",
				 ports[i]->ca->name, ports[i]->portnum);
			return ports[i];
		}
	}
	if (sw.port_ca[0])
		snprintf(snap->error, sizeof(snap->error),
			 "port %s/%d not found", sw.port_ca, sw.portnum);
	else
		snprintf(snap->error, sizeof(snap->error), "no ACTIVE port");
	return NULL;
}

struct ca_port *sweeper_port(const struct fab_snap *snap)
{
	struct ca_port *ports[64];
	int n = sw.ports(ports, 64);
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
 * for the sweep, whose requests then time out); guarded: light sweeps
 * guard the view. */
static int sweep_port(struct ca_port *port, const struct fab_snap *prev,
		      struct fab_snap *snap, bool guarded)
{
	int err = 0;
	struct mad_engine *e = ca_port_engine(port, &err);
	int r;

	if (!e) {
		snprintf(snap->error, sizeof(snap->error), "%s: %s", snap->via,
			 strerror(-err));
		return 0;
	}
	r = discover_run(sw.disc, e, prev, snap, QUERY_TIMEOUT_MS, QUERY_RETRIES,
			 guarded);
	ca_port_engine_done(port);
	if (r == 0 && !snap->nnodes)
		snprintf(snap->error, sizeof(snap->error),
			 "the local port's SMA did not answer");
	return r;
}

/* One sweep into a new snapshot, prev the current one (or NULL); NULL
 * when stopped (or out of memory). */
static struct fab_snap *sweep_once(const struct fab_snap *prev, bool guarded)
{
	struct fab_snap *snap = fabsnap_new();
	int64_t start = clock_now_ms();
	struct ca_port *port;

	if (!snap)
		return NULL;
	port = pick_port(snap);
	if (port && sweep_port(port, prev, snap, guarded) < 0) {
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
 * full makes try_refresh() sweep instead.  sw.lock held. */
static void ask_refresh(const struct refresh_ask *a)
{
	for (unsigned i = 0; i < sw.nasks; i++)
		if (sw.asks[i].guid == a->guid && sw.asks[i].lid == a->lid) {
			sw.asks[i].desc |= a->desc;
			sw.asks[i].gone &= a->gone;
			return;
		}
	if (sw.nasks < SWEEPER_ASKS_MAX)
		sw.asks[sw.nasks++] = *a;
}

/* The refreshes asked again are due: asked now.  sw.lock held. */
static void again_due(void)
{
	for (unsigned i = 0; i < sw.nagain; i++)
		ask_refresh(&sw.again[i]);
	sw.nagain = 0;
}

/* Whether light sweeps run now: on, a complete snapshot to check, and no
 * timed sweeps as often as a light sweep's cycle.  sw.lock held. */
static bool light_on(void)
{
	return sw.light_ms && sw.snap && sw.snap->ok &&
	       !(sw.interval_ms && sw.interval_ms <= sw.light_ms);
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
	while (!sw.asked && !sw.nasks && !sw.light_now && !sw.stopping) {
		int64_t now = clock_now_ms(), until_ms = -1;

		if (sw.interval_ms && !sw.due_ms)
			sw.due_ms = now + sw.interval_ms;
		if (sw.interval_ms && now >= sw.due_ms) {
			sw.asked = true;
			break;
		}
		if (sw.nagain && now >= sw.again_ms) {
			again_due();
			break;
		}
		if (!light_on())
			sw.light_due_ms = 0;
		else if (!sw.light_due_ms)
			sw.light_due_ms = now + LIGHTSWEEP_PERIOD_MS;
		if (sw.light_due_ms && now >= sw.light_due_ms) {
			sw.light_now = true;
			break;
		}
		if (sw.interval_ms)
			until_ms = sw.due_ms;
		if (sw.nagain)
			until_ms = earlier(until_ms, sw.again_ms);
		if (sw.light_due_ms)
			until_ms = earlier(until_ms, sw.light_due_ms);
		if (until_ms < 0) {
			pthread_cond_wait(&sw.wake, &sw.lock);
			continue;
		}
		clock_wait_until(&sw.wake, &sw.lock, until_ms);
	}
	return !sw.stopping;
}

/* Takes off the list the writers whose sweep is complete, or all.
 * sw.lock held. */
static struct sweep_writer *take_writers(bool all)
{
	struct sweep_writer *done = NULL, **pp = &sw.writers;

	while (*pp) {
		struct sweep_writer *w = *pp;

		if (!all && w->number > sw.completed) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		w->next = done;
		done = w;
		sw.nwriters--;
	}
	return done;
}

/* Answers writers taken off the list: done, or err.  No lock held. */
static void answer_writers(struct sweep_writer *list, int err)
{
	while (list) {
		struct sweep_writer *w = list;

		list = w->next;
		parkedwrite_answer(w->pw, err);
		free(w);
	}
}

/* Judges snap and makes it current; returns the snapshot before.  seen_ms:
 * when all its ports were asked (a sweep's start), 0 for a refresh's. */
static struct fab_snap *install(struct fab_snap *snap, int64_t seen_ms)
{
	struct fab_snap *old;

	/* sw.snap changes on this thread only: read without the lock. */
	sw.hooks.judge(sw.snap, snap);
	pthread_mutex_lock(&sw.lock);
	old = sw.snap;
	sw.snap = snap;
	pthread_mutex_unlock(&sw.lock);
	sw.hooks.swap(old, snap);
	/* Without memory for its ports the light sweep watches none. */
	if (lightsweep_watch(sw.light, snap, seen_ms) < 0)
		lightsweep_watch(sw.light, NULL, 0);
	return old;
}

bool sweeper_stopping(void)
{
	bool stop;

	pthread_mutex_lock(&sw.lock);
	stop = sw.stopping;
	pthread_mutex_unlock(&sw.lock);
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
	struct refresh_via via = { .get = refresh_engine_get };
	struct fab_snap *snap;
	int err;

	*need_sweep = true;
	via.ctx = port ? ca_port_engine(port, &err) : NULL;
	if (!via.ctx)
		return NULL;
	snap = refresh_run(&via, prev, asks, n, sweeper_stopping, need_sweep, again_ms);
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
 * sweep must be made instead.  sw.lock held (dropped meanwhile). */
static bool try_refresh(void)
{
	struct refresh_ask asks[SWEEPER_ASKS_MAX];
	unsigned n = sw.nasks;
	struct fab_snap *snap, *old;
	unsigned again = 0;
	bool need_sweep;

	if (sw.asked || !n || n >= SWEEPER_ASKS_MAX || !sw.snap || !sw.snap->ok)
		return false;
	memcpy(asks, sw.asks, n * sizeof(asks[0]));
	sw.nasks = 0;
	pthread_mutex_unlock(&sw.lock);
	snap = refresh_once(sw.snap, asks, n, &again, &need_sweep);
	if (snap) {
		old = install(snap, 0);
		sw.hooks.settled(old, snap);
		fabsnap_put(old);
	}
	pthread_mutex_lock(&sw.lock);
	if (snap && again && sw.again_tries < AGAIN_TRIES) {
		sw.again_tries++;
		sw.again_ms = clock_now_ms() + again;
		for (unsigned i = 0; i < n && sw.nagain < SWEEPER_ASKS_MAX; i++)
			sw.again[sw.nagain++] = asks[i];
	} else if (snap && !again) {
		sw.again_tries = 0;
	}
	return snap || !need_sweep;
}

/* The current snapshot without its SMs, made current at once: the master
 * did not answer the traps thread's SMInfo (the sweep asked with it will
 * ask again).  sw.lock held (dropped meanwhile). */
static void sm_silent_once(void)
{
	struct fab_snap *snap, *old;

	sw.sm_silent = false;
	if (!sw.snap || !sw.snap->ok)
		return;
	pthread_mutex_unlock(&sw.lock);
	snap = fabsnap_copy(sw.snap, NULL, NULL);
	if (snap) {
		free(snap->sms);
		snap->sms = NULL;
		snap->nsms = 0;
		fabsnap_refresh_mads(snap, 0);
		snap->refreshes = sw.snap->refreshes + 1;
		clock_gettime(CLOCK_REALTIME, &snap->time);
		old = install(snap, 0);
		sw.hooks.settled(old, snap);
		fabsnap_put(old);
	}
	pthread_mutex_lock(&sw.lock);
}

/* A light sweep of the current snapshot; the nodes it finds changed are
 * asked to be refreshed.  sw.lock held (dropped meanwhile). */
static void light_once(void)
{
	struct refresh_ask asks[SWEEPER_ASKS_MAX];
	struct ca_port *port = sweeper_port(sw.snap);
	struct mad_engine *e;
	int n = 0, err;

	sw.light_now = false;
	sw.light_due_ms = clock_now_ms() + LIGHTSWEEP_PERIOD_MS;
	pthread_mutex_unlock(&sw.lock);
	e = port ? ca_port_engine(port, &err) : NULL;
	if (e) {
		n = lightsweep_run(sw.light, e, sw.light_ms, asks, SWEEPER_ASKS_MAX);
		ca_port_engine_done(port);
	}
	pthread_mutex_lock(&sw.lock);
	for (int i = 0; i < n; i++)
		ask_refresh(&asks[i]);
}

static void *sweep_thread(void *arg)
{
	pthread_mutex_lock(&sw.lock);
	while (wait_for_work()) {
		struct fab_snap *snap, *old = NULL;
		uint64_t number;
		bool guarded;
		struct sweep_writer *done;

		if (sw.sm_silent) {
			sm_silent_once();
			continue;
		}
		if (sw.light_now && !sw.asked) {
			light_once();
			continue;
		}
		if (try_refresh())
			continue;
		number = ++sw.started;
		sw.asked = sw.light_now = sw.sm_silent = false;
		sw.nasks = sw.nagain = sw.again_tries = 0; /* the sweep asks all */
		sw.due_ms = 0; /* the period runs from this sweep */
		sw.running = true;
		guarded = light_on();
		pthread_mutex_unlock(&sw.lock);
		snap = sweep_once(sw.snap, guarded);
		if (snap)
			old = install(snap, snap->mono_ms - snap->duration_ms);
		pthread_mutex_lock(&sw.lock);
		sw.running = false;
		sw.completed = number;
		pthread_cond_broadcast(&sw.done);
		done = take_writers(false);
		pthread_mutex_unlock(&sw.lock);
		answer_writers(done, 0);
		if (snap)
			sw.hooks.settled(old, snap);
		fabsnap_put(old);
		pthread_mutex_lock(&sw.lock);
	}
	pthread_mutex_unlock(&sw.lock);
	return NULL;
}

void sweeper_refresh(const struct refresh_ask *a)
{
	pthread_mutex_lock(&sw.lock);
	ask_refresh(a);
	pthread_cond_signal(&sw.wake);
	pthread_mutex_unlock(&sw.lock);
}

void sweeper_refresh_node(uint64_t guid)
{
	struct refresh_ask a = { .guid = guid };

	sweeper_refresh(&a);
}

int sweeper_start(const struct sweeper_hooks *hooks, sweeper_ports_fn ports)
{
	int r;

	sw.hooks = *hooks;
	sw.ports = ports;
	sw.disc = discover_new();
	sw.light = lightsweep_new();
	if (!sw.disc || !sw.light)
		return -ENOMEM;
	r = -pthread_create(&sw.thread, NULL, sweep_thread, NULL);
	if (r < 0)
		return r;
	sw.thread_started = true;
	return 0;
}

void sweeper_shutdown(void)
{
	struct sweep_writer *writers;

	pthread_mutex_lock(&sw.lock);
	sw.stopping = true;
	pthread_cond_broadcast(&sw.wake);
	pthread_cond_broadcast(&sw.done);
	writers = take_writers(true);
	pthread_mutex_unlock(&sw.lock);
	answer_writers(writers, ENODEV);
	if (sw.disc)
		discover_abort(sw.disc);
	if (sw.light)
		lightsweep_abort(sw.light);
}

void sweeper_stop(void)
{
	sweeper_shutdown();
	if (sw.thread_started)
		pthread_join(sw.thread, NULL);
	sw.thread_started = false;
	fabsnap_put(sw.snap);
	sw.snap = NULL;
	discover_free(sw.disc);
	sw.disc = NULL;
	lightsweep_free(sw.light);
	sw.light = NULL;
}

int sweeper_configure(unsigned interval_ms, unsigned interval_min_ms,
		      unsigned light_ms, const char *ca, int portnum)
{
	if (ca && strlen(ca) >= sizeof(sw.port_ca))
		return -EINVAL;
	sw.interval_ms = interval_ms;
	sw.light_ms = light_ms;
	sw.interval_min_ms = interval_min_ms;
	snprintf(sw.port_ca, sizeof(sw.port_ca), "%s", ca ? ca : "");
	sw.portnum = portnum;
	return 0;
}

/* Asks for a sweep that starts after now and returns its number (lock). */
static uint64_t ask_sweep(void)
{
	sw.asked = true;
	pthread_cond_signal(&sw.wake);
	return sw.started + 1;
}

void sweeper_sm_silent(void)
{
	pthread_mutex_lock(&sw.lock);
	if (sw.snap) {
		sw.sm_silent = true;
		ask_sweep();
	}
	pthread_mutex_unlock(&sw.lock);
}

void sweeper_sweep(void)
{
	pthread_mutex_lock(&sw.lock);
	if (sw.snap)
		ask_sweep();
	pthread_mutex_unlock(&sw.lock);
}

int sweeper_guard_text(char *buf, size_t cap, bool traps)
{
	struct lightsweep_stats st = { 0 };
	char guard[64] = "";
	bool light;
	int n;

	pthread_mutex_lock(&sw.lock);
	light = light_on() || (!sw.snap && sw.light_ms);
	if (traps)
		strcat(guard, "+traps");
	if (light)
		strcat(guard, "+light_sweep");
	if (sw.interval_ms)
		strcat(guard, "+sweeps");
	if (sw.light)
		lightsweep_stats(sw.light, &st);
	pthread_mutex_unlock(&sw.lock);
	n = snprintf(buf, cap, "guard %s\nlight_sweep_ms %u\nlight_sweeps %" PRIu64
		     "\nlight_sweep_mads %" PRIu64 "\nlight_sweep_changes %" PRIu64
		     "\nconfirmed_age_ms %" PRId64 "\n", guard[0] ? guard + 1 : "none",
		     light ? sw.light_ms : 0, st.slices, st.mads, st.changes,
		     st.confirmed_ms ? clock_now_ms() - st.confirmed_ms : -1);
	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
}

struct fab_snap *sweeper_snapshot(void)
{
	struct fab_snap *snap;

	pthread_mutex_lock(&sw.lock);
	snap = sw.snap;
	if (snap)
		fabsnap_get(snap);
	pthread_mutex_unlock(&sw.lock);
	return snap;
}

static void on_first_interrupt(fuse_req_t req, void *data)
{
	pthread_mutex_lock(&sw.lock);
	*(bool *)data = true;
	pthread_cond_broadcast(&sw.done);
	pthread_mutex_unlock(&sw.lock);
}

int sweeper_first_snapshot(fuse_req_t req, struct fab_snap **out)
{
	bool interrupted = false;
	int64_t until;
	uint64_t number;

	/* Before the lock: it calls on_first_interrupt at once if already
	 * interrupted. */
	fuse_req_interrupt_func(req, on_first_interrupt, &interrupted);
	pthread_mutex_lock(&sw.lock);
	if (!sw.snap && !sw.stopping) {
		number = sw.running ? sw.started : ask_sweep();
		until = clock_now_ms() + FIRST_SWEEP_WAIT_S * 1000;
		while (sw.completed < number && !sw.stopping && !interrupted &&
		       clock_wait_until(&sw.done, &sw.lock, until) != ETIMEDOUT)
			;
	}
	*out = interrupted ? NULL : sw.snap;
	if (*out)
		fabsnap_get(*out);
	pthread_mutex_unlock(&sw.lock);
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
	pthread_mutex_lock(&sw.lock);
	if (sw.stopping)
		err = ENODEV;
	else if (sw.nwriters >= SWEEPER_WRITERS_MAX)
		err = EAGAIN;
	else
		sw.nwriters++; /* its place, before it is parked */
	pthread_mutex_unlock(&sw.lock);
	if (!err && !(w->pw = parkedwrite_new(req, size)))
		err = ENOMEM;
	if (err) {
		if (err == ENOMEM) {
			pthread_mutex_lock(&sw.lock);
			sw.nwriters--;
			pthread_mutex_unlock(&sw.lock);
		}
		free(w);
		return -err;
	}
	pthread_mutex_lock(&sw.lock);
	if (sw.stopping) { /* after shutdown took the writers */
		sw.nwriters--;
		pthread_mutex_unlock(&sw.lock);
		answer_writers(w, ENODEV);
		return 0;
	}
	w->number = ask_sweep();
	w->next = sw.writers;
	sw.writers = w;
	pthread_mutex_unlock(&sw.lock);
	return 0;
}

unsigned sweeper_interval_ms(void)
{
	unsigned ms;

	pthread_mutex_lock(&sw.lock);
	ms = sw.interval_ms;
	pthread_mutex_unlock(&sw.lock);
	return ms;
}

int sweeper_set_interval_ms(unsigned ms, char *why, size_t cap)
{
	unsigned last;
	int r = 0;

	pthread_mutex_lock(&sw.lock);
	last = sw.snap ? sw.snap->duration_ms : 0;
	if (ms && ms < sw.interval_min_ms) {
		snprintf(why, cap, "%u ms is below the floor of %u ms (mount option "
			 "fabric_interval_min=); 0 sweeps only when asked", ms,
			 sw.interval_min_ms);
		r = -EINVAL;
	} else if (ms && ms < last) {
		snprintf(why, cap, "%u ms is shorter than the last sweep (%u ms): "
			 "sweeps would run back to back", ms, last);
		r = -EINVAL;
	} else {
		sw.interval_ms = ms;
		sw.due_ms = 0;
		pthread_cond_signal(&sw.wake);
	}
	pthread_mutex_unlock(&sw.lock);
	return r;
}
