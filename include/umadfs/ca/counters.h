/* counters/: the kernel's sysfs counter files, each read a PerfMgt query
 * (PortCounters, or PortCountersExtended where the PMA supports it) to the
 * local port, decoded with libibmad; and reset, whose write of 1 clears
 * them (root's, and the admin group's). */
#ifndef UMADFS_COUNTERS_H
#define UMADFS_COUNTERS_H

#include <sys/types.h>

struct node;
struct ca_port;

/* Where an action is noted (fabric/events): printf-like. */
typedef void (*counters_note_fn)(const char *fmt, ...);

/* Before the CAs are built: the group that may reset too (NULL: root
 * only; -o fabric_admin_group=), and where resets are noted (or NULL). */
void counters_configure(const gid_t *group, counters_note_fn note);

int counters_add_files(struct node *port_dir, struct ca_port *port);

#endif
