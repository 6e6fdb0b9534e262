/* Routing from a snapshot's linear forwarding tables, with no MAD: the
 * path a packet takes from one endport to a LID (fabric/routes/SRC/DST)
 * and how many LIDs each switch port carries (routed_lids); the routing
 * problems (routecheck.c) use its pieces. */
#ifndef UMADFS_ROUTES_H
#define UMADFS_ROUTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/mad/ibcodes.h"

#define ROUTE_HOPS_MAX 64    /* nodes on a path (ibtracert stops at 63 hops) */
#define ROUTE_LID_MAX IB_LID_UCAST_END_HO /* the highest unicast LID */
#define ROUTE_NO_PORT 255    /* a LinearForwardingTable entry: no port */

enum route_result { ROUTE_OK, ROUTE_UNROUTED, ROUTE_LOOP, ROUTE_DEAD_END,
		    ROUTE_UNREACHABLE };

/* A route's end as a name gives it: a LID, or a port GUID. */
struct route_name {
	bool is_guid;
	uint64_t value;
};

/* An endport of a snapshot (a CA's port, a switch's port 0) and the LID
 * it is addressed by (0: it has none). */
struct route_end {
	const struct fab_node *node;
	unsigned port;
	uint16_t lid;
};

struct route_hop {
	const struct fab_node *node;
	int in, out; /* ports; -1: none (the source has no in, the end no out) */
};

struct route {
	struct route_hop hop[ROUTE_HOPS_MAX];
	unsigned nhops;
	enum route_result result;
	const struct fab_node *at; /* where it broke (not ROUTE_OK) */
};

/* Endports: a switch's port 0, a CA's (or router's) ports 1..N. */
unsigned routes_first_endport(const struct fab_node *n);
unsigned routes_last_endport(const struct fab_node *n);
/* Whether lid is one of port p's (LID to LID + 2^LMC - 1). */
bool routes_has_lid(const struct fab_port *p, unsigned lid);
/* Switch n's entry for lid (n->lft not NULL): a port, or ROUTE_NO_PORT. */
unsigned routes_entry(const struct fab_node *n, unsigned lid);
/* A file name: a LID (decimal or 0x hex, 1 to ROUTE_LID_MAX) or a GUID
 * (0x and 16 hex digits).  0, or -ENOENT. */
int routes_parse_name(const char *s, struct route_name *out);
/* The endport name gives in s: the port with that LID (in its LMC range),
 * or with that port GUID, or a switch's port 0 or a CA's first port with
 * a LID by their node GUID.  0, or -ENOENT. */
int routes_resolve(const struct fab_snap *s, const struct route_name *name,
		   struct route_end *out);
/* The path from src to dst (dst->lid the DLID) as the tables forward it. */
void routes_trace(const struct fab_snap *s, const struct route_end *src,
		  const struct route_end *dst, struct route *r);
/* r as its file shows it (malloc'd, *len its length), or NULL: ENOMEM. */
char *routes_text(const struct route *r, size_t *len);
/* How many LIDs switch n forwards out of each port, into
 * counts[0..n->nports] (all 0 without a table). */
void routes_port_lids(const struct fab_node *n, unsigned *counts);

#endif
