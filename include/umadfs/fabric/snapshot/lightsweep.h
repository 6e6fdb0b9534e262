/* The light sweep: between sweeps, every port of the current snapshot is
 * asked again for its PortInfo within a bounded time, a slice at a time,
 * so that a change no trap reported (a Report lost on the route the
 * change broke, the SM gone or busy, a storm) still shows.  A port whose
 * state (or an Active link's width or speed) differs from the snapshot's,
 * or that does not answer, names its node for a refresh.  The sweep thread's. */
#ifndef UMADFS_LIGHTSWEEP_H
#define UMADFS_LIGHTSWEEP_H

#include <stddef.h>
#include <stdint.h>

struct fab_snap;
struct mad_engine;
struct refresh_ask;
struct lightsweep;

#define LIGHTSWEEP_PERIOD_MS 1000   /* a slice this often */
#define LIGHTSWEEP_CYCLE_MS 8000    /* the default: every port within */
#define LIGHTSWEEP_SLICE_MIN 64     /* a slice asks at least this many */

struct lightsweep_stats {
	uint64_t slices;   /* light sweeps run */
	uint64_t mads;     /* PortInfo Gets sent */
	uint64_t changes;  /* ports found changed or silent */
	unsigned ports;    /* ports watched */
	int64_t confirmed_ms; /* CLOCK_MONOTONIC: every port of the view was
			       * found as the view has it at or after this
			       * (0: never) */
};

struct lightsweep *lightsweep_new(void);
void lightsweep_free(struct lightsweep *l);
/* The ports of snap from now on (a reference is kept).  seen_ms: when
 * snap's ports were all asked (a sweep's start), or 0 for a refresh's
 * snapshot, whose ports keep the oldest confirmation of the view before. */
int lightsweep_watch(struct lightsweep *l, struct fab_snap *snap, int64_t seen_ms);
/* Asks the next slice of the ports (so that each is asked within
 * cycle_ms) through engine; the nodes of those that differ or are silent
 * go into asks (at most max, one per node): returns how many, or
 * -ECANCELED (lightsweep_abort()), -ENOMEM. */
int lightsweep_run(struct lightsweep *l, struct mad_engine *engine, unsigned cycle_ms,
		   struct refresh_ask *asks, size_t max);
void lightsweep_stats(const struct lightsweep *l, struct lightsweep_stats *out);
/* Makes a running (or the next) lightsweep_run() return -ECANCELED; any
 * thread. */
void lightsweep_abort(struct lightsweep *l);

#endif
