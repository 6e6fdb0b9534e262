/* Building snapshots by hand for the fabric's unit tests. */
#ifndef UMADFS_TEST_SNAPBUILD_H
#define UMADFS_TEST_SNAPBUILD_H

#include "umadfs/fabric/snapshot/fabsnap.h"

/* Links a's port pa and b's port pb, both ways. */
static inline void link_ports(struct fab_node *a, unsigned pa, struct fab_node *b,
			      unsigned pb)
{
	a->ports[pa].peer_guid = b->guid;
	a->ports[pa].peer_port = (uint8_t)pb;
	b->ports[pb].peer_guid = a->guid;
	b->ports[pb].peer_port = (uint8_t)pa;
}

#endif
