/* Synchronous queries, and the daemon's own requests to its local port:
 * engine_query() (engine.h) sends one request and waits for its answer;
 * here are the two queries that attribute and counter files use, on the
 * codec's frames (mad/getframe.h). */
#ifndef UMADFS_QUERY_H
#define UMADFS_QUERY_H

#include <stdint.h>

#include <infiniband/mad.h>

struct mad_engine;

#define QUERY_TIMEOUT_MS 200 /* the daemon's own requests: per try */
#define QUERY_RETRIES 2

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
