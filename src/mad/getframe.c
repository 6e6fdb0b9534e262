/* The daemon's own Gets as umad frames (getframe.h). */
#include <arpa/inet.h>
#include <string.h>

#include <infiniband/umad.h>

#include "umadfs/mad/getframe.h"
#include "umadfs/mad/mad.h"

static void get_header(uint8_t *mad, unsigned mgmt_class, unsigned attr_id,
		       unsigned attr_mod)
{
	mad_set_field(mad, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, mgmt_class);
	mad_set_field(mad, 0, IB_MAD_CLASSVER_F, 1);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, attr_id);
	mad_set_field(mad, 0, IB_MAD_ATTRMOD_F, attr_mod);
}

void getframe_smp(uint8_t *frame, unsigned attr_id, unsigned attr_mod)
{
	struct ib_user_mad *hdr = (struct ib_user_mad *)frame;
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;

	memset(frame, 0, UMAD_FRAME_MAX);
	/* The permissive LID on QP0: the directed route starts here. */
	hdr->addr.lid = htons(MAD_LID_PERMISSIVE);
	get_header(mad, IB_SMI_DIRECT_CLASS, attr_id, attr_mod);
	mad_set_field(mad, 0, IB_DRSMP_DRSLID_F, MAD_LID_PERMISSIVE);
	mad_set_field(mad, 0, IB_DRSMP_DRDLID_F, MAD_LID_PERMISSIVE);
}

void getframe_pma(uint8_t *frame, unsigned lid, unsigned attr_id,
		  const uint8_t data[IB_PC_DATA_SZ])
{
	struct ib_user_mad *hdr = (struct ib_user_mad *)frame;
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;

	memset(frame, 0, UMAD_FRAME_MAX);
	hdr->addr.lid = htons((uint16_t)lid);
	hdr->addr.qpn = htonl(1);
	hdr->addr.qkey = htonl(IB_DEFAULT_QP1_QKEY);
	get_header(mad, IB_PERFORMANCE_CLASS, attr_id, 0);
	memcpy(mad + IB_PC_DATA_OFFS, data, IB_PC_DATA_SZ);
}

void getframe_counters_select(uint8_t data[IB_PC_DATA_SZ], unsigned attr_id,
			      unsigned port)
{
	if (attr_id == IB_GSI_PORT_COUNTERS_EXT) {
		mad_set_field(data, 0, IB_PC_EXT_PORT_SELECT_F, port);
		mad_set_field(data, 0, IB_PC_EXT_COUNTER_SELECT_F, 0xffff);
	} else {
		mad_set_field(data, 0, IB_PC_PORT_SELECT_F, port);
		mad_set_field(data, 0, IB_PC_COUNTER_SELECT_F, 0xffff);
	}
}
