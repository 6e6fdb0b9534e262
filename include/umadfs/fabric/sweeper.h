/* The sweeps: a thread that sweeps when asked (and every interval_ms if
 * set), out of the first ACTIVE port or the one configured, and swaps each
 * new snapshot in; the files take references on the current one. */
#ifndef UMADFS_SWEEPER_H
#define UMADFS_SWEEPER_H

#include <stdbool.h>

#include <fuse_lowlevel.h>

struct fab_snap;
struct ca_port;

/* Copies up to max of the host's ports now into out; returns how many.
 * The ports stay valid until the daemon exits (the process layer's). */
typedef int (*sweeper_ports_fn)(struct ca_port **out, int max);

#define SWEEPER_INTERVAL_MAX_MS 86400000u /* a day */

/* Before start: the period (0: on demand) and the port, "" for the first
 * ACTIVE one.  -EINVAL for a CA name too long. */
int sweeper_configure(unsigned interval_ms, const char *ca, int portnum);
/* Starts the thread; on_swap(old, snap) runs on it after each swap (old
 * the snapshot before, or NULL), before the waiting writers are answered. */
int sweeper_start(void (*on_swap)(struct fab_snap *old, struct fab_snap *snap),
		  sweeper_ports_fn ports);
/* Answers every parked write (ENODEV) and first reader, and ends a
 * running sweep soon. */
void sweeper_release(void);
/* Joins the thread and drops the current snapshot. */
void sweeper_stop(void);

/* The current snapshot (a reference), or NULL. */
struct fab_snap *sweeper_snapshot(void);
/* The current snapshot in *out (a reference, or NULL); when there is none
 * yet, starts a sweep and waits for it (a minute at most; shutdown ends
 * the wait): 0, or -EINTR when req is interrupted meanwhile (*out NULL). */
int sweeper_first_snapshot(fuse_req_t req, struct fab_snap **out);
/* Asks for a sweep and parks req, a write of size bytes, until one that
 * started after the call is complete; replies then, or EINTR if req is
 * interrupted, ENODEV at shutdown, EAGAIN if 1024 writes are parked. */
void sweeper_park_write(fuse_req_t req, size_t size);
unsigned sweeper_interval_ms(void);
void sweeper_set_interval_ms(unsigned ms);

#endif
