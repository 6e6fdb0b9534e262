/* The daemon's own requests as umad frames: directed-route and LID-routed
 * SMPs, PerfMgt Gets and the counters' reset Sets, the PortInfo Set of a
 * port action, and the SA's InformInfo subscriptions and Report answers:
 * what the engine's liveness probe, the attribute and counter files, the
 * fabric sweep, its traps and its actions send. */
#ifndef UMADFS_GETFRAME_H
#define UMADFS_GETFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/mad.h>

/* Builds a SubnGet(attr_id, attr_mod) directed-route SMP with hop count 0
 * (the port's own SMA; a caller going further sets the hop count and the
 * initial path) in frame: umad header + MAD, zeroed first. */
void getframe_smp(uint8_t *frame, unsigned attr_id, unsigned attr_mod);

/* The same to the node at the end of the directed route path[1..hops]
 * (the Initial Path, IBA 14.2.1.2). */
void getframe_smp_route(uint8_t *frame, unsigned attr_id, unsigned attr_mod,
			unsigned hops, const uint8_t *path);

/* A LID-routed SubnGet(attr_id, attr_mod) to lid (an SMInfo answered by
 * the SM itself, as sminfo asks it). */
void getframe_smp_lid(uint8_t *frame, unsigned attr_id, unsigned attr_mod,
		      unsigned lid);

/* Makes the Get just built in frame a Set (the caller fills its data). */
void getframe_to_set(uint8_t *frame);

/* PortInfo data from a Get made into a Set that changes the physical
 * state only, as ibportstate sends it: PortState 0 (no change),
 * PortPhysicalState phys_state, the enabled widths and speeds 0 (no
 * change), a LID or SM LID of 0 replaced so the port takes the Set. */
void getframe_portinfo_phys(uint8_t data[IB_SMP_DATA_SIZE], unsigned phys_state);

/* The data area of a PortCounters or PortCountersExtended Set (attr_id)
 * clearing port's counters, as perfquery -R and -x -R: every counter the
 * PMA's ClassPortInfo CapabilityMask (cpi_capmask) says it has, values 0. */
void getframe_counters_reset(uint8_t data[IB_PC_DATA_SZ], unsigned attr_id,
			     unsigned port, unsigned cpi_capmask);

#define GETFRAME_INFORMINFO_LEN 36 /* InformInfo (IBA 13.4.8.3) */

/* A SubnAdm (SA) request, class version 2, to the SA at lid: method,
 * attr_id, component mask 0, data (len bytes) at the SA data offset. */
void getframe_sa(uint8_t *frame, unsigned lid, unsigned method, unsigned attr_id,
		 const uint8_t *data, size_t len);

/* InformInfo for a subscription (subscribe true) to generic trap
 * trap_number from any producer and any LID, with its Reports sent to
 * QP 1: the fields libibmad has no layout for, by the IBA's offsets. */
void getframe_informinfo(uint8_t data[GETFRAME_INFORMINFO_LEN],
			 unsigned trap_number, bool subscribe);

/* The response to the request received in frame (its header as the
 * engine delivered it: the sender's address), in place: method, status
 * 0, same TID and data; returns the MAD's length. */
size_t getframe_response(uint8_t *frame, unsigned method);

/* Builds a PerfMgt Get(attr_id) to the PMA at lid (GSI, QP1) with the PMA
 * data area data in frame: umad header + MAD, zeroed first. */
void getframe_pma(uint8_t *frame, unsigned lid, unsigned attr_id,
		  const uint8_t data[IB_PC_DATA_SZ]);

/* Fills the data area of a PortCounters or PortCountersExtended Get
 * (attr_id) for port: PortSelect, and CounterSelect all ones. */
void getframe_counters_select(uint8_t data[IB_PC_DATA_SZ], unsigned attr_id,
			      unsigned port);

#endif
