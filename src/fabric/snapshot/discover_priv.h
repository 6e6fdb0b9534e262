/* What a sweep's files share (discover.c, sweepkeep.c, sweepreq.c, sweeppma.c,
 * sweeplft.c, sweeppkeys.c, sweepsl2vl.c, sweepmcast.c, sweepsets.c): the
 * sweep's state, its requests and what it keeps of each
 * node. */
#ifndef UMADFS_DISCOVER_PRIV_H
#define UMADFS_DISCOVER_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "umadfs/engine/setlog.h"
#include "umadfs/fabric/snapshot/fabsnap.h"

#define NO_NODE UINT32_MAX
/* NodeDescription, SwitchInfo and ClassPortInfo (and a CA kept by
 * sweepkeep.c) are asked again at least this often; each node's due time
 * is brought forward by up to half of it (by its GUID), so that a fabric
 * found at once is not asked again at once. */
#define STATIC_MAX_MS 300000
#define SM_MAX 32           /* SMs asked for their SMInfo in one sweep */

enum req_kind { REQ_NODE_INFO, REQ_NODE_DESC, REQ_PORT_INFO, REQ_SWITCH_INFO,
		REQ_SM_INFO, REQ_LFT, REQ_PKEYS, REQ_SL2VL, REQ_MFT,
		/* SMPs above, PMA below */
		REQ_PMA_CPI, REQ_PORT_COUNTERS, REQ_PORT_COUNTERS_EXT,
		REQ_PORT_DETAILS };

/* Where a node's PMA ClassPortInfo stands in this sweep. */
enum { CPI_NONE, CPI_ASKED, CPI_KNOWN, CPI_FAILED };
/* What a switch's PortCounters sum says of its ports' (sweeppma.c). */
enum { SUM_NONE, SUM_KEPT, SUM_ZERO };

struct req {
	uint8_t kind;
	uint8_t port;   /* NodeInfo: the port of node it leaves by; else the port asked */
	uint8_t hops;   /* SMPs: the directed route, path[1..hops] */
	uint16_t lid;   /* SMInfo: the LID asked; PMA: the LID sent to */
	uint32_t node;  /* the node asked, or (NodeInfo) the one it leaves: NO_NODE */
	uint32_t next_free;
	bool once;       /* not sent again on timeout (a kept CA's probe, a
			  * silent master's SMInfo) */
	uint16_t block;  /* LinearForwardingTable, PKeyTable: the block asked
			  * (MulticastForwardingTable: its index << 4 | position);
			  * a port's details: the attribute (PMADET_*);
			  * SLtoVLMappingTable: the in-port (port: the out) */
	uint8_t path[FAB_PATH_MAX];
};

/* What the sweep keeps of a node of its snapshot, by index. */
struct nstate {
	const struct fab_node *was; /* prev's node of its GUID and NodeInfo */
	uint16_t pi_pending;  /* a switch's PortInfo Gets not ended yet */
	uint16_t sum_pending; /* a summed switch's sum and PCX Gets not ended */
	uint8_t cpi;          /* CPI_* */
	bool summed;          /* its ports' PortCounters may be by the sum */
	uint8_t sum;          /* what the sum says of them: SUM_* (sweeppma.c) */
	bool lft_shared;      /* its table is was's (sweeplft.c) */
	bool kept;            /* a CA taken from prev unasked (sweepkeep.c) */
	bool silent;          /* kept, its PortCounters unanswered: asked */
	bool probe;           /* kept behind a kept switch port: its
			       * PortCounters asked first, once, the rest
			       * after their answer (sweepkeep.c) */
};

/* fabric_routes=, fabric_routes_settle=, fabric_routes_max_age=
 * (discover.h). */
struct discover_routes {
	bool on;
	unsigned settle_ms, max_age_ms;
};

/* A node this process's Sets since the sweep before went to (sweepsets.c). */
struct set_target {
	uint64_t guid;
	uint16_t attr;
};

struct discover {
	struct mad_window *window;
	struct mad_engine *engine;
	struct fab_snap *snap;
	const struct fab_snap *prev;
	int64_t now_ms;      /* CLOCK_MONOTONIC at the start */
	struct discover_routes routes; /* this sweep's */
	bool lft_all;        /* every table is read (sweeplft.c) */
	bool keep_cas;       /* light sweeps guard the view (sweepkeep.c) */
	unsigned unlinked;   /* kept CAs whose kept link was found down */
	unsigned det_new;    /* ports never answered whose details this sweep asks (sweepdet.c) */
	struct req *reqs;
	uint32_t nreqs, free_head;
	size_t cap;
	uint32_t *queue;     /* ring of request indexes not yet sent */
	size_t qhead, qlen, qcap;
	struct nstate *ns;   /* [snap->nnodes] */
	size_t ns_cap;
	uint32_t local_node; /* the node the sweep starts at, and its port */
	unsigned local_port;
	uint16_t sm_lids[SM_MAX]; /* the LIDs asked for SMInfo */
	unsigned nsm_lids;
	bool nomem;          /* a request or node could not be stored */
	uint64_t set_cursor; /* the Set log's place, across sweeps (sweepsets.c) */
	struct set_target set_targets[SETLOG_MAX]; /* this sweep's: node 0 = any, */
	unsigned nset_targets;                     /* attr 0 = any */
};

/* sweepsets.c: the nodes the Sets noted since the sweep before went to,
 * taken at a sweep's start; whether a table attr of node guid may have been
 * set by them. */
void sweepsets_take(struct discover *d);
bool sweepsets_touched(const struct discover *d, uint64_t guid, unsigned attr);

/* sweepkeep.c: node n (just added to the snapshot) tracked by the sweep,
 * was prev's node of its GUID and NodeInfo (or NULL).  0 or -ENOMEM. */
int sweepkeep_track(struct discover *d, struct fab_node *n, const struct fab_node *was);
/* Node ni's NodeDescription and SwitchInfo asked, reached at its port
 * lp, or what prev has of them and of its ClassPortInfo taken.  0 or
 * -ENOMEM. */
int sweepkeep_static(struct discover *d, uint32_t ni, unsigned lp);
/* Switch si's port sp answered its PortInfo, not Down, with
 * no peer yet: 1 when the CA at its other end is taken from prev, unasked,
 * 0 when it is to be asked, -ENOMEM. */
int sweepkeep_ca(struct discover *d, uint32_t si, unsigned sp);
/* Switch si's port sp (not yet asked) had a CA behind it in prev:
 * 1 when the port's PortInfo is prev's and that CA kept (sweepkeep_ca),
 * unasked; 0 when the port is to be asked; -ENOMEM. */
int sweepkeep_port(struct discover *d, uint32_t si, unsigned sp);
/* A PortCounters Get ended unanswered: a kept CA's PortInfo is asked
 * then (its SM may have given it another LID), or first its switch
 * port's if kept (the link may be down).  0 or -ENOMEM. */
int sweepkeep_silent(struct discover *d, const struct req *r);
/* Switch port r->port's PortInfo answered and read: a kept port (asked
 * after all) no longer Active loses the kept CA's link (discover.c then
 * follows one not Down, as any port). */
void sweepkeep_port_read(struct discover *d, const struct req *r);
/* That Get ended, answered or not: the port's LID is its switch's, and
 * a silent kept CA still behind it has its PortInfo asked.  0 or
 * -ENOMEM. */
int sweepkeep_port_ended(struct discover *d, const struct req *r);
/* Node ni, in the snapshot already, answered NodeInfo through request
 * r's route: a kept CA found at another switch port than its kept one
 * (moved) is unlinked from that one, which is asked.  0 or -ENOMEM. */
int sweepkeep_found(struct discover *d, uint32_t ni, const struct req *r);
/* Node ni's PortInfo is in (was: prev's node): a kept CA whose LID is not
 * prev's has its counters asked at the new one, the Gets lost at the old
 * not counted against it. */
void sweepkeep_port_info(struct discover *d, uint32_t ni, const struct fab_node *was);
/* At the sweep's end: a CA kept whose link may have gone down and come
 * up meanwhile (its LinkDownedCounter, or its switch port's, moved; its
 * PMA silent) is marked to be asked by the next sweep. */
void sweepkeep_finish(struct discover *d);
/* After everything else: a kept CA whose link the sweep found down, and
 * that it did not reach by another, leaves the snapshot (as if never
 * found). */
void sweepkeep_drop(struct discover *d);

/* sweepreq.c: a new request, queued, with the directed route hops/path
 * (SMPs); NULL on ENOMEM.  The pointer is good until the next enqueue. */
struct req *sweepreq_enqueue(struct discover *d, enum req_kind kind, uint32_t node,
			     unsigned port, unsigned hops, const uint8_t *path);
/* sweepreq_enqueue() for callers that need only whether it worked: 0 or
 * -ENOMEM. */
int sweepreq_ask(struct discover *d, enum req_kind kind, uint32_t node,
		 unsigned port, unsigned hops, const uint8_t *path);
/* The request first in the queue (d->qlen > 0), and its leaving it. */
uint32_t sweepreq_head(const struct discover *d);
void sweepreq_pop(struct discover *d);
/* Request i ended: its slot free for another. */
void sweepreq_free(struct discover *d, uint32_t i);
/* No request, none queued: a sweep's start. */
void sweepreq_reset(struct discover *d);
/* When what was asked of node guid at since (CLOCK_MONOTONIC ms) is due
 * again, at most max_ms later: brought forward by up to half of it by the
 * GUID, so that a fabric found at once is not asked again at once. */
int64_t sweepreq_due_ms(uint64_t guid, int64_t since, unsigned max_ms);

/* sweeppma.c: the frame of a PMA request (REQ_PMA_CPI and after); the LID
 * it goes to. */
unsigned sweeppma_frame(const struct discover *d, const struct req *r, uint8_t *frame);
/* The node's PMA may be asked (through port p's LID): its counters, or
 * its ClassPortInfo first. */
int sweeppma_start(struct discover *d, uint32_t ni, unsigned p);
/* A PMA request answered (pma: the answer's data), or ended without an
 * answer. */
int sweeppma_answered(struct discover *d, const struct req *r, uint8_t *pma);
int sweeppma_failed(struct discover *d, const struct req *r);

/* sweepdet.c: port p's PortCounters are in (answered or kept): its
 * detail counters asked, or kept from the snapshot before.  0 or -ENOMEM. */
int sweepdet_port(struct discover *d, uint32_t ni, unsigned p);
/* A REQ_PORT_DETAILS answered (pma: the answer's data), or not. */
void sweepdet_answered(struct discover *d, const struct req *r, const uint8_t *pma);
void sweepdet_failed(struct discover *d, const struct req *r);

/* sweeplft.c: switch ni's SwitchInfo answered with LinearFDBTop top: its
 * table asked, or the snapshot before's shared.  0 or -ENOMEM. */
int sweeplft_switch(struct discover *d, uint32_t ni, unsigned top);
/* A block of a table answered (data: the SMP data), or lost (NULL): the
 * switch has no table in this snapshot then. */
void sweeplft_block(struct discover *d, const struct req *r, uint8_t *data);
/* The sweep saw a change that makes an SM reroute: its snapshot's
 * reroute_ms is the sweep's, and every table is read, those shared so far
 * too.  0 or -ENOMEM. */
int sweeplft_reroute(struct discover *d);
/* Discovery over: the changes only the whole sweep shows against the one
 * before (a node gone, the master SM another or restarted, a sweep before
 * that did not reach the fabric) make it sweeplft_reroute(). */
int sweeplft_finish(struct discover *d);
/* At the sweep's end: the switches whose forwarding or SL-to-VL tables,
 * as the routing check sees them, are not the snapshot before's
 * (stats.tables_changed): a table read again that equals the one before
 * changes nothing. */
void sweeplft_changes(struct discover *d);

/* sweeppkeys.c: discovery over, each port's PKeyTable asked, or the
 * snapshot before's shared.  0 or -ENOMEM. */
int sweeppkeys_ask(struct discover *d);
/* A PKeyTable Get's AttributeModifier: the block (and a switch's port). */
unsigned sweeppkeys_attrmod(const struct discover *d, const struct req *r);
/* A block of a table answered (data: the SMP data), or lost (NULL): the
 * port has no table in this snapshot then. */
void sweeppkeys_block(struct discover *d, const struct req *r, const uint8_t *data);

/* sweepsl2vl.c: the LinearForwardingTables settled, step 0 asks each
 * switch's probe (or shares the snapshot before's tables), step 1 every
 * switch's other tables if some table maps SL 0 off VL 0.  0 or -ENOMEM. */
int sweepsl2vl_ask(struct discover *d, unsigned step);
/* A table answered (data: the SMP data), or lost (NULL: VL 0 taken). */
void sweepsl2vl_answer(struct discover *d, const struct req *r, const uint8_t *data);
/* sweepmcast.c: discovery over, the SA's multicast groups asked and each
 * switch's MulticastForwardingTable for their MLIDs, or the snapshot
 * before's shared.  0 or -ENOMEM. */
int sweepmcast_ask(struct discover *d);
/* A MulticastForwardingTable Get's AttributeModifier. */
unsigned sweepmcast_attrmod(const struct discover *d, const struct req *r);
/* A block answered (data: the SMP data), or lost (NULL): the switch has
 * no table in this snapshot then. */
void sweepmcast_block(struct discover *d, const struct req *r, const uint8_t *data);

#endif
