/* The port counters as the kernel's sysfs names them (counters/), and
 * their PortCounters and PortCountersExtended fields (libibmad's), chosen
 * by what the PMA's ClassPortInfo CapabilityMask says it has; the ones
 * ibqueryerrors checks, by its names (libibmad's field names). */
#ifndef UMADFS_PMACOUNTERS_H
#define UMADFS_PMACOUNTERS_H

#include <stdbool.h>
#include <stdint.h>

/* The counters by index, 0 to pmacounters_count() - 1: the kernel's sysfs
 * name, and the value from a PortCounters answer's data (basic) or, where
 * the PMA has them (capmask: its ClassPortInfo CapabilityMask), from a
 * PortCountersExtended one (ext, or NULL).  False when neither has it. */
unsigned pmacounters_count(void);
const char *pmacounters_name(unsigned i);
bool pmacounters_value(unsigned i, const uint8_t *basic, const uint8_t *ext,
		       unsigned capmask, uint64_t *out);
/* The attribute to ask counter i of a PMA with capmask:
 * IB_GSI_PORT_COUNTERS_EXT, IB_GSI_PORT_COUNTERS, or 0 when it has none. */
unsigned pmacounters_attr(unsigned i, unsigned capmask);
/* The index of the counter the kernel's sysfs calls name (0 when none:
 * callers name counters of the table). */
unsigned pmacounters_index(const char *name);

/* The counters ibqueryerrors checks, in its order: PortCounters' error
 * counters (symbol_error ... VL15_dropped), then port_xmit_wait (a
 * congestion count).  The index of the k-th (k < PMACOUNTERS_CHECKED). */
#define PMACOUNTERS_CHECKED 13
unsigned pmacounters_checked(unsigned k);
/* Whether counter i is one of the error counters. */
bool pmacounters_is_error(unsigned i);
/* Counter i's PortCounters field (libibmad's IB_PC_*_F, whose
 * mad_field_name() is ibqueryerrors' name of it), 0 when it has none. */
int pmacounters_field(unsigned i);
/* The largest value PortCounters field f holds (its width's): a counter
 * there is saturated. */
uint64_t pmacounters_field_max(int field);

#endif
