/* carriesbench: the time of what a port carries (src/fabric/snapshot/
 * carries.c) on a fat tree built in memory, with no fabric: a leaf's
 * uplink and one of its HCA ports, their disable's cut (admin's dry run)
 * and the uplink's routed_endports.  Up routes by DLID mod the spines,
 * down routes direct.  usage: carriesbench [LEAVES SPINES HCAS_PER_LEAF]
 * (default 250 16 64: the 16k tree of gen-fabric.py --fabric huge). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "snapbuild.h"
#include "umadfs/fabric/snapshot/carries.h"
#include "umadfs/fabric/snapshot/fabsnap.h"

enum { SPINE = 0x10000, LEAF = 0x20000, HCA = 0x100000 };

static unsigned nl = 250, ns = 16, nh = 64;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void up(struct fab_port *p, unsigned lid)
{
	p->has_info = true;
	p->state = IB_LINK_ACTIVE;
	p->lid = (uint16_t)lid;
}

/* Switch guid's port out for each LID; LIDs: spines 1.., leaves, HCAs. */
static void route(struct fab_snap *s, unsigned top)
{
	for (unsigned lid = 1; lid < top; lid++) {
		unsigned leaf = lid <= ns ? ~0u : lid <= ns + nl ? lid - ns - 1 :
				(lid - ns - nl - 1) / nh;

		for (unsigned j = 0; j < ns; j++)
			fabsnap_find(s, SPINE + j)->lft->port[lid] = (uint8_t)(
				lid == 1 + j ? 0 : leaf == ~0u ? 1 : leaf + 1);
		for (unsigned i = 0; i < nl; i++)
			fabsnap_find(s, LEAF + i)->lft->port[lid] = (uint8_t)(
				lid == ns + 1 + i ? 0 : leaf == i && lid > ns + nl ?
				1 + (lid - ns - nl - 1) % nh : nh + 1 + lid % ns);
	}
}

static struct fab_snap *tree(void)
{
	struct fab_snap *s = fabsnap_new();
	unsigned top = ns + nl + nl * nh + 1;

	for (unsigned i = 0; i < ns + nl; i++)
		fabsnap_add(s, i < ns ? SPINE + i : LEAF + i - ns, i < ns ? nl : nh + ns);
	for (unsigned i = 0; i < nl * nh; i++)
		fabsnap_add(s, HCA + i, 1)->type = FAB_CA;
	for (unsigned i = 0; i < ns + nl; i++) {
		struct fab_node *n = &s->nodes[i];

		n->type = FAB_SWITCH;
		n->lft = fabsnap_lft_new(top, 0);
		for (unsigned p = 0; p <= n->nports; p++)
			up(&n->ports[p], p ? 0 : 1 + i);
	}
	for (unsigned i = 0; i < nl * nh; i++) {
		struct fab_node *c = fabsnap_find(s, HCA + i);

		up(&c->ports[1], ns + nl + 1 + i);
		c->ports[1].port_guid = c->guid + 1;
		link_ports(fabsnap_find(s, LEAF + i / nh), 1 + i % nh, c, 1);
	}
	for (unsigned i = 0; i < nl; i++)
		for (unsigned j = 0; j < ns; j++)
			link_ports(fabsnap_find(s, LEAF + i), nh + 1 + j,
				   fabsnap_find(s, SPINE + j), 1 + i);
	route(s, top);
	s->local_guid = HCA + 1; /* the second HCA of the first leaf */
	s->local_port_guid = HCA + 2;
	fabsnap_count(s);
	return s;
}

static void cut(const struct fab_snap *s, const char *what, unsigned port)
{
	struct carries_cut c;
	double t0 = now();

	if (carries_cut(s, fabsnap_find(s, LEAF), port, &c) < 0)
		exit(1);
	printf("%s: cut %.1f ms (disable_host_routes %u disable_pair_routes %llu "
	       "disable_isolated %u)\n", what, (now() - t0) * 1e3, c.host,
	       (unsigned long long)c.pairs, c.isolated);
}

int main(int argc, char **argv)
{
	struct fab_snap *s;
	struct carried *c;
	size_t n;
	double t0;

	if (argc == 4) {
		nl = (unsigned)atoi(argv[1]);
		ns = (unsigned)atoi(argv[2]);
		nh = (unsigned)atoi(argv[3]);
	}
	if (!nl || !ns || !nh || nh + ns > 254 || nl > 254) {
		fprintf(stderr, "usage: carriesbench [LEAVES SPINES HCAS_PER_LEAF]\n");
		return 2;
	}
	s = tree();
	printf("%u nodes, %u endports\n", s->stats.nodes, nl * nh + nl + ns);
	cut(s, "leaf uplink", nh + 1);
	cut(s, "leaf HCA port", 1);
	t0 = now();
	if (carries_endports(s, fabsnap_find(s, LEAF), nh + 1, &c, &n) < 0)
		return 1;
	printf("leaf uplink: routed_endports %.1f ms, %zu lines\n", (now() - t0) * 1e3, n);
	free(c);
	fabsnap_put(s);
	return 0;
}
