/* The FUSE low-level operations: one dispatch table.  Each operation finds
 * the node of its inode and, for files, hands over to the node's kind. */
#ifndef UMADFS_FS_H
#define UMADFS_FS_H

#include <fuse_lowlevel.h>

extern const struct fuse_lowlevel_ops fs_ops;

#endif
