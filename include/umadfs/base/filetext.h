/* The whole text of a small regular file, as the mount options name them
 * (-o fabric_expected=, -o fabric_thresholds=): read at once, bounded,
 * and never waited on - a FIFO, a device or a directory is refused, not
 * opened for reading. */
#ifndef UMADFS_FILETEXT_H
#define UMADFS_FILETEXT_H

#include <stddef.h>
#include <time.h>

/* The file at path, of at most max bytes: 0 with *text (malloc'd, for
 * free(); not NUL-terminated), *len and, when mtime is not NULL, its
 * modification time; or -errno with why: -EINVAL "not a regular file",
 * -EFBIG "longer than N MiB" (N bytes when max is not a whole number of
 * MiB), -ENOMEM "out of memory", another -errno (-ENOENT...) its
 * strerror(). */
int filetext_read(const char *path, size_t max, char **text, size_t *len,
		  struct timespec *mtime, char *why, size_t cap);

#endif
