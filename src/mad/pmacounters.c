/* The port counters as the kernel's sysfs names them, where each is in a
 * PortCounters or PortCountersExtended answer, and those ibqueryerrors
 * checks (pmacounters.h): the one list of each. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/pmacounters.h"

/* What ibqueryerrors makes of a counter: an error counter, PortXmitWait
 * (a congestion count it checks too), or nothing. */
enum { DATA, ERROR, WAIT };

/* One counter: its sysfs name, its PortCounters field (0: none), its
 * PortCountersExtended field (0: none), and what ibqueryerrors makes of
 * it; those it checks in its order. */
static const struct {
	const char *name;
	enum MAD_FIELDS basic, ext;
	bool ietf; /* the extended field needs full IETF support */
	uint8_t checked;
} counters[] = {
	{ "symbol_error", IB_PC_ERR_SYM_F, 0, false, ERROR },
	{ "link_error_recovery", IB_PC_LINK_RECOVERS_F, 0, false, ERROR },
	{ "link_downed", IB_PC_LINK_DOWNED_F, 0, false, ERROR },
	{ "port_rcv_errors", IB_PC_ERR_RCV_F, 0, false, ERROR },
	{ "port_rcv_remote_physical_errors", IB_PC_ERR_PHYSRCV_F, 0, false, ERROR },
	{ "port_rcv_switch_relay_errors", IB_PC_ERR_SWITCH_REL_F, 0, false, ERROR },
	{ "port_xmit_discards", IB_PC_XMT_DISCARDS_F, 0, false, ERROR },
	{ "port_xmit_constraint_errors", IB_PC_ERR_XMTCONSTR_F, 0, false, ERROR },
	{ "port_rcv_constraint_errors", IB_PC_ERR_RCVCONSTR_F, 0, false, ERROR },
	{ "local_link_integrity_errors", IB_PC_ERR_LOCALINTEG_F, 0, false, ERROR },
	{ "excessive_buffer_overrun_errors", IB_PC_ERR_EXCESS_OVR_F, 0, false, ERROR },
	{ "VL15_dropped", IB_PC_VL15_DROPPED_F, 0, false, ERROR },
	{ "port_xmit_data", IB_PC_XMT_BYTES_F, IB_PC_EXT_XMT_BYTES_F, false, DATA },
	{ "port_rcv_data", IB_PC_RCV_BYTES_F, IB_PC_EXT_RCV_BYTES_F, false, DATA },
	{ "port_xmit_packets", IB_PC_XMT_PKTS_F, IB_PC_EXT_XMT_PKTS_F, false, DATA },
	{ "port_rcv_packets", IB_PC_RCV_PKTS_F, IB_PC_EXT_RCV_PKTS_F, false, DATA },
	{ "port_xmit_wait", IB_PC_XMT_WAIT_F, 0, false, WAIT },
	{ "unicast_xmit_packets", 0, IB_PC_EXT_XMT_UPKTS_F, true, DATA },
	{ "unicast_rcv_packets", 0, IB_PC_EXT_RCV_UPKTS_F, true, DATA },
	{ "multicast_xmit_packets", 0, IB_PC_EXT_XMT_MPKTS_F, true, DATA },
	{ "multicast_rcv_packets", 0, IB_PC_EXT_RCV_MPKTS_F, true, DATA },
};

/* Whether counter i comes from PortCountersExtended on a PMA with capmask. */
static bool is_ext(unsigned i, unsigned capmask)
{
	return counters[i].ext &&
	       (capmask & (counters[i].ietf ? IB_PM_EXT_WIDTH_SUPPORTED :
			   IB_PM_EXT_WIDTH_SUPPORTED | IB_PM_EXT_WIDTH_NOIETF_SUP));
}

unsigned pmacounters_count(void)
{
	return sizeof(counters) / sizeof(counters[0]);
}

const char *pmacounters_name(unsigned i)
{
	return counters[i].name;
}

bool pmacounters_value(unsigned i, const uint8_t *basic, const uint8_t *ext,
		    unsigned capmask, uint64_t *out)
{
	if (ext && is_ext(i, capmask)) {
		*out = mad_get_field64((void *)ext, 0, counters[i].ext);
		return true;
	}
	if (!basic || !counters[i].basic)
		return false;
	*out = mad_get_field((void *)basic, 0, counters[i].basic);
	return true;
}

unsigned pmacounters_attr(unsigned i, unsigned capmask)
{
	if (is_ext(i, capmask))
		return IB_GSI_PORT_COUNTERS_EXT;
	return counters[i].basic ? IB_GSI_PORT_COUNTERS : 0;
}

unsigned pmacounters_index(const char *name)
{
	for (unsigned i = 0; i < pmacounters_count(); i++)
		if (!strcmp(counters[i].name, name))
			return i;
	return 0;
}

/* The counters ibqueryerrors checks, in its order (found once: the judge
 * asks for each of every port). */
static unsigned checked[PMACOUNTERS_CHECKED];
static pthread_once_t checked_once = PTHREAD_ONCE_INIT;

static void find_checked(void)
{
	unsigned k = 0;

	for (unsigned i = 0; i < pmacounters_count() && k < PMACOUNTERS_CHECKED; i++)
		if (counters[i].checked != DATA)
			checked[k++] = i;
}

unsigned pmacounters_checked(unsigned k)
{
	pthread_once(&checked_once, find_checked);
	return k < PMACOUNTERS_CHECKED ? checked[k] : 0;
}

bool pmacounters_is_error(unsigned i)
{
	return counters[i].checked == ERROR;
}

int pmacounters_field(unsigned i)
{
	return (int)counters[i].basic;
}

uint64_t pmacounters_field_max(int field)
{
	uint8_t buf[IB_PC_DATA_SZ] = { 0 };

	mad_set_field(buf, 0, (enum MAD_FIELDS)field, UINT32_MAX);
	return mad_get_field(buf, 0, (enum MAD_FIELDS)field);
}
