/* The daemon's one clock: "now" and timed waits, on CLOCK_MONOTONIC, so
 * that a step of the wall clock (NTP, date -s) neither ends a wait early
 * nor makes it late.  The wall clock is for what a person reads (a
 * snapshot's time, an event's: clock_iso_time()), never for a deadline. */
#ifndef UMADFS_CLOCK_H
#define UMADFS_CLOCK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in milliseconds, and in microseconds (for durations). */
int64_t clock_now_ms(void);
int64_t clock_now_us(void);

/* Waits on cond (mutex held) until signalled or CLOCK_MONOTONIC reaches
 * deadline_ms: 0, or ETIMEDOUT once the deadline has passed.  Works on
 * any condition variable, PTHREAD_COND_INITIALIZER's too (the wait names
 * its clock: pthread_cond_clockwait). */
int clock_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, int64_t deadline_ms);

/* A wall-clock time as every file prints one: ISO 8601 UTC to the second
 * (2026-11-24T09:12:04Z); "" if cap is too small. */
void clock_iso_time(char *buf, size_t cap, const struct timespec *t);

#endif
