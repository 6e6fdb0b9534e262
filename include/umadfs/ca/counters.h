/* counters/: the kernel's sysfs counter files, each read a PerfMgt query
 * (PortCounters, or PortCountersExtended where the PMA supports it) to the
 * local port, decoded with libibmad. */
#ifndef UMADFS_COUNTERS_H
#define UMADFS_COUNTERS_H

struct node;
struct ca_port;

int counters_add_files(struct node *port_dir, struct ca_port *port);

#endif
