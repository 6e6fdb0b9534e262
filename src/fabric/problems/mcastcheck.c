/* The multicast checks (problems_priv.h), from the snapshot's groups (the
 * SA's) and the switches' MulticastForwardingTables (sweepmcast.c),
 * without MADs:
 * - mcast_group_empty: a group the SA has with no full member, none to
 *   receive its packets (not judged when the SA hid its members,
 *   fab_mcast.untrusted, or cut its answer short); but for the SM's own
 *   IPoIB broadcast groups while they have no member at all: the SM makes
 *   them at its start whether or not a host runs IPoIB;
 * - mcast_member_unreachable: a full member that another member's
 *   packets to the group do not reach, as the switches' tables forward
 *   them: from the switch the sender hangs on (or is), out of every port
 *   its entry names, on through every switch reached so;
 * - mcast_loop: the group's tables forward around a cycle of switches (a
 *   link closing a cycle of links both ends of which forward the MLID
 *   over, or one end does).
 * A group is judged only where every switch has its table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/fabric/snapshot/mcast.h"

#include "problems_priv.h"

/* Where a member's packets enter the switches: the switch and its port;
 * and, for the judgement, how many members' packets miss it. */
struct entry {
	uint32_t sw;      /* node index, UINT32_MAX: none in the view */
	uint8_t port;
	uint32_t idx;     /* the member's index in its group */
	uint32_t senders; /* members whose packets do not reach it */
	uint32_t first;   /* the first of them */
};

static struct entry entry_of(const struct fab_snap *s, const struct fab_mcmember *m)
{
	const struct fab_node *n = m->node_guid ? fabsnap_find(s, m->node_guid) : NULL;
	const struct fab_node *peer = NULL;
	const struct fab_port *fp;

	if (!n || m->port > n->nports)
		return (struct entry){ .sw = UINT32_MAX };
	if (n->type == FAB_SWITCH)
		return (struct entry){ .sw = (uint32_t)(n - s->nodes) };
	fp = fabsnap_peer(s, &n->ports[m->port], &peer);
	if (!fp || peer->type != FAB_SWITCH)
		return (struct entry){ .sw = UINT32_MAX };
	return (struct entry){ .sw = (uint32_t)(peer - s->nodes),
			       .port = n->ports[m->port].peer_port };
}

/* Every switch has its table: the group can be judged. */
static bool tables_known(const struct fab_snap *s)
{
	for (size_t i = 0; i < s->nnodes; i++)
		if (s->nodes[i].type == FAB_SWITCH && (!s->nodes[i].mft || s->nodes[i].mft->pending))
			return false;
	return true;
}

/* The switches mlid's packets reach from switch from: seen[] set (queue:
 * room for every node). */
static void flood(const struct fab_snap *s, unsigned mlid, uint32_t from,
		  bool *seen, uint32_t *queue)
{
	size_t head = 0, tail = 0;

	memset(seen, 0, s->nnodes * sizeof(*seen));
	seen[from] = true;
	queue[tail++] = from;
	while (head < tail) {
		const struct fab_node *n = &s->nodes[queue[head++]];

		for (unsigned p = 1; p <= n->nports; p++) {
			const struct fab_node *peer = NULL;

			if (!fabmft_has(n->mft, mlid, p) ||
			    !fabsnap_peer(s, &n->ports[p], &peer) || peer->type != FAB_SWITCH)
				continue;
			if (!seen[peer - s->nodes]) {
				seen[peer - s->nodes] = true;
				queue[tail++] = (uint32_t)(peer - s->nodes);
			}
		}
	}
}

/* Whether a packet of mlid that reached switch e.sw leaves by e.port to
 * the member there. */
static bool delivered(const struct fab_snap *s, unsigned mlid, struct entry e,
		      const bool *seen)
{
	return seen[e.sw] && fabmft_has(s->nodes[e.sw].mft, mlid, e.port);
}

/* A problem of group g (its MLID, and its MGID among the found keys). */
static struct fab_problem *group_problem(struct problem_list *l, unsigned kind,
					 const struct fab_mgroup *g,
					 const struct fab_node *n, int port)
{
	struct fab_problem *pr = problem_add(l, kind, n, port);
	char mgid[FAB_GID_TEXT];

	if (!pr)
		return NULL;
	pr->lid = g->mlid;
	fabmcast_gid_text(mgid, g->mgid);
	snprintf(pr->found, sizeof(pr->found), "mlid=0x%04x mgid=%s", g->mlid, mgid);
	return pr;
}

static void unreachable(struct problem_list *l, const struct fab_mgroup *g,
			const struct fab_mcmember *r, const struct fab_mcmember *from,
			unsigned senders)
{
	const struct fab_snap *s = l->snap;
	const struct fab_node *n = fabsnap_find(s, r->node_guid);
	const struct fab_node *peer = fabsnap_find(s, from->node_guid);
	struct fab_problem *pr = group_problem(l, PROBLEM_MCAST_MEMBER_UNREACHABLE, g, n,
					       r->port);
	size_t len;

	if (!pr)
		return;
	if (peer)
		problem_set_peer(pr, peer, from->port);
	len = strlen(pr->found);
	snprintf(pr->found + len, sizeof(pr->found) - len, " senders=%u", senders);
}

static int cmp_entry(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	return (a->sw > b->sw) - (a->sw < b->sw);
}

/* The full members against the packets of the k members that enter at
 * switch e[from].sw (e[from .. from + k)), flooded into seen[]. */
static void count_misses(const struct fab_snap *s, const struct fab_mgroup *g,
			 struct entry *e, uint32_t from, uint32_t k, const bool *seen)
{
	const struct fab_mcmember *m = &s->mcast->members[g->first];

	for (uint32_t r = 0; r < g->n; r++) {
		bool here = r >= from && r < from + k; /* itself among them */

		if (!(m[e[r].idx].join_state & FAB_JOIN_FULL) || e[r].sw == UINT32_MAX ||
		    delivered(s, g->mlid, e[r], seen) || k == here)
			continue;
		if (!e[r].senders)
			e[r].first = e[r == from ? from + 1 : from].idx;
		e[r].senders += k - here;
	}
}

/* Each full member of g against every other member's packets: one flood
 * a switch members enter at. */
static void judge_reach(struct problem_list *l, const struct fab_mgroup *g,
			bool *seen, uint32_t *queue, struct entry *e)
{
	const struct fab_snap *s = l->snap;
	const struct fab_mcmember *m = &s->mcast->members[g->first];

	for (uint32_t i = 0; i < g->n; i++) {
		e[i] = entry_of(s, &m[i]);
		e[i].idx = i;
	}
	qsort(e, g->n, sizeof(*e), cmp_entry);
	for (uint32_t i = 0, k; i < g->n && e[i].sw != UINT32_MAX; i += k) {
		for (k = 1; i + k < g->n && e[i + k].sw == e[i].sw; k++)
			;
		flood(s, g->mlid, e[i].sw, seen, queue);
		count_misses(s, g, e, i, k, seen);
	}
	for (uint32_t r = 0; r < g->n; r++)
		if (e[r].senders)
			unreachable(l, g, &m[e[r].idx], &m[e[r].first], e[r].senders);
}

static uint32_t root(uint32_t *up, uint32_t i)
{
	while (up[i] != i)
		i = up[i] = up[up[i]];
	return i;
}

/* A cycle of the links the group's tables forward over: union-find of
 * the switches, each link once (from its lower index end, or from the
 * one end forwarding over it). */
static void judge_loop(struct problem_list *l, const struct fab_mgroup *g, uint32_t *up)
{
	const struct fab_snap *s = l->snap;

	for (uint32_t i = 0; i < s->nnodes; i++)
		up[i] = i;
	for (uint32_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = 1; n->type == FAB_SWITCH && p <= n->nports; p++) {
			const struct fab_node *peer = NULL;
			const struct fab_port *pp = fabsnap_peer(s, &n->ports[p], &peer);
			uint32_t j;
			bool back;

			if (!pp || peer->type != FAB_SWITCH || !fabmft_has(n->mft, g->mlid, p))
				continue;
			j = (uint32_t)(peer - s->nodes);
			back = fabmft_has(peer->mft, g->mlid, n->ports[p].peer_port);
			if ((back && j < i) || j == i)
				continue; /* counted from the other end */
			if (root(up, i) == root(up, j)) {
				struct fab_problem *pr = group_problem(l, PROBLEM_MCAST_LOOP, g,
								       n, (int)p);

				if (pr)
					problem_set_peer(pr, peer, n->ports[p].peer_port);
				return; /* one a group */
			}
			up[root(up, i)] = root(up, j);
		}
	}
}

/* Whether mgid is an IPoIB broadcast group's, ff1S:401b:PKEY::ffff:ffff
 * (RFC 4391: the IPv4 signature, the scope's, the P_Key, all ones). */
static bool ipoib_broadcast(const uint8_t *mgid)
{
	static const uint8_t tail[10] = { 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };

	return mgid[0] == 0xff && (mgid[1] & 0xf0) == 0x10 && mgid[2] == 0x40 &&
	       mgid[3] == 0x1b && !memcmp(mgid + 6, tail, sizeof(tail));
}

static void judge_empty(struct problem_list *l, const struct fab_mgroup *g)
{
	const struct fab_mcmember *m = &l->snap->mcast->members[g->first];
	struct fab_problem *pr;
	size_t len;

	for (uint32_t i = 0; i < g->n; i++)
		if (m[i].join_state & FAB_JOIN_FULL)
			return;
	if (!g->n && ipoib_broadcast(g->mgid))
		return;
	pr = group_problem(l, PROBLEM_MCAST_GROUP_EMPTY, g, NULL, -1);
	if (!pr)
		return;
	len = strlen(pr->found);
	snprintf(pr->found + len, sizeof(pr->found) - len, " members=%u", g->n);
}

void mcastcheck_judge(struct problem_list *l)
{
	const struct fab_mcast *mc = l->snap->mcast;
	size_t nn = l->snap->nnodes + 1;
	uint32_t *queue;
	bool *seen, known = tables_known(l->snap);
	struct entry *e;

	if (!mc)
		return;
	queue = malloc(nn * sizeof(*queue));
	seen = malloc(nn * sizeof(*seen));
	e = malloc((mc->nmembers + 1u) * sizeof(*e));
	if (!queue || !seen || !e) {
		l->nomem = true;
		goto out;
	}
	for (uint32_t i = 0; i < mc->ngroups; i++) {
		const struct fab_mgroup *g = &mc->groups[i];

		if (!mc->untrusted && !mc->truncated)
			judge_empty(l, g);
		if (!known || !IB_MLID_VALID(g->mlid))
			continue;
		judge_loop(l, g, queue);
		judge_reach(l, g, seen, queue, e);
	}
out:
	free(queue);
	free(seen);
	free(e);
}
