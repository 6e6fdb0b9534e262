/* counters/: the kernel's sysfs counter files, each read a PerfMgt query
 * (PortCounters, or PortCountersExtended where the PMA supports it) to the
 * local port, decoded with libibmad. */
#ifndef UMADFS_COUNTERS_H
#define UMADFS_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

struct node;
struct ca_port;

int counters_add_files(struct node *port_dir, struct ca_port *port);

/* The counters by index, 0 to counters_count() - 1: the kernel's sysfs
 * name, and the value from a PortCounters answer's data (basic) or, where
 * the PMA has them (capmask: its ClassPortInfo CapabilityMask), from a
 * PortCountersExtended one (ext, or NULL).  False when neither has it. */
unsigned counters_count(void);
const char *counters_name(unsigned i);
bool counters_value(unsigned i, const uint8_t *basic, const uint8_t *ext,
		    unsigned capmask, uint64_t *out);

#endif
