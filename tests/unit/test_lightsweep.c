/* The light sweep's choice of ports (lightsweep.c): one end of each link,
 * the nearer to the view's port, and every port without a link; and the
 * oldest confirmation it reports, carried over a refresh's snapshot. */
#include "check.h"
#include "snapbuild.h"
#include "umadfs/fabric/snapshot/lightsweep.h"
#include "umadfs/mad/ibcodes.h"

static struct fab_node *node(struct fab_snap *s, uint64_t guid, unsigned type,
			     unsigned nports, unsigned hops)
{
	struct fab_node *n = fabsnap_add(s, guid, nports);

	n->type = (uint8_t)type;
	n->hops = (uint8_t)hops;
	for (unsigned p = 1; p <= nports; p++) {
		n->ports[p].has_info = true;
		n->ports[p].state = IB_LINK_ACTIVE;
		n->ports[p].phys_state = IB_PORT_PHYS_STATE_LINKUP;
	}
	return n;
}

/* The local CA on switch S (hops 1); S's port 2 to CA2, port 3 free, port
 * 4 to switch T (hops 2), whose port 2 is free and port 3 unknown. */
static struct fab_snap *fabric(void)
{
	struct fab_snap *s = fabsnap_new();

	node(s, 1, FAB_CA, 1, 0);
	node(s, 2, FAB_SWITCH, 4, 1);
	node(s, 3, FAB_CA, 1, 2);
	node(s, 4, FAB_SWITCH, 3, 2);
	link_ports(fabsnap_find(s, 1), 1, fabsnap_find(s, 2), 1);
	link_ports(fabsnap_find(s, 2), 2, fabsnap_find(s, 3), 1);
	link_ports(fabsnap_find(s, 2), 4, fabsnap_find(s, 4), 1);
	fabsnap_find(s, 2)->ports[3].state = IB_LINK_DOWN;
	fabsnap_find(s, 4)->ports[2].state = IB_LINK_DOWN;
	fabsnap_find(s, 4)->ports[3].has_info = false;
	s->ok = true;
	return s;
}

int main(void)
{
	struct lightsweep *l = lightsweep_new();
	struct fab_snap *s = fabric();
	struct lightsweep_stats st;

	CHECK(l != NULL);
	CHECK_INT(lightsweep_watch(l, s, 1000), 0);
	lightsweep_stats(l, &st);
	/* CA1[1] (not S[1]), S[2] (not CA2[1]), S[3], S[4] (not T[1]), T[2];
	 * T[3] has no PortInfo. */
	CHECK_INT(st.ports, 5);
	CHECK_INT(st.confirmed_ms, 1000);
	CHECK_INT(st.slices, 0);
	/* A refresh's snapshot keeps the oldest confirmation of the view. */
	CHECK_INT(lightsweep_watch(l, s, 0), 0);
	lightsweep_stats(l, &st);
	CHECK_INT(st.confirmed_ms, 1000);
	CHECK_INT(st.ports, 5);
	/* A sweep's confirms them all as of its start. */
	CHECK_INT(lightsweep_watch(l, s, 5000), 0);
	lightsweep_stats(l, &st);
	CHECK_INT(st.confirmed_ms, 5000);
	/* No snapshot: nothing watched, nothing confirmed. */
	CHECK_INT(lightsweep_watch(l, NULL, 0), 0);
	lightsweep_stats(l, &st);
	CHECK_INT(st.ports, 0);
	CHECK_INT(st.confirmed_ms, 0);
	lightsweep_free(l);
	fabsnap_put(s);
	CHECK_DONE();
}
