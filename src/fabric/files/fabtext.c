/* Formatting of snapshots (fabtext.h) into growing buffers. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/clock.h"
#include "umadfs/fabric/files/fabtext.h"
#include "umadfs/fabric/problems/problem.h"
#include "umadfs/fabric/snapshot/mcast.h"
#include "umadfs/fabric/snapshot/rates.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/madtext.h"

struct text {
	char *buf;
	size_t len, cap;
	bool failed; /* out of memory: the text is dropped */
};

static void put(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Texts live in their own mappings (mremap grows them without a copy),
 * so that the megabytes of a large fabric's topology go back to the
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

/* A share of the link's rate, or "-" without one. */
static const char *util(char buf[24], double u)
{
	if (u < 0)
		return "-";
	snprintf(buf, 24, "%.6f", u);
	return buf;
}

/* fabric/rates: a line per linked port, its rates first (so that `sort
 * -t= -k2 -gr` puts the busiest first), "-" for those it has none of. */
static void rates_line(struct text *t, const struct fab_snap *s,
		       const struct fab_node *n, unsigned p)
{
	const struct fab_node *pn = NULL;
	const struct fab_port *peer = fabsnap_peer(s, &n->ports[p], &pn);
	char qa[4 * FAB_DESC_LEN + 3], ux[24], ur[24];
	struct port_rates r;
	const char *why;

	if (!peer)
		return;
	if (rates_port(s, n, p, &r, &why) < 0)
		put(t, "xmit_utilisation=- rcv_utilisation=- xmit_bytes_per_second=- "
		    "rcv_bytes_per_second=- xmit_packets_per_second=- "
		    "rcv_packets_per_second=- xmit_wait_per_second=- interval_ms=-");
	else
		put(t, "xmit_utilisation=%s rcv_utilisation=%s xmit_bytes_per_second=%.0f "
		    "rcv_bytes_per_second=%.0f xmit_packets_per_second=%.1f "
		    "rcv_packets_per_second=%.1f xmit_wait_per_second=%.1f "
		    "interval_ms=%" PRIu64, util(ux, r.xmit_util), util(ur, r.rcv_util),
		    r.xmit_bytes, r.rcv_bytes, r.xmit_packets, r.rcv_packets,
		    r.xmit_wait, r.interval_ms);
	fabsnap_quote(qa, sizeof(qa), n->desc);
	put(t, " guid=0x%016" PRIx64 " port=%u node_desc=%s peer_guid=0x%016" PRIx64
	    " peer_port=%u\n", n->guid, p, qa, pn->guid, n->ports[p].peer_port);
}

static void format_rates(struct text *t, const struct fab_snap *s)
{
	if (!s->rate_base_ms) {
		put(t, "none: %s\n", RATES_NONE_YET);
		return;
	}
	for (size_t i = 0; i < s->nnodes; i++)
		for (unsigned p = 1; p <= s->nodes[i].nports; p++)
			rates_line(t, s, &s->nodes[i], p);
}

int fabtext_port_rates(const struct fab_snap *s, const struct fab_node *n,
		       unsigned p, char *buf, size_t cap)
{
	char ux[24], ur[24];
	struct port_rates r;
	const char *why;
	int len;

	if (rates_port(s, n, p, &r, &why) < 0)
		len = snprintf(buf, cap, "none: %s\n", why);
	else
		len = snprintf(buf, cap, "interval_ms %" PRIu64 "\nxmit_bytes_per_second %.0f\n"
			       "rcv_bytes_per_second %.0f\nxmit_packets_per_second %.1f\n"
			       "rcv_packets_per_second %.1f\nxmit_utilisation %s\n"
			       "rcv_utilisation %s\nxmit_wait_per_second %.1f\n",
			       r.interval_ms, r.xmit_bytes, r.rcv_bytes, r.xmit_packets,
			       r.rcv_packets, util(ux, r.xmit_util), util(ur, r.rcv_util),
			       r.xmit_wait);
	return len < 0 || (size_t)len >= cap ? -ENOSPC : len;
}

int fabtext_sweep(const struct fab_snap *s, char *buf, size_t cap)
{
	const struct fab_stats *st = &s->stats;
	const struct fab_mcast *mc = s->mcast;
	char when[32];
	int n;

	clock_iso_time(when, sizeof(when), &s->time);
	n = snprintf(buf, cap, "time %s\nage_ms %" PRId64 "\nduration_ms %u\n"
		     "via %s\nnodes %u\nswitches %u\ncas %u\nrouters %u\nlinks %u\n"
		     "ports %u\nmads %" PRIu64 "\nlfts_read %u\ntables_changed %u\ndetail_mads %u\nsl2vl_mads %u\n"
		     "pathsl_mads %u\ncas_kept %u\nports_kept %u\n"
		     "timeouts %" PRIu64 "\n"
		     "unreachable %" PRIu64 "\nproblems %zu\nproblems_us %u\n"
		     "routing_us %u\nok %d\nerror %s\nrefreshes %u\n"
		     "mcast_groups %u\nmcast_members %u\nmcast_sa %s\n", when,
		     clock_now_ms() - s->mono_ms,
		     s->duration_ms, s->via, st->nodes, st->switches, st->cas,
		     st->routers, st->links, st->ports, st->mads, st->lfts_read, st->tables_changed,
		     st->detail_mads, st->sl2vl_mads, st->pathsl_mads, st->cas_kept, st->ports_kept,
		     st->timeouts,
		     st->unreachable, s->nproblems, s->problems_us, s->routing_us, s->ok, s->error,
		     s->refreshes, mc ? mc->ngroups : 0, mc ? mc->nmembers : 0,
		     !mc ? "none" : mc->truncated ? "truncated" :
		     mc->untrusted ? "untrusted" : "ok");
	return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
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
	else if (which == FAB_TEXT_PROBLEMS)
		format_problems(&t, snap);
	else if (which == FAB_TEXT_RATES)
		format_rates(&t, snap);
	else if (which == FAB_TEXT_ROUTING && snap->routing)
		put_mem(&t, snap->routing->text, snap->routing->len);
	put(&t, "%s", ""); /* an empty text is still made */
	if (t.failed) {
		if (t.buf)
			munmap(t.buf, t.cap);
		return NULL;
	}
	/* Down to len + 1 bytes: what fabsnap_put() unmaps. */
	if (t.cap > t.len + 1 &&
	    mremap(t.buf, t.cap, t.len + 1, 0) == MAP_FAILED)
		munmap((char *)t.buf + t.len + 1, t.cap - t.len - 1);
	*len = t.len;
	return t.buf;
}

const char *fabtext_get(struct fab_snap *snap, enum fab_text which, size_t *len)
{
	char *buf;

	pthread_mutex_lock(&snap->text_lock);
	buf = snap->texts[which].buf;
	if (!buf) {
		buf = format(snap, which, len);
		if (buf) {
			snap->texts[which].buf = buf;
			snap->texts[which].len = *len;
		}
	}
	*len = snap->texts[which].len;
	pthread_mutex_unlock(&snap->text_lock);
	return buf;
}

size_t fabtext_size(struct fab_snap *snap, enum fab_text which)
{
	size_t len = 0;

	return fabtext_get(snap, which, &len) ? len : 0;
}

void fabtext_make_ahead(struct fab_snap *snap, const struct fab_snap *old)
{
	/* (the lock guards old's texts, made as they are read, even of a
	 * snapshot otherwise read-only) */
	pthread_mutex_t *lock = old ? (pthread_mutex_t *)&old->text_lock : NULL;

	for (int k = 0; old && k < FAB_TEXT_COUNT; k++) {
		bool read;

		pthread_mutex_lock(lock);
		read = old->texts[k].buf != NULL;
		pthread_mutex_unlock(lock);
		if (read)
			fabtext_size(snap, (enum fab_text)k);
	}
}
