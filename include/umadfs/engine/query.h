/* The daemon's own requests, made of engine_send()s (engine.h):
 * engine_query() sends one request and waits for its answer,
 * engine_request() hands its answer to a callback; the Gets of the local
 * port that attribute and counter files use, and the chains of requests of
 * the actions, on the codec's frames (mad/getframe.h). */
#ifndef UMADFS_QUERY_H
#define UMADFS_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/mad.h>

struct mad_engine;

#define QUERY_TIMEOUT_MS 200 /* the daemon's own requests: per try */
#define QUERY_RETRIES 2

/* Sends a request and waits for its answer, for the daemon's own queries
 * (attributes, counters).  frame holds the request on entry and the
 * answer on return (cap bytes of room, *mad_len set).  Returns 0, or
 * -ETIMEDOUT, -ENODEV, or the answer's umad status as -errno. */
int engine_query(struct mad_engine *engine, void *frame, size_t cap, size_t *mad_len,
		 int timeout_ms, int retries);

/* Called once with a request's end: its answer (a frame as deliver
 * gets it), or the request given back with a non-zero umad status
 * (ETIMEDOUT: no answer, or the engine stopped first).  Receiver thread,
 * with the engine's dispatch lock held (no other engine lock): it may
 * send, and take locks no engine call is made under. */
typedef void (*engine_answer_fn)(void *ctx, const uint8_t *frame, size_t mad_len);

/* Sends a request whose answer goes to fn(ctx, ...) exactly once, for
 * requests whose wait is parked (the action files): 0, or -errno as
 * engine_send() and -ENODEV once the receiver stopped (then fn is not
 * called). */
int engine_request(struct mad_engine *engine, void *frame, size_t mad_len,
		   int timeout_ms, int retries, engine_answer_fn fn, void *ctx);

/* SubnGet(attr_id, attr_mod) to the local port; copies the 64-byte SMP data
 * into data.  Returns 0, -errno, or -EPROTO for a non-zero MAD status. */
int query_smp_get(struct mad_engine *engine, unsigned attr_id, unsigned attr_mod,
		  uint8_t data[IB_SMP_DATA_SIZE]);

/* The same to the node at the end of the directed route path[1..hops]
 * (64 bytes: getframe_smp_route()). */
int query_smp_route_get(struct mad_engine *engine, unsigned attr_id,
			unsigned attr_mod, unsigned hops, const uint8_t *path,
			uint8_t data[IB_SMP_DATA_SIZE]);

/* PerfMgt Get(attr_id) to the local port's PMA (GSI, LID-routed to the
 * port's own LID); data is the 192-byte PMA data area, whose first bytes
 * (PortSelect...) the caller fills and gets back the answer in.  Returns
 * 0, -ENETDOWN without a LID, -errno, or -EPROTO as query_smp_get(). */
int query_pma_get(struct mad_engine *engine, unsigned lid, unsigned attr_id,
		  uint8_t data[IB_PC_DATA_SZ]);

#endif

/* The daemon's own Sets, each a short chain of requests whose end is
 * handed to done(ctx, err, why) once, on the engine's receiver thread (or
 * at once, by the caller's, when the first send fails: then the call
 * returns that -errno and done is not called).  err is 0, -ETIMEDOUT
 * (no answer, or the engine stopped), -EHOSTUNREACH (the answer is of
 * another node or port than the one named: the route or LID leads
 * elsewhere now), -ENODEV (a step could not be sent: the engine stopped),
 * -EOPNOTSUPP or -EINVAL (the MAD status said so) or -EIO (another
 * status); why says which request and what. */
typedef void (*query_done_fn)(void *ctx, int err, const char *why);

/* ibportstate's enable, disable and reset of port of node guid, at the end
 * of the directed route path[1..hops]: NodeInfo Get (the node there must
 * be guid), PortInfo Get, then its Set with the physical state phys_state
 * (getframe_portinfo_phys()). */
int query_port_phys_set(struct mad_engine *engine, uint64_t guid, unsigned hops,
			const uint8_t *path, unsigned port, unsigned phys_state,
			query_done_fn done, void *ctx);

/* perfquery -R and -x -R of port of node guid, whose PMA is at lid: a
 * LID-routed NodeInfo Get (lid must reach guid), ClassPortInfo Get, a
 * PortCounters Set clearing port's counters, then a PortCountersExtended
 * Set (whose refusal counts only when ClassPortInfo claims them); the
 * Sets' answers must be of port.  guid 0: lid is this port's own, no
 * NodeInfo asked. */
int query_counters_reset(struct mad_engine *engine, uint64_t guid, unsigned lid,
			 unsigned port, query_done_fn done, void *ctx);
