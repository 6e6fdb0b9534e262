/* fabric/events: one key=value line per change a sweep found, read as a
 * stream (blocking, O_NONBLOCK, poll) by any number of readers, each from
 * the time it opened.  The last FABEVENTS_MAX lines are kept; a reader
 * that falls further behind gets one `event=dropped count=N` line.
 * fabric/events.log: the same lines as a regular file that only grows
 * (its size every byte written), for tail -f and log shippers; a read
 * before the lines kept gets `event=dropped bytes=N` and then them. */
#ifndef UMADFS_FABEVENTS_H
#define UMADFS_FABEVENTS_H

struct node;
struct fab_snap;

#define FABEVENTS_MAX 4096

/* Adds events and events.log. */
int fabevents_add(struct node *fabric_dir);
/* Queues the changes from old to new (when both are complete sweeps),
 * then the problems raised and cleared (old may be NULL: all raised), and
 * wakes the readers.  The sweep thread. */
void fabevents_diff(const struct fab_snap *old, const struct fab_snap *new);
/* Queues one line now (a trap heard, an action done) and wakes the
 * readers.  Any thread. */
void fabevents_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fabevents_close(void);

#endif
