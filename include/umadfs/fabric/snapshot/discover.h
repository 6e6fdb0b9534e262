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
 * (default on).  Before the first sweep. */
void discover_set_routes(bool on);
struct discover *discover_new(void);
void discover_free(struct discover *d);
/* Sweeps out of engine into snap (nodes, links, counters and its mads,
 * timeouts, unreachable); prev (the snapshot before, or NULL) tells what
 * need not be asked again.  Returns 0, -ECANCELED after discover_abort(),
 * or -ENOMEM.  The caller's thread does the work; answers arrive on the
 * engine's receiver thread. */
int discover_run(struct discover *d, struct mad_engine *engine,
		 const struct fab_snap *prev, struct fab_snap *snap,
		 int timeout_ms, int retries);
/* Makes a running (or the next) discover_run return -ECANCELED soon;
 * any thread. */
void discover_abort(struct discover *d);

#endif
