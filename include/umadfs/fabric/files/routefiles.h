/* The routing files of fabric/: routes/SRC/DST (made per lookup, never
 * listed), a switch's nodes/0xGUID/lft and its ports' routed_lids and
 * routed_endports. */
#ifndef UMADFS_ROUTEFILES_H
#define UMADFS_ROUTEFILES_H

#include <stdbool.h>
#include <stdint.h>

struct node;
struct fab_node;

/* Adds fabric/routes/ when on (-o fabric_routes=, default on); off, the
 * calls below add nothing either.  0 or -ENOMEM. */
int routefiles_add(struct node *fabric_dir, bool on);
/* A new node directory (fabfiles.c, once it holds its owner): lft when
 * fn is a switch. */
void routefiles_node(struct node *dir, const struct fab_node *fn);
/* A node's ports/N/ being made (fabfiles.c, once it holds its owner):
 * routed_lids and routed_endports when the node is a switch.  0 or
 * -ENOMEM. */
int routefiles_port(struct node *dir, uint64_t guid, unsigned port);

#endif
