/* A refresh: a new snapshot from the one before with just the nodes a
 * trap or an action named asked again (their ports, the links that went
 * or came), no sweep.  The sweep thread's. */
#ifndef UMADFS_REFRESH_H
#define UMADFS_REFRESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fab_snap;
struct fab_node;

/* A node to ask again: by GUID (a node's or one of its ports'), else by
 * a LID of one of its ports; desc: its NodeDescription too; gone: it was
 * said to leave (trap 65), so nothing is to be done if it is not there. */
struct refresh_ask {
	uint64_t guid;
	uint16_t lid;
	bool desc, gone;
};

/* The node of s an ask names, or NULL. */
const struct fab_node *refresh_find(const struct fab_snap *s,
				    const struct refresh_ask *a);
/* When to ask the same nodes again: a port of theirs is up but not yet
 * Active (the SM makes it so without a trap); a port of theirs changed
 * (it may change again: an SM reports few of one switch's traps in a
 * row, opensm none past ten in its aging window). */
#define REFRESH_SETTLE_MS 500
#define REFRESH_RECHECK_MS 2000

/* What a refresh asks through: a directed-route Get of attr (modifier
 * mod) to the node at the end of path[1..hops], its SMP data (64 bytes)
 * into data; 0, or -errno (-ETIMEDOUT: nothing answered).  The sweep
 * thread's is the engine's (refresh_engine_get, ctx the engine); the unit
 * test's a fabric of its own. */
struct refresh_via {
	int (*get)(void *ctx, unsigned attr, unsigned mod, unsigned hops,
		   const uint8_t *path, uint8_t *data);
	void *ctx;
};
/* query_smp_route_get() on engine (a struct mad_engine). */
int refresh_engine_get(void *engine, unsigned attr, unsigned mod, unsigned hops,
		       const uint8_t *path, uint8_t *data);

/* prev with asks' nodes asked again through via: a new complete
 * snapshot (its stats.mads the refresh's), or NULL with *need_sweep set
 * when only a sweep can tell (a node not in prev, one that does not
 * answer by its route, a switch found across a new link), when stopped()
 * says so before a request, or on ENOMEM; NULL without it when there was
 * nothing to ask (the nodes named had left already): nothing changed.
 * *again_ms: 0, or when to ask them again (above). */
struct fab_snap *refresh_run(const struct refresh_via *via, const struct fab_snap *prev,
			     const struct refresh_ask *asks, size_t nasks,
			     bool (*stopped)(void), bool *need_sweep, unsigned *again_ms);

#endif
