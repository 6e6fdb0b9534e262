/* The SMP Sets this process sent, through any port's engine and for any
 * caller (the channel files, the daemon's own requests), so that a layer
 * above can tell which of its cached tables they may have changed. */
#ifndef UMADFS_SETLOG_H
#define UMADFS_SETLOG_H

#include <stdbool.h>
#include <stdint.h>

#define SETLOG_MAX 256     /* Sets kept; a reader further behind is told */
#define SETLOG_PATH_MAX 64 /* a directed route's initial path, as the SMP's */

struct mad_engine;

/* One Set: LID-routed (dlid) or directed (dlid 0: hops and path[1..hops]
 * from the sending port; a route with a LID-routed part has dr_lids). */
struct setlog_entry {
	const struct mad_engine *engine; /* compared, never followed */
	uint16_t attr;
	uint32_t mod;
	uint16_t dlid;
	bool dr_lids;
	uint8_t hops;
	uint8_t path[SETLOG_PATH_MAX];
};

/* Notes the frame (umad header + MAD) sent by engine if it is a
 * Subnet Management Set; anything else is ignored. */
void setlog_note(const struct mad_engine *engine, void *frame);
/* Copies the Sets noted after *cursor (0 at first) into out[SETLOG_MAX],
 * moves *cursor past them and returns how many; *lost is set when some
 * were overwritten before this read (the ones still kept are copied). */
unsigned setlog_since(uint64_t *cursor, struct setlog_entry *out, bool *lost);

#endif
