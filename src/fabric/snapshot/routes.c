/* Routing from a snapshot's forwarding tables (routes.h): names of
 * endports, the path of a packet as ibtracert follows it, the LIDs per
 * switch port.  No MADs; any thread that holds the snapshot. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/number.h"
#include "umadfs/fabric/snapshot/routes.h"
#include "umadfs/mad/ibcodes.h"

#define GUID_NAME_LEN 18 /* "0x" and 16 hex digits */

int routes_parse_name(const char *s, struct route_name *out)
{
	size_t len = strlen(s);
	uint64_t v;

	if (number_parse(s, len, &v) < 0)
		return -ENOENT;
	out->is_guid = len == GUID_NAME_LEN && (s[1] == 'x' || s[1] == 'X');
	out->value = v;
	if (!out->is_guid && (!v || v > ROUTE_LID_MAX))
		return -ENOENT;
	return 0;
}

unsigned routes_first_endport(const struct fab_node *n)
{
	return n->type == FAB_SWITCH ? 0 : 1;
}

unsigned routes_last_endport(const struct fab_node *n)
{
	return n->type == FAB_SWITCH ? 0 : n->nports;
}

bool routes_has_lid(const struct fab_port *p, unsigned lid)
{
	return p->has_info && p->lid && lid >= p->lid &&
	       lid < p->lid + (1u << (p->lmc & 7));
}

static int by_node_guid(const struct fab_snap *s, uint64_t guid,
			struct route_end *out)
{
	const struct fab_node *n = fabsnap_find(s, guid);

	if (!n)
		return -ENOENT;
	for (unsigned p = routes_first_endport(n); p <= routes_last_endport(n); p++) {
		if (n->type == FAB_SWITCH || n->ports[p].lid) {
			*out = (struct route_end){ n, p, n->ports[p].lid };
			return 0;
		}
	}
	return -ENOENT;
}

int routes_resolve(const struct fab_snap *s, const struct route_name *name,
		   struct route_end *out)
{
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = routes_first_endport(n); p <= routes_last_endport(n); p++) {
			const struct fab_port *fp = &n->ports[p];

			if (name->is_guid ? fp->port_guid != name->value :
			    !routes_has_lid(fp, (unsigned)name->value))
				continue;
			*out = (struct route_end){ n, p, name->is_guid ? fp->lid :
						   (uint16_t)name->value };
			return 0;
		}
	}
	return name->is_guid ? by_node_guid(s, name->value, out) : -ENOENT;
}

/* ---- a path ---- */

static void add_hop(struct route *r, const struct fab_node *n, int in, int out)
{
	r->hop[r->nhops++] = (struct route_hop){ n, in, out };
}

static const struct fab_node *broke(struct route *r, enum route_result result,
				    const struct fab_node *at)
{
	r->result = result;
	r->at = at;
	return NULL;
}

static bool visited(const struct route *r, const struct fab_node *n)
{
	for (unsigned i = 0; i < r->nhops; i++)
		if (r->hop[i].node == n)
			return true;
	return false;
}

/* Out of n's port out: the node at the other end, its port in *in; NULL
 * (r's result set) when the port is not Active or leads nowhere known. */
static const struct fab_node *cross(const struct fab_snap *s, struct route *r,
				    const struct fab_node *n, unsigned out, int *in)
{
	const struct fab_port *p = &n->ports[out];
	const struct fab_node *peer = NULL;

	if (!p->has_info || p->state != IB_LINK_ACTIVE)
		return broke(r, ROUTE_DEAD_END, n);
	if (!fabsnap_peer(s, p, &peer))
		return broke(r, ROUTE_UNREACHABLE, n);
	*in = p->peer_port;
	return peer;
}

unsigned routes_entry(const struct fab_node *n, unsigned lid)
{
	return lid <= n->lft->top ? n->lft->port[lid] : ROUTE_NO_PORT;
}

/* Node n, reached by its port in (-1: the source): the path's next node,
 * or NULL at its end (r's result set unless it arrived).  As ibtracert:
 * a switch's entry must name a port even when the DLID is its own. */
static const struct fab_node *step(const struct fab_snap *s, struct route *r,
				   const struct fab_node *n, int in,
				   unsigned dlid, int *next_in)
{
	unsigned e;

	if (n->type != FAB_SWITCH) {
		add_hop(r, n, in, -1);
		if (in >= 0 && routes_has_lid(&n->ports[in], dlid))
			return NULL;
		/* A CA or router that is not the destination: the entry of
		 * the node before sent it here. */
		return broke(r, ROUTE_DEAD_END, r->hop[r->nhops - 2].node);
	}
	if (visited(r, n)) {
		add_hop(r, n, in, -1);
		return broke(r, ROUTE_LOOP, n);
	}
	if (!n->lft) {
		add_hop(r, n, in, -1);
		return broke(r, ROUTE_UNREACHABLE, n);
	}
	e = routes_entry(n, dlid);
	if (e == ROUTE_NO_PORT || routes_has_lid(&n->ports[0], dlid)) {
		add_hop(r, n, in, -1);
		return e == ROUTE_NO_PORT ? broke(r, ROUTE_UNROUTED, n) : NULL;
	}
	add_hop(r, n, in, (int)e);
	if (!e || e > n->nports)
		return broke(r, ROUTE_DEAD_END, n);
	return cross(s, r, n, e, next_in);
}

void routes_trace(const struct fab_snap *s, const struct route_end *src,
		  const struct route_end *dst, struct route *r)
{
	const struct fab_node *n = src->node;
	int in = -1;

	r->nhops = 0;
	r->result = ROUTE_OK;
	r->at = NULL;
	if (n->type != FAB_SWITCH) {
		if (routes_has_lid(&n->ports[src->port], dst->lid)) {
			add_hop(r, n, -1, -1);
			return;
		}
		add_hop(r, n, -1, (int)src->port);
		n = cross(s, r, n, src->port, &in);
	}
	while (n) {
		if (r->nhops == ROUTE_HOPS_MAX) {
			broke(r, ROUTE_UNREACHABLE, r->hop[r->nhops - 1].node);
			break;
		}
		n = step(s, r, n, in, dst->lid, &in);
	}
}

char *routes_text(const struct route *r, size_t *len)
{
	static const char *const results[] = {
		[ROUTE_OK] = "ok", [ROUTE_UNROUTED] = "unrouted",
		[ROUTE_LOOP] = "loop", [ROUTE_DEAD_END] = "dead_end",
		[ROUTE_UNREACHABLE] = "unreachable",
	};
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	bool bad;

	if (!f)
		return NULL;
	for (unsigned i = 0; i < r->nhops; i++) {
		const struct route_hop *h = &r->hop[i];
		char q[4 * FAB_DESC_LEN + 3];

		fabsnap_quote(q, sizeof(q), h->node->desc);
		fprintf(f, "guid=0x%016" PRIx64 " node_desc=%s", h->node->guid, q);
		if (h->in >= 0)
			fprintf(f, " in=%d", h->in);
		if (h->out >= 0)
			fprintf(f, " out=%d", h->out);
		fputc('\n', f);
	}
	if (r->result == ROUTE_OK)
		fprintf(f, "result=ok hops=%u\n", r->nhops ? r->nhops - 1 : 0);
	else
		fprintf(f, "result=%s at=0x%016" PRIx64 "\n", results[r->result],
			r->at->guid);
	bad = ferror(f);
	if (fclose(f) || bad) {
		free(text);
		return NULL;
	}
	return text;
}

void routes_port_lids(const struct fab_node *n, unsigned *counts)
{
	memset(counts, 0, (n->nports + 1u) * sizeof(*counts));
	for (unsigned lid = 1; n->lft && lid <= n->lft->top; lid++)
		if (n->lft->port[lid] <= n->nports)
			counts[n->lft->port[lid]]++;
}
