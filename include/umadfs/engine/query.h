/* Synchronous queries, and the daemon's own requests to its local port:
 * engine_query() (engine.h) sends one request and waits for its answer;
 * here are the frames of a directed-route SMP Get with hop count 0 and of
 * a PMA Get, and the two queries built on them that attribute and counter
 * files use.  The liveness probe sends the NodeInfo SMP built here. */
#ifndef UMADFS_QUERY_H
#define UMADFS_QUERY_H

#include <stdint.h>

#include <infiniband/mad.h>

struct mad_engine;

#define QUERY_TIMEOUT_MS 200 /* the daemon's own requests: per try */
#define QUERY_RETRIES 2

/* Builds a PerfMgt Get(attr_id) to the PMA at lid (GSI, QP1) with the PMA
 * data area data in frame: umad header + MAD, zeroed first. */
void query_pma_frame(uint8_t *frame, unsigned lid, unsigned attr_id,
		     const uint8_t data[IB_PC_DATA_SZ]);

/* Builds a SubnGet(attr_id, attr_mod) directed-route SMP with hop count 0
 * (the port's own SMA) in frame: umad header + MAD, zeroed first. */
void query_smp_frame(uint8_t *frame, unsigned attr_id, unsigned attr_mod);

/* SubnGet(attr_id, attr_mod) to the local port; copies the 64-byte SMP data
 * into data.  Returns 0, -errno, or -EPROTO for a non-zero MAD status. */
int query_smp_get(struct mad_engine *engine, unsigned attr_id, unsigned attr_mod,
		  uint8_t data[IB_SMP_DATA_SIZE]);

/* PerfMgt Get(attr_id) to the local port's PMA (GSI, LID-routed to the
 * port's own LID); data is the 192-byte PMA data area, whose first bytes
 * (PortSelect...) the caller fills and gets back the answer in.  Returns
 * 0, -ENETDOWN without a LID, -errno, or -EPROTO as query_smp_get(). */
int query_pma_get(struct mad_engine *engine, unsigned lid, unsigned attr_id,
		  uint8_t data[IB_PC_DATA_SZ]);

#endif
