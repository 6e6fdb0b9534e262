/* A snapshot's multicast groups (the SA's MCMemberRecords) and each
 * switch's MulticastForwardingTable for the MLIDs in use
 * (src/fabric/snapshot/mcast.c owns them, sweepmcast.c asks them).  Both
 * are shared by reference between the snapshots that follow until a sweep
 * reads them again. */
#ifndef UMADFS_FAB_MCAST_H
#define UMADFS_FAB_MCAST_H

#include <stdbool.h>
#include <stdint.h>

#define FAB_MFT_MLIDS 32     /* MLIDs in a MulticastForwardingTable block */
#define FAB_MFT_PORTS 16     /* ports of one position (AttributeModifier 31:28) */

/* JoinState bits (IBA 15.2.5.17). */
enum { FAB_JOIN_FULL = 1, FAB_JOIN_NON = 2, FAB_JOIN_SENDONLY = 4 };

/* A member of a group: the SA's record of one port. */
struct fab_mcmember {
	uint64_t prefix, guid;  /* its PortGID */
	uint8_t join_state;     /* FAB_JOIN_* bits */
	uint8_t proxy;          /* ProxyJoin */
	uint8_t port;           /* its port number on node_guid */
	uint64_t node_guid;     /* the node of the view with a port of that
				 * GUID at the sweep, 0 if none */
};

/* A group: its MGID, MLID, PKey and members[first .. first + n). */
struct fab_mgroup {
	uint8_t mgid[16];
	uint16_t mlid, pkey;
	uint32_t first, n;
};

/* What the SA said at a sweep: groups by MLID, then MGID; each group's
 * members by GID.  One malloc'd block, read only once made. */
struct fab_mcast {
	int refs;               /* atomic */
	bool truncated;         /* an answer was cut to its first segment */
	bool untrusted;         /* the SA hid the members' PortGIDs (SM_Key) */
	uint32_t ngroups, nmembers;
	struct fab_mgroup *groups;
	struct fab_mcmember *members;
};

/* A switch's MulticastForwardingTable for the blocks of MLIDs in use: for
 * each block block[b] (MLIDs 0xC000 + 32 block[b] ...), each of its 32
 * MLIDs, npos positions of 16 ports' bits (bit i of position q: port
 * 16 q + i), as the blocks answered. */
struct fab_mft {
	int refs;               /* atomic */
	int64_t read_ms;        /* when the sweep that read it started */
	uint16_t pending;       /* blocks not answered yet */
	uint8_t npos;
	uint16_t nblocks;
	uint16_t *block;        /* [nblocks], ascending */
	uint16_t *mask;         /* [nblocks][32][npos] */
};

/* ngroups groups and nmembers members, zeroed, one reference; NULL on
 * ENOMEM. */
struct fab_mcast *fabmcast_new(uint32_t ngroups, uint32_t nmembers);
void fabmcast_get(struct fab_mcast *m);
/* Drops a reference (m may be NULL); the last frees it.  Any thread. */
void fabmcast_put(struct fab_mcast *m);
/* The group of mlid, or NULL. */
const struct fab_mgroup *fabmcast_group(const struct fab_mcast *m, unsigned mlid);
/* Whether a and b name the same groups with the same members. */
bool fabmcast_same(const struct fab_mcast *a, const struct fab_mcast *b);
#define FAB_GID_TEXT 40 /* a GID in full, 8 groups of 4 hex digits, NUL */

/* gid (16 bytes) as the kernel writes one in full:
 * ff12:401b:ffff:0000:0000:0000:ffff:ffff. */
void fabmcast_gid_text(char buf[FAB_GID_TEXT], const uint8_t *gid);
/* Member m's port GID so. */
void fabmcast_member_gid_text(char buf[FAB_GID_TEXT], const struct fab_mcmember *m);
/* The join state as files show it: "full", "non", "send-only", or the
 * bits joined by "+". */
const char *fabmcast_join_name(unsigned join_state);

/* Called for a member of group g in one snapshot that the other has not
 * (join: in b, not in a; else in a, not in b). */
typedef void (*fabmcast_diff_fn)(void *ctx, bool join, const struct fab_mgroup *g,
				 const struct fab_mcmember *m);
/* The members b has and a had not (joins), and the other way (leaves), a
 * group by its MLID and MGID; nothing when either is NULL or not whole
 * (truncated, untrusted). */
void fabmcast_diff(const struct fab_mcast *a, const struct fab_mcast *b,
		   fabmcast_diff_fn fn, void *ctx);

/* A table of nblocks blocks of npos positions, every mask 0, pending all
 * of them, one reference; NULL on ENOMEM. */
struct fab_mft *fabmft_new(unsigned nblocks, unsigned npos, int64_t read_ms);
void fabmft_get(struct fab_mft *t);
void fabmft_put(struct fab_mft *t);
/* The 16-bit mask of mlid's entry at position pos (0 if not read). */
unsigned fabmft_mask(const struct fab_mft *t, unsigned mlid, unsigned pos);
/* Whether mlid's entry forwards to port. */
bool fabmft_has(const struct fab_mft *t, unsigned mlid, unsigned port);

#endif
