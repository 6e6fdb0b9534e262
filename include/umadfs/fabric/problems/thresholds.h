/* Error thresholds as ibqueryerrors reads and applies them: the counters
 * it checks (its names, libibmad's), a `Name=value` file with `#`
 * comments, 0 for a counter the file does not name, and a counter over
 * its threshold when its value exceeds it; and umadfs's own names in the
 * same file (link_flapping's). */
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

/* link_flapping (flapcheck.c): a port that went down flap_count times
 * within flap_window_s seconds; the file's LinkFlapCount and
 * LinkFlapWindowSeconds, these defaults and bounds when it names none. */
#define THRESHOLDS_FLAP_COUNT 3
#define THRESHOLDS_FLAP_COUNT_MAX 16
#define THRESHOLDS_FLAP_WINDOW_S 3600
#define THRESHOLDS_FLAP_WINDOW_S_MAX 604800 /* a week */

struct thresholds {
	uint64_t value[THRESHOLD_COUNTERS];
	uint64_t flap_count, flap_window_s;
};

/* Counter i (0 to THRESHOLD_COUNTERS - 1): its name (SymbolErrorCounter
 * ... PortXmitWait) and its libibmad PortCounters field. */
const char *thresholds_name(unsigned i);
int thresholds_field(unsigned i);
/* i of the counter of PortCounters field f, or -1. */
int thresholds_index(int field);
/* text[0..len) into *t (the counters 0 first, the flap settings their
 * defaults): 0, or -EINVAL with "line L: reason" in why (*t then
 * unchanged). */
int thresholds_parse(const char *text, size_t len, struct thresholds *t,
		     char *why, size_t cap);
/* The file at path: as thresholds_parse; -ENOENT when it is not there,
 * -EINVAL when it is not a regular file (a FIFO or a device: refused,
 * never waited on), -EFBIG over THRESHOLDS_FILE_MAX bytes, another -errno
 * when it cannot be read (why says; filetext_read()). */
int thresholds_load(const char *path, struct thresholds *t, char *why,
		    size_t cap);

#endif
