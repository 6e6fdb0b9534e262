/* The sweeps: a thread that sweeps when asked (and every interval_ms if
 * set), out of the first ACTIVE port or the one configured, and swaps each
 * new snapshot in; the files take references on the current one. */
#ifndef UMADFS_SWEEPER_H
#define UMADFS_SWEEPER_H

#include <stdbool.h>
#include <stdint.h>

#include <fuse_lowlevel.h>

struct fab_snap;
struct ca_port;

/* Copies up to max of the host's ports now into out; returns how many.
 * The ports stay valid until the daemon exits (the process layer's). */
typedef int (*sweeper_ports_fn)(struct ca_port **out, int max);

#define SWEEPER_INTERVAL_MAX_MS 86400000u /* a day */
#define SWEEPER_INTERVAL_MIN_MS 1000u     /* the default floor */

/* Before start: the period (0: on demand), the floor later periods but 0
 * are held to, the light sweep's cycle (lightsweep.h; 0: none), and the
 * port, "" for the first ACTIVE one.  -EINVAL for a CA name too long. */
int sweeper_configure(unsigned interval_ms, unsigned interval_min_ms,
		      unsigned light_ms, const char *ca, int portnum);
/* What follows a new snapshot (fabric.c decides it all), each called on the
 * sweep thread with old, the snapshot before (or NULL): */
struct sweeper_hooks {
	/* before it is swapped in: judging it (its problems); */
	void (*judge)(const struct fab_snap *old, struct fab_snap *snap);
	/* right after: what must be there before a writer waiting for the
	 * sweep is answered (events, the tree); */
	void (*swap)(struct fab_snap *old, struct fab_snap *snap);
	/* after those writers are answered: what can wait (texts made ahead). */
	void (*settled)(struct fab_snap *old, struct fab_snap *snap);
};
/* Starts the thread, with the hooks (copied). */
int sweeper_start(const struct sweeper_hooks *hooks, sweeper_ports_fn ports);
/* Answers every parked write (ENODEV) and first reader, and ends a
 * running sweep soon. */
void sweeper_shutdown(void);
/* Whether sweeper_shutdown() has been called: work of the sweep thread's
 * that takes long ends at its next step.  Any thread. */
bool sweeper_stopping(void);
/* Joins the thread and drops the current snapshot. */
void sweeper_stop(void);

/* The current snapshot (a reference), or NULL. */
struct fab_snap *sweeper_snapshot(void);
/* The current snapshot in *out (a reference, or NULL); when there is none
 * yet, starts a sweep and waits for it (a minute at most; shutdown ends
 * the wait): 0, or -EINTR when req is interrupted meanwhile (*out NULL). */
int sweeper_first_snapshot(fuse_req_t req, struct fab_snap **out);
/* Asks for a sweep and parks req, a write of size bytes, until one that
 * started after the call is complete, and returns 0: it is answered then,
 * or EINTR if req is interrupted (fuse/parkedwrite.h), ENODEV at
 * shutdown.  Not parked (the caller replies): -ENODEV, -ENOMEM, or
 * -EAGAIN when SWEEPER_WRITERS_MAX writes wait for their sweep. */
#define SWEEPER_WRITERS_MAX 1024
int sweeper_park_write(fuse_req_t req, size_t size);
/* The port snap was swept out of (its via): the fabric view's port, for
 * its actions and traps; NULL when the host has it no more. */
struct ca_port *sweeper_port(const struct fab_snap *snap);
/* Asks the sweep thread to refresh a node (refresh.h): its ports asked
 * again into a new snapshot, no sweep; a sweep when there is no complete
 * snapshot, or SWEEPER_ASKS_MAX are waiting.  Any thread. */
#define SWEEPER_ASKS_MAX 64
struct refresh_ask;
void sweeper_refresh(const struct refresh_ask *a);
/* The same for node or port guid (an action's node, after it). */
void sweeper_refresh_node(uint64_t guid);
/* Asks for a sweep, when there was one before (the view is in use): the
 * traps thread's, when the SM it heard from is gone or changed.  Any
 * thread. */
void sweeper_sweep(void);
/* The master SM did not answer SMInfo: the current snapshot without its
 * SMs is made current at once (sm_missing), and a sweep is asked. */
void sweeper_sm_silent(void);
/* The sweep file's lines on what keeps the view from going stale: guard
 * (traps, light_sweep, sweeps, joined by '+', or none), light_sweep_ms,
 * light_sweeps, light_sweep_mads, light_sweep_changes, confirmed_age_ms.
 * traps: whether the SM's traps are subscribed.  Bytes, or -ENOSPC. */
int sweeper_guard_text(char *buf, size_t cap, bool traps);
unsigned sweeper_interval_ms(void);
/* The period from now on: 0 (on demand), or at least the floor and the
 * last sweep's duration; else -EINVAL with the reason in why. */
int sweeper_set_interval_ms(unsigned ms, char *why, size_t cap);

#endif
