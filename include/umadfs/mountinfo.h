/* This process's mount table (/proc/self/mountinfo), as the daemon asks it:
 * which device is mounted on a path, and whether a device still is. */
#ifndef UMADFS_MOUNTINFO_H
#define UMADFS_MOUNTINFO_H

#include <stdbool.h>
#include <sys/types.h>

/* The device of the newest mount on path (the one on top): 0 or -errno
 * (-ENOENT: nothing is mounted there). */
int mountinfo_dev_of(const char *path, dev_t *out);
/* Whether a mount of dev is still in this namespace (true when the table
 * cannot be read: never stop on a guess). */
bool mountinfo_has_dev(dev_t dev);

#endif
