/* The PMA's detail counters (pmadetails.h): the one table of their
 * sysfs-style names, attributes and libibmad fields, and what each
 * attribute details. */

#include <infiniband/mad.h>

#include "umadfs/mad/pmacounters.h"
#include "umadfs/mad/pmadetails.h"

static const struct {
	const char *name;
	enum MAD_FIELDS field;
	uint8_t attr;
} details[] = {
	{ "port_local_physical_errors", IB_PC_RCV_LOCAL_PHY_ERR_F, PMADET_RCV },
	{ "port_malformed_packet_errors", IB_PC_RCV_MALFORMED_PKT_ERR_F, PMADET_RCV },
	{ "port_buffer_overrun_errors", IB_PC_RCV_BUF_OVR_ERR_F, PMADET_RCV },
	{ "port_dlid_mapping_errors", IB_PC_RCV_DLID_MAP_ERR_F, PMADET_RCV },
	{ "port_vl_mapping_errors", IB_PC_RCV_VL_MAP_ERR_F, PMADET_RCV },
	{ "port_looping_errors", IB_PC_RCV_LOOPING_ERR_F, PMADET_RCV },
	{ "port_inactive_discards", IB_PC_XMT_INACT_DISC_F, PMADET_XMIT },
	{ "port_neighbor_mtu_discards", IB_PC_XMT_NEIGH_MTU_DISC_F, PMADET_XMIT },
	{ "port_sw_lifetime_limit_discards", IB_PC_XMT_SW_LIFE_DISC_F, PMADET_XMIT },
	{ "port_sw_hoq_lifetime_limit_discards", IB_PC_XMT_SW_HOL_DISC_F, PMADET_XMIT },
};

#define NFIELDS (sizeof(details) / sizeof(details[0]))

/* port_xmit_wait_vl0 ... port_xmit_wait_vl14 */
static const char *const vl_names[PMADET_VLS] = {
	"port_xmit_wait_vl0", "port_xmit_wait_vl1", "port_xmit_wait_vl2",
	"port_xmit_wait_vl3", "port_xmit_wait_vl4", "port_xmit_wait_vl5",
	"port_xmit_wait_vl6", "port_xmit_wait_vl7", "port_xmit_wait_vl8",
	"port_xmit_wait_vl9", "port_xmit_wait_vl10", "port_xmit_wait_vl11",
	"port_xmit_wait_vl12", "port_xmit_wait_vl13", "port_xmit_wait_vl14",
};

unsigned pmadetails_count(void)
{
	return NFIELDS + PMADET_VLS;
}

const char *pmadetails_name(unsigned i)
{
	return i < NFIELDS ? details[i].name : vl_names[i - NFIELDS];
}

enum pmadetails_attr pmadetails_attr_of(unsigned i)
{
	return i < NFIELDS ? (enum pmadetails_attr)details[i].attr : PMADET_VL;
}

int pmadetails_vl(unsigned i)
{
	return i < NFIELDS ? -1 : (int)(i - NFIELDS);
}

unsigned pmadetails_vl_counter(unsigned vl)
{
	return (unsigned)NFIELDS + vl;
}

uint64_t pmadetails_value(unsigned i, const uint8_t *data)
{
	enum MAD_FIELDS f = i < NFIELDS ? details[i].field :
		(enum MAD_FIELDS)(IB_PC_PORT_VL_XMIT_WAIT0_F + (int)(i - NFIELDS));

	return mad_get_field((void *)data, 0, f);
}

unsigned pmadetails_attr_id(enum pmadetails_attr a)
{
	static const unsigned ids[PMADET_ATTRS] = {
		[PMADET_RCV] = IB_GSI_PORT_RCV_ERROR_DETAILS,
		[PMADET_XMIT] = IB_GSI_PORT_XMIT_DISCARD_DETAILS,
		[PMADET_VL] = IB_GSI_PORT_PORT_VL_XMIT_WAIT_COUNTERS,
	};

	return ids[a];
}

unsigned pmadetails_summary(enum pmadetails_attr a)
{
	static const char *const names[PMADET_ATTRS] = {
		[PMADET_RCV] = "port_rcv_errors",
		[PMADET_XMIT] = "port_xmit_discards",
		[PMADET_VL] = "port_xmit_wait",
	};

	return pmacounters_index(names[a]);
}

unsigned pmadetails_oper_vls(unsigned code)
{
	static const unsigned vls[] = { 0, 1, 2, 4, 8, 15 };

	return code < sizeof(vls) / sizeof(vls[0]) ? vls[code] : 0;
}
