/* fabric/last_error: why the last write under fabric/ was refused (or an
 * action failed), for every file of fabric/ that is written. */
#ifndef UMADFS_LASTERROR_H
#define UMADFS_LASTERROR_H

#include <stddef.h>

#include <fuse_lowlevel.h>

/* Sets the reason.  Any thread. */
void lasterror_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sets the reason and refuses the write req with err. */
void lasterror_refuse(fuse_req_t req, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The file's text: the reason and a newline, or "" when none. */
int lasterror_show(char *buf, size_t cap);

#endif
