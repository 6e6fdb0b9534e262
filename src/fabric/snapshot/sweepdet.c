/* A sweep's detail counters (discover_priv.h): which ports have their
 * PortRcvErrorDetails, PortXmitDiscardDetails and PortVLXmitWaitCounters
 * asked - those whose summary counter (port_rcv_errors,
 * port_xmit_discards, port_xmit_wait) moved since the snapshot before,
 * those never answered (whose summary is not 0, and the others up to
 * DETAILS_NEW_MAX ports a sweep), and a slice of all the ports in turn,
 * every port once in DETAILS_ROTATION sweeps - and the others' kept from
 * the snapshot before (docs/files.md, "What a sweep asks"). */
#include <errno.h>
#include <string.h>

#include "umadfs/mad/pmacounters.h"
#include "umadfs/mad/pmadetails.h"

#include "discover_priv.h"

/* Every port's details are asked at least once in this many sweeps. */
#define DETAILS_ROTATION 32
/* Ports never answered whose summary counters are 0 that one sweep asks
 * the details of (3 Gets each): a fabric of up to this many ports has
 * them all after its first sweep; a larger one after a sweep more for
 * each this many (16k HCAs: 40,000 ports, 10 sweeps), the first sweep
 * not half as long again. */
#define DETAILS_NEW_MAX 4096

/* Whether port p of n is in this sweep's slice of the rotation: its turn
 * spread by GUID and port number. */
static bool in_rotation(const struct discover *d, const struct fab_node *n,
			unsigned p)
{
	uint64_t h = (n->guid + p) * 0x9e3779b97f4a7c15ull;

	return ((uint32_t)(h >> 32) + d->snap->sweeps) % DETAILS_ROTATION == 0;
}

/* Counter c of a port (its PortCounters in), or false. */
static bool summary(const struct fab_node *n, const struct fab_port *fp,
		    unsigned c, uint64_t *v)
{
	return fp->has_counters &&
	       pmacounters_value(c, fp->basic, NULL, n->pma_capmask, v);
}

/* Whether attribute a of fp is asked outside the rotation: its summary
 * moved since wp (was's port); never answered before (a port new to the
 * view), when it is not 0, or when *fresh (the port is among this
 * sweep's DETAILS_NEW_MAX); not when the PMA refused it before. */
static bool moved(const struct fab_node *n, const struct fab_port *fp,
		  const struct fab_node *was, const struct fab_port *wp, unsigned a,
		  bool fresh)
{
	unsigned c = pmadetails_summary((enum pmadetails_attr)a);
	uint64_t now, then;

	if (wp && wp->det_refused & 1u << a)
		return false;
	if (!wp || !(wp->det_has & 1u << a))
		return fresh || (summary(n, fp, c, &now) && now != 0);
	if (!summary(n, fp, c, &now) || !summary(was, wp, c, &then))
		return false;
	return now != then;
}

/* Attribute a's data and bits of wp kept in fp. */
static void keep(struct fab_port *fp, const struct fab_port *wp, unsigned a)
{
	const uint8_t *data = wp ? fabsnap_details(wp, a) : NULL;
	uint8_t bit = (uint8_t)(1u << a);

	if (!wp)
		return;
	fp->det_refused |= wp->det_refused & bit;
	if (!data)
		return;
	memcpy((uint8_t *)fabsnap_details_room(fp, a), data, fabsnap_details_len(a));
	fp->det_has |= bit;
}

int sweepdet_port(struct discover *d, uint32_t ni, unsigned p)
{
	struct fab_node *n = &d->snap->nodes[ni];
	struct fab_port *fp = &n->ports[p];
	const struct fab_node *was = d->ns[ni].was;
	const struct fab_port *wp = was && p <= was->nports ? &was->ports[p] : NULL;
	bool rotate, fresh = false;

	if (!p || !fp->has_counters)
		return 0;
	rotate = in_rotation(d, n, p);
	if (!rotate && (!wp || (wp->det_has | wp->det_refused) != (1u << PMADET_ATTRS) - 1) &&
	    d->det_new < DETAILS_NEW_MAX) {
		fresh = true;
		d->det_new++;
	}
	for (unsigned a = 0; a < PMADET_ATTRS; a++) {
		struct req *r;

		if (!rotate && !moved(n, fp, was, wp, a, fresh)) {
			keep(fp, wp, a);
			continue;
		}
		r = sweepreq_enqueue(d, REQ_PORT_DETAILS, ni, p, 0, NULL);
		if (!r)
			return -ENOMEM;
		r->block = (uint16_t)a;
		d->snap->stats.detail_mads++;
	}
	return 0;
}

void sweepdet_answered(struct discover *d, const struct req *r, const uint8_t *pma)
{
	struct fab_port *fp = &d->snap->nodes[r->node].ports[r->port];

	memcpy(fabsnap_details_room(fp, r->block), pma, fabsnap_details_len(r->block));
	fp->det_has |= (uint8_t)(1u << r->block);
}

void sweepdet_failed(struct discover *d, const struct req *r)
{
	d->snap->nodes[r->node].ports[r->port].det_refused |= (uint8_t)(1u << r->block);
}
