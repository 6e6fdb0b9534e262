/* The traps' queue of Reports (reportq.c): below the limit nothing is
 * lost and the order kept, across the ring's wrap; a full queue drops the
 * newest and counts it (the sweep file's trap_reports_dropped); what was
 * dropped never comes out. */
#include <stdlib.h>

#include "check.h"
#include "umadfs/fabric/watch/reportq.h"

/* Frame number i: its bytes all say so (the last byte too). */
static void frame(uint8_t *f, unsigned i)
{
	for (unsigned b = 0; b < UMAD_FRAME_MAX; b++)
		f[b] = (uint8_t)(i + b);
	f[UMAD_FRAME_MAX - 1] = (uint8_t)(i >> 8);
}

static bool is_frame(const uint8_t *f, unsigned i)
{
	uint8_t want[UMAD_FRAME_MAX];

	frame(want, i);
	return memcmp(f, want, UMAD_FRAME_MAX) == 0;
}

/* n frames from first on: each queued. */
static unsigned push(struct reportq *q, unsigned first, unsigned n)
{
	uint8_t f[UMAD_FRAME_MAX];
	unsigned queued = 0;

	for (unsigned i = first; i < first + n; i++) {
		frame(f, i);
		queued += reportq_push(q, f);
	}
	return queued;
}

/* n frames out: first, first + 1, ... */
static unsigned pop_in_order(struct reportq *q, unsigned first, unsigned n)
{
	uint8_t f[UMAD_FRAME_MAX];
	unsigned ok = 0;

	for (unsigned i = first; i < first + n && reportq_pop(q, f); i++)
		ok += is_frame(f, i);
	return ok;
}

int main(void)
{
	struct reportq *q = calloc(1, sizeof(*q));
	uint8_t f[UMAD_FRAME_MAX];

	CHECK(!reportq_pop(q, f));
	/* Below the limit, and around the ring: nothing lost, in order. */
	CHECK_INT(push(q, 0, 200), 200);
	CHECK_INT(pop_in_order(q, 0, 150), 150);
	CHECK_INT(push(q, 200, 150), 150); /* 200 queued, wrapped */
	CHECK_INT(pop_in_order(q, 150, 200), 200);
	CHECK(!reportq_pop(q, f));
	CHECK_INT(q->dropped, 0);
	/* Full: the newest dropped and counted, the queued kept. */
	CHECK_INT(push(q, 1000, REPORTQ_MAX), REPORTQ_MAX);
	CHECK_INT(push(q, 5000, 3), 0);
	CHECK_INT(q->dropped, 3);
	CHECK_INT(pop_in_order(q, 1000, REPORTQ_MAX), REPORTQ_MAX);
	CHECK(!reportq_pop(q, f)); /* the dropped ones never come */
	/* Room again: taken again. */
	CHECK_INT(push(q, 7000, 1), 1);
	CHECK(reportq_pop(q, f) && is_frame(f, 7000));
	CHECK_INT(q->dropped, 3);
	free(q);
	CHECK_DONE();
}
