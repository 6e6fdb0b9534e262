/*
 * madnames: the names the text format gives management classes, methods
 * and attributes (per class), and their lookups both ways.
 */
#include "umadfs/mad/madtext.h"

#include <infiniband/mad.h>

#include "codec_priv.h"

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

struct name_table {
	const struct name_entry *entries;
	size_t count;
};

#define NAME_TABLE(t) { t, sizeof(t) / sizeof((t)[0]) }

static const struct name_table classes = NAME_TABLE(class_names);
static const struct name_table methods = NAME_TABLE(method_names);

static const struct name_table *attr_table(int mgmt_class)
{
	static const struct name_table smi = NAME_TABLE(smi_attr_names);
	static const struct name_table sa = NAME_TABLE(sa_attr_names);
	static const struct name_table pma = NAME_TABLE(pma_attr_names);
	static const struct name_table bm = NAME_TABLE(bm_attr_names);
	static const struct name_table dm = NAME_TABLE(dm_attr_names);
	static const struct name_table cm = NAME_TABLE(cm_attr_names);
	static const struct name_table cc = NAME_TABLE(cc_attr_names);
	static const struct name_table common = NAME_TABLE(common_attr_names);

	switch (mgmt_class) {
	case IB_SMI_CLASS:
	case IB_SMI_DIRECT_CLASS:
		return &smi;
	case IB_SA_CLASS:
		return &sa;
	case IB_PERFORMANCE_CLASS:
		return &pma;
	case IB_BOARD_MGMT_CLASS:
		return &bm;
	case IB_DEVICE_MGMT_CLASS:
		return &dm;
	case IB_CM_CLASS:
		return &cm;
	case IB_CC_CLASS:
		return &cc;
	default:
		return &common;
	}
}

static int lookup_name(const struct name_table *t, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < t->count; i++)
		if (codec_name_equal(t->entries[i].name, s, n))
			return t->entries[i].value;
	return -1;
}

static const char *lookup_value(const struct name_table *t, int value)
{
	size_t i;

	for (i = 0; i < t->count; i++)
		if (t->entries[i].value == value)
			return t->entries[i].name;
	return NULL;
}

int madtext_class_from_name(const char *s, size_t n)
{
	return lookup_name(&classes, s, n);
}

const char *madtext_class_name(int mgmt_class)
{
	return lookup_value(&classes, mgmt_class);
}

int madtext_method_from_name(const char *s, size_t n)
{
	return lookup_name(&methods, s, n);
}

const char *madtext_method_name(int method)
{
	return lookup_value(&methods, method);
}

int madtext_attr_from_name(int mgmt_class, const char *s, size_t n)
{
	return lookup_name(attr_table(mgmt_class), s, n);
}

const char *madtext_attr_name(int mgmt_class, int attr_id)
{
	return lookup_value(attr_table(mgmt_class), attr_id);
}
