/* The daemon's own Gets as umad frames: a directed-route SMP to the local
 * SMA and a PerfMgt Get to a PMA, the two requests the engine's liveness
 * probe, the attribute and counter files and the fabric sweep send. */
#ifndef UMADFS_GETFRAME_H
#define UMADFS_GETFRAME_H

#include <stdint.h>

#include <infiniband/mad.h>

/* Builds a SubnGet(attr_id, attr_mod) directed-route SMP with hop count 0
 * (the port's own SMA; a caller going further sets the hop count and the
 * initial path) in frame: umad header + MAD, zeroed first. */
void getframe_smp(uint8_t *frame, unsigned attr_id, unsigned attr_mod);

/* Builds a PerfMgt Get(attr_id) to the PMA at lid (GSI, QP1) with the PMA
 * data area data in frame: umad header + MAD, zeroed first. */
void getframe_pma(uint8_t *frame, unsigned lid, unsigned attr_id,
		  const uint8_t data[IB_PC_DATA_SZ]);

/* Fills the data area of a PortCounters or PortCountersExtended Get
 * (attr_id) for port: PortSelect, and CounterSelect all ones. */
void getframe_counters_select(uint8_t data[IB_PC_DATA_SZ], unsigned attr_id,
			      unsigned port);

#endif
