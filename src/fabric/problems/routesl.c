/* Routes on their pairs' SLs (routequal_priv.h): when the snapshot knows
 * each CA-to-CA pair's SL (pathsl.h) and some pair is not on SL 0, the
 * VL a route takes at each hop is its SL's in that switch's SL-to-VL
 * table, from the port it came in by to the port it leaves by, as ibdmchk
 * models it given a path-SL file (-c) and the tables (-d).  For one
 * destination: the SLs each switch's entry's channel carries (its own CA
 * ports' pairs', then those of the switches before it, the farthest
 * first) and, per SL, the VLs they are on there; a dependency from each
 * of those (channel, VL) to the next switch's channel on that SL's VL. */
#include <stdlib.h>
#include <string.h>

#include "routequal_priv.h"

#define SLS 16

void routesl_init(struct rq *q)
{
	const struct fab_pathsl *t = q->s->pathsl;

	q->sls = t && (t->sls & ~1u) ? t->sls : 0;
}

unsigned routesl_vl(const struct rq *q, uint32_t k, unsigned in, unsigned out,
		    unsigned sl)
{
	unsigned v = fabsnap_sl2vl_vl_sl(q->s->nodes[q->sw[k]].sl2vl, in, out, sl);

	return v < q->nvl ? v : q->nvl - 1;
}

unsigned routesl_nvl(const struct rq *q)
{
	unsigned nvl = 1;

	for (uint32_t k = 0; k < q->nsw; k++) {
		const struct fab_node *n = &q->s->nodes[q->sw[k]];

		for (unsigned sl = 0; sl < SLS; sl++)
			for (unsigned in = 1; q->sls >> sl & 1 && in <= n->nports; in++)
				for (unsigned out = 1; out <= n->nports; out++) {
					unsigned v = fabsnap_sl2vl_vl_sl(n->sl2vl, in, out, sl);

					if (v + 1 > nvl)
						nvl = v + 1;
				}
	}
	return nvl;
}

int routesl_alloc(struct rq *q)
{
	q->slmask = calloc(q->nsw + 1, sizeof(*q->slmask));
	q->slvl = calloc((q->nsw + 1) * SLS, sizeof(*q->slvl));
	return q->slmask && q->slvl ? 0 : -1;
}

/* SL sl comes into switch k by port in. */
static void mark(struct rq *q, uint32_t k, unsigned sl, unsigned in)
{
	q->slmask[k] |= (uint16_t)(1u << sl);
	q->slvl[k * SLS + sl] |= (uint16_t)(1u << routesl_vl(q, k, in, q->ent[k], sl));
}

/* Switch k's SLs passed on to the switch its entry leads to. */
static void pass_on(struct rq *q, uint32_t k)
{
	size_t c = q->first[k] + q->ent[k];
	uint32_t j = q->peer[c];
	unsigned in = q->s->nodes[q->sw[k]].ports[q->ent[k]].peer_port;

	for (unsigned sl = 0; j != RQ_NONE && sl < SLS; sl++)
		if (q->slmask[k] >> sl & 1)
			mark(q, j, sl, in);
}

void routesl_vls(struct rq *q, size_t d, unsigned lid)
{
	unsigned top = 0;

	memset(q->slmask, 0, q->nsw * sizeof(*q->slmask));
	memset(q->slvl, 0, q->nsw * SLS * sizeof(*q->slvl));
	for (size_t i = 0; i < q->nca; i++) {
		uint32_t k = q->ca[i].sw;

		if (i == d || !rq_routed(q, k))
			continue;
		mark(q, k, fabsnap_pathsl_sl(q->s->pathsl, q->ca[i].port->port_guid, lid),
		     q->ca[i].port->peer_port);
	}
	for (uint32_t k = 0; k < q->nsw; k++)
		if (rq_routed(q, k) && q->hops[k] > top)
			top = q->hops[k];
	for (unsigned h = top; h > 1; h--)
		for (uint32_t k = 0; k < q->nsw; k++)
			if (rq_routed(q, k) && q->hops[k] == h)
				pass_on(q, k);
}

void routesl_depend(struct rq *q, uint32_t k, size_t c)
{
	uint32_t j = q->peer[c];
	size_t base = (q->ebase[c] + q->ent[j]) * q->nvl;
	unsigned in = q->s->nodes[q->sw[k]].ports[q->ent[k]].peer_port;

	for (unsigned sl = 0; sl < SLS; sl++) {
		unsigned to;

		if (!(q->slmask[k] >> sl & 1))
			continue;
		to = routesl_vl(q, j, in, q->ent[j], sl);
		for (unsigned v = 0; v < q->nvl; v++) {
			size_t bit = (base + v) * q->nvl + to;

			if (q->slvl[k * SLS + sl] >> v & 1)
				q->edges[bit / 64] |= 1ull << (bit % 64);
		}
	}
}
