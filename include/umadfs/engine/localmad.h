/* The daemon's own queries through the MAD engine: directed-route SMPs
 * (hop count 0: the port's own SMA) and PerfMgt Gets.  Attribute and
 * counter files and the fabric sweep build on these. */
#ifndef UMADFS_LOCALMAD_H
#define UMADFS_LOCALMAD_H

#include <stdint.h>

#include <infiniband/mad.h>

struct mad_engine;

#define LOCALMAD_TIMEOUT_MS 200
#define LOCALMAD_RETRIES 2

/* Builds a SubnGet(attr_id, attr_mod) directed-route SMP with hop count 0
 * (the port's own SMA) in frame: umad header + 256 bytes, zeroed first. */
void localmad_smp_frame(uint8_t *frame, unsigned attr_id, unsigned attr_mod);

/* Builds a PerfMgt Get(attr_id) to LID lid (GSI, QP1) in frame: umad
 * header + 256 bytes, zeroed first; the caller fills the data area. */
void localmad_pma_frame(uint8_t *frame, unsigned lid, unsigned attr_id);

/* SubnGet(attr_id, attr_mod) to the local port; copies the 64-byte SMP data
 * into data.  Returns 0, -errno, or -EPROTO for a non-zero MAD status. */
int localmad_smp_get(struct mad_engine *engine, unsigned attr_id, unsigned attr_mod,
		     uint8_t data[IB_SMP_DATA_SIZE]);

/* PerfMgt Get(attr_id) to the local port's PMA (GSI, LID-routed to the
 * port's own LID); data is the 192-byte PMA data area, whose first bytes
 * (PortSelect...) the caller fills and gets back the answer in. */
int localmad_pma_get(struct mad_engine *engine, unsigned lid, unsigned attr_id,
		     uint8_t data[IB_PC_DATA_SZ]);

#endif
