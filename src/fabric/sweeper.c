/* The sweeps (sweeper.h): the sweep thread, the port it goes out of, the
 * current snapshot and its swap, and the writers waiting for a sweep. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/ca/device.h"
#include "umadfs/engine/query.h"
#include "umadfs/fabric/discover.h"
#include "umadfs/fabric/fabsnap.h"
#include "umadfs/fabric/fabtext.h"
#include "umadfs/fabric/sweeper.h"

#define FIRST_SWEEP_WAIT_S 60 /* a first reader waits at most this long */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;     /* the sweep thread: asked, interval, stop */
	pthread_cond_t done;     /* waiters: a sweep completed, or stop */
	struct fab_snap *snap;   /* the current snapshot (lock) */
	uint64_t started, completed; /* sweeps, by number (lock) */
	bool asked, running, stopping; /* (lock) */
	unsigned interval_ms;    /* (lock) */
	struct discover *disc;   /* the sweep thread's */
	pthread_t thread;
	bool thread_started;
	void (*on_swap)(struct fab_snap *old, struct fab_snap *snap); /* files follow */
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

/* Discovery out of port, its engine held (a CA removed meanwhile waits
 * for the sweep, whose requests then time out). */
static int sweep_port(struct ca_port *port, struct fab_snap *snap)
{
	int err = 0;
	struct mad_engine *e = ca_port_engine(port, &err);
	int r;

	if (!e) {
		snprintf(snap->error, sizeof(snap->error), "%s: %s", snap->via,
			 strerror(-err));
		return 0;
	}
	r = discover_run(fab.disc, e, snap, QUERY_TIMEOUT_MS, QUERY_RETRIES);
	ca_port_engine_done(port);
	if (r == 0 && !snap->nnodes)
		snprintf(snap->error, sizeof(snap->error),
			 "the local port's SMA did not answer");
	return r;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One sweep into a new snapshot; NULL when stopped (or out of memory). */
static struct fab_snap *sweep_once(void)
{
	struct fab_snap *snap = fabsnap_new();
	int64_t start = mono_ms();
	struct ca_port *port;

	if (!snap)
		return NULL;
	port = pick_port(snap);
	if (port && sweep_port(port, snap) < 0) {
		fabsnap_put(snap);
		return NULL;
	}
	snap->ok = snap->nnodes > 0;
	fabsnap_count(snap);
	clock_gettime(CLOCK_REALTIME, &snap->time);
	snap->mono_ms = mono_ms();
	snap->duration_ms = (unsigned)(snap->mono_ms - start);
	return snap;
}

/* Waits (lock held) until a sweep is asked for, the interval passed, or
 * stop; true to sweep. */
static bool wait_for_work(void)
{
	while (!fab.asked && !fab.stopping) {
		struct timespec until;

		if (!fab.interval_ms) {
			pthread_cond_wait(&fab.wake, &fab.lock);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += fab.interval_ms / 1000;
		until.tv_nsec += (long)(fab.interval_ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		if (pthread_cond_timedwait(&fab.wake, &fab.lock, &until) == ETIMEDOUT)
			fab.asked = true;
	}
	return !fab.stopping;
}

static void *sweep_thread(void *arg)
{
	pthread_mutex_lock(&fab.lock);
	while (wait_for_work()) {
		struct fab_snap *snap, *old = NULL;
		uint64_t number = ++fab.started;

		fab.asked = false;
		fab.running = true;
		pthread_mutex_unlock(&fab.lock);
		snap = sweep_once();
		if (snap) {
			pthread_mutex_lock(&fab.lock);
			old = fab.snap;
			fab.snap = snap;
			pthread_mutex_unlock(&fab.lock);
			fab.on_swap(old, snap);
		}
		pthread_mutex_lock(&fab.lock);
		fab.running = false;
		fab.completed = number;
		pthread_cond_broadcast(&fab.done);
		pthread_mutex_unlock(&fab.lock);
		if (snap && old)
			fabtext_make_ahead(snap, old);
		fabsnap_put(old);
		pthread_mutex_lock(&fab.lock);
	}
	pthread_mutex_unlock(&fab.lock);
	return NULL;
}

int sweeper_start(void (*on_swap)(struct fab_snap *old, struct fab_snap *snap),
		  sweeper_ports_fn ports)
{
	int r;

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

void sweeper_release(void)
{
	pthread_mutex_lock(&fab.lock);
	fab.stopping = true;
	pthread_cond_broadcast(&fab.wake);
	pthread_cond_broadcast(&fab.done);
	pthread_mutex_unlock(&fab.lock);
	if (fab.disc)
		discover_abort(fab.disc);
}

void sweeper_stop(void)
{
	sweeper_release();
	if (fab.thread_started)
		pthread_join(fab.thread, NULL);
	fab.thread_started = false;
	fabsnap_put(fab.snap);
	fab.snap = NULL;
	discover_free(fab.disc);
	fab.disc = NULL;
}

int sweeper_configure(unsigned interval_ms, const char *ca, int portnum)
{
	if (ca && strlen(ca) >= sizeof(fab.port_ca))
		return -EINVAL;
	fab.interval_ms = interval_ms;
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

struct fab_snap *sweeper_snapshot(bool wait)
{
	struct fab_snap *snap;

	pthread_mutex_lock(&fab.lock);
	if (wait && !fab.snap && !fab.stopping) {
		uint64_t number = fab.running ? fab.started : ask_sweep();
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += FIRST_SWEEP_WAIT_S;
		while (fab.completed < number && !fab.stopping &&
		       pthread_cond_timedwait(&fab.done, &fab.lock, &until) != ETIMEDOUT)
			;
	}
	snap = fab.snap;
	if (snap)
		fabsnap_get(snap);
	pthread_mutex_unlock(&fab.lock);
	return snap;
}

static void on_interrupt(fuse_req_t req, void *data)
{
	pthread_mutex_lock(&fab.lock);
	*(bool *)data = true;
	pthread_cond_broadcast(&fab.done);
	pthread_mutex_unlock(&fab.lock);
}

int sweeper_wait(fuse_req_t req)
{
	bool interrupted = false;
	uint64_t number;
	int r = 0;

	/* Before the lock: it calls on_interrupt at once if already
	 * interrupted. */
	fuse_req_interrupt_func(req, on_interrupt, &interrupted);
	pthread_mutex_lock(&fab.lock);
	number = ask_sweep();
	while (fab.completed < number && !fab.stopping && !interrupted)
		pthread_cond_wait(&fab.done, &fab.lock);
	if (fab.completed < number)
		r = fab.stopping ? -ENODEV : -EINTR;
	pthread_mutex_unlock(&fab.lock);
	/* No interrupt may reach our stack once we return. */
	fuse_req_interrupt_func(req, NULL, NULL);
	return r;
}

unsigned sweeper_interval_ms(void)
{
	unsigned ms;

	pthread_mutex_lock(&fab.lock);
	ms = fab.interval_ms;
	pthread_mutex_unlock(&fab.lock);
	return ms;
}

void sweeper_set_interval_ms(unsigned ms)
{
	pthread_mutex_lock(&fab.lock);
	fab.interval_ms = ms;
	pthread_cond_signal(&fab.wake);
	pthread_mutex_unlock(&fab.lock);
}
