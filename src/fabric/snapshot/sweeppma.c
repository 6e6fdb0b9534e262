/* A sweep's PMA part (discover_priv.h): a node's ClassPortInfo, then its
 * ports' PortCounters and PortCountersExtended (and the details sweepdet.c
 * asks once a port's PortCounters are in), asked as soon as its
 * PortInfo is in, beside the discovery still going on; a switch whose PMA
 * sums its ports (AllPortSelect) and has PortCountersExtended gets one
 * PortCounters Get for all its ports, and its ports keep the snapshot
 * before's PortCounters when the sum's counters are what they add up to
 * (none saturated), or, when the snapshot before has not all of them (the
 * first sweep), are 0 when the sum's are (counters only grow: a sum of 0
 * is 0 at every port, as ibqueryerrors takes it); else each port's is
 * asked. */
#include <errno.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/mad/getframe.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/pmacounters.h"
#include "umadfs/mad/pmadetails.h"

#include "discover_priv.h"

#define ALL_PORTS 0xff /* PortSelect: the sum over a switch's ports */

unsigned sweeppma_frame(const struct discover *d, const struct req *r, uint8_t *frame)
{
	const struct fab_node *n = &d->snap->nodes[r->node];
	unsigned lid = fabsnap_pma_lid(n, r->port);
	uint8_t data[IB_PC_DATA_SZ] = { 0 };
	static const unsigned attr[] = {
		[REQ_PMA_CPI] = CLASS_PORT_INFO,
		[REQ_PORT_COUNTERS] = IB_GSI_PORT_COUNTERS,
		[REQ_PORT_COUNTERS_EXT] = IB_GSI_PORT_COUNTERS_EXT,
	};
	unsigned id = r->kind == REQ_PORT_DETAILS ?
		pmadetails_attr_id((enum pmadetails_attr)r->block) : attr[r->kind];

	if (r->kind != REQ_PMA_CPI)
		getframe_counters_select(data, id, r->port);
	getframe_pma(frame, lid, id, data);
	return lid;
}

static bool has_ext_counters(const struct fab_node *n)
{
	return n->pma_capmask & (IB_PM_EXT_WIDTH_SUPPORTED | IB_PM_EXT_WIDTH_NOIETF_SUP);
}

/* Whether the switch's ports may have their PortCounters by its sum: its
 * PMA sums (AllPortSelect) and has PortCountersExtended for the data
 * counters. */
static bool can_sum(const struct fab_node *n)
{
	return (n->pma_capmask & IB_PM_ALL_PORT_SELECT) && has_ext_counters(n);
}

/* Whether was (prev's node, or NULL) has every port's PortCounters. */
static bool all_counted(const struct fab_node *was)
{
	if (!was)
		return false;
	for (unsigned p = 0; p <= was->nports; p++)
		if (!was->ports[p].has_counters)
			return false;
	return true;
}

/* Whether the sum's counters that ibqueryerrors checks are what was's
 * ports add up to (was NULL: 0), none at its field's maximum (a saturated
 * sum says nothing of its ports).  Counters only grow, so then no port's
 * changed, unless one was cleared while others grew by exactly as much in
 * every counter. */
static bool sum_matches(const struct fab_node *was, uint8_t *sum)
{
	for (unsigned k = 0; k < PMACOUNTERS_CHECKED; k++) {
		int field = pmacounters_field(pmacounters_checked(k));
		enum MAD_FIELDS f = (enum MAD_FIELDS)field;
		uint64_t total = 0;

		if (mad_get_field(sum, 0, f) >= pmacounters_field_max(field))
			return false;
		for (unsigned p = 0; was && p <= was->nports; p++)
			total += mad_get_field((void *)was->ports[p].basic, 0, f);
		if (total != mad_get_field(sum, 0, f))
			return false;
	}
	return true;
}

/* What the sum says of the ports: SUM_KEPT, prev's stand; SUM_ZERO, each
 * is 0 (said only when prev has not all of them: a sum of 0 where prev's
 * ports add up to more says one was cleared, or that the PMA sums
 * otherwise); SUM_NONE, nothing. */
static uint8_t sum_verdict(const struct fab_node *was, uint8_t *sum)
{
	if (!all_counted(was))
		return sum_matches(NULL, sum) ? SUM_ZERO : SUM_NONE;
	return sum_matches(was, sum) ? SUM_KEPT : SUM_NONE;
}

/* Port p's counters: PortCounters (unless basic is false) and
 * PortCountersExtended where the PMA has them. */
static int port_counters(struct discover *d, uint32_t ni, unsigned p, bool basic)
{
	struct fab_node *n = &d->snap->nodes[ni];
	struct req *r;

	n->ports[p].pma_asked = true;
	if (basic && d->ns[ni].probe) { /* the rest once it answers */
		r = sweepreq_enqueue(d, REQ_PORT_COUNTERS, ni, p, 0, NULL);
		if (!r)
			return -ENOMEM;
		r->once = true;
		return 0;
	}
	if (basic && sweepreq_ask(d, REQ_PORT_COUNTERS, ni, p, 0, NULL) < 0)
		return -ENOMEM;
	if (has_ext_counters(n) && sweepreq_ask(d, REQ_PORT_COUNTERS_EXT, ni, p, 0, NULL) < 0)
		return -ENOMEM;
	return 0;
}

/* A switch's counters: every port's (port 0 too, as its ports/0/counters/
 * shows them), PortCounters by the sum where it can. */
static int switch_counters(struct discover *d, uint32_t ni)
{
	struct fab_node *n = &d->snap->nodes[ni];
	struct nstate *ns = &d->ns[ni];
	int err = 0;

	ns->summed = can_sum(n);
	for (unsigned p = 0; !err && p <= n->nports; p++) {
		if (!n->ports[p].has_info || n->ports[p].pma_asked)
			continue;
		err = port_counters(d, ni, p, !ns->summed);
		if (ns->summed)
			ns->sum_pending++;
	}
	if (!err && ns->summed) {
		ns->sum_pending++;
		err = sweepreq_ask(d, REQ_PORT_COUNTERS, ni, ALL_PORTS, 0, NULL);
	}
	return err;
}

/* The counters of the node's ports whose PortInfo is in and not asked yet
 * (its ClassPortInfo known). */
static int node_counters(struct discover *d, uint32_t ni)
{
	struct fab_node *n = &d->snap->nodes[ni];
	int err = 0;

	if (n->type == FAB_SWITCH)
		return switch_counters(d, ni);
	for (unsigned p = 1; !err && p <= n->nports; p++)
		if (n->ports[p].has_info && !n->ports[p].pma_asked && fabsnap_pma_lid(n, p))
			err = port_counters(d, ni, p, true);
	return err;
}

int sweeppma_start(struct discover *d, uint32_t ni, unsigned p)
{
	switch (d->ns[ni].cpi) {
	case CPI_KNOWN:
		return node_counters(d, ni);
	case CPI_NONE:
		d->ns[ni].cpi = CPI_ASKED;
		return sweepreq_ask(d, REQ_PMA_CPI, ni, p, 0, NULL);
	default: /* asked: its answer asks the counters; failed: none */
		return 0;
	}
}

static int pma_class(struct discover *d, const struct req *r, uint8_t *data)
{
	struct fab_node *n = &d->snap->nodes[r->node];

	n->pma_capmask = (uint16_t)mad_get_field(data, 0, IB_CPI_CAPMASK_F);
	n->has_cpi = true;
	d->ns[r->node].cpi = CPI_KNOWN;
	return node_counters(d, r->node);
}

/* Port p's PortCounters as its PMA would answer them when all are 0. */
static void zero_counters(struct fab_port *fp, unsigned p)
{
	memset(fp->basic, 0, FAB_PC_LEN);
	mad_set_field(fp->basic, 0, IB_PC_PORT_SELECT_F, p);
}

/* A summed switch's sum or PortCountersExtended Get ended; after the last,
 * its ports keep prev's PortCounters, have 0, or have theirs asked.  A port keeps
 * them only with its PortCountersExtended in, whose data counters replace
 * the old ones of PortCounters. */
static int sum_ended(struct discover *d, uint32_t ni)
{
	struct fab_node *n = &d->snap->nodes[ni];
	struct nstate *ns = &d->ns[ni];

	if (--ns->sum_pending)
		return 0;
	for (unsigned p = 0; p <= n->nports; p++) {
		struct fab_port *fp = &n->ports[p];

		if (!fp->pma_asked)
			continue;
		if (ns->sum != SUM_NONE && fp->has_ext) {
			if (ns->sum == SUM_KEPT)
				memcpy(fp->basic, ns->was->ports[p].basic, FAB_PC_LEN);
			else
				zero_counters(fp, p);
			fp->has_counters = true;
			if (sweepdet_port(d, ni, p) < 0)
				return -ENOMEM;
		} else if (sweepreq_ask(d, REQ_PORT_COUNTERS, ni, p, 0, NULL) < 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

int sweeppma_answered(struct discover *d, const struct req *r, uint8_t *pma)
{
	struct fab_node *n = &d->snap->nodes[r->node];

	switch (r->kind) {
	case REQ_PMA_CPI:
		return pma_class(d, r, pma);
	case REQ_PORT_COUNTERS:
		if (r->port == ALL_PORTS) {
			d->ns[r->node].sum = sum_verdict(d->ns[r->node].was, pma);
			return sum_ended(d, r->node);
		}
		memcpy(n->ports[r->port].basic, pma, FAB_PC_LEN);
		n->ports[r->port].has_counters = true;
		if (r->once) { /* a kept CA's probe answered: its link stands */
			d->ns[r->node].probe = false;
			if (port_counters(d, r->node, r->port, false) < 0)
				return -ENOMEM; /* (its PortCountersExtended now) */
		}
		return sweepdet_port(d, r->node, r->port);
	case REQ_PORT_DETAILS:
		sweepdet_answered(d, r, pma);
		return 0;
	default: /* PortCountersExtended */
		memcpy(n->ports[r->port].ext, pma, FAB_PCX_LEN);
		n->ports[r->port].has_ext = true;
		return d->ns[r->node].summed ? sum_ended(d, r->node) : 0;
	}
}

int sweeppma_failed(struct discover *d, const struct req *r)
{
	switch (r->kind) {
	case REQ_PMA_CPI:
		d->ns[r->node].cpi = CPI_FAILED; /* no counters, as before */
		return 0;
	case REQ_PORT_COUNTERS:
		return r->port == ALL_PORTS ? sum_ended(d, r->node) : 0;
	case REQ_PORT_DETAILS:
		sweepdet_failed(d, r);
		return 0;
	default: /* PortCountersExtended */
		return d->ns[r->node].summed ? sum_ended(d, r->node) : 0;
	}
}
