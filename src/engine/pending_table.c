/* The pending table's slots and wire TIDs: which slot a request takes, the
 * TID it goes out with, and which entry a TID that comes back names.
 *
 * The kernel (and umad2sim) own the upper 32 bits of a request's TID (the
 * agent's hi_tid), so the daemon keeps only the lower 32 bits for itself:
 * (generation << PENDING_BITS) | slot, a 12-bit slot of the 4096 and a
 * 20-bit generation.  The slot finds the entry in O(1); the generation,
 * one more for every request taken, tells a late answer for a slot since
 * reused from the answer it is waiting for.  The caller's full 64-bit TID
 * is saved in the entry and put back before delivery. */
#include <errno.h>
#include <stddef.h>

#include "pending_table.h"

#define LOWER_32 0xffffffffull

void pending_table_init(struct pending_table *t)
{
	for (uint32_t i = 0; i < PENDING_MAX; i++) {
		t->entries[i].sink = NULL;
		t->free_slots[i] = PENDING_MAX - 1 - i;
	}
	t->nfree = PENDING_MAX;
	t->generation = 0;
}

int pending_table_take(struct pending_table *t, struct mad_sink *sink, uint8_t *mad,
		       struct pending **out)
{
	struct pending *e;
	uint32_t slot;

	if (!t->nfree)
		return -EBUSY;
	slot = t->free_slots[--t->nfree];
	e = &t->entries[slot];
	e->sink = sink;
	e->caller_tid = mad_tid(mad);
	t->generation++;
	e->wire_tid = (t->generation << PENDING_BITS) | slot;
	mad_set_tid(mad, pending_table_tid(e));
	*out = e;
	return 0;
}

struct pending *pending_table_find(struct pending_table *t, uint32_t wire)
{
	struct pending *e = &t->entries[wire & (PENDING_MAX - 1)];

	return e->sink && e->wire_tid == wire ? e : NULL;
}

struct mad_sink *pending_table_end(struct pending_table *t, struct pending *e,
				   uint8_t *mad)
{
	struct mad_sink *sink = e->sink;

	if (mad)
		mad_set_tid(mad, e->caller_tid);
	e->sink = NULL;
	t->free_slots[t->nfree++] = (uint32_t)(e - t->entries);
	return sink;
}

uint64_t pending_table_tid(const struct pending *e)
{
	return (e->caller_tid & ~LOWER_32) | e->wire_tid;
}
