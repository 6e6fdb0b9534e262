/* fabric/mcast/: the SA's multicast groups, each with its MGID and
 * members, and each switch's `mft`. */
#ifndef UMADFS_MCASTFILES_H
#define UMADFS_MCASTFILES_H

struct node;
struct fab_node;
struct fab_snap;

/* Adds fabric/mcast/ (empty until the first snapshot): 0 or -ENOMEM. */
int mcastfiles_add(struct node *fabric_dir);
/* A new snapshot is current: a directory for each group it has, none for
 * one it has not.  Takes the tree lock. */
void mcastfiles_update(const struct fab_snap *snap);
/* A node's directory dir is made: a switch's `mft` in it. */
void mcastfiles_node(struct node *dir, const struct fab_node *fn);

#endif
