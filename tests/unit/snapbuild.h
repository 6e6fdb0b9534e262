/* Building snapshots by hand for the fabric's unit tests. */
#ifndef UMADFS_TEST_SNAPBUILD_H
#define UMADFS_TEST_SNAPBUILD_H

#include <string.h>

#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/mad/ibcodes.h"

/* Links a's port pa and b's port pb, both ways. */
static inline void link_ports(struct fab_node *a, unsigned pa, struct fab_node *b,
			      unsigned pb)
{
	a->ports[pa].peer_guid = b->guid;
	a->ports[pa].peer_port = (uint8_t)pb;
	b->ports[pb].peer_guid = a->guid;
	b->ports[pb].peer_port = (uint8_t)pa;
}

/* A switch (0x200000, 8 ports, all with PortInfo, described
 * `switch "one"`, LID 2) whose port 1 is linked to a CA's (0x100000,
 * `hca`, port GUID 0x100001, LID 3), 4x SDR, Active, counted. */
static inline struct fab_snap *switch_and_hca(void)
{
	struct fab_snap *s = fabsnap_new();
	struct fab_node *sw, *ca;

	sw = fabsnap_add(s, 0x200000, 8);
	sw->type = FAB_SWITCH;
	strcpy(sw->desc, "switch \"one\"");
	ca = fabsnap_add(s, 0x100000, 1);
	sw = fabsnap_find(s, 0x200000); /* the array may have moved */
	ca->type = FAB_CA;
	strcpy(ca->desc, "hca");
	ca->ports[1].port_guid = 0x100001;
	ca->ports[1].lid = 3;
	for (unsigned p = 0; p <= 8; p++)
		sw->ports[p].has_info = true;
	sw->ports[0].lid = sw->ports[1].lid = 2; /* a switch port: port 0's */
	ca->ports[1].has_info = true;
	ca->ports[1].width = sw->ports[1].width = IB_LINK_WIDTH_ACTIVE_4X;
	ca->ports[1].speed = sw->ports[1].speed = IB_LINK_SPEED_ACTIVE_2_5; /* SDR */
	ca->ports[1].state = sw->ports[1].state = IB_LINK_ACTIVE;
	link_ports(sw, 1, ca, 1);
	fabsnap_count(s);
	return s;
}

#endif
