/* madclass: where each management class keeps its data in a MAD (data=). */
#include "umadfs/mad/madtext.h"

#include <infiniband/mad.h>

/* DM/DevAdm/BIS: 24-byte MAD header, 40 reserved bytes, data (IBA 16.3;
 * the kernel's IB_MGMT_DEVICE_HDR). */
#define DEVICE_MGMT_DATA_OFFS		64

/*
 * For the RMPP classes this must equal the kernel's ib_get_mad_data_offset(),
 * which is where it splits an RMPP send into segments; for the others it is
 * the start of the class's data field.
 */
size_t madtext_data_offset(int mgmt_class)
{
	switch (mgmt_class) {
	case IB_SMI_CLASS:
	case IB_SMI_DIRECT_CLASS:
		return IB_SMP_DATA_OFFS;
	case IB_SA_CLASS:
		return IB_SA_DATA_OFFS;
	case IB_PERFORMANCE_CLASS:
		return IB_PC_DATA_OFFS;
	case IB_BOARD_MGMT_CLASS:
		return IB_BM_DATA_OFFS;
	case IB_CC_CLASS:
		return IB_CC_DATA_OFFS;
	case IB_DEVICE_MGMT_CLASS:
	case MAD_CLASS_DEVICE_ADM:
	case MAD_CLASS_BIS:
		return DEVICE_MGMT_DATA_OFFS;
	default:
		if (mad_class_is_vendor_range2((unsigned)mgmt_class))
			return IB_VENDOR_RANGE2_DATA_OFFS;
		return MAD_HDR_SIZE;
	}
}

size_t madtext_data_size(int mgmt_class)
{
	/* SMP bytes 128-255 hold the directed-route paths (reserved when
	 * LID-routed), so an SMP carries only 64 bytes of data. */
	if (mad_class_is_smi((unsigned)mgmt_class))
		return IB_SMP_DATA_SIZE;
	return MAD_SIZE - madtext_data_offset(mgmt_class);
}
