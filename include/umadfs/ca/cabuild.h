/* Building a CA's part of the tree from what libibumad reports. */
#ifndef UMADFS_CABUILD_H
#define UMADFS_CABUILD_H

#include "umadfs/device/device.h"

/* Builds the CA called name under root: its directory, ports/, the
 * attribute and counter files; the caller holds the tree write lock.
 * Starts no thread (it may run before fuse_daemonize()).  0 or -errno;
 * *out is NULL when libibumad cannot read the CA (skipped, with a
 * warning). */
int cabuild_add(struct node *root, const char *name, enum attr_source source,
		struct ca **out);

#endif
