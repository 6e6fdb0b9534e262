/* The lines of fabric/metrics.prom (promlines.c): its families in their
 * order, each in the group -o fabric_metrics= selects it by, and each
 * written one unit at a time: its header (HELP and TYPE, and the lines of
 * a family that has no items), then one item (a problem, a node, a port)
 * per unit.  A unit's bytes depend on the snapshot alone, so a text made
 * in pieces from anywhere is the same text. */
#ifndef UMADFS_PROMLINES_H
#define UMADFS_PROMLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fab_snap;

/* The groups of families, in the text's order. */
enum prom_group {
	PROM_SWEEP,     /* umadfs_sweep_*: 9 series */
	PROM_PROBLEMS,  /* umadfs_problem, umadfs_problems */
	PROM_NODES,     /* umadfs_node_up */
	PROM_STATE,     /* umadfs_port_state, _physical_state, _rate_... */
	PROM_LINKS,     /* umadfs_link_info */
	PROM_ROUTES,    /* umadfs_port_routed_lids */
	PROM_ROUTING,   /* umadfs_credit_loops, umadfs_route_pairs (fabric/routing) */
	PROM_ERRORS,    /* the 12 error counters */
	PROM_XMIT_WAIT, /* umadfs_port_transmit_wait_total */
	PROM_DATA,      /* the data and packet counters */
	PROM_DETAILS,   /* the detail counters and the wait per VL: not in
			 * the default (all), named on its own */
	PROM_PARTITIONS, /* umadfs_partition_members: not in all either */
	PROM_MCAST,     /* umadfs_mcast_group_members: nor this */
	PROM_GROUPS
};

/* The group's name as the option spells it ("sweep", ..., "xmit_wait"). */
const char *promlines_group_name(unsigned group);

/* The number of families; family f's group. */
unsigned promlines_families(void);
enum prom_group promlines_group(unsigned f);

/* The most bytes one unit writes. */
#define PROMLINES_UNIT_MAX 4096u /* a port's 15 VLs' lines */

/* A place in the text: the next unit of family `family`, its header while
 * !started, else its item `item` (a problem, a node, or with `port` a
 * node's port).  Zeroed: the header of family 0. */
struct prom_pos {
	uint32_t item;
	uint16_t family;
	uint16_t port;
	bool started;
};

/* What a writer keeps between units (zeroed at first): a node's labels,
 * a switch's routed LIDs per port. */
struct prom_cache {
	size_t labels_node;  /* the node the labels are of, + 1 (0: none) */
	size_t labels_len;
	char labels[224];    /* {guid="...",node_desc="...",node_type="...",port=" */
	size_t counts_node;  /* the switch counts are of, + 1 (0: none) */
	unsigned counts[256];
};

/* Writes the unit at *pos of family pos->family into buf (at least
 * PROMLINES_UNIT_MAX bytes; nothing for an item the family does not show,
 * a port without the value) and moves *pos to the family's next unit:
 * the bytes written, or -1 when the family had no unit left (*pos
 * unchanged: the caller goes on with the next family's header). */
int promlines_unit(const struct fab_snap *s, struct prom_pos *pos, char *buf,
		   struct prom_cache *cache);

#endif
