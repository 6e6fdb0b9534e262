/* The texts of a snapshot: sweep, topology (ibnetdiscover's format),
 * links, problems and rates (metrics.prom is fabmetrics.h's), and a
 * port's rates. */
#ifndef UMADFS_FABTEXT_H
#define UMADFS_FABTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "umadfs/fabric/snapshot/fabsnap.h"

/* Text which of snap (which the caller holds), formatted on first use and
 * kept in the snapshot as long as it lives; NULL on ENOMEM.  *len: its
 * length. */
const char *fabtext_get(struct fab_snap *snap, enum fab_text which, size_t *len);
/* Its length (made if not yet), 0 on ENOMEM. */
size_t fabtext_size(struct fab_snap *snap, enum fab_text which);
/* Makes each text of snap whose text in old was made (someone read it),
 * so that snap's readers find them made. */
void fabtext_make_ahead(struct fab_snap *snap, const struct fab_snap *old);
/* ports/N/rates of node n in snap (`key value` lines, or a `none: `
 * line saying why it has none): its length, or -ENOSPC. */
int fabtext_port_rates(const struct fab_snap *snap, const struct fab_node *n,
		       unsigned p, char *buf, size_t cap);
/* The sweep file (age_ms is now's): its length, or -ENOSPC. */
int fabtext_sweep(const struct fab_snap *snap, char *buf, size_t cap);

#endif
