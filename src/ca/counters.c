/* Port counters through the MAD engine. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/ca/attr.h"
#include "umadfs/ca/counters.h"
#include "umadfs/ca/device.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/getframe.h"

/* PMA ClassPortInfo CapabilityMask bits (IBA 16.1.3.1, as perfquery). */
#define PM_EXT_WIDTH_SUPPORTED 0x0200 /* all 64-bit counters */
#define PM_EXT_WIDTH_NOIETF    0x0400 /* 64-bit data and packet counters */

/* One file: its sysfs name, its PortCounters field (0: none) and its
 * PortCountersExtended field (0: none). */
static const struct {
	const char *name;
	enum MAD_FIELDS basic, ext;
	bool ietf; /* the extended field needs full IETF support */
} counters[] = {
	{ "symbol_error", IB_PC_ERR_SYM_F, 0, false },
	{ "link_error_recovery", IB_PC_LINK_RECOVERS_F, 0, false },
	{ "link_downed", IB_PC_LINK_DOWNED_F, 0, false },
	{ "port_rcv_errors", IB_PC_ERR_RCV_F, 0, false },
	{ "port_rcv_remote_physical_errors", IB_PC_ERR_PHYSRCV_F, 0, false },
	{ "port_rcv_switch_relay_errors", IB_PC_ERR_SWITCH_REL_F, 0, false },
	{ "port_xmit_discards", IB_PC_XMT_DISCARDS_F, 0, false },
	{ "port_xmit_constraint_errors", IB_PC_ERR_XMTCONSTR_F, 0, false },
	{ "port_rcv_constraint_errors", IB_PC_ERR_RCVCONSTR_F, 0, false },
	{ "local_link_integrity_errors", IB_PC_ERR_LOCALINTEG_F, 0, false },
	{ "excessive_buffer_overrun_errors", IB_PC_ERR_EXCESS_OVR_F, 0, false },
	{ "VL15_dropped", IB_PC_VL15_DROPPED_F, 0, false },
	{ "port_xmit_data", IB_PC_XMT_BYTES_F, IB_PC_EXT_XMT_BYTES_F, false },
	{ "port_rcv_data", IB_PC_RCV_BYTES_F, IB_PC_EXT_RCV_BYTES_F, false },
	{ "port_xmit_packets", IB_PC_XMT_PKTS_F, IB_PC_EXT_XMT_PKTS_F, false },
	{ "port_rcv_packets", IB_PC_RCV_PKTS_F, IB_PC_EXT_RCV_PKTS_F, false },
	{ "port_xmit_wait", IB_PC_XMT_WAIT_F, 0, false },
	{ "unicast_xmit_packets", 0, IB_PC_EXT_XMT_UPKTS_F, true },
	{ "unicast_rcv_packets", 0, IB_PC_EXT_RCV_UPKTS_F, true },
	{ "multicast_xmit_packets", 0, IB_PC_EXT_XMT_MPKTS_F, true },
	{ "multicast_rcv_packets", 0, IB_PC_EXT_RCV_MPKTS_F, true },
};

/* Whether counter i comes from PortCountersExtended on a PMA with capmask. */
static bool counter_is_ext(unsigned i, unsigned capmask)
{
	return counters[i].ext &&
	       (capmask & (counters[i].ietf ? PM_EXT_WIDTH_SUPPORTED :
			   PM_EXT_WIDTH_SUPPORTED | PM_EXT_WIDTH_NOIETF));
}

unsigned counters_count(void)
{
	return sizeof(counters) / sizeof(counters[0]);
}

const char *counters_name(unsigned i)
{
	return counters[i].name;
}

bool counters_value(unsigned i, const uint8_t *basic, const uint8_t *ext,
		    unsigned capmask, uint64_t *out)
{
	if (ext && counter_is_ext(i, capmask)) {
		*out = mad_get_field64((void *)ext, 0, counters[i].ext);
		return true;
	}
	if (!basic || !counters[i].basic)
		return false;
	*out = mad_get_field((void *)basic, 0, counters[i].basic);
	return true;
}

static int counter_show(struct node *n, char *buf, size_t cap)
{
	struct ca_port *port = n->owner;
	uint8_t data[IB_PC_DATA_SZ];
	unsigned capmask, attr_id;
	int lid, r;
	bool ext;

	lid = attr_port_lid(port);
	if (lid < 0)
		return lid;
	memset(data, 0, sizeof(data));
	r = ca_port_pma_get(port, (unsigned)lid, CLASS_PORT_INFO, data);
	if (r < 0)
		return r == -ENODEV || r == -ENETDOWN ? r : -EIO;
	capmask = mad_get_field(data, 0, IB_CPI_CAPMASK_F);
	ext = counter_is_ext((unsigned)n->attr, capmask);
	if (!ext && !counters[n->attr].basic)
		return -EOPNOTSUPP;

	memset(data, 0, sizeof(data));
	attr_id = ext ? IB_GSI_PORT_COUNTERS_EXT : IB_GSI_PORT_COUNTERS;
	getframe_counters_select(data, attr_id, (unsigned)port->portnum);
	r = ca_port_pma_get(port, (unsigned)lid, attr_id, data);
	if (r < 0)
		return -EIO;
	if (ext)
		return snprintf(buf, cap, "%" PRIu64 "\n",
				mad_get_field64(data, 0, counters[n->attr].ext));
	return snprintf(buf, cap, "%u\n",
			mad_get_field(data, 0, counters[n->attr].basic));
}

/* A text file: a stat shows the true size (textfile_size(): two MADs per
 * stat), so that copies get the value. */
static const struct node_ops counter_ops = { .show = counter_show };

int counters_add_files(struct node *port_dir, struct ca_port *port)
{
	struct node *dir = tree_add(port_dir, "counters", S_IFDIR | 0555, NULL, port, 0);

	if (!dir)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (!tree_add(dir, counters[i].name, S_IFREG | 0444, &counter_ops,
			      port, (int)i))
			return -ENOMEM;
	return 0;
}
