/* Fabric snapshots (fabsnap.h): the node array, its GUID hash, counts,
 * the reference that keeps a snapshot alive for its readers, how its
 * node types and descriptions are written, and the one decoding of each
 * SMP a node or port is read from (NodeInfo, NodeDescription, PortInfo),
 * for sweeps and refreshes alike. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <infiniband/mad.h>

#include "umadfs/base/array.h"
#include "umadfs/base/refs.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/mcast.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/madtext.h"

struct fab_snap *fabsnap_new(void)
{
	struct fab_snap *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->refs = 1;
	pthread_mutex_init(&s->text_lock, NULL);
	return s;
}

void fabsnap_get(struct fab_snap *s)
{
	refs_get(&s->refs);
}

/* What node n holds: its ports, their tables, its own tables. */
static void node_release(struct fab_node *n)
{
	for (unsigned p = 0; n->ports && p <= n->nports; p++)
		fabsnap_pkeys_put(n->ports[p].pkeys);
	free(n->ports);
	fabsnap_lft_put(n->lft);
	fabsnap_sl2vl_put(n->sl2vl);
	fabmft_put(n->mft);
}

void fabsnap_put(struct fab_snap *s)
{
	if (!s || !refs_put(&s->refs))
		return;
	for (size_t i = 0; i < s->nnodes; i++)
		node_release(&s->nodes[i]);
	fabmcast_put(s->mcast);
	fabsnap_pathsl_put(s->pathsl);
	for (int t = 0; t < FAB_TEXT_COUNT; t++)
		if (s->texts[t].buf)
			munmap(s->texts[t].buf, s->texts[t].len + 1);
	pthread_mutex_destroy(&s->text_lock);
	free(s->metrics);
	free(s->problems);
	free(s->routing);
	free(s->partitions);
	free(s->sms);
	free(s->nodes);
	free(s->hash);
	free(s);
}

struct fab_lft *fabsnap_lft_new(unsigned top, int64_t read_ms)
{
	size_t entries = (top / 64 + 1u) * 64u; /* whole blocks, as read */
	struct fab_lft *t = malloc(sizeof(*t) + entries);

	if (!t)
		return NULL;
	t->refs = 1;
	t->top = (uint16_t)top;
	t->read_ms = read_ms;
	memset(t->port, 0xff, entries);
	return t;
}

void fabsnap_lft_get(struct fab_lft *t)
{
	refs_get(&t->refs);
}

void fabsnap_lft_put(struct fab_lft *t)
{
	if (t && refs_put(&t->refs))
		free(t);
}

struct fab_sl2vl *fabsnap_sl2vl_new(unsigned nports)
{
	size_t n = (nports + 1u) * (nports + 1u);
	struct fab_sl2vl *t = malloc(sizeof(*t) + n);

	if (!t)
		return NULL;
	t->refs = 1;
	t->nports = (uint8_t)nports;
	t->full = false;
	t->pending = 0;
	t->maps = NULL;
	memset(t->vl, 0xff, n);
	return t;
}

void fabsnap_sl2vl_get(struct fab_sl2vl *t)
{
	refs_get(&t->refs);
}

void fabsnap_sl2vl_put(struct fab_sl2vl *t)
{
	if (t && refs_put(&t->refs)) {
		free(t->maps);
		free(t);
	}
}

unsigned fabsnap_sl2vl_vl(const struct fab_sl2vl *t, unsigned in, unsigned out)
{
	uint8_t v;

	if (!t || in > t->nports || out > t->nports)
		return 0;
	v = t->vl[in * (t->nports + 1u) + out];
	return v >= 0xfe ? 0 : v; /* not read, or asked and not answered */
}

bool fabsnap_port_active(const struct fab_snap *s, const struct fab_node *n,
			 unsigned p, bool to_switch)
{
	const struct fab_port *fp = &n->ports[p];
	const struct fab_node *pn = NULL;

	if (!fp->has_info || fp->state != IB_LINK_ACTIVE || !fp->peer_guid)
		return false;
	return !to_switch || (fabsnap_peer(s, fp, &pn) && pn->type == FAB_SWITCH);
}

bool fabsnap_sl2vl_pair(const struct fab_snap *s, const struct fab_node *n,
			unsigned in, unsigned out)
{
	return in != out && fabsnap_port_active(s, n, in, false) &&
	       fabsnap_port_active(s, n, out, true);
}

unsigned fabsnap_sl2vl_vl_sl(const struct fab_sl2vl *t, unsigned in, unsigned out,
			     unsigned sl)
{
	size_t i;

	if (!sl || !t || !t->maps || in > t->nports || out > t->nports || sl > 15)
		return fabsnap_sl2vl_vl(t, in, out);
	i = in * (t->nports + 1u) + out;
	return t->vl[i] >= 0xfe ? 0 : (unsigned)(t->maps[i] >> (60 - 4 * sl) & 0xf);
}

void fabsnap_pathsl_get(struct fab_pathsl *t)
{
	refs_get(&t->refs);
}

void fabsnap_pathsl_put(struct fab_pathsl *t)
{
	if (t && refs_put(&t->refs))
		free(t);
}

int fabsnap_pathsl_cmp(const void *a, const void *b)
{
	const struct fab_pathsl_pair *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return (x->dlid > y->dlid) - (x->dlid < y->dlid);
}

unsigned fabsnap_pathsl_sl(const struct fab_pathsl *t, uint64_t src, unsigned dlid)
{
	struct fab_pathsl_pair key = { .src = src, .dlid = (uint16_t)dlid };
	const struct fab_pathsl_pair *p;

	if (!t)
		return 0;
	p = bsearch(&key, t->pairs, t->n, sizeof(key), fabsnap_pathsl_cmp);
	return p ? p->sl : 0;
}

bool fabsnap_routes_as_before(const struct fab_snap *prev, const struct fab_snap *snap)
{
	return prev && prev->ok && !snap->refreshes && !snap->stats.tables_changed &&
	       snap->reroute_ms == prev->reroute_ms;
}

struct fab_pkeys *fabsnap_pkeys_new(unsigned n, int64_t read_ms)
{
	size_t entries;
	struct fab_pkeys *t;

	if (n > FAB_PKEYS_MAX)
		n = FAB_PKEYS_MAX;
	entries = (n / FAB_PKEY_BLOCK + 1u) * FAB_PKEY_BLOCK;
	t = calloc(1, sizeof(*t) + entries * sizeof(t->key[0]));
	if (!t)
		return NULL;
	t->refs = 1;
	t->n = (uint16_t)n;
	t->read_ms = read_ms;
	return t;
}

unsigned fabsnap_pkeys_len(const struct fab_node *n, unsigned p)
{
	unsigned len = n->type == FAB_SWITCH && p ? n->enforce_cap : n->partition_cap;

	return len > FAB_PKEYS_MAX ? FAB_PKEYS_MAX : len;
}

const struct fab_pkeys *fabsnap_endport_pkeys(const struct fab_node *n, unsigned p)
{
	if (n->type == FAB_SWITCH ? p != 0 : p == 0)
		return NULL;
	return n->ports[p].pkeys && !n->ports[p].pkeys->pending ? n->ports[p].pkeys : NULL;
}

void fabsnap_pkeys_get(struct fab_pkeys *t)
{
	refs_get(&t->refs);
}

void fabsnap_pkeys_put(struct fab_pkeys *t)
{
	if (t && refs_put(&t->refs))
		free(t);
}

static size_t hash_slot(uint64_t guid, size_t cap)
{
	guid ^= guid >> 29;
	guid *= 0xbf58476d1ce4e5b9ull;
	guid ^= guid >> 32;
	return (size_t)guid & (cap - 1);
}

static void hash_insert(uint32_t *hash, size_t cap, const struct fab_node *nodes,
			uint32_t idx)
{
	size_t i = hash_slot(nodes[idx].guid, cap);

	while (hash[i])
		i = (i + 1) & (cap - 1);
	hash[i] = idx + 1;
}

/* Keeps the hash at most half full. */
static int hash_grow(struct fab_snap *s)
{
	size_t cap = s->hash_cap ? s->hash_cap * 2 : 256;
	uint32_t *hash;

	if (s->hash_cap && (s->nnodes + 1) * 2 <= s->hash_cap)
		return 0;
	hash = calloc(cap, sizeof(*hash));
	if (!hash)
		return -1;
	for (size_t i = 0; i < s->nnodes; i++)
		hash_insert(hash, cap, s->nodes, (uint32_t)i);
	free(s->hash);
	s->hash = hash;
	s->hash_cap = cap;
	return 0;
}

struct fab_node *fabsnap_add(struct fab_snap *s, uint64_t guid, unsigned nports)
{
	struct fab_node *n;

	if (ARRAY_GROW(s->nodes, s->cap, s->nnodes + 1, 64) < 0 || hash_grow(s) < 0)
		return NULL;
	n = &s->nodes[s->nnodes];
	memset(n, 0, sizeof(*n));
	n->ports = calloc(nports + 1, sizeof(*n->ports));
	if (!n->ports)
		return NULL;
	n->guid = guid;
	n->nports = (uint8_t)nports;
	hash_insert(s->hash, s->hash_cap, s->nodes, (uint32_t)s->nnodes);
	s->nnodes++;
	return n;
}

void fabsnap_drop(struct fab_snap *s, bool (*keep)(const struct fab_node *n, void *ctx),
		  void *ctx)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->nnodes; i++) {
		if (!keep(&s->nodes[i], ctx)) {
			node_release(&s->nodes[i]);
			continue;
		}
		if (kept != i)
			s->nodes[kept] = s->nodes[i];
		kept++;
	}
	s->nnodes = kept;
	memset(s->hash, 0, s->hash_cap * sizeof(*s->hash));
	for (size_t i = 0; i < kept; i++)
		hash_insert(s->hash, s->hash_cap, s->nodes, (uint32_t)i);
}

struct fab_node *fabsnap_find(const struct fab_snap *s, uint64_t guid)
{
	if (!s->hash_cap)
		return NULL;
	for (size_t i = hash_slot(guid, s->hash_cap); s->hash[i];
	     i = (i + 1) & (s->hash_cap - 1))
		if (s->nodes[s->hash[i] - 1].guid == guid)
			return &s->nodes[s->hash[i] - 1];
	return NULL;
}

const struct fab_sm *fabsnap_master(const struct fab_snap *s)
{
	for (size_t i = 0; s->sm_lid && i < s->nsms; i++)
		if (s->sms[i].state == IB_SMINFO_STATE_MASTER && s->sms[i].lid == s->sm_lid)
			return &s->sms[i];
	return NULL;
}

const struct fab_port *fabsnap_find_lid(const struct fab_snap *s, unsigned lid,
					const struct fab_node **node)
{
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = n->type == FAB_SWITCH ? 0 : 1; p <= n->nports; p++) {
			const struct fab_port *fp = &n->ports[p];

			if (fp->has_info && fp->lid && lid >= fp->lid &&
			    lid < fp->lid + (1u << fp->lmc)) {
				*node = n;
				return fp;
			}
			if (n->type == FAB_SWITCH)
				break;
		}
	}
	return NULL;
}

const struct fab_port *fabsnap_peer(const struct fab_snap *s,
				    const struct fab_port *p,
				    const struct fab_node **peer_node)
{
	const struct fab_node *n;

	if (!p->peer_guid)
		return NULL;
	n = fabsnap_find(s, p->peer_guid);
	if (!n || p->peer_port > n->nports)
		return NULL;
	if (peer_node)
		*peer_node = n;
	return &n->ports[p->peer_port];
}

void fabsnap_count(struct fab_snap *s)
{
	struct fab_stats *st = &s->stats;

	st->nodes = (unsigned)s->nnodes;
	st->switches = st->cas = st->routers = st->links = st->ports = 0;
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		st->switches += n->type == FAB_SWITCH;
		st->cas += n->type == FAB_CA;
		st->routers += n->type == FAB_ROUTER;
		for (unsigned p = 1; p <= n->nports; p++) {
			st->ports += n->ports[p].has_info;
			st->links += n->ports[p].peer_guid != 0;
		}
	}
	st->links /= 2; /* each link seen from both ends */
}

const char *fabsnap_type_name(unsigned type)
{
	static const char *const names[] = { "unknown", "ca", "switch", "router" };

	return names[type < 4 ? type : 0];
}

size_t fabsnap_quote(char *buf, size_t cap, const char *s)
{
	size_t n = strlen(s);
	char *end;

	if (MADTEXT_QUOTED_MAX(n) + 1 > cap)
		n = cap > MADTEXT_QUOTED_MAX(0) ? (cap - 1 - MADTEXT_QUOTED_MAX(0)) / 4 : 0;
	end = madtext_quote(buf, (const uint8_t *)s, n);
	*end = '\0';
	return (size_t)(end - buf);
}

unsigned fabsnap_pma_lid(const struct fab_node *n, unsigned p)
{
	if (n->type == FAB_SWITCH)
		return n->ports[0].lid;
	if (p && p <= n->nports && n->ports[p].lid)
		return n->ports[p].lid;
	for (unsigned i = 1; i <= n->nports; i++)
		if (n->ports[i].lid)
			return n->ports[i].lid;
	return 0;
}

/* Copies node n of another snapshot into s (its ports its own, its table
 * shared). */
static int copy_node(struct fab_snap *s, const struct fab_node *n)
{
	struct fab_node *c = fabsnap_add(s, n->guid, n->nports);
	struct fab_port *ports;

	if (!c)
		return -1;
	ports = c->ports;
	*c = *n;
	c->ports = ports;
	c->dir = NULL;
	memcpy(ports, n->ports, (n->nports + 1u) * sizeof(*ports));
	for (unsigned p = 0; p <= n->nports; p++)
		if (ports[p].pkeys)
			fabsnap_pkeys_get(ports[p].pkeys);
	if (c->lft)
		fabsnap_lft_get(c->lft);
	if (c->sl2vl)
		fabsnap_sl2vl_get(c->sl2vl);
	if (c->mft)
		fabmft_get(c->mft);
	return 0;
}

struct fab_snap *fabsnap_copy(const struct fab_snap *from,
			      bool (*keep)(const struct fab_node *n, void *ctx),
			      void *ctx)
{
	struct fab_snap *s = fabsnap_new();

	if (!s)
		return NULL;
	s->time = from->time;
	s->mono_ms = from->mono_ms;
	memcpy(s->via, from->via, sizeof(s->via));
	s->ok = from->ok;
	s->duration_ms = from->duration_ms;
	s->stats = from->stats;
	s->refreshes = from->refreshes;
	s->sweeps = from->sweeps;
	s->rate_base_ms = from->rate_base_ms;
	s->reroute_ms = from->reroute_ms;
	s->local_guid = from->local_guid;
	s->local_port_guid = from->local_port_guid;
	s->sm_lid = from->sm_lid;
	s->sm_act_since_ms = from->sm_act_since_ms;
	if ((s->mcast = from->mcast))
		fabmcast_get(s->mcast);
	if ((s->pathsl = from->pathsl))
		fabsnap_pathsl_get(s->pathsl);
	if (from->nsms) {
		s->sms = malloc(from->nsms * sizeof(*s->sms));
		if (!s->sms)
			goto err;
		memcpy(s->sms, from->sms, from->nsms * sizeof(*s->sms));
		s->nsms = from->nsms;
	}
	for (size_t i = 0; i < from->nnodes; i++)
		if ((!keep || keep(&from->nodes[i], ctx)) && copy_node(s, &from->nodes[i]) < 0)
			goto err;
	return s;
err:
	fabsnap_put(s);
	return NULL;
}

void fabsnap_node_info_port(struct fab_node *n, uint8_t *data)
{
	unsigned lp = mad_get_field(data, 0, IB_NODE_LOCAL_PORT_F);
	uint64_t port_guid = mad_get_field64(data, 0, IB_NODE_PORT_GUID_F);

	if (lp > n->nports)
		return;
	n->ports[lp].port_guid = port_guid;
	if (n->type == FAB_SWITCH)
		n->ports[0].port_guid = port_guid; /* its ports' one GUID */
}

struct fab_node *fabsnap_add_node_info(struct fab_snap *s, uint8_t *data)
{
	struct fab_node *n = fabsnap_add(s, mad_get_field64(data, 0, IB_NODE_GUID_F),
					 mad_get_field(data, 0, IB_NODE_NPORTS_F));

	if (!n)
		return NULL;
	n->type = (uint8_t)mad_get_field(data, 0, IB_NODE_TYPE_F);
	n->sys_guid = mad_get_field64(data, 0, IB_NODE_SYSTEM_GUID_F);
	n->vendor_id = mad_get_field(data, 0, IB_NODE_VENDORID_F);
	n->device_id = (uint16_t)mad_get_field(data, 0, IB_NODE_DEVID_F);
	n->revision = mad_get_field(data, 0, IB_NODE_REVISION_F);
	n->partition_cap = (uint16_t)mad_get_field(data, 0, IB_NODE_PARTITION_CAP_F);
	fabsnap_node_info_port(n, data);
	return n;
}

unsigned fabsnap_link_downed(const struct fab_port *p)
{
	return mad_get_field((void *)p->basic, 0, IB_PC_LINK_DOWNED_F);
}

void fabsnap_refresh_mads(struct fab_snap *s, uint64_t mads)
{
	s->stats.mads = mads;
	s->stats.detail_mads = 0;
	s->stats.sl2vl_mads = 0;
	s->stats.pathsl_mads = 0;
}

void fabsnap_take_port_info(struct fab_port *p, const struct fab_port *was)
{
	p->port_guid = was->port_guid;
	p->has_info = was->has_info;
	p->state = was->state;
	p->phys_state = was->phys_state;
	p->lid = was->lid;
	p->lmc = was->lmc;
	p->sm_lid = was->sm_lid;
	p->cap_mask = was->cap_mask;
	p->oper_vls = was->oper_vls;
	p->part_enf = was->part_enf;
	p->width = was->width;
	p->width_enabled = was->width_enabled;
	p->width_supported = was->width_supported;
	p->speed = was->speed;
	p->speed_enabled = was->speed_enabled;
	p->speed_supported = was->speed_supported;
	p->ext_speed = was->ext_speed;
	p->ext_speed_enabled = was->ext_speed_enabled;
	p->ext_speed_supported = was->ext_speed_supported;
}

struct fab_node *fabsnap_add_found(struct fab_snap *s, const struct fab_node *was)
{
	struct fab_node *n = fabsnap_add(s, was->guid, was->nports);

	if (!n)
		return NULL;
	n->type = was->type;
	n->sys_guid = was->sys_guid;
	n->vendor_id = was->vendor_id;
	n->device_id = was->device_id;
	n->revision = was->revision;
	n->partition_cap = was->partition_cap;
	for (unsigned p = 0; p <= was->nports; p++)
		fabsnap_take_port_info(&n->ports[p], &was->ports[p]);
	return n;
}

void fabsnap_read_node_desc(struct fab_node *n, const uint8_t *data)
{
	memcpy(n->desc, data, FAB_DESC_LEN);
	n->desc[FAB_DESC_LEN] = '\0';
	n->has_desc = true;
}

static bool has_ext_speeds(const struct fab_port *p)
{
	return p->cap_mask & IB_PORT_CAP_HAS_EXT_SPEEDS;
}

static void clear_ext_speeds(struct fab_port *p)
{
	p->ext_speed = p->ext_speed_enabled = p->ext_speed_supported = 0;
}

void fabsnap_read_port_info(struct fab_node *n, unsigned port, uint8_t *data)
{
	struct fab_port *p = &n->ports[port];

	p->has_info = true;
	p->state = (uint8_t)mad_get_field(data, 0, IB_PORT_STATE_F);
	p->phys_state = (uint8_t)mad_get_field(data, 0, IB_PORT_PHYS_STATE_F);
	p->lid = (uint16_t)mad_get_field(data, 0, IB_PORT_LID_F);
	p->lmc = (uint8_t)mad_get_field(data, 0, IB_PORT_LMC_F);
	p->sm_lid = (uint16_t)mad_get_field(data, 0, IB_PORT_SMLID_F);
	p->cap_mask = mad_get_field(data, 0, IB_PORT_CAPMASK_F);
	p->oper_vls = (uint8_t)mad_get_field(data, 0, IB_PORT_OPER_VLS_F);
	p->part_enf = (uint8_t)(mad_get_field(data, 0, IB_PORT_PART_EN_INB_F) |
				mad_get_field(data, 0, IB_PORT_PART_EN_OUTB_F) << 1);
	p->width = (uint8_t)mad_get_field(data, 0, IB_PORT_LINK_WIDTH_ACTIVE_F);
	p->width_enabled = (uint8_t)mad_get_field(data, 0, IB_PORT_LINK_WIDTH_ENABLED_F);
	p->width_supported = (uint8_t)mad_get_field(data, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F);
	p->speed = (uint8_t)mad_get_field(data, 0, IB_PORT_LINK_SPEED_ACTIVE_F);
	p->speed_enabled = (uint8_t)mad_get_field(data, 0, IB_PORT_LINK_SPEED_ENABLED_F);
	p->speed_supported = (uint8_t)mad_get_field(data, 0, IB_PORT_LINK_SPEED_SUPPORTED_F);
	p->ext_speed = (uint8_t)mad_get_field(data, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
	p->ext_speed_enabled = (uint8_t)mad_get_field(data, 0,
						      IB_PORT_LINK_SPEED_EXT_ENABLED_F);
	p->ext_speed_supported = (uint8_t)mad_get_field(data, 0,
							IB_PORT_LINK_SPEED_EXT_SUPPORTED_F);
	if (p->ext_speed_enabled == IB_LINK_SPEED_EXT_DISABLE)
		p->ext_speed_enabled = 0;
	/* A switch's by port 0's, once all are in (fabsnap_switch_ports). */
	if (n->type != FAB_SWITCH && !has_ext_speeds(p))
		clear_ext_speeds(p);
}

void fabsnap_switch_ports(struct fab_node *n)
{
	const struct fab_port *p0 = &n->ports[0];

	for (unsigned p = 0; p <= n->nports; p++) {
		struct fab_port *fp = &n->ports[p];

		if (!fp->has_info)
			continue;
		fp->lid = p0->lid;
		fp->lmc = p0->lmc;
		if (!has_ext_speeds(p0))
			clear_ext_speeds(fp);
	}
}

bool fabsnap_awaits_sm(const struct fab_port *p)
{
	return p->has_info && p->phys_state == IB_PORT_PHYS_STATE_LINKUP &&
	       (p->state == IB_LINK_INIT || p->state == IB_LINK_ARMED);
}

bool fabsnap_port_reroutes(const struct fab_node *n, unsigned p,
			   const struct fab_port *was)
{
	const struct fab_port *now = &n->ports[p];
	bool endport = n->type != FAB_SWITCH || !p;

	if (!now->has_info || !was->has_info)
		return false;
	return now->state != was->state ||
	       (endport && (now->lid != was->lid || now->lmc != was->lmc));
}

uint8_t *fabsnap_details_room(struct fab_port *p, unsigned a)
{
	return a == PMADET_RCV ? p->rcv_det : a == PMADET_XMIT ? p->xmit_det : p->vl_wait;
}

size_t fabsnap_details_len(unsigned a)
{
	return a == PMADET_RCV ? PMADET_RCV_LEN : a == PMADET_XMIT ? PMADET_XMIT_LEN :
		PMADET_VL_LEN;
}

const uint8_t *fabsnap_details(const struct fab_port *p, unsigned a)
{
	if (a >= PMADET_ATTRS || !(p->det_has & 1u << a))
		return NULL;
	return fabsnap_details_room((struct fab_port *)p, a);
}
