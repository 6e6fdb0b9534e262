/* A fabric port's traffic files (trafficfiles.c): counters/'s detail
 * counters and ports/N/rates. */
#ifndef UMADFS_TRAFFICFILES_H
#define UMADFS_TRAFFICFILES_H

#include <stdint.h>

struct node;

/* A node's ports/N/ being made (fabfiles.c; tree write lock held): the
 * detail counters in counters (one per VL the port has in the current
 * snapshot) and rates in dir, port p > 0.  0 or -ENOMEM. */
int trafficfiles_port(struct node *dir, struct node *counters, uint64_t guid,
		      unsigned p);

#endif
