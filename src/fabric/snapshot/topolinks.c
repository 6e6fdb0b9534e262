/* The links of a topology file (topofile_priv.h), once every node is
 * known: each port line's peer found by its name, both ends of a link
 * agreeing (a link two lines give differently refused where the second
 * names its peer), a port without a width and speed of its own taking its
 * peer's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/mad/ibcodes.h"

#include "topofile_priv.h"

static uint32_t name_hash(const char *s, uint8_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (uint8_t k = 0; k < len; k++)
		h = (h ^ (uint8_t)s[k]) * 16777619u;
	return h;
}

/* The index of the node called s, or -1. */
static long find_name(const struct topofile_parser *ps, const char *s, uint8_t len)
{
	for (size_t slot = name_hash(s, len) & (ps->hash_cap - 1);
	     ps->name_hash[slot]; slot = (slot + 1) & (ps->hash_cap - 1)) {
		const struct node_name *o = &ps->names[ps->name_hash[slot] - 1];

		if (o->len == len && !memcmp(ps->text + o->s, s, len))
			return (long)ps->name_hash[slot] - 1;
	}
	return -1;
}

/* Node names -> node index, every name once. */
static int hash_names(struct topofile_parser *ps)
{
	size_t n = ps->snap->nnodes, cap = 16;
	char buf[NAME_MAX_LEN + 1];

	while (cap < 2 * n)
		cap *= 2;
	ps->name_hash = calloc(cap, sizeof(*ps->name_hash));
	if (!ps->name_hash)
		return -ENOMEM;
	ps->hash_cap = cap;
	for (size_t i = 0; i < n; i++) {
		const struct node_name *nm = &ps->names[i];
		const char *name = ps->text + nm->s;
		long dup = find_name(ps, name, nm->len);
		size_t slot;

		if (dup >= 0)
			return topolex_fail_at(ps, nm->line, nm->col,
					       "the name \"%s\" given twice (line %u)",
					       topolex_shown(buf, name, nm->len),
					       ps->names[dup].line);
		for (slot = name_hash(name, nm->len) & (cap - 1); ps->name_hash[slot];
		     slot = (slot + 1) & (cap - 1))
			;
		ps->name_hash[slot] = (uint32_t)i + 1;
	}
	return 0;
}

/* Port p's link as another line gave it, for a refusal. */
static const char *linked_to(const struct topofile_parser *ps, const struct fab_port *p,
			     char *buf, size_t cap)
{
	const struct fab_node *n = fabsnap_find(ps->snap, p->peer_guid);
	char name[NAME_MAX_LEN + 1];

	if (n) {
		const struct node_name *nm = &ps->names[n - ps->snap->nodes];

		snprintf(buf, cap, "\"%s\"[%u]", topolex_shown(name, ps->text + nm->s, nm->len),
			 p->peer_port);
	}
	return buf;
}

void topolinks_set(struct fab_port *p, const struct fab_node *peer, uint8_t port)
{
	p->peer_guid = peer->guid;
	p->peer_port = port;
	p->state = IB_LINK_ACTIVE;
	p->phys_state = IB_PORT_PHYS_STATE_LINKUP;
}

/* One port line's link, both ends.  A link two lines give differently
 * (A says its port 1 goes to B[2], B says its port 2 goes elsewhere) is
 * refused where the second of them names its peer. */
static int resolve_ref(struct topofile_parser *ps, const struct link_ref *r)
{
	const char *name = ps->text + r->name;
	long b = find_name(ps, name, r->name_len);
	struct fab_node *na = &ps->snap->nodes[r->node], *nb;
	struct fab_port *pa, *pb;
	char buf[NAME_MAX_LEN + 1], other[NAME_MAX_LEN + 16] = "";

	if (b < 0)
		return topolex_fail_at(ps, r->line, r->col, "no node is called \"%s\"",
				       topolex_shown(buf, name, r->name_len));
	nb = &ps->snap->nodes[b];
	if (r->peer_port > nb->nports)
		return topolex_fail_at(ps, r->line, r->port_col,
				       "port %u: \"%s\" has ports 1 to %u", r->peer_port,
				       topolex_shown(buf, name, r->name_len), nb->nports);
	if (na == nb && r->port == r->peer_port)
		return topolex_fail_at(ps, r->line, r->col, "a port linked to itself");
	pa = &na->ports[r->port];
	pb = &nb->ports[r->peer_port];
	if (pa->peer_guid && (pa->peer_guid != nb->guid || pa->peer_port != r->peer_port))
		return topolex_fail_at(ps, r->line, r->col, "port %u is linked to %s "
				       "by that node's line", r->port,
				       linked_to(ps, pa, other, sizeof(other)));
	if (pb->peer_guid && (pb->peer_guid != na->guid || pb->peer_port != r->port))
		return topolex_fail_at(ps, r->line, r->col, "\"%s\"[%u] is linked to %s",
				       topolex_shown(buf, name, r->name_len), r->peer_port,
				       linked_to(ps, pb, other, sizeof(other)));
	topolinks_set(pa, nb, r->peer_port);
	topolinks_set(pb, na, r->port);
	pa->width = r->width;
	pa->speed = r->speed;
	pa->ext_speed = r->ext_speed;
	if (nb->type != FAB_SWITCH && !pb->port_guid)
		pb->port_guid = r->peer_port_guid;
	if (!pb->lid)
		pb->lid = r->peer_lid;
	return 0;
}

/* The links, once every node is known; a port whose own line gives no
 * width and speed (or has none) takes its peer's. */
int topolinks_resolve(struct topofile_parser *ps)
{
	struct fab_snap *s = ps->snap;
	int err = hash_names(ps);

	for (size_t i = 0; !err && i < ps->nrefs; i++)
		err = resolve_ref(ps, &ps->refs[i]);
	for (size_t i = 0; !err && i < s->nnodes; i++) {
		struct fab_node *n = &s->nodes[i];

		for (unsigned p = 1; p <= n->nports; p++) {
			struct fab_port *me = &n->ports[p];
			const struct fab_port *peer = fabsnap_peer(s, me, NULL);

			if (peer && !me->width && !me->speed && !me->ext_speed) {
				me->width = peer->width;
				me->speed = peer->speed;
				me->ext_speed = peer->ext_speed;
			}
		}
	}
	return err;
}
