/* One sweep of the fabric through a port's MAD engine: directed-route
 * discovery (NodeInfo, NodeDescription, PortInfo of every port,
 * SwitchInfo and LinearForwardingTable), then the PMA counters of every
 * connected port, with many requests in flight.  Timeouts and
 * unreachable nodes are counted, never fatal. */
#ifndef UMADFS_DISCOVER_H
#define UMADFS_DISCOVER_H

#include <stdbool.h>

struct discover;
struct fab_snap;
struct mad_engine;

/* fabric_routes=: whether sweeps read each switch's LinearForwardingTable
 * (default on); fabric_routes_settle=: how long after a change that makes
 * an SM reroute the tables read are taken as the SM's old or half-written
 * ones, read again by every sweep; fabric_routes_max_age=: how long a
 * table is kept at most, 0: read by every sweep (docs/files.md, "What a
 * sweep asks").  Before the first sweep. */
#define DISCOVER_ROUTES_SETTLE_MS 120000u
#define DISCOVER_ROUTES_MAX_AGE_MS 600000u
void discover_set_routes(bool on, unsigned settle_ms, unsigned max_age_ms);
struct discover *discover_new(void);
void discover_free(struct discover *d);
/* Sweeps out of engine into snap (nodes, links, counters and its mads,
 * timeouts, unreachable); prev (the snapshot before, or NULL) tells what
 * need not be asked again; guarded: light sweeps guard the view, so a CA
 * behind a link that stands may be prev's (docs/files.md, "What a sweep
 * asks").  Returns 0, -ECANCELED after discover_abort(), or -ENOMEM.  The
 * caller's thread does the work; answers arrive on the engine's receiver
 * thread. */
int discover_run(struct discover *d, struct mad_engine *engine,
		 const struct fab_snap *prev, struct fab_snap *snap,
		 int timeout_ms, int retries, bool guarded);
/* Makes a running (or the next) discover_run return -ECANCELED soon;
 * any thread. */
void discover_abort(struct discover *d);

#endif
