/* The problems tier's own: the list a judgement makes (problem.c), shared
 * by the judgement and its node, port, counter and SM checks
 * (problems.c), the link checks (linkcheck.c), the forwarding-table
 * checks (routecheck.c) and the flapping links (flapcheck.c), which
 * problems.c calls in turn. */
#ifndef UMADFS_PROBLEMS_PRIV_H
#define UMADFS_PROBLEMS_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "umadfs/fabric/problems/problem.h"
#include "umadfs/fabric/snapshot/fabsnap.h"

/* The problems being made, and what they are judged against. */
struct problem_list {
	struct fab_snap *snap;
	const struct fab_snap *last;     /* the snapshot before, if ok */
	const struct fab_snap *expected; /* or NULL */
	bool expected_speeds;            /* expected was given as a text */
	bool routes_minimal;             /* route_not_minimal is judged */
	struct fab_problem *list;
	size_t n, cap;
	bool nomem;
};

/* problem.c: room in the array at *arrayp (*cap elements of size, n
 * used) for one more (array_grow()); false (l->nomem set) when it cannot
 * grow. */
bool problem_room(struct problem_list *l, void *arrayp, size_t *cap, size_t n,
		  size_t size);
/* A new problem of kind about node n (or NULL: the fabric's), port port
 * (-1: none); NULL on ENOMEM. */
struct fab_problem *problem_add(struct problem_list *l, unsigned kind,
				const struct fab_node *n, int port);
/* The problem's peer: node peer's port. */
void problem_set_peer(struct fab_problem *p, const struct fab_node *peer,
		      unsigned port);
/* The list sorted (problem_cmp()), one of each identity (the first). */
void problem_list_sort(struct problem_list *l);

/* linkcheck.c: links below their width or speed: link_degraded. */
void linkcheck_speeds(struct problem_list *l);
/* Against the expected topology: node_missing, link_missing, link_moved,
 * link_unexpected. */
void linkcheck_expected(struct problem_list *l);
/* routecheck.c: the forwarding tables: route_missing, route_loop,
 * route_dead_end (not, with sm_missing, into a port that is LinkUp but
 * Init or Armed: the SM's to bring up, as port_not_active). */
void routecheck_routes(struct problem_list *l, bool sm_missing);
/* flapcheck.c: link_flapping, from the flaps since l->last (remembered
 * across judgements): count of them within window_s seconds.  The sweep
 * thread (problems_judge()) alone. */
void flapcheck_judge(struct problem_list *l, uint64_t count, uint64_t window_s);
/* Forgets every port's flaps (problems_forget()). */
void flapcheck_forget(void);

/* congestion.c: port_congested, PortXmitWait ticks a second over
 * threshold between the last two sweeps. */
void congestion_judge(struct problem_list *l, uint64_t threshold);

/* partcheck.c: the PKeyTables: partition_no_full_member,
 * pkey_enforcement_mismatch, port_without_default_partition. */
void partcheck_judge(struct problem_list *l);

/* mcastcheck.c: the multicast groups and tables: mcast_group_empty,
 * mcast_member_unreachable, mcast_loop. */
void mcastcheck_judge(struct problem_list *l);

/* routequal.c: the routing as a whole: credit_loop, and the snapshot's
 * routing (fabric/routing); nothing without a switch's table. */
void routequal_judge(struct problem_list *l);
/* routequal.c: the credit loops of s's routing, found as the judgement
 * finds them but made into no problem: their count, or -ENOMEM. */
int routequal_loops(const struct fab_snap *s);

#endif
