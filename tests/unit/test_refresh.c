/* A refresh (refresh.c): what it asks and what it carries over, its
 * directed-route Gets answered by a fabric of the test's own (the
 * "truth", a snapshot walked hop by hop as a directed route goes), the
 * snapshot before being the view's.
 *
 * The fabric: the local CA1 on switch S's port 1; CA2 on S[2]; S[3]
 * down; switch T on S[4] (T[1]) and S[5] (T[2]), found through S[4];
 * CA4 on T[3]. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "check.h"
#include "snapbuild.h"
#include "umadfs/fabric/snapshot/refresh.h"

enum { CA1 = 0x10, S = 0x20, CA2 = 0x30, T = 0x40, CA4 = 0x50, NEW = 0x60 };

/* -- the fabric that answers ------------------------------------------------ */

struct fake {
	struct fab_snap *truth;
	uint64_t silent;  /* a node that answers nothing */
	unsigned gets;    /* Gets asked */
};

/* The node at the end of path[1..hops], the port the route enters it by
 * in *in; NULL where a port on the way has no link. */
static const struct fab_node *walk(const struct fab_snap *s, unsigned hops,
				   const uint8_t *path, unsigned *in)
{
	const struct fab_node *n = fabsnap_find(s, s->local_guid);

	*in = 1;
	for (unsigned i = 1; n && i <= hops; i++) {
		const struct fab_port *p;

		if (path[i] < 1 || path[i] > n->nports)
			return NULL;
		p = &n->ports[path[i]];
		if (!p->peer_guid || p->state <= 1)
			return NULL;
		*in = p->peer_port;
		n = fabsnap_find(s, p->peer_guid);
	}
	return n;
}

static void node_info(const struct fab_node *n, unsigned in, uint8_t *data)
{
	mad_set_field(data, 0, IB_NODE_BASE_VERS_F, 1);
	mad_set_field(data, 0, IB_NODE_CLASS_VERS_F, 1);
	mad_set_field(data, 0, IB_NODE_TYPE_F, n->type);
	mad_set_field(data, 0, IB_NODE_NPORTS_F, n->nports);
	mad_set_field64(data, 0, IB_NODE_SYSTEM_GUID_F, n->sys_guid);
	mad_set_field64(data, 0, IB_NODE_GUID_F, n->guid);
	mad_set_field64(data, 0, IB_NODE_PORT_GUID_F, n->ports[in].port_guid);
	mad_set_field(data, 0, IB_NODE_DEVID_F, n->device_id);
	mad_set_field(data, 0, IB_NODE_REVISION_F, n->revision);
	mad_set_field(data, 0, IB_NODE_LOCAL_PORT_F, in);
	mad_set_field(data, 0, IB_NODE_VENDORID_F, n->vendor_id);
}

static void port_info(const struct fab_port *p, uint8_t *data)
{
	mad_set_field(data, 0, IB_PORT_LID_F, p->lid);
	mad_set_field(data, 0, IB_PORT_SMLID_F, p->sm_lid);
	mad_set_field(data, 0, IB_PORT_CAPMASK_F, p->cap_mask);
	mad_set_field(data, 0, IB_PORT_STATE_F, p->state);
	mad_set_field(data, 0, IB_PORT_PHYS_STATE_F, p->phys_state);
	mad_set_field(data, 0, IB_PORT_LMC_F, p->lmc);
	mad_set_field(data, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, p->width);
	mad_set_field(data, 0, IB_PORT_LINK_SPEED_ACTIVE_F, p->speed);
}

static int fake_get(void *ctx, unsigned attr, unsigned mod, unsigned hops,
		    const uint8_t *path, uint8_t *data)
{
	struct fake *f = ctx;
	const struct fab_node *n;
	unsigned in;

	f->gets++;
	n = walk(f->truth, hops, path, &in);
	if (!n || n->guid == f->silent)
		return -ETIMEDOUT;
	memset(data, 0, IB_SMP_DATA_SIZE);
	switch (attr) {
	case IB_ATTR_NODE_INFO:
		node_info(n, in, data);
		return 0;
	case IB_ATTR_NODE_DESC:
		memcpy(data, n->desc, strlen(n->desc));
		return 0;
	case IB_ATTR_PORT_INFO:
		if (mod > n->nports)
			return -EPROTO;
		port_info(&n->ports[mod], data);
		return 0;
	}
	return -EPROTO;
}

static bool going_on(void)
{
	return false;
}

static bool stopping(void)
{
	return true;
}

/* -- the view before ---------------------------------------------------- */

static struct fab_node *node(struct fab_snap *s, uint64_t guid, unsigned type,
			     unsigned nports, unsigned hops, const char *route)
{
	struct fab_node *n = fabsnap_add(s, guid, nports);

	n->type = (uint8_t)type;
	n->hops = (uint8_t)hops;
	n->entry_port = hops ? 1 : 0;
	for (unsigned i = 0; i < hops; i++)
		n->path[i + 1] = (uint8_t)(route[i] - '0');
	snprintf(n->desc, sizeof(n->desc), "node %#llx", (unsigned long long)guid);
	n->has_desc = true;
	for (unsigned p = type == FAB_SWITCH ? 0 : 1; p <= nports; p++) {
		n->ports[p].has_info = true;
		n->ports[p].state = 4;
		n->ports[p].phys_state = 5;
		n->ports[p].port_guid = type == FAB_SWITCH ? guid : guid + p;
		n->ports[p].lid = (uint16_t)guid;
		n->ports[p].has_counters = true;
		n->ports[p].basic[10] = (uint8_t)(guid + p); /* a counter */
	}
	return n;
}

static void down(struct fab_node *n, unsigned p)
{
	n->ports[p].state = 1;
	n->ports[p].phys_state = 2;
	n->ports[p].peer_guid = 0;
	n->ports[p].peer_port = 0;
}

static struct fab_snap *view(void)
{
	struct fab_snap *s = fabsnap_new();
	struct fab_node *sw;

	node(s, CA1, FAB_CA, 1, 0, "");
	node(s, S, FAB_SWITCH, 5, 1, "1");
	node(s, CA2, FAB_CA, 1, 2, "12");
	node(s, T, FAB_SWITCH, 3, 2, "14");
	node(s, CA4, FAB_CA, 1, 3, "143");
	link_ports(fabsnap_find(s, CA1), 1, fabsnap_find(s, S), 1);
	link_ports(fabsnap_find(s, S), 2, fabsnap_find(s, CA2), 1);
	link_ports(fabsnap_find(s, S), 4, fabsnap_find(s, T), 1);
	link_ports(fabsnap_find(s, S), 5, fabsnap_find(s, T), 2);
	link_ports(fabsnap_find(s, T), 3, fabsnap_find(s, CA4), 1);
	sw = fabsnap_find(s, S);
	down(sw, 3);
	sw->lft = fabsnap_lft_new(3, 0);
	sw->lft->port[0] = 0;
	sw->lft->port[1] = 1;
	sw->lft->port[2] = 2;
	sw->lft->port[3] = 4;
	s->sms = calloc(1, sizeof(*s->sms));
	s->sms[0] = (struct fab_sm){ .guid = CA1, .lid = CA1, .state = 3 };
	s->nsms = 1;
	s->local_guid = CA1;
	s->ok = true;
	fabsnap_count(s);
	return s;
}

/* A test's world: the view's snapshot before, and the fabric now (the
 * view's, changed by the test). */
struct world {
	struct fab_snap *prev;
	struct fake fake;
	bool need_sweep;
	unsigned again_ms;
};

static void setup(struct world *w)
{
	w->prev = view();
	w->fake = (struct fake){ .truth = fabsnap_copy(w->prev, NULL, NULL) };
}

static void teardown(struct world *w, struct fab_snap *out)
{
	fabsnap_put(out);
	fabsnap_put(w->fake.truth);
	fabsnap_put(w->prev);
}

/* One refresh of what ask names: the new snapshot, or NULL. */
static struct fab_snap *refresh(struct world *w, struct refresh_ask ask,
				bool (*stopped)(void))
{
	struct refresh_via via = { .get = fake_get, .ctx = &w->fake };

	return refresh_run(&via, w->prev, &ask, 1, stopped, &w->need_sweep,
			   &w->again_ms);
}

/* -- the tests ------------------------------------------------------------ */

/* S[4] goes down: both ends unlinked, T's route now through S[5]; S[2]
 * goes down: CA2, reached by no link, leaves the snapshot. */
static void test_ports_down(void)
{
	const struct fab_node *t, *sw;
	struct fab_snap *out;
	struct world w;

	setup(&w);
	down(fabsnap_find(w.fake.truth, S), 4);
	down(fabsnap_find(w.fake.truth, T), 1);
	down(fabsnap_find(w.fake.truth, S), 2);
	down(fabsnap_find(w.fake.truth, CA2), 1);
	out = refresh(&w, (struct refresh_ask){ .lid = S }, going_on);
	CHECK(out && !w.need_sweep);
	CHECK_INT(w.again_ms, REFRESH_RECHECK_MS);
	sw = out ? fabsnap_find(out, S) : NULL;
	t = out ? fabsnap_find(out, T) : NULL;
	CHECK(sw && t);
	if (!sw || !t)
		goto done;
	CHECK(fabsnap_find(out, CA2) == NULL);
	CHECK(fabsnap_find(out, CA4) != NULL);
	CHECK_INT(out->stats.nodes, 4);
	CHECK_INT(sw->ports[4].peer_guid, 0);
	CHECK_INT(t->ports[1].peer_guid, 0);
	CHECK_INT(t->ports[1].state, 1);
	CHECK_INT(t->ports[1].phys_state, 2);
	CHECK_INT(sw->ports[2].peer_guid, 0);
	CHECK_INT(sw->ports[5].peer_guid, T);
	CHECK_INT(t->ports[2].peer_guid, S);
	/* Routes recomputed: T by S[5], entered on its port 2; CA4 beyond. */
	CHECK_INT(t->hops, 2);
	CHECK_INT(t->path[2], 5);
	CHECK_INT(t->entry_port, 2);
	CHECK_INT(fabsnap_find(out, CA4)->path[2], 5);
	/* One Get per port of S (0..5), nothing else. */
	CHECK_INT(out->stats.mads, 6);
	CHECK_INT(w.fake.gets, 6);
	/* Ports went down: the SM reroutes, the next sweep reads the tables. */
	CHECK(out->reroute_ms > 0);
done:
	teardown(&w, out);
}

/* What a refresh does not ask comes from the view: counters (of the node
 * asked too), a switch's forwarding table, the SMs, descriptions. */
static void test_carried_over(void)
{
	const struct fab_node *sw, *t, *ca4;
	struct fab_snap *out;
	struct world w;

	setup(&w);
	strcpy(fabsnap_find(w.fake.truth, T)->desc, "a new name");
	out = refresh(&w, (struct refresh_ask){ .guid = T }, going_on);
	CHECK(out && !w.need_sweep);
	CHECK_INT(w.again_ms, 0); /* nothing changed */
	sw = out ? fabsnap_find(out, S) : NULL;
	t = out ? fabsnap_find(out, T) : NULL;
	ca4 = out ? fabsnap_find(out, CA4) : NULL;
	CHECK(sw && t && ca4);
	if (!sw || !t || !ca4)
		goto done;
	CHECK(sw->lft && sw->lft->top == 3 && sw->lft->port[3] == 4);
	/* The view's table itself, a reference more: not a copy. */
	CHECK(sw->lft == fabsnap_find(w.prev, S)->lft);
	CHECK_INT(out->reroute_ms, 0); /* nothing that makes an SM reroute */
	CHECK(ca4->ports[1].has_counters && ca4->ports[1].basic[10] == CA4 + 1);
	CHECK_INT(sw->ports[5].basic[10], S + 5);
	CHECK(t->ports[3].has_counters);
	CHECK_INT(t->ports[3].basic[10], T + 3);
	CHECK_INT(out->nsms, 1);
	CHECK(out->nsms == 1 && out->sms[0].guid == CA1 && out->sms[0].state == 3);
	CHECK_STR(t->desc, "node 0x40"); /* not asked */
	CHECK_INT(out->stats.mads, 4); /* T's ports 0..3 */
	CHECK_INT(w.fake.gets, 4);
	fabsnap_put(out);
	/* A trap 144's ask takes the description again. */
	w.fake.gets = 0;
	out = refresh(&w, (struct refresh_ask){ .guid = T, .desc = true }, going_on);
	t = out ? fabsnap_find(out, T) : NULL;
	CHECK(t != NULL);
	CHECK_STR(t ? t->desc : "", "a new name");
	CHECK_INT(w.fake.gets, 5);
done:
	teardown(&w, out);
}

/* S's port 3, down in the view, comes up linked to a new node's port 1. */
static void new_on_s3(struct world *w, unsigned type, unsigned nports)
{
	struct fab_node *n = node(w->fake.truth, NEW, type, nports, 0, "");
	struct fab_node *sw;

	strcpy(n->desc, "newcomer");
	sw = fabsnap_find(w->fake.truth, S); /* the array may have moved */
	sw->ports[3].state = 4;
	sw->ports[3].phys_state = 5;
	link_ports(sw, 3, fabsnap_find(w->fake.truth, NEW), 1);
}

/* A CA on S[3], which came up: asked and added, linked both ways. */
static void test_ca_added(void)
{
	const struct fab_node *c;
	struct fab_snap *out;
	struct world w;

	setup(&w);
	new_on_s3(&w, FAB_CA, 2);
	fabsnap_find(w.fake.truth, NEW)->ports[2].state = 1;
	out = refresh(&w, (struct refresh_ask){ .guid = S }, going_on);
	CHECK(out && !w.need_sweep);
	c = out ? fabsnap_find(out, NEW) : NULL;
	CHECK(c != NULL);
	if (!c)
		goto done;
	CHECK_INT(c->type, FAB_CA);
	CHECK_INT(c->hops, 2);
	CHECK_INT(c->path[1], 1);
	CHECK_INT(c->path[2], 3);
	CHECK_INT(c->entry_port, 1);
	CHECK_STR(c->desc, "newcomer");
	CHECK_INT(c->ports[1].peer_guid, S);
	CHECK_INT(c->ports[1].peer_port, 3);
	CHECK_INT(c->ports[1].port_guid, NEW + 1);
	CHECK(c->ports[1].has_info && c->ports[2].has_info);
	CHECK_INT(c->ports[2].state, 1);
	CHECK_INT(fabsnap_find(out, S)->ports[3].peer_guid, NEW);
	CHECK_INT(fabsnap_find(out, S)->ports[3].peer_port, 1);
	CHECK_INT(out->stats.nodes, 6);
	/* S's 6 ports, the NodeInfo across S[3], NEW's description and 2 ports. */
	CHECK_INT(out->stats.mads, 10);
	CHECK_INT(w.fake.gets, 10);
done:
	teardown(&w, out);
}

/* A switch on S[3]: what lies beyond it is a sweep's to find. */
static void test_switch_asks_a_sweep(void)
{
	struct fab_snap *out;
	struct world w;

	setup(&w);
	new_on_s3(&w, FAB_SWITCH, 4);
	out = refresh(&w, (struct refresh_ask){ .guid = S }, going_on);
	CHECK(out == NULL);
	CHECK(w.need_sweep);
	teardown(&w, out);
}

/* A node that does not answer by its route, a node the view lacks, a
 * refresh stopped: each a sweep's. */
static void test_unanswered_asks_a_sweep(void)
{
	struct fab_snap *out;
	struct world w;

	setup(&w);
	w.fake.silent = T;
	out = refresh(&w, (struct refresh_ask){ .guid = T }, going_on);
	CHECK(out == NULL && w.need_sweep);
	CHECK_INT(w.fake.gets, 1); /* not a timeout for each of its 4 ports */
	fabsnap_put(out);
	out = refresh(&w, (struct refresh_ask){ .guid = NEW }, going_on);
	CHECK(out == NULL && w.need_sweep);
	fabsnap_put(out);
	w.fake.gets = 0;
	out = refresh(&w, (struct refresh_ask){ .guid = CA4 }, stopping);
	CHECK(out == NULL && w.need_sweep);
	CHECK_INT(w.fake.gets, 0);
	teardown(&w, out);
}

/* Trap 65 for a node gone already: nothing to ask, nothing new. */
static void test_gone_already(void)
{
	struct fab_snap *out;
	struct world w;

	setup(&w);
	w.need_sweep = true;
	w.again_ms = 1;
	out = refresh(&w, (struct refresh_ask){ .guid = NEW, .gone = true }, going_on);
	CHECK(out == NULL);
	CHECK(!w.need_sweep);
	CHECK_INT(w.again_ms, 0);
	CHECK_INT(w.fake.gets, 0);
	teardown(&w, out);
}

int main(void)
{
	test_ports_down();
	test_carried_over();
	test_ca_added();
	test_switch_asks_a_sweep();
	test_unanswered_asks_a_sweep();
	test_gone_already();
	CHECK_DONE();
}
