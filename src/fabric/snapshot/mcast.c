/* Multicast groups and forwarding tables of a snapshot (mcast.h): their
 * allocation, references and lookups.  What a sweep asks is
 * sweepmcast.c's. */
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/refs.h"
#include "umadfs/fabric/snapshot/mcast.h"
#include "umadfs/mad/ibcodes.h"

struct fab_mcast *fabmcast_new(uint32_t ngroups, uint32_t nmembers)
{
	/* the members after the groups, aligned as they need */
	size_t align = _Alignof(struct fab_mcmember);
	size_t groups = ((size_t)ngroups * sizeof(struct fab_mgroup) + align - 1) / align * align;
	struct fab_mcast *m = calloc(1, sizeof(struct fab_mcast) + groups +
				     (size_t)nmembers * sizeof(struct fab_mcmember));

	if (!m)
		return NULL;
	m->refs = 1;
	m->ngroups = ngroups;
	m->nmembers = nmembers;
	m->groups = (struct fab_mgroup *)(m + 1);
	m->members = (struct fab_mcmember *)((char *)m->groups + groups);
	return m;
}

void fabmcast_get(struct fab_mcast *m)
{
	refs_get(&m->refs);
}

void fabmcast_put(struct fab_mcast *m)
{
	if (m && refs_put(&m->refs))
		free(m);
}

const struct fab_mgroup *fabmcast_group(const struct fab_mcast *m, unsigned mlid)
{
	for (uint32_t i = 0; m && i < m->ngroups; i++)
		if (m->groups[i].mlid == mlid)
			return &m->groups[i];
	return NULL;
}

static bool same_member(const struct fab_mcmember *a, const struct fab_mcmember *b)
{
	return a->prefix == b->prefix && a->guid == b->guid &&
	       a->join_state == b->join_state;
}

bool fabmcast_same(const struct fab_mcast *a, const struct fab_mcast *b)
{
	if (!a || !b || a->ngroups != b->ngroups || a->nmembers != b->nmembers)
		return false;
	for (uint32_t i = 0; i < a->ngroups; i++) {
		const struct fab_mgroup *ga = &a->groups[i], *gb = &b->groups[i];

		if (ga->mlid != gb->mlid || ga->n != gb->n ||
		    memcmp(ga->mgid, gb->mgid, sizeof(ga->mgid)))
			return false;
	}
	for (uint32_t i = 0; i < a->nmembers; i++)
		if (!same_member(&a->members[i], &b->members[i]))
			return false;
	return true;
}

void fabmcast_gid_text(char buf[FAB_GID_TEXT], const uint8_t *gid)
{
	static const char hex[] = "0123456789abcdef";
	char *o = buf;

	for (int i = 0; i < 16; i++) {
		if (i && !(i % 2))
			*o++ = ':';
		*o++ = hex[gid[i] >> 4];
		*o++ = hex[gid[i] & 15];
	}
	*o = '\0';
}

void fabmcast_member_gid_text(char buf[FAB_GID_TEXT], const struct fab_mcmember *m)
{
	uint8_t gid[16];

	for (int i = 0; i < 8; i++) {
		gid[i] = (uint8_t)(m->prefix >> (56 - 8 * i));
		gid[8 + i] = (uint8_t)(m->guid >> (56 - 8 * i));
	}
	fabmcast_gid_text(buf, gid);
}

const char *fabmcast_join_name(unsigned join_state)
{
	static const char *const names[8] = {
		"none", "full", "non", "full+non", "send-only", "full+send-only",
		"non+send-only", "full+non+send-only",
	};

	return names[join_state & 7u];
}

/* The group of x's MLID and MGID in m, or NULL. */
static const struct fab_mgroup *same_group(const struct fab_mcast *m,
					   const struct fab_mgroup *x)
{
	for (uint32_t i = 0; i < m->ngroups; i++)
		if (m->groups[i].mlid == x->mlid &&
		    !memcmp(m->groups[i].mgid, x->mgid, sizeof(x->mgid)))
			return &m->groups[i];
	return NULL;
}

static int cmp_gid(const struct fab_mcmember *a, const struct fab_mcmember *b)
{
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	return (a->guid > b->guid) - (a->guid < b->guid);
}

/* The members of group g of a that b's same group (ob, or NULL) has
 * not, by a merge of the two (each by GID). */
static void members_missing(const struct fab_mcast *a, const struct fab_mgroup *g,
			    const struct fab_mcast *b, const struct fab_mgroup *ob,
			    bool join, fabmcast_diff_fn fn, void *ctx)
{
	const struct fab_mcmember *ma = &a->members[g->first];
	const struct fab_mcmember *mb = ob ? &b->members[ob->first] : NULL;
	uint32_t i = 0, j = 0, nb = ob ? ob->n : 0;

	while (i < g->n) {
		int c = j == nb ? -1 : cmp_gid(&ma[i], &mb[j]);

		if (c < 0)
			fn(ctx, join, g, &ma[i++]);
		else if (c > 0)
			j++;
		else
			i++, j++;
	}
}

void fabmcast_diff(const struct fab_mcast *a, const struct fab_mcast *b,
		   fabmcast_diff_fn fn, void *ctx)
{
	if (!a || !b || a->truncated || b->truncated || a->untrusted || b->untrusted)
		return;
	for (uint32_t i = 0; i < a->ngroups; i++)
		members_missing(a, &a->groups[i], b, same_group(b, &a->groups[i]),
				false, fn, ctx);
	for (uint32_t i = 0; i < b->ngroups; i++)
		members_missing(b, &b->groups[i], a, same_group(a, &b->groups[i]),
				true, fn, ctx);
}

struct fab_mft *fabmft_new(unsigned nblocks, unsigned npos, int64_t read_ms)
{
	size_t entries = (size_t)nblocks * FAB_MFT_MLIDS * npos;
	struct fab_mft *t = calloc(1, sizeof(*t) + nblocks * sizeof(uint16_t) +
				   entries * sizeof(uint16_t));

	if (!t)
		return NULL;
	t->refs = 1;
	t->read_ms = read_ms;
	t->nblocks = (uint16_t)nblocks;
	t->npos = (uint8_t)npos;
	t->pending = (uint16_t)(nblocks * npos);
	t->block = (uint16_t *)(t + 1);
	t->mask = t->block + nblocks;
	return t;
}

void fabmft_get(struct fab_mft *t)
{
	refs_get(&t->refs);
}

void fabmft_put(struct fab_mft *t)
{
	if (t && refs_put(&t->refs))
		free(t);
}

unsigned fabmft_mask(const struct fab_mft *t, unsigned mlid, unsigned pos)
{
	unsigned block, b;

	if (!t || mlid < IB_LID_MCAST_START_HO || pos >= t->npos)
		return 0;
	block = (mlid - IB_LID_MCAST_START_HO) / FAB_MFT_MLIDS;
	for (b = 0; b < t->nblocks && t->block[b] != block; b++)
		;
	if (b == t->nblocks)
		return 0;
	return t->mask[((size_t)b * FAB_MFT_MLIDS +
			(mlid - IB_LID_MCAST_START_HO) % FAB_MFT_MLIDS) * t->npos + pos];
}

bool fabmft_has(const struct fab_mft *t, unsigned mlid, unsigned port)
{
	return fabmft_mask(t, mlid, port / FAB_MFT_PORTS) >> (port % FAB_MFT_PORTS) & 1u;
}
