/* fabric/problems: what is wrong with the fabric, judged from each new
 * snapshot (no MADs of its own) against the one before, the expected
 * topology and the error thresholds; fabric/sm: the subnet manager. */
#ifndef UMADFS_HEALTH_H
#define UMADFS_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "umadfs/fabric/fabsnap.h"

struct node;

enum fab_problem_kind {
	PROBLEM_COUNTER_OVER_THRESHOLD,
	PROBLEM_COUNTER_RISING,
	PROBLEM_COUNTER_SATURATED,
	PROBLEM_LINK_DEGRADED,
	PROBLEM_NODE_MISSING,
	PROBLEM_LINK_MISSING,
	PROBLEM_LINK_MOVED,
	PROBLEM_LINK_UNEXPECTED,
	PROBLEM_PORT_NOT_ACTIVE,
	PROBLEM_DUPLICATE_GUID,
	PROBLEM_DUPLICATE_LID,
	PROBLEM_LID_UNASSIGNED,
	PROBLEM_DUPLICATE_NODE_DESC,
	PROBLEM_SM_MISSING,
	PROBLEM_SM_STALLED,
	PROBLEM_NODE_UNRESPONSIVE,
	PROBLEM_KIND_COUNT
};

enum fab_severity { SEVERITY_ERROR, SEVERITY_WARNING };

struct fab_problem {
	uint8_t kind;      /* enum fab_problem_kind */
	uint8_t severity;  /* enum fab_severity */
	uint8_t port, peer_port;
	uint16_t counter;  /* pmacounters index (counter kinds) */
	uint16_t lid;      /* duplicate_lid */
	uint64_t guid, peer_guid;
	uint64_t value, threshold;
	char node_desc[FAB_DESC_LEN + 1];
	char expected[64], found[64]; /* as the kind words them */
};

/* Loads -o fabric_thresholds=PATH (NULL: ibqueryerrors' default file when
 * it exists); -EINVAL with the reason on stderr. */
int health_configure(const char *thresholds_path);
/* Judges snap (not yet swapped in) against prev (the snapshot before, or
 * NULL) and expected (or NULL): sets snap->problems.  The sweep thread. */
void health_judge(const struct fab_snap *prev, struct fab_snap *snap,
		  const struct fab_snap *expected);
/* One problem's keys (problem=... severity=... guid=...), no newline,
 * NUL-terminated: its length (cap 1024 holds any). */
size_t health_problem_keys(const struct fab_problem *p, char *buf, size_t cap);
/* Adds fabric/problems and fabric/sm. */
int health_add(struct node *fabric_dir);

#endif
