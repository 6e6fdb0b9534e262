/* The pending table of a port (pending_table.c): its slots and the wire TIDs
 * that name them.  Not locked: the engine's lock is held around every call
 * (pending.c), or the table is the caller's own (tests/unit/). */
#ifndef UMADFS_PENDING_TABLE_H
#define UMADFS_PENDING_TABLE_H

#include <stdint.h>

#include "umadfs/mad/mad.h"

struct mad_sink;

#define PENDING_BITS 12
#define PENDING_MAX (1u << PENDING_BITS) /* requests in flight per port */
#define PENDING_GENERATION_BITS (32 - PENDING_BITS)

/* A request awaiting its answer, in the slot its wire TID names. */
struct pending {
	/* The table's: who waits, and the TIDs. */
	struct mad_sink *sink; /* NULL: slot free */
	uint64_t caller_tid;
	uint32_t wire_tid;
	/* pending.c's: the request's life. */
	unsigned flags; /* PENDING_PROBE, PENDING_REQUEST (pending.h) */
	int agent, timeout_ms, retries_left;
	int64_t deadline_ms; /* when the kernel would give up: timeout x (retries + 1) */
	int grace_ms;        /* then how long the engine waits to be told */
	/* The request's umad header and MAD header, for the timeout item the
	 * engine makes itself if the transport never reports one. */
	uint8_t head[UMAD_FRAME_HDR_SIZE + MAD_HDR_SIZE];
};

struct pending_table {
	struct pending entries[PENDING_MAX];
	uint32_t free_slots[PENDING_MAX]; /* a stack: the slot freed last goes first */
	unsigned nfree;
	uint32_t generation; /* of the request taken last, counting on past 2^20 */
};

void pending_table_init(struct pending_table *t);
/* Takes a free slot for a request of sink whose MAD is mad: saves the
 * MAD's TID and puts the wire TID in its lower 32 bits.  0 and *out, or
 * -EBUSY when every slot is taken (mad untouched). */
int pending_table_take(struct pending_table *t, struct mad_sink *sink, uint8_t *mad,
		       struct pending **out);
/* The entry still waiting under wire TID wire (a TID's lower 32 bits), or
 * NULL: its slot is free, or waits for a later request. */
struct pending *pending_table_find(struct pending_table *t, uint32_t wire);
/* Frees e's slot and returns its sink; mad, if given, gets the caller's
 * TID back. */
struct mad_sink *pending_table_end(struct pending_table *t, struct pending *e,
				   uint8_t *mad);
/* The TID e's request has on the wire. */
uint64_t pending_table_tid(const struct pending *e);

#endif
