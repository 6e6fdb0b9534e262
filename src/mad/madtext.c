// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * madtext: one text line <-> one umad frame.  See docs/text-format.md.
 *
 * Parsing is two passes over one line.  The first splits tokens, looks up
 * keys and converts numbers and names that do not depend on anything else
 * into a struct parsed_line on the stack.  The second builds the frame in a
 * fixed order, because the keys come in any order but their effects do not
 * commute: mad= first, then the header keys that override what it holds,
 * then data=, then the address.  Hex is converted with lookup tables
 * straight into the caller's frame; nothing is allocated.
 *
 * MAD header fields are read and written with libibmad's field accessors
 * (IB_MAD_*_F, IB_DRSMP_*_F, IB_SA_*_F, IB_VEND2_OUI_F) so that the byte
 * positions come from one place; the codec never looks inside attributes.
 */
#include "umadfs/mad/madtext.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

_Static_assert(sizeof(struct ib_user_mad) == MADTEXT_FRAME_HDR_SIZE,
	       "struct ib_user_mad is not the 64-byte kernel umad header");
_Static_assert(IB_MAD_SIZE == MADTEXT_MAD_SIZE, "MAD size");

/*
 * Numbers the IBA defines that libibmad has no constant for.
 */
/* Management classes the kernel treats as RMPP classes (ib_is_mad_class_rmpp)
 * besides SA, DM and vendor range 2. */
#define MGMT_CLASS_DEVICE_ADM		0x10
#define MGMT_CLASS_BIS			0x12
/* DM/DevAdm/BIS: 24-byte MAD header, 40 reserved bytes, data (IBA 16.3;
 * the kernel's IB_MGMT_DEVICE_HDR). */
#define DEVICE_MGMT_DATA_OFFS		64
/* The common MAD header; classes without a class header start data here. */
#define MAD_HDR_SIZE			24

/* SMI attributes (IBA 14.2.5) libibmad does not name. */
#define SMI_ATTR_RANDOM_FORWARDING_TABLE	0x1a
#define SMI_ATTR_HIERARCHY_INFO			0x1e
#define SMI_ATTR_VENDOR_DIAG			0x30
#define SMI_ATTR_LED_INFO			0x31
#define SMI_ATTR_CABLE_INFO			0x32
/* SA attributes (IBA 15.2.5) libibmad does not name. */
#define SA_ATTR_LINK_SPEED_WIDTH_PAIRS_TABLE_RECORD	0x19
#define SA_ATTR_TRACE_RECORD				0x39
#define SA_ATTR_SERVICE_ASSOCIATION_RECORD		0x3b
/* PMA PortSamplesResultExtended (IBA 16.1.4) */
#define PMA_ATTR_PORT_SAMPLES_RESULT_EXT	0x1e
/* DM attributes (IBA 16.3.3) */
#define DM_ATTR_IO_UNIT_INFO		0x10
#define DM_ATTR_IOC_PROFILE		0x11
#define DM_ATTR_SERVICE_ENTRIES		0x12
#define DM_ATTR_DIAGNOSTIC_TIMEOUT	0x20
#define DM_ATTR_PREPARE_TO_TEST		0x21
#define DM_ATTR_TEST_DEVICE_ONCE	0x22
#define DM_ATTR_TEST_DEVICE_LOOP	0x23
#define DM_ATTR_DIAG_CODE		0x24
/* CM attributes (IBA 12.6) */
#define CM_ATTR_REQ		0x10
#define CM_ATTR_MRA		0x11
#define CM_ATTR_REJ		0x12
#define CM_ATTR_REP		0x13
#define CM_ATTR_RTU		0x14
#define CM_ATTR_DREQ		0x15
#define CM_ATTR_DREP		0x16
#define CM_ATTR_SIDR_REQ	0x17
#define CM_ATTR_SIDR_REP	0x18
#define CM_ATTR_LAP		0x19
#define CM_ATTR_APR		0x1a

/* The D bit of a directed-route SMP shares the status word (IBA 14.2.1.2). */
#define DR_STATUS_MASK		0x7fff
#define PERMISSIVE_LID		0xffff

/* ------------------------------------------------------------------ */
/* Name tables                                                          */

struct name_entry {
	int value;
	const char *name;
};

/* The first entry for a value is its canonical (output) name. */
static const struct name_entry class_names[] = {
	{ IB_SMI_CLASS, "smi" },
	{ IB_SMI_DIRECT_CLASS, "smi-dr" },
	{ IB_SMI_DIRECT_CLASS, "dr" },
	{ IB_SA_CLASS, "sa" },
	{ IB_PERFORMANCE_CLASS, "perf" },
	{ IB_PERFORMANCE_CLASS, "pma" },
	{ IB_BOARD_MGMT_CLASS, "bm" },
	{ IB_DEVICE_MGMT_CLASS, "dm" },
	{ IB_CM_CLASS, "cm" },
	{ IB_SNMP_CLASS, "snmp" },
	{ IB_CC_CLASS, "cc" },
};

static const struct name_entry method_names[] = {
	{ IB_MAD_METHOD_GET, "get" },
	{ IB_MAD_METHOD_SET, "set" },
	{ IB_MAD_METHOD_GET_RESPONSE, "getresp" },
	{ IB_MAD_METHOD_SEND, "send" },
	{ IB_MAD_METHOD_TRAP, "trap" },
	{ IB_MAD_METHOD_TRAP_REPRESS, "trapress" },
	{ IB_MAD_METHOD_TRAP_REPRESS, "traprepress" },
	{ IB_MAD_METHOD_REPORT, "report" },
	{ IB_MAD_METHOD_REPORT_RESPONSE, "reportresp" },
	{ IB_MAD_METHOD_GET_TABLE, "gettable" },
	{ IB_MAD_METHOD_GET_TABLE_RESPONSE, "gettableresp" },
	{ IB_MAD_METHOD_GET_TRACE_TABLE, "gettraceable" },
	{ IB_MAD_METHOD_GET_TRACE_TABLE_RESPONSE, "gettraceableresp" },
	{ IB_MAD_METHOD_GETMULTI, "getmulti" },
	{ IB_MAD_METHOD_GETMULTI_RESPONSE, "getmultiresp" },
	{ IB_MAD_METHOD_DELETE, "delete" },
	{ IB_MAD_METHOD_DELETE_RESPONSE, "deleteresp" },
};

static const struct name_entry smi_attr_names[] = {
	{ CLASS_PORT_INFO, "ClassPortInfo" },
	{ NOTICE, "Notice" },
	{ IB_ATTR_NODE_DESC, "NodeDescription" },
	{ IB_ATTR_NODE_INFO, "NodeInfo" },
	{ IB_ATTR_SWITCH_INFO, "SwitchInfo" },
	{ IB_ATTR_GUID_INFO, "GUIDInfo" },
	{ IB_ATTR_PORT_INFO, "PortInfo" },
	{ IB_ATTR_PKEY_TBL, "PKeyTable" },
	{ IB_ATTR_SLVL_TABLE, "SLtoVLMappingTable" },
	{ IB_ATTR_VL_ARBITRATION, "VLArbitrationTable" },
	{ IB_ATTR_LINEARFORWTBL, "LinearForwardingTable" },
	{ SMI_ATTR_RANDOM_FORWARDING_TABLE, "RandomForwardingTable" },
	{ IB_ATTR_MULTICASTFORWTBL, "MulticastForwardingTable" },
	{ IB_ATTR_LINKSPEEDWIDTHPAIRSTBL, "LinkSpeedWidthPairsTable" },
	{ IB_ATTR_VENDORMADSTBL, "VendorMADsTable" },
	{ SMI_ATTR_HIERARCHY_INFO, "HierarchyInfo" },
	{ IB_ATTR_SMINFO, "SMInfo" },
	{ SMI_ATTR_VENDOR_DIAG, "VendorDiag" },
	{ SMI_ATTR_LED_INFO, "LedInfo" },
	{ SMI_ATTR_CABLE_INFO, "CableInfo" },
	{ IB_ATTR_PORT_INFO_EXT, "PortInfoExtended" },
	{ IB_ATTR_MLNX_EXT_PORT_INFO, "MlnxExtPortInfo" },
};

static const struct name_entry sa_attr_names[] = {
	{ CLASS_PORT_INFO, "ClassPortInfo" },
	{ IB_SA_ATTR_NOTICE, "Notice" },
	{ IB_SA_ATTR_INFORMINFO, "InformInfo" },
	{ IB_SA_ATTR_NODERECORD, "NodeRecord" },
	{ IB_SA_ATTR_PORTINFORECORD, "PortInfoRecord" },
	{ IB_SA_ATTR_SL2VLTABLERECORD, "SLtoVLMappingTableRecord" },
	{ IB_SA_ATTR_SWITCHINFORECORD, "SwitchInfoRecord" },
	{ IB_SA_ATTR_LFTRECORD, "LinearForwardingTableRecord" },
	{ IB_SA_ATTR_RFTRECORD, "RandomForwardingTableRecord" },
	{ IB_SA_ATTR_MFTRECORD, "MulticastForwardingTableRecord" },
	{ IB_SA_ATTR_SMINFORECORD, "SMInfoRecord" },
	{ SA_ATTR_LINK_SPEED_WIDTH_PAIRS_TABLE_RECORD, "LinkSpeedWidthPairsTableRecord" },
	{ IB_SA_ATTR_LINKRECORD, "LinkRecord" },
	{ IB_SA_ATTR_GUIDINFORECORD, "GuidInfoRecord" },
	{ IB_SA_ATTR_SERVICERECORD, "ServiceRecord" },
	{ IB_SA_ATTR_PKEYTABLERECORD, "PKeyTableRecord" },
	{ IB_SA_ATTR_PATHRECORD, "PathRecord" },
	{ IB_SA_ATTR_VLARBTABLERECORD, "VLArbitrationTableRecord" },
	{ IB_SA_ATTR_MCRECORD, "MCMemberRecord" },
	{ SA_ATTR_TRACE_RECORD, "TraceRecord" },
	{ IB_SA_ATTR_MULTIPATH, "MultiPathRecord" },
	{ SA_ATTR_SERVICE_ASSOCIATION_RECORD, "ServiceAssociationRecord" },
	{ IB_SA_ATTR_INFORMINFORECORD, "InformInfoRecord" },
};

static const struct name_entry pma_attr_names[] = {
	{ CLASS_PORT_INFO, "ClassPortInfo" },
	{ IB_GSI_PORT_SAMPLES_CONTROL, "PortSamplesControl" },
	{ IB_GSI_PORT_SAMPLES_RESULT, "PortSamplesResult" },
	{ IB_GSI_PORT_COUNTERS, "PortCounters" },
	{ IB_GSI_PORT_RCV_ERROR_DETAILS, "PortRcvErrorDetails" },
	{ IB_GSI_PORT_XMIT_DISCARD_DETAILS, "PortXmitDiscardDetails" },
	{ IB_GSI_PORT_PORT_OP_RCV_COUNTERS, "PortOpRcvCounters" },
	{ IB_GSI_PORT_PORT_FLOW_CTL_COUNTERS, "PortFlowCtlCounters" },
	{ IB_GSI_PORT_PORT_VL_OP_PACKETS, "PortVLOpPackets" },
	{ IB_GSI_PORT_PORT_VL_OP_DATA, "PortVLOpData" },
	{ IB_GSI_PORT_PORT_VL_XMIT_FLOW_CTL_UPDATE_ERRORS, "PortVLXmitFlowCtlUpdateErrors" },
	{ IB_GSI_PORT_PORT_VL_XMIT_WAIT_COUNTERS, "PortVLXmitWaitCounters" },
	{ IB_GSI_PORT_COUNTERS_EXT, "PortCountersExtended" },
	{ PMA_ATTR_PORT_SAMPLES_RESULT_EXT, "PortSamplesResultExtended" },
	{ IB_GSI_PORT_EXT_SPEEDS_COUNTERS, "PortExtendedSpeedsCounters" },
	{ IB_GSI_SW_PORT_VL_CONGESTION, "SwPortVLCongestion" },
	{ IB_GSI_PORT_RCV_CON_CTRL, "PortRcvConCtrl" },
	{ IB_GSI_PORT_SL_RCV_FECN, "PortSLRcvFECN" },
	{ IB_GSI_PORT_SL_RCV_BECN, "PortSLRcvBECN" },
	{ IB_GSI_PORT_XMIT_CON_CTRL, "PortXmitConCtrl" },
	{ IB_GSI_PORT_VL_XMIT_TIME_CONG, "PortVLXmitTimeCong" },
	{ IB_GSI_PORT_XMIT_DATA_SL, "PortXmitDataSL" },
	{ IB_GSI_PORT_RCV_DATA_SL, "PortRcvDataSL" },
};

static const struct name_entry bm_attr_names[] = {
	{ CLASS_PORT_INFO, "ClassPortInfo" },
	{ NOTICE, "Notice" },
	{ IB_BM_ATTR_BKEYINFO, "BKeyInfo" },
	{ IB_BM_ATTR_WRITE_VPD, "WriteVPD" },
	{ IB_BM_ATTR_READ_VPD, "ReadVPD" },
	{ IB_BM_ATTR_RESET_IBML, "ResetIBML" },
	{ IB_BM_ATTR_SET_MODULE_PM_CONTROL, "SetModulePMControl" },
	{ IB_BM_ATTR_GET_MODULE_PM_CONTROL, "GetModulePMControl" },
	{ IB_BM_ATTR_SET_UNIT_PM_CONTROL, "SetUnitPMControl" },
	{ IB_BM_ATTR_GET_UNIT_PM_CONTROL, "GetUnitPMControl" },
	{ IB_BM_ATTR_SET_IOC_PM_CONTROL, "SetIOCPMControl" },
	{ IB_BM_ATTR_GET_IOC_PM_CONTROL, "GetIOCPMControl" },
	{ IB_BM_ATTR_SET_MODULE_STATE, "SetModuleState" },
	{ IB_BM_ATTR_SET_MODULE_ATTENTION, "SetModuleAttention" },
	{ IB_BM_ATTR_GET_MODULE_STATUS, "GetModuleStatus" },
	{ IB_BM_ATTR_IB2IBML, "IB2IBML" },
	{ IB_BM_ATTR_IB2CME, "IB2CME" },
	{ IB_BM_ATTR_IB2MME, "IB2MME" },
	{ IB_BM_ATTR_OEM, "OEM" },
};

static const struct name_entry dm_attr_names[] = {
	{ CLASS_PORT_INFO, "ClassPortInfo" },
	{ NOTICE, "Notice" },
	{ DM_ATTR_IO_UNIT_INFO, "IOUnitInfo" },
	{ DM_ATTR_IOC_PROFILE, "IOControllerProfile" },
	{ DM_ATTR_SERVICE_ENTRIES, "ServiceEntries" },
	{ DM_ATTR_DIAGNOSTIC_TIMEOUT, "DiagnosticTimeout" },
	{ DM_ATTR_PREPARE_TO_TEST, "PrepareToTest" },
	{ DM_ATTR_TEST_DEVICE_ONCE, "TestDeviceOnce" },
	{ DM_ATTR_TEST_DEVICE_LOOP, "TestDeviceLoop" },
	{ DM_ATTR_DIAG_CODE, "DiagCode" },
};

static const struct name_entry cm_attr_names[] = {
	{ CLASS_PORT_INFO, "ClassPortInfo" },
	{ CM_ATTR_REQ, "ConnectRequest" },
	{ CM_ATTR_MRA, "MsgRcptAck" },
	{ CM_ATTR_REJ, "ConnectReject" },
	{ CM_ATTR_REP, "ConnectReply" },
	{ CM_ATTR_RTU, "ReadyToUse" },
	{ CM_ATTR_DREQ, "DisconnectRequest" },
	{ CM_ATTR_DREP, "DisconnectReply" },
	{ CM_ATTR_SIDR_REQ, "ServiceIDResReq" },
	{ CM_ATTR_SIDR_REP, "ServiceIDResReqResp" },
	{ CM_ATTR_LAP, "LoadAlternatePath" },
	{ CM_ATTR_APR, "AlternatePathResponse" },
};

static const struct name_entry cc_attr_names[] = {
	{ CLASS_PORT_INFO, "ClassPortInfo" },
	{ NOTICE, "Notice" },
	{ IB_CC_ATTR_CONGESTION_INFO, "CongestionInfo" },
	{ IB_CC_ATTR_CONGESTION_KEY_INFO, "CongestionKeyInfo" },
	{ IB_CC_ATTR_CONGESTION_LOG, "CongestionLog" },
	{ IB_CC_ATTR_SWITCH_CONGESTION_SETTING, "SwitchCongestionSetting" },
	{ IB_CC_ATTR_SWITCH_PORT_CONGESTION_SETTING, "SwitchPortCongestionSetting" },
	{ IB_CC_ATTR_CA_CONGESTION_SETTING, "CACongestionSetting" },
	{ IB_CC_ATTR_CONGESTION_CONTROL_TABLE, "CongestionControlTable" },
	{ IB_CC_ATTR_TIMESTAMP, "Timestamp" },
};

/* Attributes every General Services class shares (IBA 13.4.8). */
static const struct name_entry common_attr_names[] = {
	{ CLASS_PORT_INFO, "ClassPortInfo" },
	{ NOTICE, "Notice" },
	{ INFORM_INFO, "InformInfo" },
};

#define TABLE(t) t, sizeof(t) / sizeof((t)[0])
#define SET_TABLE(t)						\
	do {							\
		*table = t;					\
		*count = sizeof(t) / sizeof((t)[0]);		\
	} while (0)

static void attr_table_for_class(int mgmt_class, const struct name_entry **table,
				 size_t *count)
{
	switch (mgmt_class) {
	case IB_SMI_CLASS:
	case IB_SMI_DIRECT_CLASS:
		SET_TABLE(smi_attr_names);
		break;
	case IB_SA_CLASS:
		SET_TABLE(sa_attr_names);
		break;
	case IB_PERFORMANCE_CLASS:
		SET_TABLE(pma_attr_names);
		break;
	case IB_BOARD_MGMT_CLASS:
		SET_TABLE(bm_attr_names);
		break;
	case IB_DEVICE_MGMT_CLASS:
		SET_TABLE(dm_attr_names);
		break;
	case IB_CM_CLASS:
		SET_TABLE(cm_attr_names);
		break;
	case IB_CC_CLASS:
		SET_TABLE(cc_attr_names);
		break;
	default:
		SET_TABLE(common_attr_names);
		break;
	}
}

/* ASCII-only case folding: names are ASCII and the locale must not matter. */
static inline unsigned char ascii_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
}

static bool name_equal(const char *name, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!name[i] || ascii_lower(name[i]) != ascii_lower(s[i]))
			return false;
	}
	return name[n] == '\0';
}

static int lookup_name(const struct name_entry *table, size_t count,
		       const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (name_equal(table[i].name, s, n))
			return table[i].value;
	return -1;
}

static const char *lookup_value(const struct name_entry *table, size_t count,
				int value)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (table[i].value == value)
			return table[i].name;
	return NULL;
}

int madtext_class_from_name(const char *s, size_t n)
{
	return lookup_name(TABLE(class_names), s, n);
}

const char *madtext_class_name(int mgmt_class)
{
	return lookup_value(TABLE(class_names), mgmt_class);
}

int madtext_method_from_name(const char *s, size_t n)
{
	return lookup_name(TABLE(method_names), s, n);
}

const char *madtext_method_name(int method)
{
	return lookup_value(TABLE(method_names), method);
}

int madtext_attr_from_name(int mgmt_class, const char *s, size_t n)
{
	const struct name_entry *table;
	size_t count;

	attr_table_for_class(mgmt_class, &table, &count);
	return lookup_name(table, count, s, n);
}

const char *madtext_attr_name(int mgmt_class, int attr_id)
{
	const struct name_entry *table;
	size_t count;

	attr_table_for_class(mgmt_class, &table, &count);
	return lookup_value(table, count, attr_id);
}

bool madtext_method_is_response(int method)
{
	return (method & IB_MAD_RESPONSE) ||
	       method == IB_MAD_METHOD_TRAP_REPRESS;
}

static bool class_is_smp(int mgmt_class)
{
	return mgmt_class == IB_SMI_CLASS || mgmt_class == IB_SMI_DIRECT_CLASS;
}

static bool class_is_vendor2(int mgmt_class)
{
	return mgmt_class >= IB_VENDOR_RANGE2_START_CLASS &&
	       mgmt_class <= IB_VENDOR_RANGE2_END_CLASS;
}

/* The kernel's ib_is_mad_class_rmpp(): only these may exceed one MAD. */
bool madtext_class_uses_rmpp(int mgmt_class)
{
	return mgmt_class == IB_SA_CLASS ||
	       mgmt_class == IB_DEVICE_MGMT_CLASS ||
	       mgmt_class == MGMT_CLASS_DEVICE_ADM ||
	       mgmt_class == MGMT_CLASS_BIS ||
	       class_is_vendor2(mgmt_class);
}

/*
 * Where data= goes.  For the RMPP classes this must equal the kernel's
 * ib_get_mad_data_offset(), which is where it splits an RMPP send into
 * segments; for the others it is the start of the class's data field.
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
	case MGMT_CLASS_DEVICE_ADM:
	case MGMT_CLASS_BIS:
		return DEVICE_MGMT_DATA_OFFS;
	default:
		if (class_is_vendor2(mgmt_class))
			return IB_VENDOR_RANGE2_DATA_OFFS;
		return MAD_HDR_SIZE;
	}
}

size_t madtext_data_size(int mgmt_class)
{
	/* SMP bytes 128-255 hold the directed-route paths (reserved when
	 * LID-routed), so an SMP carries only 64 bytes of data. */
	if (class_is_smp(mgmt_class))
		return IB_SMP_DATA_SIZE;
	return IB_MAD_SIZE - madtext_data_offset(mgmt_class);
}

bool madtext_is_blank(const char *line, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (line[i] == ' ' || line[i] == '\t')
			continue;
		return line[i] == '#';
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* Hex and numbers                                                      */

/*
 * Nibble value of a hex digit, with 0x10 set for anything else: the decoder
 * ORs the lookups of a whole value together and checks once at the end,
 * so the per-byte loop has no branch.  Designated initializers can't fill
 * a default, hence the inverted storage: hex_table[] holds value ^ 0x10.
 */
#define HEX_BAD 0x10
static const uint8_t hex_table[256] = {
	['0'] = 0x10, ['1'] = 0x11, ['2'] = 0x12, ['3'] = 0x13, ['4'] = 0x14,
	['5'] = 0x15, ['6'] = 0x16, ['7'] = 0x17, ['8'] = 0x18, ['9'] = 0x19,
	['a'] = 0x1a, ['b'] = 0x1b, ['c'] = 0x1c, ['d'] = 0x1d, ['e'] = 0x1e,
	['f'] = 0x1f,
	['A'] = 0x1a, ['B'] = 0x1b, ['C'] = 0x1c, ['D'] = 0x1d, ['E'] = 0x1e,
	['F'] = 0x1f,
};

/* 0-15 for a hex digit, HEX_BAD set otherwise. */
static inline unsigned int hex_nibble(unsigned char c)
{
	return hex_table[c] ^ HEX_BAD;
}

/* Two lowercase hex digits per byte value. */
static const char hex_pairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/*
 * Decode 2*n hex digits into n bytes.  Returns -1 on success or the index
 * of the first bad character (then out holds garbage).
 */
static ssize_t hex_decode(const char *s, size_t n, uint8_t *out)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int bad = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int hi = hex_nibble(p[2 * i]);
		unsigned int lo = hex_nibble(p[2 * i + 1]);

		bad |= hi | lo;
		out[i] = (uint8_t)((hi << 4) | (lo & 0xf));
	}
	if (!(bad & HEX_BAD))
		return -1;
	/* Rare: find the culprit for the message. */
	for (i = 0; i < 2 * n; i++)
		if (hex_nibble(p[i]) & HEX_BAD)
			break;
	return (ssize_t)i;
}

static char *hex_encode(char *out, const uint8_t *in, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		memcpy(out, &hex_pairs[2 * in[i]], 2);
		out += 2;
	}
	return out;
}

/* Decimal, or hex after 0x/0X.  No sign, no spaces, at most 64 bits. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (n - 2 > 16)
			return -EINVAL;
		for (i = 2; i < n; i++) {
			unsigned int d = hex_nibble((unsigned char)s[i]);

			if (d & HEX_BAD)
				return -EINVAL;
			v = (v << 4) | d;
		}
		*out = v;
		return 0;
	}
	if (n == 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		unsigned int d = (unsigned char)s[i] - '0';

		if (d > 9)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Keys                                                                 */

enum key_id {
	KEY_CLASS,
	KEY_VERSION,
	KEY_METHOD,
	KEY_ATTR,
	KEY_ATTRMOD,
	KEY_TID,
	KEY_STATUS,
	KEY_LID,
	KEY_QP,
	KEY_QKEY,
	KEY_SL,
	KEY_PKEY_INDEX,
	KEY_PATH_BITS,
	KEY_GID,
	KEY_GID_INDEX,
	KEY_HOP_LIMIT,
	KEY_TRAFFIC_CLASS,
	KEY_FLOW_LABEL,
	KEY_DR,
	KEY_DRSLID,
	KEY_DRDLID,
	KEY_DIRECTION,
	KEY_MKEY,
	KEY_COMP_MASK,
	KEY_SMKEY,
	KEY_ATTR_OFFSET,
	KEY_OUI,
	KEY_DATA,
	KEY_MAD,
	KEY_TIMEOUT,
	KEY_RETRIES,
	KEY_ERROR,
	KEY_LEN,
	KEY_COUNT
};

enum value_kind {
	VAL_NUMBER,	/* 0..max */
	VAL_CLASS,	/* class name or 1..0xff */
	VAL_METHOD,	/* method name or 1..0xff */
	VAL_ATTR,	/* number now, or a name resolved once the class is known */
	VAL_HEX,	/* data=, mad=: decoded straight into the frame later */
	VAL_GID,
	VAL_PATH,
	VAL_IGNORED,	/* output-only keys, accepted so received lines re-parse */
};

struct key_desc {
	char name[15];
	uint8_t len;
	uint8_t kind;
	uint64_t max;
};

#define KEY(id, str, k, m) [id] = { str, sizeof(str) - 1, k, m }
static const struct key_desc keys[KEY_COUNT] = {
	KEY(KEY_CLASS, "class", VAL_CLASS, 0xff),
	KEY(KEY_VERSION, "version", VAL_NUMBER, 0xff),
	KEY(KEY_METHOD, "method", VAL_METHOD, 0xff),
	KEY(KEY_ATTR, "attr", VAL_ATTR, 0xffff),
	KEY(KEY_ATTRMOD, "attrmod", VAL_NUMBER, 0xffffffff),
	KEY(KEY_TID, "tid", VAL_NUMBER, UINT64_MAX),
	KEY(KEY_STATUS, "status", VAL_NUMBER, 0xffff),
	KEY(KEY_LID, "lid", VAL_NUMBER, 0xffff),
	KEY(KEY_QP, "qp", VAL_NUMBER, 0xffffff),
	KEY(KEY_QKEY, "qkey", VAL_NUMBER, 0xffffffff),
	KEY(KEY_SL, "sl", VAL_NUMBER, 15),
	KEY(KEY_PKEY_INDEX, "pkey_index", VAL_NUMBER, 0xffff),
	KEY(KEY_PATH_BITS, "path_bits", VAL_NUMBER, 0x7f),
	KEY(KEY_GID, "gid", VAL_GID, 0),
	KEY(KEY_GID_INDEX, "gid_index", VAL_NUMBER, 0xff),
	KEY(KEY_HOP_LIMIT, "hop_limit", VAL_NUMBER, 0xff),
	KEY(KEY_TRAFFIC_CLASS, "traffic_class", VAL_NUMBER, 0xff),
	KEY(KEY_FLOW_LABEL, "flow_label", VAL_NUMBER, 0xfffff),
	KEY(KEY_DR, "dr", VAL_PATH, 0),
	KEY(KEY_DRSLID, "drslid", VAL_NUMBER, 0xffff),
	KEY(KEY_DRDLID, "drdlid", VAL_NUMBER, 0xffff),
	KEY(KEY_DIRECTION, "direction", VAL_NUMBER, 1),
	KEY(KEY_MKEY, "mkey", VAL_NUMBER, UINT64_MAX),
	KEY(KEY_COMP_MASK, "comp_mask", VAL_NUMBER, UINT64_MAX),
	KEY(KEY_SMKEY, "smkey", VAL_NUMBER, UINT64_MAX),
	KEY(KEY_ATTR_OFFSET, "attr_offset", VAL_NUMBER, 0xffff),
	KEY(KEY_OUI, "oui", VAL_NUMBER, 0xffffff),
	KEY(KEY_DATA, "data", VAL_HEX, 0),
	KEY(KEY_MAD, "mad", VAL_HEX, 0),
	KEY(KEY_TIMEOUT, "timeout", VAL_NUMBER, INT_MAX),
	KEY(KEY_RETRIES, "retries", VAL_NUMBER, INT_MAX),
	KEY(KEY_ERROR, "error", VAL_IGNORED, 0),
	KEY(KEY_LEN, "len", VAL_IGNORED, 0),
};

/*
 * Key lookup is on every token, so it is hashed: an open-addressing table
 * built once from keys[] (so adding a key is still one row above).
 */
#define KEY_HASH_SLOTS	128	/* power of two, well above KEY_COUNT */

static int8_t key_slots[KEY_HASH_SLOTS];
static pthread_once_t key_slots_once = PTHREAD_ONCE_INIT;

static unsigned int key_hash(const char *s, size_t n)
{
	return (unsigned int)(n * 7 + ascii_lower(s[0]) * 31 +
			      ascii_lower(s[n / 2]) * 5 +
			      ascii_lower(s[n - 1])) & (KEY_HASH_SLOTS - 1);
}

static void build_key_slots(void)
{
	int k;

	memset(key_slots, -1, sizeof(key_slots));
	for (k = 0; k < KEY_COUNT; k++) {
		unsigned int h = key_hash(keys[k].name, keys[k].len);

		while (key_slots[h] >= 0)
			h = (h + 1) & (KEY_HASH_SLOTS - 1);
		key_slots[h] = (int8_t)k;
	}
}

static int lookup_key(const char *s, size_t n)
{
	unsigned int h;
	int k;

	if (n == 0 || n >= sizeof(keys[0].name))
		return -1;
	pthread_once(&key_slots_once, build_key_slots);
	for (h = key_hash(s, n); (k = key_slots[h]) >= 0;
	     h = (h + 1) & (KEY_HASH_SLOTS - 1))
		if (keys[k].len == n && name_equal(keys[k].name, s, n))
			return k;
	return -1;
}

#define KEY_BIT(k) (UINT64_C(1) << (k))
_Static_assert(KEY_COUNT <= 64, "parsed_line.present is a 64-bit mask");
_Static_assert(KEY_COUNT < KEY_HASH_SLOTS / 2, "key hash table too full");

/* One line after the first pass. */
struct parsed_line {
	uint64_t present;			/* KEY_BIT()s seen */
	uint64_t num[KEY_COUNT];		/* VAL_NUMBER/CLASS/METHOD/ATTR */
	const char *text[KEY_COUNT];		/* VAL_HEX, and VAL_ATTR by name */
	size_t text_len[KEY_COUNT];
	size_t column[KEY_COUNT];		/* 1-based, of the token */
	bool attr_by_name;
	uint8_t gid[16];
	uint8_t path[IB_SUBNET_PATH_HOPS_MAX];
	size_t path_len;			/* elements in dr= */
};

static inline bool has(const struct parsed_line *pl, enum key_id k)
{
	return pl->present & KEY_BIT(k);
}

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* A token byte is printable ASCII other than space; one compare. */
static inline bool is_token_byte(unsigned char c)
{
	return (unsigned char)(c - 0x21) <= 0x7e - 0x21;
}

static int parse_gid(const char *s, size_t n, uint8_t gid[16])
{
	char text[INET6_ADDRSTRLEN + 1];

	/* 32 hex digits, with or without 0x: the raw 16 bytes. */
	if (n == 34 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (n == 32 && hex_decode(s, 16, gid) < 0)
		return 0;
	if (n >= sizeof(text))
		return -EINVAL;
	memcpy(text, s, n);
	text[n] = '\0';
	return inet_pton(AF_INET6, text, gid) == 1 ? 0 : -EINVAL;
}

/* ibmad's path notation (smpquery -D): "0,p1,p2,...", one port per hop. */
static int parse_path(const char *s, size_t n, uint8_t *path, size_t *count,
		      char *err, size_t errlen, size_t col)
{
	size_t i = 0, elems = 0;

	while (i <= n) {
		size_t start = i;
		uint64_t port;

		while (i < n && s[i] != ',')
			i++;
		if (parse_u64(s + start, i - start, &port) || port > 0xff)
			return fail(err, errlen, -EINVAL,
				    "bad port '%.*s' in dr= at column %zu (want 0-255)",
				    (int)(i - start), s + start, col + start);
		if (elems == IB_SUBNET_PATH_HOPS_MAX)
			return fail(err, errlen, -EINVAL,
				    "dr= has more than %d hops at column %zu",
				    IB_SUBNET_PATH_HOPS_MAX - 1, col);
		path[elems++] = (uint8_t)port;
		i++;	/* skip ',' (or step past the end) */
	}
	if (path[0] != 0)
		return fail(err, errlen, -EINVAL,
			    "dr= must start with 0 (the local port) at column %zu",
			    col);
	*count = elems;
	return 0;
}

/* Convert one key's value (phase 1).  col is the value's column. */
static int parse_value(struct parsed_line *pl, int k, const char *v, size_t n,
		       size_t col, char *err, size_t errlen)
{
	const struct key_desc *kd = &keys[k];
	uint64_t num;
	int named;

	if (n == 0)
		return fail(err, errlen, -EINVAL, "empty value for %s= at column %zu",
			    kd->name, col);

	switch (kd->kind) {
	case VAL_CLASS:
	case VAL_METHOD:
		if (v[0] >= '0' && v[0] <= '9')
			break;	/* a number: range-checked below */
		named = kd->kind == VAL_CLASS ? madtext_class_from_name(v, n)
					      : madtext_method_from_name(v, n);
		if (named < 0)
			return fail(err, errlen, -EINVAL,
				    "unknown %s '%.*s' at column %zu", kd->name,
				    (int)n, v, col);
		pl->num[k] = (uint64_t)named;
		return 0;
	case VAL_ATTR:
		if (v[0] >= '0' && v[0] <= '9')
			break;
		/* Attribute names depend on the class: resolve in phase 2. */
		pl->attr_by_name = true;
		pl->text[k] = v;
		pl->text_len[k] = n;
		return 0;
	case VAL_HEX:
		pl->text[k] = v;
		pl->text_len[k] = n;
		return 0;
	case VAL_GID:
		if (parse_gid(v, n, pl->gid))
			return fail(err, errlen, -EINVAL,
				    "bad gid '%.*s' at column %zu (want IPv6 form or 32 hex digits)",
				    (int)n, v, col);
		return 0;
	case VAL_PATH:
		return parse_path(v, n, pl->path, &pl->path_len, err, errlen, col);
	case VAL_IGNORED:
		return 0;
	default:
		break;
	}

	if (parse_u64(v, n, &num))
		return fail(err, errlen, -EINVAL,
			    "bad number '%.*s' for %s= at column %zu", (int)n, v,
			    kd->name, col);
	if (num > kd->max ||
	    ((kd->kind == VAL_CLASS || kd->kind == VAL_METHOD) && num == 0))
		return fail(err, errlen, -EINVAL,
			    "%s=%.*s out of range (%s0x%" PRIx64 ") at column %zu",
			    kd->name, (int)n, v,
			    (kd->kind == VAL_CLASS || kd->kind == VAL_METHOD) ?
				    "0x01-" : "max ",
			    kd->max, col);
	pl->num[k] = num;
	return 0;
}

/* The rest of a token from i: its end, or an error for a byte no line may
 * hold (control characters, DEL, non-ASCII). */
static int token_end(const unsigned char *p, size_t i, size_t len, size_t *end,
		     char *err, size_t errlen)
{
	while (i < len && is_token_byte(p[i]))
		i++;
	if (i < len && p[i] != ' ' && p[i] != '\t') {
		if (p[i] == '\r')
			return fail(err, errlen, -EINVAL,
				    "carriage return at column %zu (CRLF line ending?)",
				    i + 1);
		return fail(err, errlen, -EINVAL,
			    "invalid byte 0x%02x at column %zu", p[i], i + 1);
	}
	*end = i;
	return 0;
}

/* Phase 1: split tokens, find keys, convert values. */
static int scan_line(const char *line, size_t len, struct parsed_line *pl,
		     char *err, size_t errlen)
{
	const unsigned char *p = (const unsigned char *)line;
	size_t i = 0;
	int ret;

	pl->present = 0;
	pl->attr_by_name = false;

	while (i < len) {
		size_t start, eq, value;
		int k;

		if (p[i] == ' ' || p[i] == '\t') {
			i++;
			continue;
		}
		start = i;
		while (i < len && is_token_byte(p[i]) && p[i] != '=')
			i++;
		if (i == start || i == len || p[i] != '=') {
			ret = token_end(p, i, len, &i, err, errlen);
			if (ret)
				return ret;
			return fail(err, errlen, -EINVAL,
				    "expected key=value, got '%.*s' at column %zu",
				    (int)(i - start), line + start, start + 1);
		}
		eq = i++;

		k = lookup_key(line + start, eq - start);
		if (k < 0)
			return fail(err, errlen, -EINVAL,
				    "unknown key '%.*s' at column %zu",
				    (int)(eq - start), line + start, start + 1);
		if (pl->present & KEY_BIT(k))
			return fail(err, errlen, -EINVAL,
				    "duplicate key '%s' at column %zu (first at column %zu)",
				    keys[k].name, start + 1, pl->column[k]);
		pl->present |= KEY_BIT(k);
		pl->column[k] = start + 1;

		value = i;
		if (keys[k].kind == VAL_HEX) {
			/* Hex values are most of a long line: find their end
			 * with memchr; the decoder checks every byte anyway,
			 * junk included. */
			const unsigned char *sep = memchr(p + i, ' ', len - i);
			size_t end = sep ? (size_t)(sep - p) : len;

			sep = memchr(p + i, '\t', end - i);
			i = sep ? (size_t)(sep - p) : end;
		} else {
			ret = token_end(p, i, len, &i, err, errlen);
			if (ret)
				return ret;
		}

		ret = parse_value(pl, k, line + value, i - value, value + 1,
				  err, errlen);
		if (ret)
			return ret;
	}
	if (!pl->present)
		return fail(err, errlen, -EINVAL, "empty line");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Building the frame                                                   */

static const char *class_label(int mgmt_class, char *buf, size_t n)
{
	const char *name = madtext_class_name(mgmt_class);

	if (name)
		return name;
	snprintf(buf, n, "0x%02x", mgmt_class);
	return buf;
}

/* Class version when the line gives none and there is no mad= (IBA: SA and
 * CM are version 2, everything else we know is version 1). */
static unsigned int default_class_version(int mgmt_class)
{
	switch (mgmt_class) {
	case IB_SA_CLASS:
	case IB_CM_CLASS:
		return 2;
	default:
		return 1;
	}
}

/* -EINVAL with the reason if byte c (at column col) may not be in a line. */
static int junk_byte(unsigned char c, size_t col, char *err, size_t errlen)
{
	if (is_token_byte(c) || c == ' ' || c == '\t')
		return 0;
	if (c == '\r')
		return fail(err, errlen, -EINVAL,
			    "carriage return at column %zu (CRLF line ending?)", col);
	return fail(err, errlen, -EINVAL, "invalid byte 0x%02x at column %zu",
		    c, col);
}

/* Decode a hex value (mad= or data=) into dst; reports junk bytes, bad
 * digits and odd length, in that order, with the column of the culprit. */
static int decode_hex_value(const struct parsed_line *pl, int k, uint8_t *dst,
			    char *err, size_t errlen)
{
	const char *v = pl->text[k];
	size_t n = pl->text_len[k];
	size_t col = pl->column[k] + keys[k].len + 1;
	ssize_t bad;
	int ret;

	bad = hex_decode(v, n / 2, dst);
	if (bad < 0 && (n & 1))
		bad = (hex_nibble((unsigned char)v[n - 1]) & HEX_BAD) ?
			      (ssize_t)n - 1 : -1;
	if (bad >= 0) {
		ret = junk_byte((unsigned char)v[bad], col + (size_t)bad, err, errlen);
		if (ret)
			return ret;
		return fail(err, errlen, -EINVAL,
			    "bad hex in %s= at column %zu ('%c')", keys[k].name,
			    col + (size_t)bad, v[bad]);
	}
	if (n & 1)
		return fail(err, errlen, -EINVAL,
			    "bad hex in %s= at column %zu (odd length %zu)",
			    keys[k].name, col, n);
	return 0;
}

/* Keys that make sense only for some classes. */
struct class_key_rule {
	enum key_id key;
	bool (*allowed)(int mgmt_class);
	const char *what;
};

static bool class_is_dr(int c)
{
	return c == IB_SMI_DIRECT_CLASS;
}

static bool class_is_sa(int c)
{
	return c == IB_SA_CLASS;
}

static const struct class_key_rule class_key_rules[] = {
	{ KEY_DR, class_is_dr, "class smi-dr" },
	{ KEY_DRSLID, class_is_dr, "class smi-dr" },
	{ KEY_DRDLID, class_is_dr, "class smi-dr" },
	{ KEY_DIRECTION, class_is_dr, "class smi-dr" },
	{ KEY_MKEY, class_is_smp, "classes smi and smi-dr" },
	{ KEY_COMP_MASK, class_is_sa, "class sa" },
	{ KEY_SMKEY, class_is_sa, "class sa" },
	{ KEY_ATTR_OFFSET, class_is_sa, "class sa" },
	{ KEY_OUI, class_is_vendor2, "vendor classes 0x30-0x4f" },
};

/* Fill the common MAD header, class headers and payload of the MAD. */
static int build_mad(const struct parsed_line *pl, uint8_t *mad, size_t mad_cap,
		     size_t *mad_len_out, char *err, size_t errlen)
{
	bool have_mad = has(pl, KEY_MAD);
	size_t mad_len = IB_MAD_SIZE;
	int mgmt_class, method, attr;
	char label[8];
	size_t i;
	int ret;

	/* mad= first: every other key overrides the fields it names. */
	if (have_mad) {
		size_t n = pl->text_len[KEY_MAD] / 2;

		if (n > mad_cap)
			return fail(err, errlen, -EMSGSIZE,
				    "mad= is %zu bytes, more than the %zu that fit",
				    n, mad_cap);
		ret = decode_hex_value(pl, KEY_MAD, mad, err, errlen);
		if (ret)
			return ret;
		if (n < IB_MAD_SIZE)
			memset(mad + n, 0, IB_MAD_SIZE - n);
		else
			mad_len = n;
	} else {
		memset(mad, 0, IB_MAD_SIZE);
		mad_set_field(mad, 0, IB_MAD_BASEVER_F, 1);
	}

	/* Class: class=, else dr= implies smi-dr, else whatever mad= holds. */
	if (has(pl, KEY_CLASS)) {
		mgmt_class = (int)pl->num[KEY_CLASS];
		if (has(pl, KEY_DR) && mgmt_class != IB_SMI_DIRECT_CLASS)
			return fail(err, errlen, -EINVAL,
				    "dr= at column %zu needs class smi-dr, not class %s",
				    pl->column[KEY_DR],
				    class_label(mgmt_class, label, sizeof(label)));
		mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, mgmt_class);
	} else if (has(pl, KEY_DR)) {
		mgmt_class = IB_SMI_DIRECT_CLASS;
		mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, mgmt_class);
	} else {
		mgmt_class = (int)mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F);
		if (!mgmt_class)
			return fail(err, errlen, -EINVAL,
				    have_mad ? "class= missing (and mad= has class 0)"
					     : "class= missing");
	}

	for (i = 0; i < sizeof(class_key_rules) / sizeof(class_key_rules[0]); i++) {
		const struct class_key_rule *r = &class_key_rules[i];

		if (has(pl, r->key) && !r->allowed(mgmt_class))
			return fail(err, errlen, -EINVAL,
				    "%s= at column %zu applies only to %s, not class %s",
				    keys[r->key].name, pl->column[r->key], r->what,
				    class_label(mgmt_class, label, sizeof(label)));
	}

	if (has(pl, KEY_VERSION))
		mad_set_field(mad, 0, IB_MAD_CLASSVER_F, (uint32_t)pl->num[KEY_VERSION]);
	else if (!have_mad)
		mad_set_field(mad, 0, IB_MAD_CLASSVER_F,
			      default_class_version(mgmt_class));

	if (has(pl, KEY_METHOD)) {
		method = (int)pl->num[KEY_METHOD];
		/* IB_MAD_METHOD_F is 7 bits and IB_MAD_RESPONSE_F the 8th:
		 * write both so method= carries the whole byte. */
		mad_set_field(mad, 0, IB_MAD_METHOD_F, method & 0x7f);
		mad_set_field(mad, 0, IB_MAD_RESPONSE_F, !!(method & IB_MAD_RESPONSE));
	} else {
		method = (int)(mad_get_field(mad, 0, IB_MAD_METHOD_F) |
			       (mad_get_field(mad, 0, IB_MAD_RESPONSE_F) << 7));
		if (!method)
			return fail(err, errlen, -EINVAL,
				    have_mad ? "method= missing (and mad= has method 0)"
					     : "method= missing");
	}

	if (has(pl, KEY_ATTR)) {
		if (pl->attr_by_name) {
			attr = madtext_attr_from_name(mgmt_class, pl->text[KEY_ATTR],
						      pl->text_len[KEY_ATTR]);
			if (attr < 0)
				return fail(err, errlen, -EINVAL,
					    "unknown attr '%.*s' for class %s at column %zu",
					    (int)pl->text_len[KEY_ATTR], pl->text[KEY_ATTR],
					    class_label(mgmt_class, label, sizeof(label)),
					    pl->column[KEY_ATTR] + 5);
		} else {
			attr = (int)pl->num[KEY_ATTR];
		}
		mad_set_field(mad, 0, IB_MAD_ATTRID_F, (uint32_t)attr);
	}
	if (has(pl, KEY_ATTRMOD))
		mad_set_field(mad, 0, IB_MAD_ATTRMOD_F, (uint32_t)pl->num[KEY_ATTRMOD]);
	if (has(pl, KEY_TID))
		mad_set_field64(mad, 0, IB_MAD_TRID_F, pl->num[KEY_TID]);

	if (mgmt_class == IB_SMI_DIRECT_CLASS) {
		uint32_t direction;

		if (has(pl, KEY_STATUS)) {
			if (pl->num[KEY_STATUS] > DR_STATUS_MASK)
				return fail(err, errlen, -EINVAL,
					    "status=0x%" PRIx64 " out of range for class smi-dr (max 0x7fff: the top bit is the D bit) at column %zu",
					    pl->num[KEY_STATUS], pl->column[KEY_STATUS]);
			mad_set_field(mad, 0, IB_MAD_STATUS_F,
				      (uint32_t)pl->num[KEY_STATUS]);
		}
		/* D (0 outbound, 1 returning) follows the method unless the
		 * line says otherwise: a request goes out, a response comes
		 * back.  So editing a received request into a GetResp flips it. */
		if (has(pl, KEY_DIRECTION))
			direction = (uint32_t)pl->num[KEY_DIRECTION];
		else if (has(pl, KEY_METHOD) || !have_mad)
			direction = !!(method & IB_MAD_RESPONSE);
		else
			direction = mad_get_field(mad, 0, IB_DRSMP_DIRECTION_F);
		mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, direction);

		if (!have_mad) {
			mad_set_field(mad, 0, IB_DRSMP_HOPPTR_F, 0);
			mad_set_field(mad, 0, IB_DRSMP_DRSLID_F, PERMISSIVE_LID);
			mad_set_field(mad, 0, IB_DRSMP_DRDLID_F, PERMISSIVE_LID);
		}
		if (has(pl, KEY_DR)) {
			uint8_t path[IB_SUBNET_PATH_HOPS_MAX] = { 0 };

			memcpy(path, pl->path, pl->path_len);
			mad_set_field(mad, 0, IB_DRSMP_HOPCNT_F,
				      (uint32_t)(pl->path_len - 1));
			mad_set_array(mad, 0, IB_DRSMP_PATH_F, path);
		}
		if (has(pl, KEY_DRSLID))
			mad_set_field(mad, 0, IB_DRSMP_DRSLID_F, (uint32_t)pl->num[KEY_DRSLID]);
		if (has(pl, KEY_DRDLID))
			mad_set_field(mad, 0, IB_DRSMP_DRDLID_F, (uint32_t)pl->num[KEY_DRDLID]);
	} else if (has(pl, KEY_STATUS)) {
		mad_set_field(mad, 0, IB_MAD_STATUS_F, (uint32_t)pl->num[KEY_STATUS]);
	}

	if (has(pl, KEY_MKEY))
		mad_set_field64(mad, 0, IB_MAD_MKEY_F, pl->num[KEY_MKEY]);
	if (has(pl, KEY_COMP_MASK))
		mad_set_field64(mad, 0, IB_SA_COMPMASK_F, pl->num[KEY_COMP_MASK]);
	if (has(pl, KEY_SMKEY))
		mad_set_field64(mad, 0, IB_SA_MKEY_F, pl->num[KEY_SMKEY]);
	if (has(pl, KEY_ATTR_OFFSET))
		mad_set_field(mad, 0, IB_SA_ATTROFFS_F, (uint32_t)pl->num[KEY_ATTR_OFFSET]);
	if (has(pl, KEY_OUI))
		mad_set_field(mad, 0, IB_VEND2_OUI_F, (uint32_t)pl->num[KEY_OUI]);

	/* data= replaces the whole data area, after mad=. */
	if (has(pl, KEY_DATA)) {
		size_t off = madtext_data_offset(mgmt_class);
		size_t area = madtext_data_size(mgmt_class);
		size_t n = pl->text_len[KEY_DATA] / 2;
		bool rmpp = madtext_class_uses_rmpp(mgmt_class);

		if (n > area && !rmpp)
			return fail(err, errlen, -EMSGSIZE,
				    "data= is %zu bytes; class %s carries at most %zu",
				    n, class_label(mgmt_class, label, sizeof(label)),
				    area);
		if (off + n > mad_cap)
			return fail(err, errlen, -EMSGSIZE,
				    "data= is %zu bytes, more than the %zu that fit",
				    n, mad_cap - off);
		ret = decode_hex_value(pl, KEY_DATA, mad + off, err, errlen);
		if (ret)
			return ret;
		if (n <= area) {
			memset(mad + off + n, 0, area - n);
			mad_len = IB_MAD_SIZE;
		} else {
			mad_len = off + n;
			/* The kernel segments a send only if the RMPP header
			 * says Active; fill in what ibmad would for a DATA
			 * message unless mad= already did. */
			if (!(mad_get_field(mad, 0, IB_SA_RMPP_FLAGS_F) &
			      IB_RMPP_FLAG_ACTIVE)) {
				mad_set_field(mad, 0, IB_SA_RMPP_VERS_F, 1);
				mad_set_field(mad, 0, IB_SA_RMPP_TYPE_F, IB_RMPP_TYPE_DATA);
				mad_set_field(mad, 0, IB_SA_RMPP_FLAGS_F,
					      IB_RMPP_FLAG_ACTIVE);
			}
		}
	}

	if (mad_len > IB_MAD_SIZE) {
		if (!madtext_class_uses_rmpp(mgmt_class))
			return fail(err, errlen, -EMSGSIZE,
				    "MAD is %zu bytes; class %s does not use RMPP (max %d)",
				    mad_len, class_label(mgmt_class, label, sizeof(label)),
				    IB_MAD_SIZE);
		if (!(mad_get_field(mad, 0, IB_SA_RMPP_FLAGS_F) & IB_RMPP_FLAG_ACTIVE))
			return fail(err, errlen, -EINVAL,
				    "MAD is %zu bytes but its RMPP header is not Active (byte 26 bit 0)",
				    mad_len);
	}

	*mad_len_out = mad_len;
	return 0;
}

/* The umad header: the peer's address and the per-line send options. */
static int build_umad_header(const struct parsed_line *pl, struct ib_user_mad *hdr,
			     int mgmt_class, size_t mad_len, char *err, size_t errlen)
{
	ib_mad_addr_t *addr = &hdr->addr;
	uint32_t qp, qkey;
	uint16_t lid;
	static const enum key_id grh_keys[] = {
		KEY_GID_INDEX, KEY_HOP_LIMIT, KEY_TRAFFIC_CLASS, KEY_FLOW_LABEL,
	};
	size_t i;

	memset(hdr, 0, sizeof(*hdr));

	if (has(pl, KEY_LID))
		lid = (uint16_t)pl->num[KEY_LID];
	else if (mgmt_class == IB_SMI_DIRECT_CLASS)
		lid = PERMISSIVE_LID;
	else
		return fail(err, errlen, -EINVAL, "lid= missing (needed unless dr=)");

	if (has(pl, KEY_QP))
		qp = (uint32_t)pl->num[KEY_QP];
	else
		qp = class_is_smp(mgmt_class) ? 0 : 1;

	if (has(pl, KEY_QKEY))
		qkey = (uint32_t)pl->num[KEY_QKEY];
	else
		qkey = qp == 0 ? 0 : IB_DEFAULT_QP1_QKEY;

	addr->qpn = htonl(qp);
	addr->qkey = htonl(qkey);
	addr->lid = htons(lid);
	if (has(pl, KEY_SL))
		addr->sl = (uint8_t)pl->num[KEY_SL];
	if (has(pl, KEY_PATH_BITS))
		addr->path_bits = (uint8_t)pl->num[KEY_PATH_BITS];
	if (has(pl, KEY_PKEY_INDEX))
		addr->pkey_index = (uint16_t)pl->num[KEY_PKEY_INDEX];

	if (has(pl, KEY_GID)) {
		addr->grh_present = 1;
		memcpy(addr->gid, pl->gid, sizeof(addr->gid));
		addr->gid_index = has(pl, KEY_GID_INDEX) ?
					  (uint8_t)pl->num[KEY_GID_INDEX] : 0;
		/* Like ibmad: a GRH that may cross routers unless told not to. */
		addr->hop_limit = has(pl, KEY_HOP_LIMIT) ?
					  (uint8_t)pl->num[KEY_HOP_LIMIT] : 0xff;
		addr->traffic_class = has(pl, KEY_TRAFFIC_CLASS) ?
					      (uint8_t)pl->num[KEY_TRAFFIC_CLASS] : 0;
		addr->flow_label = htonl(has(pl, KEY_FLOW_LABEL) ?
						 (uint32_t)pl->num[KEY_FLOW_LABEL] : 0);
	} else {
		for (i = 0; i < sizeof(grh_keys) / sizeof(grh_keys[0]); i++)
			if (has(pl, grh_keys[i]))
				return fail(err, errlen, -EINVAL,
					    "%s= at column %zu needs gid=",
					    keys[grh_keys[i]].name,
					    pl->column[grh_keys[i]]);
	}

	hdr->timeout_ms = has(pl, KEY_TIMEOUT) ? (uint32_t)pl->num[KEY_TIMEOUT] : 0;
	hdr->retries = has(pl, KEY_RETRIES) ? (uint32_t)pl->num[KEY_RETRIES] : 0;
	hdr->length = (uint32_t)(MADTEXT_FRAME_HDR_SIZE + mad_len);
	return 0;
}

int madtext_parse(const char *line, size_t len, void *frame, size_t frame_cap,
		  struct madtext_request *req, char *err, size_t errlen)
{
	struct parsed_line pl;
	uint8_t *mad = (uint8_t *)frame + MADTEXT_FRAME_HDR_SIZE;
	size_t mad_len = 0;
	int ret;

	if (errlen)
		err[0] = '\0';
	if (frame_cap < MADTEXT_FRAME_MIN)
		return fail(err, errlen, -EMSGSIZE,
			    "frame buffer of %zu bytes is smaller than %d",
			    frame_cap, MADTEXT_FRAME_MIN);

	ret = scan_line(line, len, &pl, err, errlen);
	if (ret)
		return ret;
	ret = build_mad(&pl, mad, frame_cap - MADTEXT_FRAME_HDR_SIZE, &mad_len,
			err, errlen);
	if (ret)
		return ret;
	ret = build_umad_header(&pl, frame, mad[1], mad_len, err, errlen);
	if (ret)
		return ret;

	req->mad_len = mad_len;
	req->timeout_ms = has(&pl, KEY_TIMEOUT) ? (int)pl.num[KEY_TIMEOUT] : -1;
	req->retries = has(&pl, KEY_RETRIES) ? (int)pl.num[KEY_RETRIES] : -1;
	req->tid_given = has(&pl, KEY_TID);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Formatting                                                           */

/*
 * Everything but mad='s hex fits in this: 25 keys with their longest
 * values (dr= with 64 hops is the big one, ~260) come to under 800.
 */
#define FORMAT_FIXED_MAX	1024
/* Longest attribute/error name we print, so FORMAT_FIXED_MAX holds. */
#define FORMAT_NAME_MAX		40

size_t madtext_format_max(size_t mad_len)
{
	return FORMAT_FIXED_MAX + 2 * mad_len;
}

static inline char *put_str(char *p, const char *s)
{
	size_t n = strnlen(s, FORMAT_NAME_MAX);

	memcpy(p, s, n);
	return p + n;
}

/* Write a key literal including its '='; sizeof - 1 drops the NUL. */
#define PUT_KEY(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

static char *put_dec(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* "0x" and at least min_digits lowercase hex digits. */
static char *put_hex(char *p, uint64_t v, int min_digits)
{
	int digits = 1;

	while (digits < 16 && (v >> (4 * digits)))
		digits++;
	if (digits < min_digits)
		digits = min_digits;
	*p++ = '0';
	*p++ = 'x';
	while (digits--)
		*p++ = "0123456789abcdef"[(v >> (4 * digits)) & 0xf];
	return p;
}

static char *put_errno(char *p, uint32_t status)
{
	const char *name;

	if (status == ETIMEDOUT)
		return put_str(p, "timeout");
	name = status <= INT_MAX ? strerrorname_np((int)status) : NULL;
	if (name)
		return put_str(p, name);
	p = put_str(p, "errno");
	return put_dec(p, status);
}

ssize_t madtext_format(const void *frame, size_t mad_len, uint64_t tid,
		       char *buf, size_t cap)
{
	const struct ib_user_mad *hdr = frame;
	const ib_mad_addr_t *addr = &hdr->addr;
	/* libibmad's getters take a non-const buffer but only read it. */
	uint8_t *mad = (uint8_t *)frame + MADTEXT_FRAME_HDR_SIZE;
	int mgmt_class, method, attr;
	uint32_t status;
	const char *name;
	char *p = buf;
	uint8_t tid_be[8];
	int i;

	if (mad_len < MAD_HDR_SIZE)
		return -EINVAL;
	if (cap < madtext_format_max(mad_len))
		return -ENOSPC;

	mgmt_class = (int)mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F);
	method = mad[3];
	attr = (int)mad_get_field(mad, 0, IB_MAD_ATTRID_F);
	status = mad_get_field(mad, 0, IB_MAD_STATUS_F);

	p = PUT_KEY(p, "tid=");
	p = put_hex(p, tid, 1);

	p = PUT_KEY(p, " class=");
	name = madtext_class_name(mgmt_class);
	p = name ? put_str(p, name) : put_hex(p, (uint64_t)mgmt_class, 2);

	p = PUT_KEY(p, " version=");
	p = put_dec(p, mad_get_field(mad, 0, IB_MAD_CLASSVER_F));

	p = PUT_KEY(p, " method=");
	name = madtext_method_name(method);
	p = name ? put_str(p, name) : put_hex(p, (uint64_t)method, 2);

	p = PUT_KEY(p, " status=");
	if (mgmt_class == IB_SMI_DIRECT_CLASS)
		status &= DR_STATUS_MASK;
	p = put_hex(p, status, 4);

	p = PUT_KEY(p, " attr=");
	name = madtext_attr_name(mgmt_class, attr);
	p = name ? put_str(p, name) : put_hex(p, (uint64_t)attr, 4);

	p = PUT_KEY(p, " attrmod=");
	p = put_hex(p, mad_get_field(mad, 0, IB_MAD_ATTRMOD_F), 1);

	p = PUT_KEY(p, " lid=");
	p = put_hex(p, ntohs(addr->lid), 1);
	p = PUT_KEY(p, " sl=");
	p = put_dec(p, addr->sl);
	p = PUT_KEY(p, " qp=");
	p = put_dec(p, ntohl(addr->qpn));
	p = PUT_KEY(p, " qkey=");
	p = put_hex(p, ntohl(addr->qkey), 1);
	p = PUT_KEY(p, " pkey_index=");
	p = put_dec(p, addr->pkey_index);
	if (addr->path_bits) {
		p = PUT_KEY(p, " path_bits=");
		p = put_dec(p, addr->path_bits);
	}

	if (addr->grh_present) {
		char gid[INET6_ADDRSTRLEN];

		p = PUT_KEY(p, " gid=");
		if (inet_ntop(AF_INET6, addr->gid, gid, sizeof(gid))) {
			size_t n = strlen(gid);

			memcpy(p, gid, n);
			p += n;
		} else {
			p = hex_encode(p, addr->gid, sizeof(addr->gid));
		}
		p = PUT_KEY(p, " gid_index=");
		p = put_dec(p, addr->gid_index);
		p = PUT_KEY(p, " hop_limit=");
		p = put_dec(p, addr->hop_limit);
		p = PUT_KEY(p, " traffic_class=");
		p = put_dec(p, addr->traffic_class);
		p = PUT_KEY(p, " flow_label=");
		p = put_hex(p, ntohl(addr->flow_label), 1);
	}

	if (mgmt_class == IB_SMI_DIRECT_CLASS && mad_len >= IB_MAD_SIZE) {
		uint8_t path[IB_SUBNET_PATH_HOPS_MAX];
		uint32_t hops = mad_get_field(mad, 0, IB_DRSMP_HOPCNT_F);
		uint32_t drslid = mad_get_field(mad, 0, IB_DRSMP_DRSLID_F);
		uint32_t drdlid = mad_get_field(mad, 0, IB_DRSMP_DRDLID_F);
		uint32_t direction = mad_get_field(mad, 0, IB_DRSMP_DIRECTION_F);
		bool path_fits;

		/* Show the path in the notation dr= takes; a path dr= could
		 * not express (first byte not 0, too many hops, or nonzero
		 * bytes past the hop count, which dr= would clear) stays in
		 * mad= only, so the line still re-parses to the same frame. */
		mad_get_array(mad, 0, IB_DRSMP_PATH_F, path);
		path_fits = hops < IB_SUBNET_PATH_HOPS_MAX && path[0] == 0;
		for (i = (int)hops + 1; path_fits && i < IB_SUBNET_PATH_HOPS_MAX; i++)
			path_fits = path[i] == 0;
		if (path_fits) {
			p = PUT_KEY(p, " dr=0");
			for (i = 1; i <= (int)hops; i++) {
				*p++ = ',';
				p = put_dec(p, path[i]);
			}
		}
		if (drslid != PERMISSIVE_LID) {
			p = PUT_KEY(p, " drslid=");
			p = put_hex(p, drslid, 1);
		}
		if (drdlid != PERMISSIVE_LID) {
			p = PUT_KEY(p, " drdlid=");
			p = put_hex(p, drdlid, 1);
		}
		/* Only when D disagrees with the method, since parsing
		 * derives it from the method otherwise. */
		if (direction != !!(method & IB_MAD_RESPONSE)) {
			p = PUT_KEY(p, " direction=");
			p = put_dec(p, direction);
		}
	}

	if (class_is_vendor2(mgmt_class) && mad_len >= IB_VENDOR_RANGE2_DATA_OFFS) {
		p = PUT_KEY(p, " oui=");
		p = put_hex(p, mad_get_field(mad, 0, IB_VEND2_OUI_F), 6);
	}

	if (hdr->status) {
		p = PUT_KEY(p, " error=");
		p = put_errno(p, hdr->status);
	}

	p = PUT_KEY(p, " len=");
	p = put_dec(p, mad_len);

	/* The TID inside mad= is the one shown in tid=, not the daemon's. */
	for (i = 0; i < 8; i++)
		tid_be[i] = (uint8_t)(tid >> (56 - 8 * i));
	p = PUT_KEY(p, " mad=");
	p = hex_encode(p, mad, 8);
	p = hex_encode(p, tid_be, 8);
	p = hex_encode(p, mad + 16, mad_len - 16);
	*p++ = '\n';
	return p - buf;
}
