/* The daemon's one clock (clock.h): CLOCK_MONOTONIC for "now" and every
 * timed wait; the wall clock's times as the files print them. */
#include <errno.h>
#include <time.h>

#include "umadfs/base/clock.h"

int64_t clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int clock_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, int64_t deadline_ms)
{
	struct timespec until = {
		.tv_sec = deadline_ms / 1000,
		.tv_nsec = (long)(deadline_ms % 1000) * 1000000,
	};
	int r;

	if (deadline_ms < 0)
		until = (struct timespec){ 0 };
	r = pthread_cond_clockwait(cond, mutex, CLOCK_MONOTONIC, &until);
	return r == ETIMEDOUT ? ETIMEDOUT : 0;
}

void clock_iso_time(char *buf, size_t cap, const struct timespec *t)
{
	struct tm tm;

	gmtime_r(&t->tv_sec, &tm);
	if (!strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm) && cap)
		buf[0] = '\0';
}
