/* A fabric port's pkeys/: its PKeyTable as the last sweep read it. */
#ifndef UMADFS_PKEYFILES_H
#define UMADFS_PKEYFILES_H

#include <stdint.h>

struct node;

/* A node's ports/N/ being made (fabfiles.c): its pkeys/, whose entries
 * are made at its first use.  0 or -ENOMEM. */
int pkeyfiles_port(struct node *dir, uint64_t guid, unsigned port);

#endif
