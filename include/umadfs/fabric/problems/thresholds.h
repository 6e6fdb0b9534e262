/* Error thresholds as ibqueryerrors reads and applies them: the counters
 * it checks (its names, libibmad's), a `Name=value` file with `#`
 * comments, 0 for a counter the file does not name, and a counter over
 * its threshold when its value exceeds it; and umadfs's own names in the
 * same file (port_congested's and link_flapping's). */
#ifndef UMADFS_THRESHOLDS_H
#define UMADFS_THRESHOLDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "umadfs/mad/pmacounters.h"

/* ibqueryerrors' own file (infiniband-diags' IBDIAG_CONFIG_PATH). */
#define THRESHOLDS_DEFAULT_PATH "/etc/infiniband-diags/error_thresholds"
#define THRESHOLDS_FILE_MAX 65536 /* bytes: a longer file is refused */

enum { THRESHOLD_COUNTERS = PMACOUNTERS_CHECKED };

/* umadfs's own names, beside ibqueryerrors' (which ignores them):
 * PortXmitWaitPerSecond, port_congested's threshold, in PortXmitWait
 * ticks a second (rates.h), from 1 to THRESHOLD_WAIT_MAX; by default 10%
 * of the time at the tick assumed (8 ns: 125,000,000 ticks a second). */
#define THRESHOLD_WAIT_NAME "PortXmitWaitPerSecond"
#define THRESHOLD_WAIT_DEFAULT 12500000u
#define THRESHOLD_WAIT_MAX 1000000000u
#define THRESHOLD_TICK_NS 8

/* link_flapping (flapcheck.c): a port that went down flap_count times
 * within flap_window_s seconds; the file's LinkFlapCount and
 * LinkFlapWindowSeconds, these defaults and bounds when it names none. */
#define THRESHOLDS_FLAP_COUNT 3
#define THRESHOLDS_FLAP_COUNT_MAX 16
#define THRESHOLDS_FLAP_WINDOW_S 3600
#define THRESHOLDS_FLAP_WINDOW_S_MAX 604800 /* a week */

struct thresholds {
	uint64_t value[THRESHOLD_COUNTERS];
	uint64_t wait_per_second; /* PortXmitWaitPerSecond */
	uint64_t flap_count, flap_window_s;
};

/* The defaults of umadfs's own names (the counters' 0: unset). */
#define THRESHOLDS_INIT { .wait_per_second = THRESHOLD_WAIT_DEFAULT, \
			  .flap_count = THRESHOLDS_FLAP_COUNT, \
			  .flap_window_s = THRESHOLDS_FLAP_WINDOW_S }

/* Counter i (0 to THRESHOLD_COUNTERS - 1): its name (SymbolErrorCounter
 * ... PortXmitWait) and its libibmad PortCounters field. */
const char *thresholds_name(unsigned i);
int thresholds_field(unsigned i);
/* i of the counter of PortCounters field f, or -1. */
int thresholds_index(int field);
/* text[0..len) into *t (THRESHOLDS_INIT first): 0, or -EINVAL with
 * "line L: reason" in why (*t then unchanged). */
int thresholds_parse(const char *text, size_t len, struct thresholds *t,
		     char *why, size_t cap);
/* The file at path: as thresholds_parse; -ENOENT when it is not there,
 * -EINVAL when it is not a regular file (a FIFO or a device: refused,
 * never waited on), -EFBIG over THRESHOLDS_FILE_MAX bytes, another -errno
 * when it cannot be read (why says; filetext_read()). */
int thresholds_load(const char *path, struct thresholds *t, char *why,
		    size_t cap);

#endif
