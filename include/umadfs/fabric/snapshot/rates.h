/* A port's rates between two snapshots (rates.c): what a sweep keeps of
 * the snapshot before's counters (each port's base), and the rates of a
 * port from its counters, its base and the time between them. */
#ifndef UMADFS_RATES_H
#define UMADFS_RATES_H

#include <stdint.h>

#include "umadfs/fabric/snapshot/fabsnap.h"

/* Why a snapshot has no rates at all. */
#define RATES_NONE_YET "no rates yet: they need two sweeps that reached the " \
	"fabric, one after the other"

/* A port's rates, per second, and its data rate's share each way. */
struct port_rates {
	double xmit_bytes, rcv_bytes, xmit_packets, rcv_packets;
	double xmit_wait;            /* PortXmitWait ticks */
	double xmit_util, rcv_util;  /* of the link's rate (0..1); < 0: no link rate */
	uint64_t interval_ms;        /* between the two snapshots' counters */
};

/* Each port of snap whose node prev has (by GUID) takes prev's counters
 * of it as its base, and snap the time of prev's (prev ok, else none). */
void rates_take_base(struct fab_snap *snap, const struct fab_snap *prev);
/* Port p of n's rates in s: 0, or -ENODATA with why (a sentence) when it
 * has none: the first snapshot, no counters now or before, counters
 * cleared between. */
int rates_port(const struct fab_snap *s, const struct fab_node *n, unsigned p,
	       struct port_rates *r, const char **why);

#endif
