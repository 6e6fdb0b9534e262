/* One problem of fabric/problems (problem.c): its kind, its identity, the
 * numbers its kind gives, and its line's keys. */
#ifndef UMADFS_PROBLEM_H
#define UMADFS_PROBLEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "umadfs/fabric/snapshot/fabsnap.h"

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
	PROBLEM_ROUTE_MISSING,  /* routecheck.c's: found holds their keys */
	PROBLEM_ROUTE_LOOP,
	PROBLEM_ROUTE_DEAD_END,
	PROBLEM_CREDIT_LOOP,    /* routequal.c's: found holds the cycle */
	PROBLEM_ROUTE_UNBALANCED, /* and its numbers */
	PROBLEM_ROUTE_NOT_MINIMAL,
	PROBLEM_SWEEP_FAILED,
	PROBLEM_PORT_CONGESTED, /* found holds its keys */
	PROBLEM_LINK_FLAPPING,  /* flapcheck.c's */
	PROBLEM_PARTITION_NO_FULL_MEMBER, /* partcheck.c's: pkey set */
	PROBLEM_PKEY_ENFORCEMENT_MISMATCH,
	PROBLEM_PORT_WITHOUT_DEFAULT_PARTITION,
	PROBLEM_MCAST_MEMBER_UNREACHABLE, /* mcastcheck.c's: lid is the MLID */
	PROBLEM_MCAST_LOOP,
	PROBLEM_MCAST_GROUP_EMPTY,
	PROBLEM_KIND_COUNT
};

enum fab_severity { SEVERITY_ERROR, SEVERITY_WARNING };

/* One problem.  Its identity (what problem_cmp compares, and the labels of
 * its series) leaves out the numbers, expected and found, which may change
 * while it lasts. */
struct fab_problem {
	uint8_t kind;      /* enum fab_problem_kind */
	uint8_t severity;  /* enum fab_severity */
	bool has_port;     /* port is one of its keys */
	uint8_t port;
	uint8_t node_type; /* FAB_CA ...; 0 unknown */
	int8_t counter;    /* thresholds.h's index (counter kinds), else -1 */
	uint16_t lid;      /* duplicate_lid, sm kinds; the mcast kinds' MLID */
	uint16_t pkey;     /* the partition kinds: the PKey without its
			    * membership bit, 0 none */
	uint64_t guid;     /* 0: the fabric's (sm_missing, sweep_failed) */
	uint64_t peer_guid; /* 0: none */
	uint8_t peer_port;
	/* The numbers its kind gives (the kind says which is set): */
	union {
		struct {                /* the counter kinds */
			uint64_t value; /* the counter now */
			uint64_t threshold; /* counter_over_threshold's */
			uint64_t before;    /* counter_rising: in the sweep before */
		} counter;
		struct {                /* node_unresponsive: requests timed out */
			uint64_t sma, pma;
		} timeouts;
		struct {                /* sm_stalled */
			uint64_t act_count; /* the master's, unmoved */
			uint64_t seconds;   /* for this long */
		} sm;
		struct {                /* link_flapping */
			uint64_t flaps;     /* downs within the window, at most */
			uint64_t window_s;
			uint64_t since_s;   /* since the last */
		} flap;
		uint64_t count;         /* duplicate_node_desc: nodes of the
					 * description; the route kinds: LIDs */
	} n;
	char node_desc[FAB_DESC_LEN + 1];
	char peer_desc[FAB_DESC_LEN + 1];
	char expected[64], found[128]; /* as the kind words them */
	const char *basis; /* link_degraded: expected, enabled or fabric;
			    * link_flapping: events or LinkDownedCounter */
};

/* The kind's name (counter_over_threshold ...) and severity's. */
const char *problem_kind_name(unsigned kind);
const char *problem_severity_name(unsigned severity);
/* Identity order: severity, guid, port, kind, counter, peer, lid, pkey. */
int problem_cmp(const struct fab_problem *a, const struct fab_problem *b);
/* The counter name of a counter kind (thresholds.h), or NULL. */
const char *problem_counter_name(const struct fab_problem *p);
/* One problem's keys (problem=... severity=... guid=...), no newline,
 * NUL-terminated: its length (cap 1024 holds any). */
size_t problem_keys(const struct fab_problem *p, char *buf, size_t cap);

#endif
