/* The fabric/ directory: its files, and the node directories and links
 * that follow each new snapshot. */
#ifndef UMADFS_FABFILES_H
#define UMADFS_FABFILES_H

#include <sys/types.h>

struct node;
struct fab_snap;

/* Adds fabric/ (files, nodes/, class/infiniband/) under root, into *out;
 * group (or NULL) may write sweep and interval_ms too. */
int fabfiles_add(struct node *root, const gid_t *group, struct node **out);
/* After snap became current: a directory per node (new ones made, gone
 * ones removed), peer and class links as snap has them.  The sweep thread. */
void fabfiles_update(struct fab_snap *snap);
/* At exit: drops the snapshot the directories were made from, and the
 * big files whose RELEASE never came. */
void fabfiles_close(void);

#endif
