/* fabric/last_error (lasterror.h): the reason, kept under its lock. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "umadfs/fabric/files/lasterror.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char last[256]; /* "" if none (lock) */

static void set(const char *fmt, va_list ap)
{
	pthread_mutex_lock(&lock);
	vsnprintf(last, sizeof(last), fmt, ap);
	pthread_mutex_unlock(&lock);
}

void lasterror_set(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set(fmt, ap);
	va_end(ap);
}

void lasterror_refuse(fuse_req_t req, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set(fmt, ap);
	va_end(ap);
	fuse_reply_err(req, err);
}

int lasterror_show(char *buf, size_t cap)
{
	int len;

	pthread_mutex_lock(&lock);
	len = last[0] ? snprintf(buf, cap, "%s\n", last) : 0;
	pthread_mutex_unlock(&lock);
	return len;
}
