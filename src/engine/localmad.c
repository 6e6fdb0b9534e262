/* Directed-route SMPs to the local port. */
#include <errno.h>
#include <string.h>

#include "umadfs/engine/ibumad.h"
#include "umadfs/engine/localmad.h"
#include "umadfs/engine/engine.h"

static void mad_header(uint8_t *mad, unsigned mgmt_class, unsigned version,
		       unsigned attr_id, unsigned attr_mod)
{
	mad_set_field(mad, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, mgmt_class);
	mad_set_field(mad, 0, IB_MAD_CLASSVER_F, version);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, attr_id);
	mad_set_field(mad, 0, IB_MAD_ATTRMOD_F, attr_mod);
}

void localmad_pma_frame(uint8_t *frame, unsigned lid, unsigned attr_id)
{
	memset(frame, 0, IBUMAD_HDR_SIZE + IBUMAD_MAD_SIZE);
	umad_set_addr(frame, (int)lid, 1, 0, IB_DEFAULT_QP1_QKEY);
	mad_header(frame + IBUMAD_HDR_SIZE, IB_PERFORMANCE_CLASS, 1, attr_id, 0);
}

int localmad_pma_get(struct mad_engine *engine, unsigned lid, unsigned attr_id,
		     uint8_t data[IB_PC_DATA_SZ])
{
	uint8_t frame[IBUMAD_HDR_SIZE + IBUMAD_MAD_SIZE];
	uint8_t *mad = frame + IBUMAD_HDR_SIZE;
	size_t mad_len = IBUMAD_MAD_SIZE;
	int r;

	if (!engine)
		return -ENODEV;
	if (!lid)
		return -ENETDOWN; /* no LID yet: the port is not configured */
	localmad_pma_frame(frame, lid, attr_id);
	memcpy(mad + IB_PC_DATA_OFFS, data, IB_PC_DATA_SZ);
	r = engine_query(engine, frame, sizeof(frame), &mad_len,
		       LOCALMAD_TIMEOUT_MS, LOCALMAD_RETRIES);
	if (r < 0)
		return r;
	if (mad_len < IBUMAD_MAD_SIZE || mad_get_field(mad, 0, IB_MAD_STATUS_F))
		return -EPROTO;
	memcpy(data, mad + IB_PC_DATA_OFFS, IB_PC_DATA_SZ);
	return 0;
}

void localmad_smp_frame(uint8_t *frame, unsigned attr_id, unsigned attr_mod)
{
	uint8_t *mad = frame + IBUMAD_HDR_SIZE;

	memset(frame, 0, IBUMAD_HDR_SIZE + IBUMAD_MAD_SIZE);
	/* LID 0xffff (permissive) on QP0: the directed route starts here. */
	umad_set_addr(frame, 0xffff, 0, 0, 0);
	mad_header(mad, IB_SMI_DIRECT_CLASS, 1, attr_id, attr_mod);
	mad_set_field(mad, 0, IB_DRSMP_HOPCNT_F, 0);
	mad_set_field(mad, 0, IB_DRSMP_HOPPTR_F, 0);
	mad_set_field(mad, 0, IB_DRSMP_DRSLID_F, 0xffff);
	mad_set_field(mad, 0, IB_DRSMP_DRDLID_F, 0xffff);
}

int localmad_smp_get(struct mad_engine *engine, unsigned attr_id, unsigned attr_mod,
		     uint8_t data[IB_SMP_DATA_SIZE])
{
	uint8_t frame[IBUMAD_HDR_SIZE + IBUMAD_MAD_SIZE];
	uint8_t *mad = frame + IBUMAD_HDR_SIZE;
	size_t mad_len = IBUMAD_MAD_SIZE;
	int r;

	if (!engine)
		return -ENODEV;
	localmad_smp_frame(frame, attr_id, attr_mod);
	r = engine_query(engine, frame, sizeof(frame), &mad_len,
		       LOCALMAD_TIMEOUT_MS, LOCALMAD_RETRIES);
	if (r < 0)
		return r;
	if (mad_len < IB_SMP_DATA_OFFS + IB_SMP_DATA_SIZE)
		return -EPROTO;
	/* The DR status field leaves out the direction (D) bit. */
	if (mad_get_field(mad, 0, IB_DRSMP_STATUS_F))
		return -EPROTO;
	memcpy(data, mad + IB_SMP_DATA_OFFS, IB_SMP_DATA_SIZE);
	return 0;
}
