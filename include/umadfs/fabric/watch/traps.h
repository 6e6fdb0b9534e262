/* The SM's traps as events: a subscription to traps 64, 65, 128 and 144
 * from the fabric view's port, kept while the mount is up (traps.c); each
 * Report answered, noted in fabric/events and refreshing what it names. */
#ifndef UMADFS_TRAPS_H
#define UMADFS_TRAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* -o fabric_traps=on|off (default on).  Before traps_start(). */
void traps_configure(bool on);
/* Starts the traps thread (nothing with fabric_traps=off): 0 or -errno. */
/* The traps thread's events (event=trap lines) go to note. */
typedef void (*traps_note_fn)(const char *line);
int traps_start(traps_note_fn note);
/* Ends the thread's waits soon; any thread, twice is fine. */
void traps_shutdown(void);
/* Joins the thread, leaves the SA's list, unregisters the agent. */
void traps_stop(void);
/* The sweep file's lines: "traps STATE[: reason]" (STATE checking until
 * the first check after the first sweep), the Reports heard and those
 * dropped (the queue was full); *subscribed: whether STATE is subscribed.
 * Returns the length, as snprintf. */
int traps_text(char *buf, size_t cap, bool *subscribed);

#endif
