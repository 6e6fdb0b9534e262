/* The judge's own, shared by health.c (the judgement, nodes, ports,
 * counters, the SM) and linkcheck.c (links: speeds, the expected
 * topology). */
#ifndef UMADFS_HEALTH_PRIV_H
#define UMADFS_HEALTH_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "umadfs/fabric/fabsnap.h"
#include "umadfs/fabric/health.h"

#define PHYS_LINKUP 5 /* PortInfo PortPhysicalState */

/* The problems being made, and what they are judged against. */
struct judge {
	struct fab_snap *snap;
	const struct fab_snap *last;     /* the snapshot before, if ok */
	const struct fab_snap *expected; /* or NULL */
	bool expected_speeds;            /* expected was given as a text */
	struct fab_problem *list;
	size_t n, cap;
	bool nomem;
};

/* Room in the array *v (*cap elements of size, n used) for one more;
 * false (j->nomem set) when it cannot grow. */
bool judge_room(struct judge *j, void **v, size_t *cap, size_t n, size_t size);
/* A new problem of kind about node n (or NULL: the fabric's), port port
 * (-1: none); NULL on ENOMEM. */
struct fab_problem *judge_add(struct judge *j, unsigned kind,
			      const struct fab_node *n, int port);
/* The problem's peer: node peer's port. */
void judge_set_peer(struct fab_problem *p, const struct fab_node *peer,
		    unsigned port);
/* Links below their width or speed: link_degraded. */
void judge_speeds(struct judge *j);
/* Against the expected topology: node_missing, link_missing, link_moved,
 * link_unexpected. */
void judge_expected(struct judge *j);
/* The forwarding tables (routecheck.c): route_missing, route_loop,
 * route_dead_end (not, with sm_missing, into a port that is LinkUp but
 * Init or Armed: the SM's to bring up, as port_not_active). */
void judge_routes(struct judge *j, bool sm_missing);

#endif
