/* A port's rates (rates.h): the counters of the snapshot before kept as
 * each port's base by the sweep, and the differences over the time
 * between the two sweeps' ends.  A refresh keeps its sweep's counters,
 * bases and times. */
#include <errno.h>

#include "umadfs/device/sysfmt.h"
#include "umadfs/fabric/snapshot/rates.h"
#include "umadfs/mad/pmacounters.h"

/* The counters a base holds, in its order, and their scale to the rates'
 * units (the data counters count 4-byte words). */
static const struct {
	const char *name;
	unsigned scale;
} based[5] = {
	{ "port_xmit_data", 4 }, { "port_rcv_data", 4 },
	{ "port_xmit_packets", 1 }, { "port_rcv_packets", 1 },
	{ "port_xmit_wait", 1 },
};

/* The port's counters in base order: false when one is missing. */
static bool counters_of(const struct fab_node *n, const struct fab_port *fp,
			uint64_t v[5])
{
	if (!fp->has_counters)
		return false;
	for (unsigned k = 0; k < 5; k++)
		if (!pmacounters_value(pmacounters_index(based[k].name), fp->basic,
				       fp->has_ext ? fp->ext : NULL, n->pma_capmask, &v[k]))
			return false;
	return true;
}

void rates_take_base(struct fab_snap *snap, const struct fab_snap *prev)
{
	snap->rate_base_ms = prev && prev->ok ? prev->mono_ms : 0;
	for (size_t i = 0; snap->rate_base_ms && i < snap->nnodes; i++) {
		struct fab_node *n = &snap->nodes[i];
		const struct fab_node *was = fabsnap_find(prev, n->guid);

		for (unsigned p = 0; was && p <= n->nports && p <= was->nports; p++)
			n->ports[p].has_rate_base =
				counters_of(was, &was->ports[p], n->ports[p].rate_base);
	}
}

/* Share of the link's rate (sysfmt's: width x lane speed, as `rate` and
 * umadfs_port_rate_bytes_per_second say it), or -1 without one. */
static double share(const struct fab_port *fp, double bytes_per_s)
{
	int mbps = sysfmt_rate_mbps(fp->width, fp->speed, fp->ext_speed);

	return mbps > 0 ? bytes_per_s / (mbps * 125000.0) : -1;
}

int rates_port(const struct fab_snap *s, const struct fab_node *n, unsigned p,
	       struct port_rates *r, const char **why)
{
	const struct fab_port *fp = &n->ports[p];
	double v[5], secs;
	uint64_t now[5];

	*why = RATES_NONE_YET;
	if (!s->rate_base_ms || s->mono_ms <= s->rate_base_ms)
		return -ENODATA;
	*why = "no rates: the port's counters were not read in both sweeps";
	if (!fp->has_rate_base || !counters_of(n, fp, now))
		return -ENODATA;
	r->interval_ms = (uint64_t)(s->mono_ms - s->rate_base_ms);
	secs = (double)r->interval_ms / 1000.0;
	for (unsigned k = 0; k < 5; k++) {
		*why = "no rates: the port's counters were cleared between the sweeps";
		if (now[k] < fp->rate_base[k])
			return -ENODATA;
		v[k] = (double)(now[k] - fp->rate_base[k]) * based[k].scale / secs;
	}
	*r = (struct port_rates){ .xmit_bytes = v[0], .rcv_bytes = v[1],
				  .xmit_packets = v[2], .rcv_packets = v[3],
				  .xmit_wait = v[4], .interval_ms = r->interval_ms };
	r->xmit_util = share(fp, v[0]);
	r->rcv_util = share(fp, v[1]);
	return 0;
}
