/* fabric/partitions/: the partitions the endports' PKeyTables name, each
 * with its full and its limited members. */
#ifndef UMADFS_PARTFILES_H
#define UMADFS_PARTFILES_H

struct node;
struct fab_snap;

/* Adds fabric/partitions/ (empty until the first snapshot): 0 or -ENOMEM. */
int partfiles_add(struct node *fabric_dir);
/* A new snapshot is current: a directory for each partition it names, none
 * for one it does not.  Takes the tree lock. */
void partfiles_update(const struct fab_snap *snap);

#endif
