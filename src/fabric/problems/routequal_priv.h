/* The routing check's own (routequal.c, creditloop.c): the switches and
 * their ports as channels (a switch's out-port: what a credit is counted
 * on), the CA ports routed between, and what following every CA's route
 * to every CA's LID through the snapshot's tables found. */
#ifndef UMADFS_ROUTEQUAL_PRIV_H
#define UMADFS_ROUTEQUAL_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "problems_priv.h"

#define RQ_NONE UINT32_MAX

/* A CA port with a LID, Active, on a switch with a table. */
struct rq_ca {
	const struct fab_node *node;
	const struct fab_port *port;
	unsigned portnum;
	uint32_t sw; /* the switch it hangs on (its number) */
};

struct rq {
	struct problem_list *list;
	const struct fab_snap *s;
	uint32_t *sw;        /* switch number -> node index */
	size_t nsw;
	uint32_t *swno;      /* node index -> switch number, or RQ_NONE */
	size_t *first;       /* channel first[k] + port: switch k's port */
	size_t nch;
	uint32_t *peer;      /* per channel: the switch beyond (Active), or RQ_NONE */
	const struct fab_port **end; /* per channel: the CA port beyond, or NULL */
	size_t *ebase;       /* per channel: its dependencies' first bit */
	unsigned nvl;        /* VLs SL 0 is mapped to (the highest + 1): the
			      * graph's nodes are (channel, VL), c * nvl + vl */
	uint64_t *edges;     /* bit ((ebase[c] + p) * nvl + vl) * nvl + vl2:
			      * channel c on vl -> peer's port p on vl2 */
	uint16_t *camask;    /* per channel: the VLs SL 0 takes out of it from
			      * its switch's CA ports (nvl > 1, no sls) */
	uint16_t sls;        /* the SLs the pairs are on (pathsl.h) when one
			      * is not SL 0, else 0: every route on SL 0 */
	uint32_t *dlids;     /* per channel: the DLIDs routed out of it */
	uint32_t *calids;    /* per channel: the CA LIDs its switch's table
			      * sends out of it (check_lft_balance's count) */
	uint32_t *longer;    /* per switch: LIDs a CA's route takes from it to
			      * a switch no nearer (route_not_minimal) */
	uint16_t *longer_lid; /* per switch: the first of them */
	struct rq_ca *ca;    /* sorted by switch */
	size_t nca;
	uint32_t *cas;       /* per switch: the CA ports on it */
	uint32_t *firstca;   /* per switch: one of them (index in ca), or RQ_NONE */
	/* one destination's: */
	uint8_t *ent;        /* per switch: its entry */
	uint16_t *vlmask;    /* per switch: the VLs on its entry's channel */
	uint16_t *slmask;    /* per switch: the SLs on it (sls) */
	uint16_t *slvl;      /* per switch and SL: the VLs that SL is on there
			      * (sls; [k * 16 + sl]) */
	uint32_t *next;      /* per switch: the switch it forwards to, RQ_NONE
			      * (nowhere), RQ_NONE - 1 (arrived) */
	uint8_t *hops;       /* per switch: links to the LID, 0 not walked,
			      * RQ_UNROUTED, RQ_WALKING */
	uint8_t *dist;       /* per switch: switch hops from the destination's */
	uint32_t *queue;     /* the BFS's, and a walk's path */
	struct fab_routing r; /* the numbers (text made last) */
	unsigned worst;      /* worst_pair: hops, source, destination */
	size_t worst_src, worst_dst;
	double mean;         /* DLIDs per used switch-to-switch port */
};

#define RQ_UNROUTED 255
#define RQ_WALKING 254
#define RQ_ARRIVED (RQ_NONE - 1)

/* fabric/routing's text as it is made (failed: out of memory). */
struct rq_text {
	char *buf;
	size_t len, cap;
	bool failed;
};

/* creditloop.c: appends to t as printf would. */
void rq_put(struct rq_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Channel c as "GUID/PORT". */
void rq_channel_name(const struct rq *q, size_t c, char *buf, size_t cap);

/* Switch k is on some source's route to the destination. */
static inline bool rq_routed(const struct rq *q, uint32_t k)
{
	return q->hops[k] && q->hops[k] < RQ_WALKING;
}

/* routesl.c: routes on their pairs' SLs (q->sls set from the snapshot's
 * pathsl, when some pair is not on SL 0): the VLs SL sl goes out of
 * switch k's port out on, come in by in (clamped to q->nvl); the VLs the
 * tables use (q->nvl); one destination's SLs and VLs on each switch's
 * entry's channel; and switch k's channel c's dependencies on them. */
void routesl_init(struct rq *q);
unsigned routesl_vl(const struct rq *q, uint32_t k, unsigned in, unsigned out,
		    unsigned sl);
unsigned routesl_nvl(const struct rq *q);
int routesl_alloc(struct rq *q);
void routesl_vls(struct rq *q, size_t d, unsigned lid);
void routesl_depend(struct rq *q, uint32_t k, size_t c);
/* creditloop.c: the dependency graph's cycles: a credit_loop problem for
 * each cyclic component (up to CREDIT_LOOPS_LISTED), their count in
 * q->r.credit_loops, and a line for each listed one on t.  0 or -ENOMEM. */
int creditloop_find(struct rq *q, struct rq_text *t);

#endif
