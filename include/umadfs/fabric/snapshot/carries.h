/* What a port carries by a snapshot's forwarding tables, with no MAD:
 * the endport LIDs routed out of a switch port and into it
 * (ports/N/routed_endports, as ibfindnodesusing lists them), and what a
 * disable of a port would cut (the dry run a read of its admin gives). */
#ifndef UMADFS_CARRIES_H
#define UMADFS_CARRIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "umadfs/fabric/snapshot/fabsnap.h"

/* One endport LID a port carries. */
struct carried {
	const struct fab_node *node;
	unsigned port;  /* the endport: a switch's 0, a CA's or router's 1..N */
	uint16_t lid;   /* one of its LIDs (each of an LMC's range its own) */
	bool in;        /* false: the switch forwards it out of the port;
			 * true: the peer forwards it into the port (every
			 * other endport's LIDs when the peer is a CA or router) */
};

/* The endport LIDs switch sw's port carries: out of it, then into it,
 * each direction by LID ascending, malloc'd in *out (*n of them; NULL
 * when none).  0, or -ENOMEM. */
int carries_endports(const struct fab_snap *s, const struct fab_node *sw,
		     unsigned port, struct carried **out, size_t *n);

/* What disabling node n's port would cut while the tables stay as the
 * snapshot has them. */
struct carries_cut {
	unsigned host;    /* endports (other than this host's) whose route
			   * from this host's port crosses the link */
	uint64_t pairs;   /* ordered pairs of distinct endports whose route
			   * crosses the link, either way */
	unsigned isolated; /* endports no link path joins to this host's
			    * node without this link (cut off whatever the
			    * SM reroutes) */
	bool routed;      /* a switch of s has a table: host and pairs
			   * count (without, both 0) */
};

/* The cut of a disable of n's port (all 0 when the port has no link in
 * s).  0, or -ENOMEM. */
int carries_cut(const struct fab_snap *s, const struct fab_node *n,
		unsigned port, struct carries_cut *out);

#endif
