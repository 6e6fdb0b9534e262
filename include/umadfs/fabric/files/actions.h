/* Acting on the fabric: nodes/0xGUID/ports/N/admin (disable, enable,
 * reset as ibportstate does them; a read gives the physical state now)
 * and ports/N/counters/reset (perfquery -R and -x -R), each write parked
 * until the port answers. */
#ifndef UMADFS_ACTIONS_H
#define UMADFS_ACTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct node;

/* -o fabric_admin_group=: the group that may act too (NULL: root only).
 * Before the tree is built. */
void actions_configure(const gid_t *group);
/* A port directory being made (fabfiles.c): admin in port_dir, reset in
 * counters_dir, for node guid's port.  0 or -ENOMEM. */
int actions_port(struct node *port_dir, struct node *counters_dir, uint64_t guid,
		 unsigned port);
/* The group of -o fabric_admin_group= into *out, false without one. */
bool actions_group(gid_t *out);

#endif
