/* The lines of metrics.prom (promlines.h): its families, their groups,
 * and each family's header and items written one unit at a time. */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "umadfs/device/sysfmt.h"
#include "umadfs/fabric/files/promlines.h"
#include "umadfs/fabric/problems/problem.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/mcast.h"
#include "umadfs/fabric/snapshot/routes.h"
#include "umadfs/mad/pmacounters.h"
#include "umadfs/mad/pmadetails.h"

static const char *const group_names[PROM_GROUPS] = {
	"sweep", "problems", "nodes", "state", "links", "routes", "routing",
	"errors", "xmit_wait", "data", "details", "partitions", "mcast",
};

const char *promlines_group_name(unsigned group)
{
	return group < PROM_GROUPS ? group_names[group] : NULL;
}

/* node_exporter's infiniband collector names, by sysfs counter name, less
 * "node_infiniband_" and a leading "port_" (umadfs_port_ is put back). */
static const struct {
	const char *sysfs, *metric;
	unsigned scale; /* data counters count 4-byte words */
} prom_counters[] = {
	{ "symbol_error", "symbol_error_total", 1 },
	{ "link_error_recovery", "link_error_recovery_total", 1 },
	{ "link_downed", "link_downed_total", 1 },
	{ "port_rcv_errors", "errors_received_total", 1 },
	{ "port_rcv_remote_physical_errors", "receive_remote_physical_errors_total", 1 },
	{ "port_rcv_switch_relay_errors", "receive_switch_relay_errors_total", 1 },
	{ "port_xmit_discards", "discards_transmitted_total", 1 },
	{ "port_xmit_constraint_errors", "constraint_errors_transmitted_total", 1 },
	{ "port_rcv_constraint_errors", "constraint_errors_received_total", 1 },
	{ "local_link_integrity_errors", "local_link_integrity_errors_total", 1 },
	{ "excessive_buffer_overrun_errors", "excessive_buffer_overrun_errors_total", 1 },
	{ "VL15_dropped", "vl15_dropped_total", 1 },
	{ "port_xmit_data", "data_transmitted_bytes_total", 4 },
	{ "port_rcv_data", "data_received_bytes_total", 4 },
	{ "port_xmit_packets", "packets_transmitted_total", 1 },
	{ "port_rcv_packets", "packets_received_total", 1 },
	{ "port_xmit_wait", "transmit_wait_total", 1 },
	{ "unicast_xmit_packets", "unicast_packets_transmitted_total", 1 },
	{ "unicast_rcv_packets", "unicast_packets_received_total", 1 },
	{ "multicast_xmit_packets", "multicast_packets_transmitted_total", 1 },
	{ "multicast_rcv_packets", "multicast_packets_received_total", 1 },
};

#define NCOUNTERS (sizeof(prom_counters) / sizeof(prom_counters[0]))
#define NSWEEP 9

/* The detail counters' names (pmadetails.h's first ones, in its order),
 * less "umadfs_port_"; PortVLXmitWait is one family with a vl label. */
static const char *const prom_details[] = {
	"local_physical_errors_total", "malformed_packet_errors_total",
	"buffer_overrun_errors_total", "dlid_mapping_errors_total",
	"vl_mapping_errors_total", "looping_errors_total",
	"inactive_discards_total", "neighbor_mtu_discards_total",
	"switch_lifetime_limit_discards_total",
	"switch_hoq_lifetime_limit_discards_total",
};

#define NDETAILS (sizeof(prom_details) / sizeof(prom_details[0]))

/* The families in the text's order: the sweep's rows, the problems and
 * their count, the nodes, the ports' state, physical state and rate,
 * their links, their routed LIDs, the routing's credit loops and hop
 * histograms (fabric/routing), then their counters, then their detail
 * counters and the wait per VL, then the partitions' members, then the
 * multicast groups'. */
enum { F_SWEEP = 0, F_PROBLEM = NSWEEP, F_PROBLEMS, F_NODE_UP, F_STATE,
       F_PHYS, F_RATE, F_LINK, F_ROUTED, F_CREDIT_LOOPS, F_ROUTE_PAIRS, F_COUNTER,
       F_DETAIL = F_COUNTER + NCOUNTERS, F_VL_WAIT = F_DETAIL + NDETAILS,
       F_PARTITION, F_MCAST, F_COUNT };

unsigned promlines_families(void)
{
	return F_COUNT;
}

/* Family f's group. */
static enum prom_group group_of(unsigned f)
{
	unsigned c;

	if (f < F_PROBLEM)
		return PROM_SWEEP;
	if (f == F_PROBLEM || f == F_PROBLEMS)
		return PROM_PROBLEMS;
	if (f == F_NODE_UP)
		return PROM_NODES;
	if (f <= F_RATE)
		return PROM_STATE;
	if (f == F_LINK)
		return PROM_LINKS;
	if (f == F_ROUTED)
		return PROM_ROUTES;
	if (f == F_CREDIT_LOOPS || f == F_ROUTE_PAIRS)
		return PROM_ROUTING;
	if (f == F_PARTITION)
		return PROM_PARTITIONS;
	if (f == F_MCAST)
		return PROM_MCAST;
	if (f >= F_DETAIL)
		return PROM_DETAILS;
	c = pmacounters_index(prom_counters[f - F_COUNTER].sysfs);
	if (pmacounters_is_error(c))
		return PROM_ERRORS;
	return c == pmacounters_index("port_xmit_wait") ? PROM_XMIT_WAIT : PROM_DATA;
}

/* Each family's group; the per-port families' metric names and their
 * counters' indexes (pmacounters.h): found once, as each is wanted for
 * every unit. */
static struct {
	enum prom_group group;
	char name[64];      /* per-port families' */
	size_t len;
	unsigned counter;   /* the counters' */
} families[F_COUNT];
static pthread_once_t families_once = PTHREAD_ONCE_INIT;

static void families_init(void)
{
	static const char *const names[] = {
		"port_state", "port_physical_state", "port_rate_bytes_per_second",
		"link_info", "port_routed_lids",
	};

	for (unsigned f = 0; f < F_COUNT; f++) {
		unsigned c = f - F_COUNTER;
		int len = 0;

		families[f].group = group_of(f);
		if (f >= F_STATE && f <= F_ROUTED)
			len = snprintf(families[f].name, sizeof(families[f].name), "%s",
				       names[f - F_STATE]);
		else if (f >= F_COUNTER && f < F_DETAIL)
			len = snprintf(families[f].name, sizeof(families[f].name),
				       "port_%s", prom_counters[c].metric);
		else if (f >= F_DETAIL && f <= F_VL_WAIT)
			len = snprintf(families[f].name, sizeof(families[f].name),
				       "port_%s", f == F_VL_WAIT ? "vl_transmit_wait_total" :
				       prom_details[f - F_DETAIL]);
		families[f].len = (size_t)len;
		if (f >= F_COUNTER && f < F_DETAIL)
			families[f].counter = pmacounters_index(prom_counters[c].sysfs);
		else if (f >= F_DETAIL && f <= F_VL_WAIT)
			families[f].counter = f - F_DETAIL; /* pmadetails.h's */
	}
}

enum prom_group promlines_group(unsigned f)
{
	pthread_once(&families_once, families_init);
	return families[f].group;
}

/* A unit's bytes: at most PROMLINES_UNIT_MAX, which every unit's fields
 * keep below (a description is 64 bytes, 128 escaped). */
struct out {
	char *buf;
	size_t len;
};

static void out_mem(struct out *o, const char *s, size_t len)
{
	if (len > PROMLINES_UNIT_MAX - o->len)
		len = PROMLINES_UNIT_MAX - o->len;
	memcpy(o->buf + o->len, s, len);
	o->len += len;
}

static void out_printf(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void out_printf(struct out *o, const char *fmt, ...)
{
	size_t room = PROMLINES_UNIT_MAX - o->len;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n < room ? (size_t)n : room - 1;
}

/* v in decimal and a newline. */
static void out_u64_line(struct out *o, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	*--p = '\n';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_mem(o, p, (size_t)(buf + sizeof(buf) - p));
}

/* A label value as the exposition format wants it: \\ \" \n escaped;
 * bytes outside printable ASCII become '?'. */
static void prom_escape(char *buf, size_t cap, const char *s)
{
	size_t o = 0;

	for (; *s && o + 3 < cap; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else {
			buf[o++] = c < 0x20 || c > 0x7e ? '?' : (char)c;
		}
	}
	buf[o] = '\0';
}

static void family_header(struct out *o, const char *name, const char *type,
			  const char *help)
{
	out_printf(o, "# HELP umadfs_%s %s\n# TYPE umadfs_%s %s\n", name, help,
		   name, type);
}

/* The sweep's row r: a family of one series. */
static void sweep_row(struct out *o, const struct fab_snap *s, unsigned r)
{
	const struct {
		const char *name, *help;
		double v;
		int decimals; /* the duration and the timestamp: milliseconds */
	} rows[NSWEEP] = {
		{ "sweep_duration_seconds", "Duration of the last sweep.",
		  s->duration_ms / 1000.0, 3 },
		{ "sweep_ok", "1 if the last sweep reached the fabric.", s->ok, 0 },
		{ "sweep_timestamp_seconds", "When the last sweep ended.",
		  (double)s->time.tv_sec + (double)(s->time.tv_nsec / 1000000) / 1000, 3 },
		{ "sweep_nodes", "Nodes found.", s->stats.nodes, 0 },
		{ "sweep_switches", "Switches found.", s->stats.switches, 0 },
		{ "sweep_links", "Links found.", s->stats.links, 0 },
		{ "sweep_mads", "MADs the sweep sent.", (double)s->stats.mads, 0 },
		{ "sweep_timeouts", "MADs of the sweep that timed out.",
		  (double)s->stats.timeouts, 0 },
		{ "sweep_unreachable", "Nodes the sweep could not reach.",
		  (double)s->stats.unreachable, 0 },
	};

	family_header(o, rows[r].name, "gauge", rows[r].help);
	out_printf(o, "umadfs_%s %.*f\n", rows[r].name, rows[r].decimals, rows[r].v);
}

/* umadfs_problem: one series per problem, its identity as labels. */
static void problem_line(struct out *o, const struct fab_problem *p)
{
	char d[2 * FAB_DESC_LEN + 1];

	prom_escape(d, sizeof(d), p->node_desc);
	out_printf(o, "umadfs_problem{kind=\"%s\",severity=\"%s\"",
		   problem_kind_name(p->kind), problem_severity_name(p->severity));
	if (p->guid)
		out_printf(o, ",guid=\"0x%016" PRIx64 "\",node_desc=\"%s\"", p->guid, d);
	if (p->has_port)
		out_printf(o, ",port=\"%u\"", p->port);
	if (p->counter >= 0)
		out_printf(o, ",counter=\"%s\"", problem_counter_name(p));
	if (p->peer_guid)
		out_printf(o, ",peer_guid=\"0x%016" PRIx64 "\",peer_port=\"%u\"",
			   p->peer_guid, p->peer_port);
	if (p->lid && (p->kind == PROBLEM_DUPLICATE_LID ||
		       p->kind == PROBLEM_ROUTE_MISSING ||
		       p->kind == PROBLEM_ROUTE_LOOP ||
		       p->kind == PROBLEM_ROUTE_DEAD_END))
		out_printf(o, ",lid=\"%u\"", p->lid);
	if (p->pkey)
		out_printf(o, ",pkey=\"0x%04x\"", p->pkey);
	if (p->kind >= PROBLEM_MCAST_MEMBER_UNREACHABLE && p->kind <= PROBLEM_MCAST_GROUP_EMPTY)
		out_printf(o, ",mlid=\"0x%04x\"", p->lid);
	out_mem(o, "} 1\n", 4);
}

/* umadfs_problems: the problems by severity, both always there. */
static void problems_count(struct out *o, const struct fab_snap *s)
{
	unsigned count[2] = { 0, 0 };

	for (size_t i = 0; i < s->nproblems; i++)
		count[s->problems[i].severity == SEVERITY_ERROR ? 0 : 1]++;
	family_header(o, "problems", "gauge", "Problems in fabric/problems, by severity.");
	out_printf(o, "umadfs_problems{severity=\"error\"} %u\n"
		   "umadfs_problems{severity=\"warning\"} %u\n", count[0], count[1]);
}

/* umadfs_node_up item i: 1 for each node found (i < nnodes), then 0 for
 * each node_missing among the problems. */
static void node_up_line(struct out *o, const struct fab_snap *s, size_t i)
{
	char d[2 * FAB_DESC_LEN + 1];
	const struct fab_problem *p;

	if (i < s->nnodes) {
		prom_escape(d, sizeof(d), s->nodes[i].desc);
		out_printf(o, "umadfs_node_up{guid=\"0x%016" PRIx64 "\",node_desc=\"%s\","
			   "node_type=\"%s\"} 1\n", s->nodes[i].guid, d,
			   fabsnap_type_name(s->nodes[i].type));
		return;
	}
	p = &s->problems[i - s->nnodes];
	if (p->kind != PROBLEM_NODE_MISSING)
		return;
	prom_escape(d, sizeof(d), p->node_desc);
	out_printf(o, "umadfs_node_up{guid=\"0x%016" PRIx64 "\",node_desc=\"%s\","
		   "node_type=\"%s\"} 0\n", p->guid, d, fabsnap_type_name(p->node_type));
}

/* Whether umadfs_port_routed_lids has a series: a port with PortInfo of a
 * switch whose table the sweep read (none with fabric_routes=off). */
static bool routed_any(const struct fab_snap *s)
{
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = 0; n->type == FAB_SWITCH && n->lft && p <= n->nports; p++)
			if (n->ports[p].has_info)
				return true;
	}
	return false;
}

/* Whether a detail family has a series: a port with attribute a's data. */
static bool details_any(const struct fab_snap *s, enum pmadetails_attr a)
{
	for (size_t i = 0; i < s->nnodes; i++)
		for (unsigned p = 1; p <= s->nodes[i].nports; p++)
			if (s->nodes[i].ports[p].has_info &&
			    fabsnap_details(&s->nodes[i].ports[p], a))
				return true;
	return false;
}

/* Family f's header: HELP and TYPE, and all of a family without items. */
static void header(struct out *o, const struct fab_snap *s, unsigned f)
{
	static const char *const port_help[] = {
		"PortState (1 Down ... 4 Active).",
		"PortPhysicalState (2 Polling, 3 Disabled, 5 LinkUp ...).",
		"Port data rate.",
	};

	if (f < F_PROBLEM) {
		sweep_row(o, s, f);
	} else if (f == F_PROBLEM) {
		family_header(o, "problem", "gauge", "1 for each problem in fabric/problems;"
			      " labels kind, severity, guid, port, node_desc and the kind's"
			      " own (counter, peer_guid, peer_port, lid).");
	} else if (f == F_PROBLEMS) {
		problems_count(o, s);
	} else if (f == F_NODE_UP) {
		family_header(o, "node_up", "gauge", "1 for each node the sweep found, 0"
			      " for each expected node it did not (node_missing).");
	} else if (f <= F_RATE) {
		family_header(o, families[f].name, "gauge",
			      port_help[f - F_STATE]);
	} else if (f == F_LINK) {
		family_header(o, "link_info", "gauge",
			      "1 for each linked port; labels peer_guid, peer_port, "
			      "peer_node_desc name the other end.");
	} else if (f == F_ROUTED) {
		if (routed_any(s))
			family_header(o, "port_routed_lids", "gauge", "LIDs the switch"
				      " forwards out of this port (its forwarding table).");
	} else if (f == F_CREDIT_LOOPS) {
		if (s->routing) {
			family_header(o, "credit_loops", "gauge", "Cycles of the routes'"
				      " channel dependencies (credit_loop problems).");
			out_printf(o, "umadfs_credit_loops %u\n", s->routing->credit_loops);
		}
	} else if (f == F_ROUTE_PAIRS) {
		if (s->routing)
			family_header(o, "route_pairs", "gauge", "CA-to-CA port pairs by the"
				      " hops of their route: by=\"lft\" as the tables route"
				      " them, by=\"min\" the shortest.");
	} else if (f == F_PARTITION) {
		if (s->npartitions)
			family_header(o, "partition_members", "gauge", "Endports (CA ports,"
				      " switch ports 0) whose PKeyTable holds the partition"
				      " (pkey, without its membership bit) as a full or"
				      " limited member (fabric/partitions).");
	} else if (f == F_MCAST) {
		if (s->mcast && s->mcast->ngroups)
			family_header(o, "mcast_group_members", "gauge", "Ports the SA"
				      " lists in the multicast group (fabric/mcast).");
	} else if (f < F_DETAIL) {
		family_header(o, families[f].name, "counter",
			      "Port counter (sysfs name in ports/N/counters/).");
	} else if (details_any(s, pmadetails_attr_of(families[f].counter))) {
		family_header(o, families[f].name, "counter", f == F_VL_WAIT ?
			      "PortVLXmitWait of each VL the port has (label vl)." :
			      "Port detail counter (sysfs name in ports/N/counters/).");
	}
}

/* The labels of node i's ports up to the port's number, kept in cache:
 * only what a port keeps while it is there (its peer is
 * umadfs_link_info's), so that its series stay the same series across
 * link changes. */
static void node_labels(const struct fab_snap *s, size_t i, struct prom_cache *c)
{
	const struct fab_node *n = &s->nodes[i];
	char d[2 * FAB_DESC_LEN + 1];
	int len;

	if (c->labels_node == i + 1)
		return;
	prom_escape(d, sizeof(d), n->desc);
	len = snprintf(c->labels, sizeof(c->labels), "{guid=\"0x%016" PRIx64
		       "\",node_desc=\"%s\",node_type=\"%s\",port=\"", n->guid, d,
		       fabsnap_type_name(n->type));
	c->labels_len = len > 0 && (size_t)len < sizeof(c->labels) ? (size_t)len : 0;
	c->labels_node = i + 1;
}

/* umadfs_NAME{labels of node i's port p} and a space, family f's name;
 * without the "} " when open. */
static void port_series(struct out *o, const struct fab_snap *s, size_t i,
			unsigned p, unsigned f, struct prom_cache *c, bool open)
{
	char num[8], *e = num + sizeof(num);

	node_labels(s, i, c);
	out_mem(o, "umadfs_", 7);
	out_mem(o, families[f].name, families[f].len);
	out_mem(o, c->labels, c->labels_len);
	if (!open) {
		*--e = ' ';
		*--e = '}';
	}
	*--e = '"';
	do {
		*--e = (char)('0' + p % 10);
		p /= 10;
	} while (p);
	out_mem(o, e, (size_t)(num + sizeof(num) - e));
}

/* umadfs_link_info: the port's labels and its peer's (the join: `* on(guid,
 * port) group_left(peer_guid, ...)`); nothing for a port without a link. */
static void link_line(struct out *o, const struct fab_snap *s, size_t i,
		      unsigned p, struct prom_cache *c)
{
	const struct fab_node *pn = NULL;
	char pd[2 * FAB_DESC_LEN + 1];
	const struct fab_port *me = &s->nodes[i].ports[p];

	if (!fabsnap_peer(s, me, &pn))
		return;
	prom_escape(pd, sizeof(pd), pn->desc);
	port_series(o, s, i, p, F_LINK, c, true);
	out_printf(o, ",peer_guid=\"0x%016" PRIx64 "\",peer_port=\"%u\","
		   "peer_node_desc=\"%s\"} 1\n", pn->guid, me->peer_port, pd);
}

/* Detail counter i (pmadetails.h) of a port: false when it has none. */
static bool detail_value(const struct fab_port *fp, unsigned i, uint64_t *v)
{
	const uint8_t *det = fabsnap_details(fp, pmadetails_attr_of(i));

	if (!det)
		return false;
	*v = pmadetails_value(i, det);
	return true;
}

/* umadfs_port_vl_transmit_wait_total: a series for each VL the port has
 * (OperationalVLs), none before its PortVLXmitWaitCounters is in. */
static void vl_wait_lines(struct out *o, const struct fab_snap *s, size_t i,
			  unsigned p, struct prom_cache *c)
{
	const struct fab_port *fp = &s->nodes[i].ports[p];
	const uint8_t *det = fabsnap_details(fp, PMADET_VL);
	unsigned vls = pmadetails_oper_vls(fp->oper_vls);

	for (unsigned vl = 0; det && vl < vls; vl++) {
		port_series(o, s, i, p, F_VL_WAIT, c, true);
		out_printf(o, ",vl=\"%u\"} ", vl);
		out_u64_line(o, pmadetails_value(pmadetails_vl_counter(vl), det));
	}
}

/* The port's value of per-port family f: false when it has none. */
static bool port_value(const struct fab_snap *s, size_t i, unsigned p,
		       unsigned f, struct prom_cache *c, uint64_t *v)
{
	const struct fab_node *n = &s->nodes[i];
	const struct fab_port *fp = &n->ports[p];
	int mbps;

	switch (f) {
	case F_STATE: *v = fp->state; return true;
	case F_PHYS: *v = fp->phys_state; return true;
	case F_RATE:
		mbps = sysfmt_rate_mbps(fp->width, fp->speed, fp->ext_speed);
		*v = (uint64_t)(mbps > 0 ? mbps * 125000.0 : 0);
		return true;
	case F_ROUTED:
		if (n->type != FAB_SWITCH || !n->lft)
			return false;
		if (c->counts_node != i + 1)
			routes_port_lids(n, c->counts);
		c->counts_node = i + 1;
		*v = c->counts[p];
		return true;
	default:
		if (f >= F_DETAIL)
			return detail_value(fp, families[f].counter, v);
		if (!fp->has_counters ||
		    !pmacounters_value(families[f].counter, fp->basic,
				       fp->has_ext ? fp->ext : NULL, n->pma_capmask, v))
			return false;
		*v *= prom_counters[f - F_COUNTER].scale;
		return true;
	}
}

/* Family f's line of node i's port p (one with PortInfo). */
static void port_line(struct out *o, const struct fab_snap *s, size_t i,
		      unsigned p, unsigned f, struct prom_cache *c)
{
	uint64_t v;

	if (f == F_LINK) {
		link_line(o, s, i, p, c);
	} else if (f == F_VL_WAIT) {
		vl_wait_lines(o, s, i, p, c);
	} else if (port_value(s, i, p, f, c, &v)) {
		port_series(o, s, i, p, f, c, false);
		out_u64_line(o, v);
	}
}

/* *pos at its node's port, or the next node's first (a switch's port 0, a
 * CA's port 1) when past the node's last, or at the end. */
static void settle_port(const struct fab_snap *s, struct prom_pos *pos)
{
	while (pos->item < s->nnodes && pos->port > s->nodes[pos->item].nports) {
		pos->item++;
		pos->port = pos->item < s->nnodes &&
			s->nodes[pos->item].type == FAB_SWITCH ? 0 : 1;
	}
}

/* umadfs_route_pairs item *pos: a bucket of fabric/routing's hops_lft,
 * then hops_min (nothing for an empty one). */
static bool route_pairs_line(struct out *o, const struct fab_snap *s,
			     struct prom_pos *pos)
{
	unsigned h = pos->item % FAB_ROUTE_HOPS;
	bool min = pos->item >= FAB_ROUTE_HOPS;
	uint64_t v;

	if (!s->routing || pos->item >= 2 * FAB_ROUTE_HOPS)
		return false;
	v = min ? s->routing->hops_min[h] : s->routing->hops_lft[h];
	if (v)
		out_printf(o, "umadfs_route_pairs{by=\"%s\",hops=\"%u\"} %" PRIu64 "\n",
			   min ? "min" : "lft", h, v);
	pos->item++;
	return true;
}

/* umadfs_partition_members item *pos: a partition's full members, then
 * its limited ones (nothing for none). */
static bool partition_line(struct out *o, const struct fab_snap *s,
			   struct prom_pos *pos)
{
	const struct fab_partition *pt;
	bool limited = pos->item & 1;
	uint32_t v;

	if (pos->item / 2 >= s->npartitions)
		return false;
	pt = &s->partitions[pos->item / 2];
	v = limited ? pt->limited : pt->full;
	if (v)
		out_printf(o, "umadfs_partition_members{pkey=\"0x%04x\",membership=\"%s\"}"
			   " %" PRIu32 "\n", pt->pkey, limited ? "limited" : "full", v);
	pos->item++;
	return true;
}

/* umadfs_mcast_group_members item *pos: a group's members. */
static bool mcast_line(struct out *o, const struct fab_snap *s, struct prom_pos *pos)
{
	const struct fab_mgroup *g;
	char mgid[FAB_GID_TEXT];

	if (!s->mcast || pos->item >= s->mcast->ngroups)
		return false;
	g = &s->mcast->groups[pos->item++];
	fabmcast_gid_text(mgid, g->mgid);
	out_printf(o, "umadfs_mcast_group_members{mgid=\"%s\",mlid=\"0x%04x\"} %" PRIu32 "\n",
		   mgid, g->mlid, g->n);
	return true;
}

/* Item *pos of family f into o and *pos to the next: false at the end. */
static bool item(struct out *o, const struct fab_snap *s, struct prom_pos *pos,
		 struct prom_cache *c)
{
	unsigned f = pos->family;

	if (f == F_PROBLEM || f == F_NODE_UP) {
		if (pos->item >= (f == F_PROBLEM ? 0 : s->nnodes) + s->nproblems)
			return false;
		if (f == F_PROBLEM)
			problem_line(o, &s->problems[pos->item]);
		else
			node_up_line(o, s, pos->item);
		pos->item++;
		return true;
	}
	if (f == F_ROUTE_PAIRS)
		return route_pairs_line(o, s, pos);
	if (f == F_PARTITION)
		return partition_line(o, s, pos);
	if (f == F_MCAST)
		return mcast_line(o, s, pos);
	if (f < F_STATE || f == F_CREDIT_LOOPS || pos->item >= s->nnodes)
		return false;
	if (s->nodes[pos->item].ports[pos->port].has_info)
		port_line(o, s, pos->item, pos->port, f, c);
	pos->port++;
	settle_port(s, pos);
	return true;
}

int promlines_unit(const struct fab_snap *s, struct prom_pos *pos, char *buf,
		   struct prom_cache *cache)
{
	struct out o = { buf, 0 };

	pthread_once(&families_once, families_init);
	if (pos->family >= F_COUNT)
		return -1;
	if (!pos->started) {
		header(&o, s, pos->family);
		pos->started = true;
		pos->item = 0;
		pos->port = s->nnodes && s->nodes[0].type == FAB_SWITCH ? 0 : 1;
		settle_port(s, pos);
		return (int)o.len;
	}
	return item(&o, s, pos, cache) ? (int)o.len : -1;
}
