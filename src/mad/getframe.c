/* The daemon's own requests as umad frames (getframe.h). */
#include <arpa/inet.h>
#include <string.h>

#include <infiniband/umad.h>

#include "umadfs/mad/getframe.h"
#include "umadfs/mad/ibcodes.h"
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

/* A LID-routed Get of mgmt_class to lid, frame zeroed first; the MAD. */
static uint8_t *lid_get(uint8_t *frame, unsigned lid, unsigned mgmt_class,
			unsigned attr_id, unsigned attr_mod)
{
	struct ib_user_mad *hdr = (struct ib_user_mad *)frame;
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;

	memset(frame, 0, UMAD_FRAME_MAX);
	hdr->addr.lid = htons((uint16_t)lid);
	get_header(mad, mgmt_class, attr_id, attr_mod);
	return mad;
}

/* The same of a GSI class, to lid's QP1. */
static uint8_t *gsi_get(uint8_t *frame, unsigned lid, unsigned mgmt_class,
			unsigned attr_id)
{
	struct ib_user_mad *hdr = (struct ib_user_mad *)frame;
	uint8_t *mad = lid_get(frame, lid, mgmt_class, attr_id, 0);

	hdr->addr.qpn = htonl(1);
	hdr->addr.qkey = htonl(IB_DEFAULT_QP1_QKEY);
	return mad;
}

void getframe_pma(uint8_t *frame, unsigned lid, unsigned attr_id,
		  const uint8_t data[IB_PC_DATA_SZ])
{
	uint8_t *mad = gsi_get(frame, lid, IB_PERFORMANCE_CLASS, attr_id);

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

void getframe_smp_route(uint8_t *frame, unsigned attr_id, unsigned attr_mod,
			unsigned hops, const uint8_t *path)
{
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;

	getframe_smp(frame, attr_id, attr_mod);
	mad_set_field(mad, 0, IB_DRSMP_HOPCNT_F, hops);
	memcpy(mad + IB_SMP_DATA_OFFS + IB_SMP_DATA_SIZE, path, 64); /* Initial Path */
}

void getframe_smp_lid(uint8_t *frame, unsigned attr_id, unsigned attr_mod,
		      unsigned lid)
{
	lid_get(frame, lid, IB_SMI_CLASS, attr_id, attr_mod);
}

void getframe_to_set(uint8_t *frame)
{
	mad_set_field(frame + UMAD_FRAME_HDR_SIZE, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_SET);
}

void getframe_portinfo_phys(uint8_t data[IB_SMP_DATA_SIZE], unsigned phys_state)
{
	mad_set_field(data, 0, IB_PORT_STATE_F, 0);
	mad_set_field(data, 0, IB_PORT_PHYS_STATE_F, phys_state);
	mad_set_field(data, 0, IB_PORT_LINK_WIDTH_ENABLED_F, 0);
	mad_set_field(data, 0, IB_PORT_LINK_SPEED_ENABLED_F, 0);
	mad_set_field(data, 0, IB_PORT_LINK_SPEED_EXT_ENABLED_F, 0);
	/* A port refuses a Set whose LID or SM LID is 0 or permissive;
	 * ibportstate puts a placeholder there, the SM sets its own. */
	for (int i = 0; i < 2; i++) {
		enum MAD_FIELDS f = i ? IB_PORT_SMLID_F : IB_PORT_LID_F;
		unsigned lid = mad_get_field(data, 0, f);

		if (!lid || lid == MAD_LID_PERMISSIVE)
			mad_set_field(data, 0, f, 0x1234);
	}
}

void getframe_counters_reset(uint8_t data[IB_PC_DATA_SZ], unsigned attr_id,
			     unsigned port, unsigned cpi_capmask)
{
	bool wait = cpi_capmask & IB_PM_PC_XMIT_WAIT_SUP;
	bool qp1 = cpi_capmask & IB_PM_IS_QP1_DROP_SUP;

	memset(data, 0, IB_PC_DATA_SZ);
	getframe_counters_select(data, attr_id, port);
	if (attr_id == IB_GSI_PORT_COUNTERS_EXT)
		mad_set_field(data, 0, IB_PC_EXT_COUNTER_SELECT2_F,
			      0x0fffu | (wait ? 0x1000u : 0) | (qp1 ? 0x2000u : 0));
	else
		mad_set_field(data, 0, IB_PC_COUNTER_SELECT2_F,
			      (wait ? 1u : 0) | (qp1 ? 2u : 0));
}

void getframe_sa(uint8_t *frame, unsigned lid, unsigned method, unsigned attr_id,
		 const uint8_t *data, size_t len)
{
	uint8_t *mad = gsi_get(frame, lid, IB_SA_CLASS, attr_id);

	mad_set_field(mad, 0, IB_MAD_CLASSVER_F, 2);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, method);
	if (len > MAD_SIZE - IB_SA_DATA_OFFS)
		len = MAD_SIZE - IB_SA_DATA_OFFS;
	memcpy(mad + IB_SA_DATA_OFFS, data, len);
}

/* InformInfo's layout (IBA 13.4.8.3; libibmad has none): byte offsets. */
enum { /* the GID is bytes 0-15 */
	II_LID_BEGIN = 16, II_LID_END = 18, II_IS_GENERIC = 22, II_SUBSCRIBE = 23,
	II_TYPE = 24, II_TRAP_NUMBER = 26, II_QPN_RESP_TIME = 28, II_PRODUCER = 32,
};

#define II_RESP_TIME 18 /* 4.096 us << 18: about a second */

static void put_be(uint8_t *p, uint32_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

void getframe_informinfo(uint8_t data[GETFRAME_INFORMINFO_LEN],
			 unsigned trap_number, bool subscribe)
{
	memset(data, 0, GETFRAME_INFORMINFO_LEN);
	/* GID 0 and LIDRangeBegin 0xffff: every port. */
	put_be(data + II_LID_BEGIN, 0xffff, 2);
	put_be(data + II_LID_END, 0, 2);
	data[II_IS_GENERIC] = 1;
	data[II_SUBSCRIBE] = subscribe;
	put_be(data + II_TYPE, 0xffff, 2);        /* any type */
	put_be(data + II_TRAP_NUMBER, trap_number, 2);
	put_be(data + II_QPN_RESP_TIME, 1u << 8 | II_RESP_TIME, 4); /* QP 1 */
	put_be(data + II_PRODUCER, 0xffffff, 4);  /* any producer */
}

size_t getframe_response(uint8_t *frame, unsigned method)
{
	struct ib_user_mad *hdr = (struct ib_user_mad *)frame;
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;

	hdr->status = 0;
	hdr->timeout_ms = 0;
	hdr->retries = 0;
	/* libibmad's method field leaves out the response bit. */
	mad_set_field(mad, 0, IB_MAD_METHOD_F, method & 0x7f);
	mad_set_field(mad, 0, IB_MAD_RESPONSE_F, method >> 7);
	mad_set_field(mad, 0, IB_MAD_STATUS_F, 0);
	return MAD_SIZE;
}
