/* A reference count shared between threads: the one way a block shared by
 * snapshots (a forwarding table, a PKeyTable, the multicast groups ...)
 * is held and let go. */
#ifndef UMADFS_REFS_H
#define UMADFS_REFS_H

#include <stdbool.h>

/* One more holder of the count at refs. */
void refs_get(int *refs);
/* One holder less: true when it was the last (the caller frees). */
bool refs_put(int *refs);

#endif
