/* Directed-route SMPs to the local port. */
#include <errno.h>
#include <string.h>

#include "umadfs/ibumad.h"
#include "umadfs/localmad.h"
#include "umadfs/port.h"

int localmad_smp_get(struct port *engine, unsigned attr_id, unsigned attr_mod,
		     uint8_t data[IB_SMP_DATA_SIZE])
{
	uint8_t frame[IBUMAD_HDR_SIZE + IBUMAD_MAD_SIZE];
	uint8_t *mad = frame + IBUMAD_HDR_SIZE;
	size_t mad_len = IBUMAD_MAD_SIZE;
	int r;

	if (!engine)
		return -ENODEV;
	memset(frame, 0, sizeof(frame));
	/* LID 0xffff (permissive) on QP0: the directed route starts here. */
	umad_set_addr(frame, 0xffff, 0, 0, 0);
	mad_set_field(mad, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, IB_SMI_DIRECT_CLASS);
	mad_set_field(mad, 0, IB_MAD_CLASSVER_F, 1);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, attr_id);
	mad_set_field(mad, 0, IB_MAD_ATTRMOD_F, attr_mod);
	mad_set_field(mad, 0, IB_DRSMP_HOPCNT_F, 0);
	mad_set_field(mad, 0, IB_DRSMP_HOPPTR_F, 0);
	mad_set_field(mad, 0, IB_DRSMP_DRSLID_F, 0xffff);
	mad_set_field(mad, 0, IB_DRSMP_DRDLID_F, 0xffff);

	r = port_query(engine, frame, sizeof(frame), &mad_len,
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
