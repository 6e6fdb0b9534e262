/* The questions every layer asks of a MAD's header (mad.h). */
#include <endian.h>
#include <stddef.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/mad.h"

bool mad_method_is_response(unsigned method)
{
	return (method & IB_MAD_RESPONSE) || method == IB_MAD_METHOD_TRAP_REPRESS;
}

bool mad_is_response(const uint8_t *mad)
{
	/* Byte 3 whole: libibmad's IB_MAD_METHOD_F leaves out the R bit. */
	if (mad_method_is_response(mad[3]))
		return true;
	return mad[1] == IB_BOARD_MGMT_CLASS &&
	       (mad_get_field((void *)mad, 0, IB_MAD_ATTRMOD_F) & 0x80000000u);
}

bool mad_class_is_smi(unsigned mgmt_class)
{
	return mgmt_class == IB_SMI_CLASS || mgmt_class == IB_SMI_DIRECT_CLASS;
}

bool mad_class_is_vendor_range2(unsigned mgmt_class)
{
	return mgmt_class >= IB_VENDOR_RANGE2_START_CLASS &&
	       mgmt_class <= IB_VENDOR_RANGE2_END_CLASS;
}

bool mad_class_uses_rmpp(unsigned mgmt_class)
{
	return mgmt_class == IB_SA_CLASS ||
	       mgmt_class == IB_DEVICE_MGMT_CLASS ||
	       mgmt_class == MAD_CLASS_DEVICE_ADM ||
	       mgmt_class == MAD_CLASS_BIS ||
	       mad_class_is_vendor_range2(mgmt_class);
}

uint32_t mad_vendor_oui(const uint8_t *mad)
{
	if (!mad_class_is_vendor_range2(mad[1]))
		return 0;
	return mad_get_field((void *)mad, 0, IB_VEND2_OUI_F);
}

bool mad_method_changes_state(unsigned method)
{
	return method == IB_MAD_METHOD_SET || method == IB_MAD_METHOD_DELETE;
}

/* A frame's address, copied out: a frame need not be aligned as the
 * struct is. */
static struct ib_mad_addr frame_addr(const uint8_t *frame)
{
	struct ib_mad_addr a;

	memcpy(&a, frame + offsetof(struct ib_user_mad, addr), sizeof(a));
	return a;
}

bool mad_answer_matches(const uint8_t *request, const uint8_t *answer, unsigned lmc)
{
	struct ib_mad_addr to = frame_addr(request), from = frame_addr(answer);
	unsigned mgmt_class = request[UMAD_FRAME_HDR_SIZE + 1];
	unsigned dlid = be16toh(to.lid), slid = be16toh(from.lid);
	unsigned path_bits = (1u << (lmc & 7)) - 1;

	if (answer[UMAD_FRAME_HDR_SIZE + 1] != mgmt_class)
		return false;
	if (mgmt_class == IB_SMI_DIRECT_CLASS || !dlid || dlid >= IB_LID_MCAST_START_HO)
		return true;
	if (to.grh_present && from.grh_present)
		return !memcmp(to.gid, from.gid, sizeof(to.gid));
	return !((dlid ^ slid) & ~path_bits);
}

uint64_t mad_tid(const uint8_t *mad)
{
	uint64_t be;

	memcpy(&be, mad + 8, sizeof(be));
	return be64toh(be);
}

void mad_set_tid(uint8_t *mad, uint64_t tid)
{
	uint64_t be = htobe64(tid);

	memcpy(mad + 8, &be, sizeof(be));
}
