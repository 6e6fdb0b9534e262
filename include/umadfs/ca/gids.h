/* A port's gids/: its GID table, one file an entry, as the kernel's
 * /sys/class/infiniband/CA/ports/N/gids/ shows it. */
#ifndef UMADFS_GIDS_H
#define UMADFS_GIDS_H

struct node;
struct ca_port;

/* Adds port_dir/gids, its entries made at its first use: 0 or -ENOMEM. */
int gids_add_dir(struct node *port_dir, struct ca_port *port);

#endif
