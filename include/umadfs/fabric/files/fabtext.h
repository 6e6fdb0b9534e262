/* The texts of a snapshot: sweep, topology (ibnetdiscover's format),
 * links and metrics.prom, and the one-line values of the node and port
 * files. */
#ifndef UMADFS_FABTEXT_H
#define UMADFS_FABTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "umadfs/fabric/snapshot/fabsnap.h"

/* Text which of snap (which the caller holds), formatted on first use and
 * kept in the snapshot, or (metrics.prom over 32 MiB) made for the
 * caller, who frees it (*owned set); NULL on ENOMEM.  *len: its length. */
const char *fabtext_get(struct fab_snap *snap, enum fab_text which, size_t *len,
			bool *owned);
/* Frees a text fabtext_get() made for its caller (len: its length). */
void fabtext_free(char *text, size_t len);
/* Its length (known once made; made and dropped if not yet), 0 on ENOMEM. */
size_t fabtext_size(struct fab_snap *snap, enum fab_text which);
/* Makes snap's metrics.prom now if old's was read (a scraper's next read
 * then finds it made); snap and old held by the caller. */
void fabtext_make_ahead(struct fab_snap *snap, struct fab_snap *old);
/* The sweep file (age_ms is now's): its length, or -ENOSPC. */
int fabtext_sweep(const struct fab_snap *snap, char *buf, size_t cap);

#endif
