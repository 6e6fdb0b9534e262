/* Groups as the mount options name them: a name, or a GID as chown takes
 * it (it need not be named). */
#ifndef UMADFS_GROUP_H
#define UMADFS_GROUP_H

#include <stddef.h>
#include <sys/types.h>

/* group into *out: 0, or -EINVAL / -ENOENT / -errno with the reason in why. */
int group_parse(const char *group, gid_t *out, char *why, size_t whylen);

#endif
