/* fabric/metrics.prom (fabmetrics.c): a snapshot's Prometheus text, the
 * families of the groups -o fabric_metrics= selects (promlines.h), made
 * as it is read and never whole: a snapshot keeps where each chunk of
 * about 32 KiB starts (its index, made once by a sizing pass), and each
 * open a cursor that formats the chunk a read wants. */
#ifndef UMADFS_FABMETRICS_H
#define UMADFS_FABMETRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fab_snap;
struct fabmetrics_cursor;

/* -o fabric_metrics=GROUP+... (NULL: all): the groups of promlines.h by
 * name, or all, joined by + (a comma would begin another mount option).
 * -EINVAL with a message on stderr.  Before any thread. */
int fabmetrics_configure(const char *groups);
/* Whether word is the name of a group (or all). */
bool fabmetrics_is_group(const char *word);

/* The text's length for snap (held by the caller): its index made at the
 * first call for the snapshot.  0, or -ENOMEM. */
int fabmetrics_size(struct fab_snap *snap, uint64_t *len);

/* A reader of snap's text (it holds snap until fabmetrics_close), its
 * index made if it was not; NULL on ENOMEM.  About 34 KiB. */
struct fabmetrics_cursor *fabmetrics_open(struct fab_snap *snap);
/* Up to size bytes of the text at off into buf: the bytes read, 0 at or
 * past its end, or -EIO (a chunk made again that is not what the index
 * says: a bug, logged).  Reads of one cursor take turns. */
ssize_t fabmetrics_read(struct fabmetrics_cursor *c, char *buf, size_t size,
			uint64_t off);
void fabmetrics_close(struct fabmetrics_cursor *c);

/* Makes snap's index now if old's was made (its text was read or sized:
 * a scraper's next read then finds it); snap and old held by the caller. */
void fabmetrics_make_ahead(struct fab_snap *snap, struct fab_snap *old);

#endif
