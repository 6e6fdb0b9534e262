/* Small regular files read whole (filetext.h): opened without blocking
 * (O_NONBLOCK: a FIFO's open would wait for a writer), checked to be
 * regular before a byte is read, read to their end or one byte past the
 * bound. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "umadfs/base/array.h"
#include "umadfs/base/filetext.h"

#define FIRST_READ 65536 /* the buffer's first size; doubled as needed */

/* The open file fd to its end, or to max + 1 bytes: 0 or -errno. */
static int read_all(int fd, size_t max, char **buf, size_t *len)
{
	size_t cap = 0;

	*buf = NULL;
	*len = 0;
	for (;;) {
		ssize_t n;

		if (ARRAY_GROW(*buf, cap, *len + 1, FIRST_READ) < 0)
			return -ENOMEM;
		n = read(fd, *buf + *len, (cap < max + 1 ? cap : max + 1) - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		*len += (size_t)n;
		if (!n || *len > max)
			return 0;
	}
}

static int refuse(int err, char *why, size_t cap, size_t max)
{
	if (err == -EFBIG && !(max & ((1u << 20) - 1)))
		snprintf(why, cap, "longer than %zu MiB", max >> 20);
	else if (err == -EFBIG)
		snprintf(why, cap, "longer than %zu bytes", max);
	else if (err == -ENOMEM)
		snprintf(why, cap, "out of memory");
	else
		snprintf(why, cap, "%s", strerror(-err));
	return err;
}

int filetext_read(const char *path, size_t max, char **text, size_t *len,
		  struct timespec *mtime, char *why, size_t cap)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	int err = 0;

	*text = NULL;
	*len = 0;
	if (fd < 0)
		return refuse(-errno, why, cap, max);
	if (fstat(fd, &st) < 0)
		err = -errno;
	else if (S_ISREG(st.st_mode))
		err = read_all(fd, max, text, len);
	close(fd);
	if (!err && !S_ISREG(st.st_mode)) {
		snprintf(why, cap, "not a regular file");
		return -EINVAL;
	}
	if (!err && *len > max)
		err = -EFBIG;
	if (err) {
		free(*text);
		*text = NULL;
		*len = 0;
		return refuse(err, why, cap, max);
	}
	if (mtime)
		*mtime = st.st_mtim;
	return 0;
}
