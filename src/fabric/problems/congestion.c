/* port_congested (problems_priv.h): a port whose PortXmitWait grew faster
 * than the threshold (PortXmitWaitPerSecond) between the last two sweeps
 * (rates.h), with its share of the time at the tick assumed, the VL that
 * waited most and, a switch's port, the LIDs its table forwards out of it. */
#include <inttypes.h>
#include <stdio.h>

#include "umadfs/fabric/problems/thresholds.h"
#include "umadfs/fabric/snapshot/rates.h"
#include "umadfs/fabric/snapshot/routes.h"
#include "umadfs/mad/pmadetails.h"

#include "problems_priv.h"

/* The VL whose PortVLXmitWait grew most since was (the port in the
 * snapshot before), or, without was's, is highest; -1 without the port's
 * PortVLXmitWaitCounters. */
static int busiest_vl(const struct fab_port *fp, const struct fab_port *was)
{
	const uint8_t *now = fabsnap_details(fp, PMADET_VL);
	const uint8_t *then = was ? fabsnap_details(was, PMADET_VL) : NULL;
	unsigned vls = pmadetails_oper_vls(fp->oper_vls);
	uint64_t most = 0;
	int best = -1;

	for (unsigned vl = 0; now && vl < vls; vl++) {
		unsigned c = pmadetails_vl_counter(vl);
		uint64_t v = pmadetails_value(c, now);
		uint64_t b = then ? pmadetails_value(c, then) : 0;

		v = v > b ? v - b : 0;
		if (best < 0 || v > most) {
			best = (int)vl;
			most = v;
		}
	}
	return best;
}

/* The problem's keys into found. */
static void congested_keys(struct fab_problem *pr, const struct fab_node *n,
			   unsigned p, const struct port_rates *r, uint64_t threshold,
			   const struct fab_node *old)
{
	const struct fab_port *was = old && p <= old->nports ? &old->ports[p] : NULL;
	int vl = busiest_vl(&n->ports[p], was);
	size_t o = (size_t)snprintf(pr->found, sizeof(pr->found),
				    "xmit_wait_per_second=%.0f threshold=%" PRIu64
				    " wait_share=%.4f", r->xmit_wait, threshold,
				    r->xmit_wait * THRESHOLD_TICK_NS / 1e9);
	unsigned counts[256];

	if (vl >= 0 && o < sizeof(pr->found))
		o += (size_t)snprintf(pr->found + o, sizeof(pr->found) - o,
				      " busiest_vl=%d", vl);
	if (n->type == FAB_SWITCH && n->lft && o < sizeof(pr->found)) {
		routes_port_lids(n, counts);
		snprintf(pr->found + o, sizeof(pr->found) - o, " routed_lids=%u", counts[p]);
	}
}

void congestion_judge(struct problem_list *j, uint64_t threshold)
{
	const struct fab_snap *s = j->snap;

	for (size_t i = 0; s->rate_base_ms && i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];
		const struct fab_node *old = j->last ? fabsnap_find(j->last, n->guid) : NULL;

		for (unsigned p = 1; p <= n->nports; p++) {
			const struct fab_node *peer = NULL;
			struct fab_problem *pr;
			struct port_rates r;
			const char *why;

			if (!n->ports[p].has_info || rates_port(s, n, p, &r, &why) < 0 ||
			    r.xmit_wait <= (double)threshold)
				continue;
			pr = problem_add(j, PROBLEM_PORT_CONGESTED, n, (int)p);
			if (!pr)
				return;
			if (fabsnap_peer(s, &n->ports[p], &peer))
				problem_set_peer(pr, peer, n->ports[p].peer_port);
			congested_keys(pr, n, p, &r, threshold, old);
		}
	}
}
