/* The partition checks (problems_priv.h), from the snapshot's PKeyTables
 * (sweeppkeys.c), without MADs:
 * - partition_no_full_member: a PKey some endport (a CA's port the view
 *   has the table of, a switch's port 0) holds, none as a full member:
 *   limited members talk only to full ones, so none of its members can
 *   talk to another in it;
 * - pkey_enforcement_mismatch: a switch's external port with partition
 *   enforcement (PortInfo PartitionEnforcementInbound or Outbound) whose
 *   table lacks a PKey the CA's port behind it has: the switch drops that
 *   port's packets of the partition;
 * - port_without_default_partition: an Active endport whose table has
 *   neither 0xffff nor 0x7fff (the default partition: the SA's).
 * And the snapshot's partitions (fab_partition), for the metrics. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problems_priv.h"

#define PKEY_FULL 0x8000u   /* the membership bit */
#define PKEY_MASK 0x7fffu
#define PKEY_DEFAULT 0x7fffu
#define PORT_ACTIVE 4

/* Whether t has pkey (no bit), either membership. */
static bool has_pkey(const struct fab_pkeys *t, unsigned pkey)
{
	for (unsigned i = 0; i < t->n; i++)
		if ((t->key[i] & PKEY_MASK) == pkey)
			return true;
	return false;
}

/* The endports' PKeys: full[k] and limited[k] the members of each. */
static void count_members(const struct fab_snap *s, uint32_t *full, uint32_t *limited)
{
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = 0; p <= n->nports; p++) {
			const struct fab_pkeys *t = fabsnap_endport_pkeys(n, p);

			for (unsigned k = 0; t && k < t->n; k++) {
				unsigned pkey = t->key[k] & PKEY_MASK;

				if (pkey)
					(t->key[k] & PKEY_FULL ? full : limited)[pkey]++;
			}
		}
	}
}

/* The snapshot's partitions from the counts, by PKey. */
static int list_partitions(struct fab_snap *s, const uint32_t *full,
			   const uint32_t *limited)
{
	size_t n = 0;

	for (unsigned k = 1; k < PKEY_FULL; k++)
		n += full[k] || limited[k];
	s->partitions = n ? calloc(n, sizeof(*s->partitions)) : NULL;
	if (n && !s->partitions)
		return -ENOMEM;
	for (unsigned k = 1; k < PKEY_FULL; k++)
		if (full[k] || limited[k])
			s->partitions[s->npartitions++] = (struct fab_partition){
				(uint16_t)k, full[k], limited[k] };
	return 0;
}

static void no_full_member(struct problem_list *l)
{
	uint32_t *full = calloc(2 * PKEY_FULL, sizeof(*full));
	struct fab_snap *s = l->snap;

	free(s->partitions);
	s->partitions = NULL;
	s->npartitions = 0;
	if (full)
		count_members(s, full, full + PKEY_FULL);
	if (!full || list_partitions(s, full, full + PKEY_FULL) < 0) {
		free(full);
		l->nomem = true;
		return;
	}
	free(full);
	for (size_t i = 0; i < s->npartitions; i++) {
		const struct fab_partition *pt = &s->partitions[i];
		struct fab_problem *pr;

		if (pt->full)
			continue;
		pr = problem_add(l, PROBLEM_PARTITION_NO_FULL_MEMBER, NULL, -1);
		if (!pr)
			break;
		pr->pkey = pt->pkey;
		snprintf(pr->found, sizeof(pr->found), "limited_members=%u", pt->limited);
	}
}

/* Switch n's port p against the endport behind it. */
static void port_mismatch(struct problem_list *l, const struct fab_node *n, unsigned p)
{
	const struct fab_port *fp = &n->ports[p];
	const struct fab_node *peer = NULL;
	const struct fab_pkeys *mine = fp->pkeys, *theirs;

	if (!fp->part_enf || !mine || mine->pending ||
	    !fabsnap_peer(l->snap, fp, &peer) || peer->type == FAB_SWITCH)
		return;
	theirs = fabsnap_endport_pkeys(peer, fp->peer_port);
	for (unsigned k = 0; theirs && k < theirs->n; k++) {
		unsigned pkey = theirs->key[k] & PKEY_MASK;
		struct fab_problem *pr;

		if (!pkey || has_pkey(mine, pkey))
			continue;
		pr = problem_add(l, PROBLEM_PKEY_ENFORCEMENT_MISMATCH, n, (int)p);
		if (!pr)
			return;
		problem_set_peer(pr, peer, fp->peer_port);
		pr->pkey = (uint16_t)pkey;
		snprintf(pr->found, sizeof(pr->found), "enforcement=%s%s",
			 fp->part_enf & 1 ? "inbound" : "",
			 fp->part_enf == 3 ? ",outbound" : fp->part_enf & 2 ? "outbound" : "");
	}
}

static void without_default(struct problem_list *l, const struct fab_node *n, unsigned p)
{
	const struct fab_pkeys *t = fabsnap_endport_pkeys(n, p);
	struct fab_problem *pr;

	if (!t || n->ports[p].state != PORT_ACTIVE || has_pkey(t, PKEY_DEFAULT))
		return;
	pr = problem_add(l, PROBLEM_PORT_WITHOUT_DEFAULT_PARTITION, n, (int)p);
	if (pr)
		snprintf(pr->found, sizeof(pr->found), "table_len=%u", t->n);
}

void partcheck_judge(struct problem_list *l)
{
	const struct fab_snap *s = l->snap;

	no_full_member(l);
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct fab_node *n = &s->nodes[i];

		for (unsigned p = 0; p <= n->nports; p++) {
			if (n->type == FAB_SWITCH && p)
				port_mismatch(l, n, p);
			else
				without_default(l, n, p);
		}
	}
}
