/* Formatting of snapshots (fabtext.h) into growing buffers. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/clock.h"
#include "umadfs/device/sysfmt.h"
#include "umadfs/fabric/files/fabtext.h"
#include "umadfs/fabric/problems/problem.h"
#include "umadfs/fabric/snapshot/routes.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/madtext.h"
#include "umadfs/mad/pmacounters.h"

#define TEXT_KEEP_MAX (32u << 20)

struct text {
	char *buf;
	size_t len, cap;
	bool failed; /* out of memory: the text is dropped */
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Texts live in their own mappings (mremap grows them without a copy),
 * so that the tens of MB of a large fabric's metrics go back to the
 * system when freed, whatever malloc's thresholds say. */
static bool text_grow(struct text *t, size_t need)
{
	size_t cap = t->cap ? t->cap * 2 : 65536;
	void *p;

	while (cap < need)
		cap *= 2;
	p = t->buf ? mremap(t->buf, t->cap, cap, MREMAP_MAYMOVE) :
		mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (p == MAP_FAILED)
		return false;
	t->buf = p;
	t->cap = cap;
	return true;
}

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->buf ? t->buf + t->len : NULL,
			      t->buf ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if (t->buf && (size_t)n < t->cap - t->len)
			break;
		if (!text_grow(t, t->len + (size_t)n + 1)) {
			t->failed = true;
			return;
		}
	}
	t->len += (size_t)n;
}

/* Appends s[0..len): the per-port metric lines, tens of thousands of
 * them, go by copies, not printf. */
static void put_mem(struct text *t, const char *s, size_t len)
{
	if (t->failed)
		return;
	if (t->cap - t->len <= len && !text_grow(t, t->len + len + 1)) {
		t->failed = true;
		return;
	}
	memcpy(t->buf + t->len, s, len);
	t->len += len;
}

/* Appends v in decimal and a newline. */
static void put_u64_line(struct text *t, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	*--p = '\n';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_mem(t, p, (size_t)(buf + sizeof(buf) - p));
}

void fabtext_free(char *text, size_t len)
{
	if (text)
		munmap(text, len + 1);
}

/* A link's width and speed, and a port's state, as ibnetdiscover words
 * them (4x, EDR, Active; "?" for a code it does not know); buf holds
 * the width. */
static const char *width_name(char buf[16], unsigned w)
{
	int lanes = ibcodes_width_lanes(w);

	if (lanes < 0)
		return "?";
	snprintf(buf, 16, "%dx", lanes);
	return buf;
}

static const char *speed_name(unsigned speed, unsigned ext)
{
	const struct ib_speed *s = ibcodes_speed(speed, ext);

	return s ? s->name : "?";
}

static const char *state_name(unsigned state)
{
	const char *name = ibcodes_state_name(state);

	return name ? name : "?";
}

/* "S-0002c90300001234" or "H-...": ibnetdiscover's node id. */
static void node_id(char *buf, size_t cap, const struct fab_node *n)
{
	snprintf(buf, cap, "%s-%016" PRIx64, n->type == FAB_SWITCH ? "S" :
		 n->type == FAB_ROUTER ? "R" : "H", n->guid);
}

/* One linked port's line, as ibnetdiscover writes it: a CA's port gives
 * its own GUID, LID and LMC; a switch port its peer's GUID when the peer
 * is a CA. */
static void topo_port(struct text *t, const struct fab_snap *s,
		      const struct fab_node *n, unsigned p)
{
	const struct fab_node *pn = NULL;
	const struct fab_port *me = &n->ports[p];
	const struct fab_port *peer = fabsnap_peer(s, me, &pn);
	char id[24], w[16];

	if (!peer)
		return;
	node_id(id, sizeof(id), pn);
	if (n->type == FAB_SWITCH) {
		put(t, "[%u]\t\"%s\"[%u]", p, id, me->peer_port);
		if (pn->type != FAB_SWITCH)
			put(t, "(%" PRIx64 ") ", peer->port_guid);
		put(t, "\t\t# ");
	} else {
		put(t, "[%u](%" PRIx64 ") \t\"%s\"[%u]\t\t# lid %u lmc %u ", p,
		    me->port_guid, id, me->peer_port, me->lid, me->lmc);
	}
	put(t, "\"%s\" lid %u %s%s\n", pn->desc, peer->lid, width_name(w, me->width),
	    speed_name(me->speed, me->ext_speed));
}

static void topo_node(struct text *t, const struct fab_snap *s,
		      const struct fab_node *n)
{
	bool sw = n->type == FAB_SWITCH;
	char id[24];

	node_id(id, sizeof(id), n);
	put(t, "vendid=0x%x\ndevid=0x%x\nsysimgguid=0x%" PRIx64 "\n",
	    n->vendor_id, n->device_id, n->sys_guid);
	if (sw) {
		put(t, "switchguid=0x%" PRIx64 "(%" PRIx64 ")\n", n->guid,
		    n->ports[0].port_guid);
		put(t, "Switch\t%u \"%s\"\t\t# \"%s\" base port 0 lid %u lmc %u\n",
		    n->nports, id, n->desc, n->ports[0].lid, n->ports[0].lmc);
	} else {
		put(t, "%sguid=0x%" PRIx64 "\n", n->type == FAB_ROUTER ? "rt" : "ca",
		    n->guid);
		put(t, "%s\t%u \"%s\"\t\t# \"%s\"\n", n->type == FAB_ROUTER ? "Rt" : "Ca",
		    n->nports, id, n->desc);
	}
	for (unsigned p = 1; p <= n->nports; p++)
		topo_port(t, s, n, p);
	put(t, "\n");
}

static void format_topology(struct text *t, const struct fab_snap *s)
{
	char when[64];
	struct tm tm;

	if (!s->nnodes)
		return;
	gmtime_r(&s->time.tv_sec, &tm);
	strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
	put(t, "#\n# Topology file: generated on %s\n#\n"
	    "# Initiated from node %016" PRIx64 " port %016" PRIx64 "\n\n",
	    when, s->local_guid, s->local_port_guid);
	/* Switches first, as ibnetdiscover. */
	for (int sw = 1; sw >= 0; sw--)
		for (size_t i = 0; i < s->nnodes; i++)
			if ((s->nodes[i].type == FAB_SWITCH) == sw)
				topo_node(t, s, &s->nodes[i]);
}

/* Each link once, from its end that comes first. */
static void format_links(struct text *t, const struct fab_snap *s)
{
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = 1; p <= n->nports; p++) {
			const struct fab_port *me = &n->ports[p];
			const struct fab_node *pn = NULL;
			const struct fab_port *peer = fabsnap_peer(s, me, &pn);
			char qa[4 * FAB_DESC_LEN + 3], qb[4 * FAB_DESC_LEN + 3], w[16];

			if (!peer || (size_t)(pn - s->nodes) < i ||
			    (pn == n && me->peer_port < p))
				continue;
			fabsnap_quote(qa, sizeof(qa), n->desc);
			fabsnap_quote(qb, sizeof(qb), pn->desc);
			put(t, "guid=0x%016" PRIx64 " port=%u node_desc=%s "
			    "peer_guid=0x%016" PRIx64 " peer_port=%u peer_node_desc=%s "
			    "width=%s speed=%s state=%s\n", n->guid, p, qa, pn->guid,
			    me->peer_port, qb, width_name(w, me->width),
			    speed_name(me->speed, me->ext_speed), state_name(me->state));
		}
	}
}

int fabtext_sweep(const struct fab_snap *s, char *buf, size_t cap)
{
	const struct fab_stats *st = &s->stats;
	char when[32];
	int n;

	clock_iso_time(when, sizeof(when), &s->time);
	n = snprintf(buf, cap, "time %s\nage_ms %" PRId64 "\nduration_ms %u\n"
		     "via %s\nnodes %u\nswitches %u\ncas %u\nrouters %u\nlinks %u\n"
		     "ports %u\nmads %" PRIu64 "\nlfts_read %u\ntimeouts %" PRIu64 "\n"
		     "unreachable %" PRIu64 "\nproblems %zu\nproblems_us %u\n"
		     "ok %d\nerror %s\nrefreshes %u\n", when,
		     clock_now_ms() - s->mono_ms,
		     s->duration_ms, s->via, st->nodes, st->switches, st->cas,
		     st->routers, st->links, st->ports, st->mads, st->lfts_read,
		     st->timeouts,
		     st->unreachable, s->nproblems, s->problems_us, s->ok, s->error,
		     s->refreshes);
	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
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

/* A port's labels, in braces and followed by a space: their length.  Only
 * what a port keeps while it is there (its peer is umadfs_link_info's),
 * so that its series stay the same series across link changes. */
static size_t port_labels(char *buf, size_t cap, const struct fab_node *n,
			  unsigned p)
{
	char d[2 * FAB_DESC_LEN + 1];
	int len;

	prom_escape(d, sizeof(d), n->desc);
	len = snprintf(buf, cap, "{guid=\"0x%016" PRIx64 "\",node_desc=\"%s\","
		       "node_type=\"%s\",port=\"%u\"} ", n->guid, d,
		       fabsnap_type_name(n->type), p);
	return len > 0 && (size_t)len < cap ? (size_t)len : 0;
}

static void prom_family(struct text *t, const char *name, const char *type,
			const char *help)
{
	put(t, "# HELP umadfs_%s %s\n# TYPE umadfs_%s %s\n", name, help, name, type);
}

static void prom_sweep(struct text *t, const struct fab_snap *s)
{
	const struct {
		const char *name, *help;
		double v;
		int decimals; /* the duration and the timestamp: milliseconds */
	} rows[] = {
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

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		prom_family(t, rows[i].name, "gauge", rows[i].help);
		put(t, "umadfs_%s %.*f\n", rows[i].name, rows[i].decimals, rows[i].v);
	}
}

/* The port's rate in bytes per second, as node_exporter reads sysfs's. */
static double rate_bytes(const struct fab_port *p)
{
	int mbps = sysfmt_rate_mbps(p->width, p->speed, p->ext_speed);

	return mbps > 0 ? mbps * 125000.0 : 0;
}

struct prom_port {
	const struct fab_node *n;
	unsigned p;
	size_t len; /* of labels */
	char labels[256]; /* "{guid=...}" with the braces and a space */
};

/* A port's value of family which (0 state, 1 physical state, 2 rate,
 * 3... the counters): false when it has none. */
static bool prom_value(const struct prom_port *pp, int which, unsigned counter,
		       uint64_t *v)
{
	const struct fab_node *n = pp->n;
	const struct fab_port *p = &n->ports[pp->p];

	switch (which) {
	case 0: *v = p->state; return true;
	case 1: *v = p->phys_state; return true;
	case 2: *v = (uint64_t)rate_bytes(p); return true;
	default:
		if (!p->has_counters ||
		    !pmacounters_value(counter, p->basic, p->has_ext ? p->ext : NULL,
				    n->pma_capmask, v))
			return false;
		*v *= prom_counters[which - 3].scale;
		return true;
	}
}

/* One family of per-port values, its metric called name. */
static void prom_ports(struct text *t, const struct prom_port *pp, size_t np,
		       const char *name, int which, unsigned counter)
{
	size_t name_len = strlen(name);

	for (size_t i = 0; i < np; i++) {
		uint64_t v;

		if (!prom_value(&pp[i], which, counter, &v))
			continue;
		put_mem(t, "umadfs_", 7);
		put_mem(t, name, name_len);
		put_mem(t, pp[i].labels, pp[i].len);
		put_u64_line(t, v);
	}
}

/* The ports with PortInfo (a switch's port 0 too), their labels made;
 * NULL on ENOMEM. */
static struct prom_port *prom_port_list(const struct fab_snap *s, size_t *np)
{
	struct prom_port *pp;
	size_t max = 0;

	for (size_t i = 0; i < s->nnodes; i++)
		max += s->nodes[i].nports + 1u;
	pp = malloc((max ? max : 1) * sizeof(*pp));
	*np = 0;
	for (size_t i = 0; pp && i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = n->type == FAB_SWITCH ? 0 : 1; p <= n->nports; p++) {
			if (!n->ports[p].has_info)
				continue;
			pp[*np].n = n;
			pp[*np].p = p;
			pp[*np].len = port_labels(pp[*np].labels,
						  sizeof(pp[*np].labels), n, p);
			(*np)++;
		}
	}
	return pp;
}

/* umadfs_link_info: one series per linked port, the port's labels and
 * its peer's (the join: `* on(guid, port) group_left(peer_guid, ...)`). */
static void prom_links(struct text *t, const struct fab_snap *s,
		       const struct prom_port *pp, size_t np)
{
	prom_family(t, "link_info", "gauge",
		    "1 for each linked port; labels peer_guid, peer_port, "
		    "peer_node_desc name the other end.");
	for (size_t i = 0; i < np; i++) {
		const struct fab_port *me = &pp[i].n->ports[pp[i].p];
		const struct fab_node *pn = NULL;
		char pd[2 * FAB_DESC_LEN + 1];

		if (!fabsnap_peer(s, me, &pn) || pp[i].len < 2)
			continue;
		prom_escape(pd, sizeof(pd), pn->desc);
		put_mem(t, "umadfs_link_info", 16);
		put_mem(t, pp[i].labels, pp[i].len - 2); /* less "} " */
		put(t, ",peer_guid=\"0x%016" PRIx64 "\",peer_port=\"%u\","
		    "peer_node_desc=\"%s\"} 1\n", pn->guid, me->peer_port, pd);
	}
}

/* umadfs_problem: one series per problem, its identity as labels. */
static void prom_problems(struct text *t, const struct fab_snap *s)
{
	unsigned count[2] = { 0, 0 };

	prom_family(t, "problem", "gauge", "1 for each problem in fabric/problems;"
		    " labels kind, severity, guid, port, node_desc and the kind's"
		    " own (counter, peer_guid, peer_port, lid).");
	for (size_t i = 0; i < s->nproblems; i++) {
		const struct fab_problem *p = &s->problems[i];
		char d[2 * FAB_DESC_LEN + 1];

		count[p->severity == SEVERITY_ERROR ? 0 : 1]++;
		prom_escape(d, sizeof(d), p->node_desc);
		put(t, "umadfs_problem{kind=\"%s\",severity=\"%s\"",
		    problem_kind_name(p->kind), problem_severity_name(p->severity));
		if (p->guid)
			put(t, ",guid=\"0x%016" PRIx64 "\",node_desc=\"%s\"", p->guid, d);
		if (p->has_port)
			put(t, ",port=\"%u\"", p->port);
		if (p->counter >= 0)
			put(t, ",counter=\"%s\"", problem_counter_name(p));
		if (p->peer_guid)
			put(t, ",peer_guid=\"0x%016" PRIx64 "\",peer_port=\"%u\"",
			    p->peer_guid, p->peer_port);
		if (p->lid && (p->kind == PROBLEM_DUPLICATE_LID ||
			       p->kind == PROBLEM_ROUTE_MISSING ||
			       p->kind == PROBLEM_ROUTE_LOOP ||
			       p->kind == PROBLEM_ROUTE_DEAD_END))
			put(t, ",lid=\"%u\"", p->lid);
		put(t, "} 1\n");
	}
	prom_family(t, "problems", "gauge", "Problems in fabric/problems, by severity.");
	put(t, "umadfs_problems{severity=\"error\"} %u\n"
	    "umadfs_problems{severity=\"warning\"} %u\n", count[0], count[1]);
}

/* umadfs_node_up: 1 for each node found, 0 for each node_missing. */
static void prom_nodes(struct text *t, const struct fab_snap *s)
{
	prom_family(t, "node_up", "gauge", "1 for each node the sweep found, 0"
		    " for each expected node it did not (node_missing).");
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];
		char d[2 * FAB_DESC_LEN + 1];

		prom_escape(d, sizeof(d), n->desc);
		put(t, "umadfs_node_up{guid=\"0x%016" PRIx64 "\",node_desc=\"%s\","
		    "node_type=\"%s\"} 1\n", n->guid, d, fabsnap_type_name(n->type));
	}
	for (size_t i = 0; i < s->nproblems; i++) {
		const struct fab_problem *p = &s->problems[i];
		char d[2 * FAB_DESC_LEN + 1];

		if (p->kind != PROBLEM_NODE_MISSING)
			continue;
		prom_escape(d, sizeof(d), p->node_desc);
		put(t, "umadfs_node_up{guid=\"0x%016" PRIx64 "\",node_desc=\"%s\","
		    "node_type=\"%s\"} 0\n", p->guid, d, fabsnap_type_name(p->node_type));
	}
}

/* umadfs_port_routed_lids: the ports of every switch whose table the
 * sweep read (none with fabric_routes=off). */
static void prom_routed(struct text *t, const struct prom_port *pp, size_t np)
{
	const struct fab_node *last = NULL;
	unsigned counts[256];

	for (size_t i = 0; i < np; i++) {
		const struct fab_node *n = pp[i].n;

		if (n->type != FAB_SWITCH || !n->lft)
			continue;
		if (!last)
			prom_family(t, "port_routed_lids", "gauge", "LIDs the switch"
				    " forwards out of this port (its forwarding table).");
		if (n != last)
			routes_port_lids(n, counts);
		last = n;
		put_mem(t, "umadfs_port_routed_lids", 23);
		put_mem(t, pp[i].labels, pp[i].len);
		put_u64_line(t, counts[pp[i].p]);
	}
}

static void format_metrics(struct text *t, const struct fab_snap *s)
{
	size_t np;
	struct prom_port *pp = prom_port_list(s, &np);

	prom_sweep(t, s);
	prom_problems(t, s);
	prom_nodes(t, s);
	if (!pp) {
		t->failed = true;
		return;
	}
	prom_family(t, "port_state", "gauge", "PortState (1 Down ... 4 Active).");
	prom_ports(t, pp, np, "port_state", 0, 0);
	prom_family(t, "port_physical_state", "gauge",
		    "PortPhysicalState (2 Polling, 3 Disabled, 5 LinkUp ...).");
	prom_ports(t, pp, np, "port_physical_state", 1, 0);
	prom_family(t, "port_rate_bytes_per_second", "gauge", "Port data rate.");
	prom_ports(t, pp, np, "port_rate_bytes_per_second", 2, 0);
	prom_links(t, s, pp, np);
	prom_routed(t, pp, np);
	for (size_t c = 0; c < sizeof(prom_counters) / sizeof(prom_counters[0]); c++) {
		char name[96];

		snprintf(name, sizeof(name), "port_%s", prom_counters[c].metric);
		prom_family(t, name, "counter", "Port counter (sysfs name in"
			    " ports/N/counters/).");
		prom_ports(t, pp, np, name, 3 + (int)c,
			   pmacounters_index(prom_counters[c].sysfs));
	}
	free(pp);
}

/* fabric/problems: one line per problem, in the snapshot's order. */
static void format_problems(struct text *t, const struct fab_snap *s)
{
	char line[1024];

	for (size_t i = 0; i < s->nproblems; i++) {
		size_t n = problem_keys(&s->problems[i], line, sizeof(line) - 1);

		line[n++] = '\n';
		put_mem(t, line, n);
	}
}

static char *format(const struct fab_snap *snap, enum fab_text which,
		    size_t *len)
{
	struct text t = { 0 };

	if (which == FAB_TEXT_TOPOLOGY)
		format_topology(&t, snap);
	else if (which == FAB_TEXT_LINKS)
		format_links(&t, snap);
	else if (which == FAB_TEXT_METRICS)
		format_metrics(&t, snap);
	else if (which == FAB_TEXT_PROBLEMS)
		format_problems(&t, snap);
	put(&t, "%s", ""); /* an empty text is still made */
	if (t.failed) {
		if (t.buf)
			munmap(t.buf, t.cap);
		return NULL;
	}
	/* Down to len + 1 bytes: what fabtext_free() unmaps. */
	if (t.cap > t.len + 1 &&
	    mremap(t.buf, t.cap, t.len + 1, 0) == MAP_FAILED)
		munmap((char *)t.buf + t.len + 1, t.cap - t.len - 1);
	*len = t.len;
	return t.buf;
}

const char *fabtext_get(struct fab_snap *snap, enum fab_text which, size_t *len,
			bool *owned)
{
	char *buf;

	*owned = false;
	pthread_mutex_lock(&snap->text_lock);
	buf = snap->texts[which].buf;
	if (!buf) {
		buf = format(snap, which, len);
		if (buf) {
			snap->texts[which].len = *len;
			snap->texts[which].sized = true;
			/* metrics.prom is kept up to a size (about 2,000
			 * nodes), made per open above it. */
			*owned = which == FAB_TEXT_METRICS && *len > TEXT_KEEP_MAX;
			if (!*owned)
				snap->texts[which].buf = buf;
		}
	}
	*len = snap->texts[which].len;
	pthread_mutex_unlock(&snap->text_lock);
	return buf;
}

size_t fabtext_size(struct fab_snap *snap, enum fab_text which)
{
	size_t len = 0;
	bool owned, sized;
	const char *text;

	pthread_mutex_lock(&snap->text_lock);
	sized = snap->texts[which].sized;
	len = snap->texts[which].len;
	pthread_mutex_unlock(&snap->text_lock);
	if (sized)
		return len;
	text = fabtext_get(snap, which, &len, &owned);
	if (owned)
		fabtext_free((char *)text, len);
	return text ? len : 0;
}

void fabtext_make_ahead(struct fab_snap *snap, struct fab_snap *old)
{
	const char *text;
	bool read, owned;
	size_t len;

	/* (One kept per open above the bound: nothing to make ahead.) */
	pthread_mutex_lock(&old->text_lock);
	read = old->texts[FAB_TEXT_METRICS].sized &&
		old->texts[FAB_TEXT_METRICS].len <= TEXT_KEEP_MAX;
	pthread_mutex_unlock(&old->text_lock);
	if (!read)
		return;
	text = fabtext_get(snap, FAB_TEXT_METRICS, &len, &owned);
	if (owned)
		fabtext_free((char *)text, len);
}
