/* One complete picture of the fabric, as one sweep found it: its nodes,
 * their ports and links, and the sweep's own figures.  A snapshot never
 * changes once swapped in; readers hold a reference while they use it. */
#ifndef UMADFS_FABSNAP_H
#define UMADFS_FABSNAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "umadfs/mad/pmadetails.h"

struct fab_nodedir;
struct fab_metrics_index;

#define FAB_DESC_LEN 64    /* NodeDescription: 64 bytes, NUL added */
#define FAB_PATH_MAX 64    /* directed route: path[1..63] */
#define FAB_HOPS_MAX (FAB_PATH_MAX - 1)
#define FAB_PC_LEN 44      /* the bytes of PortCounters data kept */
#define FAB_PCX_LEN 72     /* and of PortCountersExtended */

enum fab_node_type { FAB_CA = 1, FAB_SWITCH = 2, FAB_ROUTER = 3 };

struct fab_port {
	uint64_t port_guid;  /* NodeInfo PortGUID through this port */
	uint64_t peer_guid;  /* the node at the other end, 0: no link */
	uint8_t peer_port;
	bool has_info;       /* PortInfo answered */
	bool has_counters;   /* PortCounters answered */
	bool has_ext;        /* PortCountersExtended answered too */
	bool asked;          /* sweep: its PortInfo was asked for */
	bool pma_asked;      /* sweep: its counters were asked for */
	bool kept;           /* sweep: a switch port's PortInfo taken from
			      * the snapshot before with the CA behind it
			      * (asked then only if that CA is in doubt:
			      * sweepkeep.c) */
	uint8_t state, phys_state, width, speed, ext_speed, lmc;
	uint16_t lid;
	uint16_t sm_lid;     /* PortInfo MasterSMLID */
	uint32_t cap_mask;   /* PortInfo CapabilityMask (bit 1: IsSM); a
			      * switch's is port 0's, its other ports' as
			      * they give it (the IBA reserves it there) */
	/* PortInfo LinkWidth and LinkSpeed (Ext) Enabled and Supported, the
	 * bits as the port gives them; ext_ (and ext_speed) 0 when it has no
	 * extended speeds (CapabilityMask bit 14 clear: a switch's port 0's,
	 * as ibnetdiscover reads it). */
	uint8_t width_enabled, width_supported;
	uint8_t speed_enabled, speed_supported;
	uint8_t ext_speed_enabled, ext_speed_supported;
	/* Its PKeyTable (below), NULL when not read: a CA's port the sweep
	 * does not reach, a Down port, a switch port without enforcement. */
	struct fab_pkeys *pkeys;
	uint8_t basic[FAB_PC_LEN];   /* PortCounters data (PortSelect...) */
	uint8_t ext[FAB_PCX_LEN];     /* PortCountersExtended data */
	uint8_t oper_vls;    /* PortInfo OperationalVLs (the code) */
	uint8_t part_enf;    /* PortInfo PartitionEnforcementInbound (bit 0)
			      * and Outbound (bit 1): a switch's external port */
	/* The detail counters (pmadetails.h), a bit each of PMADET_*: those
	 * answered, in this sweep or kept from the one before (sweepdet.c);
	 * those the PMA refused (asked again only in the rotation); the
	 * attributes' data as answered. */
	uint8_t det_has, det_refused;
	uint8_t rcv_det[PMADET_RCV_LEN];   /* PortRcvErrorDetails data */
	uint8_t xmit_det[PMADET_XMIT_LEN]; /* PortXmitDiscardDetails data */
	uint8_t vl_wait[PMADET_VL_LEN];   /* PortVLXmitWaitCounters data */
	/* The snapshot before's counters of this port (rates.c): the data
	 * and packet counters each way and PortXmitWait, as counted. */
	bool has_rate_base;
	uint64_t rate_base[5];
};

/* A switch's LinearForwardingTable as a sweep read it: port[lid] for lid
 * 0..top (SwitchInfo LinearFDBTop), the port out of which the switch
 * forwards the LID, 255 none.  Filled by the sweep that reads it, never
 * changed after: the snapshots that follow share it (a reference each)
 * until a sweep reads the switch's table again (discover.c). */
struct fab_lft {
	int refs;         /* atomic */
	uint16_t top;
	int64_t read_ms;  /* when the sweep that read it started (CLOCK_MONOTONIC) */
	uint8_t port[];   /* whole blocks of 64 entries: [0 .. top | 63] */
};

/* A port's PKeyTable as a sweep read it: n entries (NodeInfo's
 * PartitionCap, a switch's external ports SwitchInfo's
 * PartitionEnforcementCap), each as the port gives it (the membership
 * bit 15 and the PKey).  Shared, as a switch's table is, by the
 * snapshots that follow until a sweep reads it again (sweeppkeys.c). */
#define FAB_PKEY_BLOCK 32     /* entries in a PKeyTable block */
#define FAB_PKEYS_MAX 2048    /* entries kept at most (64 blocks) */
struct fab_pkeys {
	int refs;         /* atomic */
	uint16_t n;
	int64_t read_ms;  /* when the sweep that read it started (CLOCK_MONOTONIC) */
	uint8_t state;    /* the port's PortState and LID when it was read */
	uint16_t lid;
	uint16_t pending; /* blocks not answered: a sweep cut short left it so */
	uint16_t key[];   /* whole blocks of 32: [0 .. n | 31] */
};

/* A switch's SLtoVLMappingTables as a sweep read them (sweepsl2vl.c),
 * for SL 0 (the SL the routing check follows routes on when it knows no
 * pair's SL): vl[in * (nports + 1) + out] the VL SL 0 goes out on from in
 * to out, 0xff not read.  full: every pair the sweep asks was asked, else
 * only the probe.  maps: NULL, or (pathsl.c, when the pairs' SLs are in
 * use) every SL's VL, the table as read (SL 0 in its top 4 bits), where
 * vl[] says read.  Shared, as the switch's LinearForwardingTable is, by
 * the snapshots that follow until a sweep reads the switch's table
 * again. */
struct fab_sl2vl {
	int refs;         /* atomic */
	uint8_t nports;
	bool full;
	uint16_t pending; /* Gets not answered */
	uint64_t *maps;
	uint8_t vl[];
};

/* A partition the endports' PKeyTables name (partcheck.c): its PKey
 * without the membership bit, and how many endports (a CA's port the view
 * has the table of, a switch's port 0) hold it as a full and a limited
 * member. */
struct fab_partition {
	uint16_t pkey;
	uint32_t full, limited;
};

struct fab_node {
	uint64_t guid, sys_guid;
	uint8_t type, nports;
	uint8_t hops;        /* the directed route it was found by */
	uint8_t entry_port;  /* the port that route arrives at (0: local) */
	uint8_t path[FAB_PATH_MAX];
	uint32_t vendor_id, revision;
	uint16_t device_id;
	uint16_t pma_capmask; /* its PMA's ClassPortInfo CapabilityMask */
	uint16_t partition_cap; /* NodeInfo PartitionCap */
	uint16_t enforce_cap;   /* a switch's SwitchInfo PartitionEnforcementCap */
	bool has_desc, has_cpi; /* NodeDescription, ClassPortInfo answered */
	bool enhanced_port0;  /* SwitchInfo EnhancedPort0 */
	/* When NodeDescription, SwitchInfo and ClassPortInfo were last asked
	 * (CLOCK_MONOTONIC ms): later sweeps take them from the snapshot
	 * before until they are due again (discover.c). */
	int64_t static_ms;
	/* A CA a sweep took from the snapshot before without asking it, whose
	 * link may have gone down and up meanwhile: the next sweep asks it
	 * (sweepkeep.c). */
	bool recheck;
	/* Requests to it that timed out in this sweep (node_unresponsive). */
	uint16_t sma_timeouts, pma_timeouts;
	char desc[FAB_DESC_LEN + 1];
	/* A switch's LinearForwardingTable (below); NULL when none (not a
	 * switch, fabric_routes=off, or a block unanswered). */
	struct fab_lft *lft;
	/* Its SLtoVLMappingTables (above), NULL when not read. */
	struct fab_sl2vl *sl2vl;
	/* A switch's MulticastForwardingTable for the MLIDs in use (mcast.h,
	 * sweepmcast.c); NULL when none. */
	struct fab_mft *mft;
	struct fab_port *ports; /* [0..nports]; [0] of a CA unused */
	struct fab_nodedir *dir; /* fabfiles: its directory, once made */
};

/* A subnet manager that answered SMInfo in this sweep. */
struct fab_sm {
	uint64_t guid;        /* SMInfo GUID */
	uint64_t port_guid;   /* the port it was asked at */
	uint16_t lid;
	uint8_t priority;
	uint8_t state;        /* SMInfo SMState as sminfo prints it: 0 not
			       * active, 1 discovering, 2 standby, 3 master */
	uint32_t act_count;
};

/* The texts made from a snapshot (formatted once, on first use). */
enum fab_text { FAB_TEXT_SWEEP, FAB_TEXT_TOPOLOGY, FAB_TEXT_LINKS,
		FAB_TEXT_PROBLEMS, FAB_TEXT_RATES, FAB_TEXT_ROUTING, FAB_TEXT_COUNT };

struct fab_problem; /* problem.h */
struct fab_mcast;   /* mcast.h */
struct fab_mft;
/* One pair of the pairs' SLs: from the CA port whose GUID is src to DLID
 * dlid, on SL sl. */
struct fab_pathsl_pair {
	uint64_t src;
	uint16_t dlid;
	uint8_t sl;
};

/* The pairs' SLs of a snapshot as the SA gave them (pathsl.h), shared by
 * the snapshots that follow as long as their routing is the same
 * (fabsnap_routes_as_before()). */
struct fab_pathsl {
	int refs;          /* atomic */
	size_t n;
	uint16_t sls;      /* bit s: some pair is on SL s */
	unsigned unknown;  /* pairs the SA gave no record for (SL 0 taken) */
	struct fab_pathsl_pair pairs[]; /* by src, then dlid */
};

#define FAB_ROUTE_HOPS 66  /* hop counts 0..65 of a CA-to-CA route */

/* What the routing check (problems/routequal.c) made of a snapshot's
 * forwarding tables: numbers for metrics.prom and fabric/routing's text.
 * One malloc'd block, written before the snapshot is swapped in, then
 * read only. */
struct fab_routing {
	unsigned credit_loops;  /* cyclic components of the dependency graph */
	uint64_t pairs;         /* CA port to CA port, by base LID */
	uint64_t unrouted;      /* of them, routes that do not arrive */
	uint64_t hops_lft[FAB_ROUTE_HOPS]; /* pairs by hops, as the tables route */
	uint64_t hops_min[FAB_ROUTE_HOPS]; /* and by the topology's minimum */
	size_t len;             /* of text */
	char text[];            /* fabric/routing's, NUL-terminated */
};

struct fab_stats {
	unsigned nodes, switches, cas, routers, links, ports;
	uint64_t mads, timeouts, unreachable;
	unsigned lfts_read;     /* switches whose table the sweep read */
	unsigned tables_changed; /* switches whose forwarding or SL-to-VL
				  * tables are not the snapshot before's
				  * (sweeplft.c) */
	unsigned sl2vl_mads;    /* SLtoVLMappingTable Gets (sweepsl2vl.c) */
	unsigned pathsl_mads;   /* PathRecord Gets and the SL-to-VL Gets
				 * made for their SLs (pathsl.c) */
	unsigned detail_mads;   /* the detail counters' Gets (sweepdet.c) */
	unsigned cas_kept;      /* CAs taken from the snapshot before,
				 * unasked (sweepkeep.c) */
	unsigned ports_kept;    /* switch ports' PortInfo so taken, with
				 * their CAs (sweepkeep.c) */
};

struct fab_snap {
	int refs;               /* atomic */
	struct timespec time;   /* when the sweep ended (CLOCK_REALTIME) */
	int64_t mono_ms;        /* the same, CLOCK_MONOTONIC, for age_ms */
	unsigned duration_ms;
	char via[48];           /* "CA/port" the sweep went out of */
	bool ok;
	bool from_sweep;        /* an expectation copied from a sweep (its
				 * widths are what ran, not what should) */
	char error[128];        /* why not ok */
	unsigned refreshes;     /* refreshes since the sweep it came from */
	uint32_t sweeps;        /* sweeps since mount (the details' rotation) */
	int64_t rate_base_ms;   /* mono_ms of the snapshot the ports' rate
				 * bases are from (0: none, rates.c) */
	/* When the view last saw a change that makes an SM reroute
	 * (CLOCK_MONOTONIC, 0: none since mount): a port's PortState, an
	 * endport's LID or LMC, a node come or gone, the master SM another or
	 * restarted (discover.c, refresh.c).  A table read before it settled
	 * is read again. */
	int64_t reroute_ms;
	struct fab_stats stats;
	uint64_t local_guid, local_port_guid; /* where the sweep started */
	/* The subnet manager: the master's LID as the local port's PortInfo
	 * names it (0: none), and every SM that answered SMInfo, the master
	 * (state 3) first. */
	uint16_t sm_lid;
	struct fab_sm *sms;
	size_t nsms;
	/* problems.c's, set before the snapshot is swapped in: */
	struct fab_problem *problems; /* errors first, then by GUID, port */
	size_t nproblems;
	unsigned problems_us;    /* how long judging them took */
	struct fab_routing *routing; /* NULL: no table judged */
	struct fab_partition *partitions; /* partcheck.c's, by PKey */
	struct fab_mcast *mcast; /* the SA's groups (mcast.h); NULL: not asked */
	struct fab_pathsl *pathsl; /* the pairs' SLs (pathsl.h); NULL: not asked */
	size_t npartitions;
	unsigned routing_us;     /* of problems_us, the routing check's (0:
				  * carried from the snapshot before) */
	bool routes_broken;      /* a route_* problem among them: the next
				  * sweep reads every table (discover.c) */
	int64_t sm_act_since_ms; /* mono_ms when the master's ActCount last
				  * moved (or the master changed) */
	struct fab_node *nodes; /* in order of discovery */
	size_t nnodes, cap;
	uint32_t *hash;         /* open addressing: node index + 1, 0 empty */
	size_t hash_cap;
	pthread_mutex_t text_lock; /* guards texts and metrics */
	struct {
		char *buf;  /* a mapping of len + 1 bytes (fabtext.c) */
		size_t len;
	} texts[FAB_TEXT_COUNT];
	/* fabmetrics.c's: where each chunk of metrics.prom starts, made once
	 * (the text itself is made as it is read); one malloc'd block,
	 * NULL until made. */
	struct fab_metrics_index *metrics;
};

struct fab_snap *fabsnap_new(void);
/* Port p's detail data of attribute a (enum pmadetails_attr), or NULL
 * when it has none. */
const uint8_t *fabsnap_details(const struct fab_port *p, unsigned a);
/* Where port p keeps attribute a's data, and its length. */
uint8_t *fabsnap_details_room(struct fab_port *p, unsigned a);
size_t fabsnap_details_len(unsigned a);
void fabsnap_get(struct fab_snap *s);
void fabsnap_put(struct fab_snap *s);
/* A table of LIDs 0..top, every entry 255, one reference; NULL on ENOMEM. */
struct fab_lft *fabsnap_lft_new(unsigned top, int64_t read_ms);
void fabsnap_lft_get(struct fab_lft *t);
/* Drops a reference (t may be NULL); the last frees it.  Any thread. */
void fabsnap_lft_put(struct fab_lft *t);
/* A switch's SL-to-VL tables of nports, every entry 0xff, one reference;
 * NULL on ENOMEM.  _vl(): the VL SL 0 goes out on from in to out, 0 when
 * not read (or t NULL). */
struct fab_sl2vl *fabsnap_sl2vl_new(unsigned nports);
void fabsnap_sl2vl_get(struct fab_sl2vl *t);
void fabsnap_sl2vl_put(struct fab_sl2vl *t);
unsigned fabsnap_sl2vl_vl(const struct fab_sl2vl *t, unsigned in, unsigned out);
/* The VL SL sl goes out on from in to out: the map's where it was read
 * (pathsl.c), else fabsnap_sl2vl_vl()'s, SL 0's. */
unsigned fabsnap_sl2vl_vl_sl(const struct fab_sl2vl *t, unsigned in, unsigned out,
			     unsigned sl);
void fabsnap_pathsl_get(struct fab_pathsl *t);
/* Drops a reference (t may be NULL); the last frees it.  Any thread. */
void fabsnap_pathsl_put(struct fab_pathsl *t);
/* The order of pairs[]: by src, then dlid (qsort(), bsearch()). */
int fabsnap_pathsl_cmp(const void *a, const void *b);
/* The SL of the pair (src, dlid): 0 when not known (t may be NULL). */
unsigned fabsnap_pathsl_sl(const struct fab_pathsl *t, uint64_t src, unsigned dlid);
/* Whether snap's forwarding and SL-to-VL tables are all prev's, taken as
 * they were or read again the same (no refresh, none changed, no
 * reroute since): what was made of prev's routing holds for snap. */
bool fabsnap_routes_as_before(const struct fab_snap *prev, const struct fab_snap *snap);
/* A PKeyTable of n entries (at most FAB_PKEYS_MAX), every entry 0, one
 * reference; NULL on ENOMEM. */
struct fab_pkeys *fabsnap_pkeys_new(unsigned n, int64_t read_ms);
void fabsnap_pkeys_get(struct fab_pkeys *t);
/* The entries of port p's PKeyTable: n's PartitionCap, a switch's
 * external port's PartitionEnforcementCap; FAB_PKEYS_MAX at most. */
unsigned fabsnap_pkeys_len(const struct fab_node *n, unsigned p);
/* Drops a reference (t may be NULL); the last frees it.  Any thread. */
void fabsnap_pkeys_put(struct fab_pkeys *t);
/* The whole PKeyTable of node n's port p when p is an endport (a CA's
 * port, a switch's port 0), else (or not read, or cut short) NULL. */
const struct fab_pkeys *fabsnap_endport_pkeys(const struct fab_node *n, unsigned p);
/* Whether port p of n as now has it differs from was (the same port in
 * the snapshot before) in what makes an SM reroute: its PortState, or an
 * endport's (a CA's port, a switch's port 0) LID or LMC; false unless
 * both have PortInfo. */
bool fabsnap_port_reroutes(const struct fab_node *n, unsigned p,
			   const struct fab_port *was);
/* Adds a node (fields zeroed, nports + 1 ports); NULL on ENOMEM. */
struct fab_node *fabsnap_add(struct fab_snap *s, uint64_t guid, unsigned nports);
/* The nodes of s that keep() does not take, gone (in place: the others
 * keep their order, at lower indexes).  Only before s is shared. */
void fabsnap_drop(struct fab_snap *s, bool (*keep)(const struct fab_node *n, void *ctx),
		  void *ctx);
struct fab_node *fabsnap_find(const struct fab_snap *s, uint64_t guid);
/* The endport (a CA's port, a switch's port 0) whose LIDs (LID to LID +
 * 2^LMC - 1) hold lid, and its node in *node; NULL if none.  Linear. */
const struct fab_port *fabsnap_find_lid(const struct fab_snap *s, unsigned lid,
					const struct fab_node **node);
/* The master SM of s: the one at the local port's MasterSMLID that
 * answered SMInfo as master, or NULL. */
const struct fab_sm *fabsnap_master(const struct fab_snap *s);
/* The port at the other end of n's port p, or NULL. */
const struct fab_port *fabsnap_peer(const struct fab_snap *s,
				    const struct fab_port *p,
				    const struct fab_node **peer_node);
/* Whether n's port p is Active, linked, and (to_switch) leads to a
 * switch. */
bool fabsnap_port_active(const struct fab_snap *s, const struct fab_node *n,
			 unsigned p, bool to_switch);
/* Whether switch n's SL-to-VL table from port in to port out is one the
 * routing check follows (a full read asks each such): both Active, out
 * to a switch (the VL of a channel to a CA closes no cycle). */
bool fabsnap_sl2vl_pair(const struct fab_snap *s, const struct fab_node *n,
			unsigned in, unsigned out);
/* The LID node n's PMA answers on for port p (a switch's port 0's; a CA
 * port's own, or another port's when it has none), or 0 when none. */
unsigned fabsnap_pma_lid(const struct fab_node *n, unsigned p);
/* A new snapshot with from's nodes (those keep() takes, all when NULL),
 * their ports, tables (shared), SMs, where it was swept from and its
 * reroute_ms; no problems or texts.  NULL on ENOMEM. */
struct fab_snap *fabsnap_copy(const struct fab_snap *from,
			      bool (*keep)(const struct fab_node *n, void *ctx),
			      void *ctx);
/* The node a NodeInfo (the SMP data) describes, added to s: its GUID,
 * ports, type, system image GUID, vendor, device and revision, and the
 * PortGUID of the port that answered (fabsnap_node_info_port); NULL on
 * ENOMEM.  Its route (hops, path, entry_port) is the caller's. */
struct fab_node *fabsnap_add_node_info(struct fab_snap *s, uint8_t *data);
/* Port p's LinkDownedCounter, from its PortCounters (0 when not read). */
unsigned fabsnap_link_downed(const struct fab_port *p);
/* Node was of another snapshot, as its NodeInfo and its ports' PortInfo
 * left it (not its description, counters, tables or links), added to s;
 * NULL on ENOMEM.  Its route is the caller's. */
struct fab_node *fabsnap_add_found(struct fab_snap *s, const struct fab_node *was);
/* Port p's PortInfo fields and PortGUID, as another snapshot's port was
 * has them. */
void fabsnap_take_port_info(struct fab_port *p, const struct fab_port *was);
/* The PortGUID a NodeInfo gives, into the port that answered it
 * (LocalPortNum; a switch's port 0 too). */
void fabsnap_node_info_port(struct fab_node *n, uint8_t *data);
/* A NodeDescription (the SMP data) into n, NUL-terminated. */
void fabsnap_read_node_desc(struct fab_node *n, const uint8_t *data);
/* A PortInfo's fields (the SMP data) into n's port; a CA port's extended
 * speeds cleared when its CapabilityMask says it has none (a switch's
 * by port 0's: fabsnap_switch_ports). */
void fabsnap_read_port_info(struct fab_node *n, unsigned port, uint8_t *data);
/* A switch whose PortInfos are in: its ports take port 0's LID, LMC and
 * extended speed capability. */
void fabsnap_switch_ports(struct fab_node *n);
/* Whether the port waits for the SM to make it Active: its PortInfo in,
 * LinkUp, Init or Armed. */
bool fabsnap_awaits_sm(const struct fab_port *p);
/* Counts nodes by type, links and ports into s->stats. */
void fabsnap_count(struct fab_snap *s);
/* A copy made by a refresh (or the SM found silent): its MADs are mads,
 * and none of them the sweep's kinds (detail counters, SL-to-VL tables,
 * PathRecords), as the sweep file says. */
void fabsnap_refresh_mads(struct fab_snap *s, uint64_t mads);
/* "ca", "switch", "router" ("unknown" otherwise): the type as the files
 * and metrics name it. */
const char *fabsnap_type_name(unsigned type);
/* s (a description) quoted by the MAD text format's rule (madtext_quote),
 * NUL-terminated; returns the length written (cap >= 4 * strlen(s) + 3
 * for all of s). */
size_t fabsnap_quote(char *buf, size_t cap, const char *s);

#endif
