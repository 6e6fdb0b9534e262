// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the text codec (src/mad/: madnames.c, textscan.c,
 * textbuild.c, textformat.c).
 *
 * Field positions are checked through libibmad's accessors, independently
 * of how the codec writes them.  `test_madtext --bench` instead runs a
 * micro-benchmark (not part of `meson test`): ns per parse and per format.
 */
#include "check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/mad/madtext.h"

#define FRAME_CAP (UMAD_FRAME_HDR_SIZE + 8192)

static uint8_t frame[FRAME_CAP];
static struct madtext_request req;
static char err[256];

static struct ib_user_mad *hdr(void *f)
{
	return f;
}

static uint8_t *mad_of(void *f)
{
	return (uint8_t *)f + UMAD_FRAME_HDR_SIZE;
}

static uint32_t field(void *f, enum MAD_FIELDS fld)
{
	return mad_get_field(mad_of(f), 0, fld);
}

static int parse(const char *line)
{
	memset(frame, 0xa5, sizeof(frame));	/* catch bytes left unset */
	memset(&req, 0x5a, sizeof(req));
	err[0] = '\0';
	return madtext_parse(line, strlen(line), frame, sizeof(frame), &req,
			     err, sizeof(err));
}

/* Parse must succeed; print the reason if it does not. */
#define PARSE_OK(line)                                                       \
	do {                                                                 \
		int r_ = parse(line);                                        \
		if (r_) {                                                    \
			fprintf(stderr, "%s:%d: parse(\"%s\") = %d: %s\n",   \
				__FILE__, __LINE__, (line), r_, err);        \
			check_failures++;                                    \
		}                                                            \
	} while (0)

/* Parse must fail with want and a reason containing reason. */
#define PARSE_FAILS(line, len, want, reason)                                 \
	do {                                                                 \
		int r_;                                                      \
		err[0] = '\0';                                               \
		r_ = madtext_parse((line), (len), frame, sizeof(frame),      \
				   &req, err, sizeof(err));                  \
		if (r_ != (want) || !strstr(err, (reason))) {                \
			fprintf(stderr,                                      \
				"%s:%d: parse(\"%s\") = %d \"%s\", want %d "  \
				"\"...%s...\"\n", __FILE__, __LINE__, (line), \
				r_, err, (want), (reason));                  \
			check_failures++;                                    \
		}                                                            \
	} while (0)
#define PARSE_FAILS_STR(line, want, reason) \
	PARSE_FAILS(line, strlen(line), want, reason)

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static void test_dr_nodeinfo(void)
{
	uint8_t path[64];

	PARSE_OK("class=smi-dr method=get attr=NodeInfo dr=0,1,3");
	CHECK_INT(req.mad_len, 256);
	CHECK_INT(req.timeout_ms, -1);
	CHECK_INT(req.retries, -1);
	CHECK(!req.tid_given);
	CHECK_INT(field(frame, IB_MAD_BASEVER_F), 1);
	CHECK_INT(field(frame, IB_MAD_MGMTCLASS_F), IB_SMI_DIRECT_CLASS);
	CHECK_INT(field(frame, IB_MAD_CLASSVER_F), 1);
	CHECK_INT(field(frame, IB_MAD_METHOD_F), IB_MAD_METHOD_GET);
	CHECK_INT(field(frame, IB_MAD_RESPONSE_F), 0);
	CHECK_INT(field(frame, IB_DRSMP_DIRECTION_F), 0);
	CHECK_INT(field(frame, IB_DRSMP_STATUS_F), 0);
	CHECK_INT(field(frame, IB_DRSMP_HOPCNT_F), 2);
	CHECK_INT(field(frame, IB_DRSMP_HOPPTR_F), 0);
	CHECK_INT(field(frame, IB_MAD_ATTRID_F), IB_ATTR_NODE_INFO);
	CHECK_INT(field(frame, IB_MAD_ATTRMOD_F), 0);
	CHECK_INT(mad_get_field64(mad_of(frame), 0, IB_MAD_TRID_F), 0);
	CHECK_INT(field(frame, IB_DRSMP_DRSLID_F), 0xffff);
	CHECK_INT(field(frame, IB_DRSMP_DRDLID_F), 0xffff);
	mad_get_array(mad_of(frame), 0, IB_DRSMP_PATH_F, path);
	CHECK_INT(path[0], 0);
	CHECK_INT(path[1], 1);
	CHECK_INT(path[2], 3);
	CHECK(all_zero(path + 3, sizeof(path) - 3));
	mad_get_array(mad_of(frame), 0, IB_DRSMP_RPATH_F, path);
	CHECK(all_zero(path, sizeof(path)));
	CHECK(all_zero(mad_of(frame) + IB_SMP_DATA_OFFS, IB_SMP_DATA_SIZE));
	/* Address: permissive LID, QP0, no Q_Key, no GRH. */
	CHECK_INT(ntohs(hdr(frame)->addr.lid), 0xffff);
	CHECK_INT(ntohl(hdr(frame)->addr.qpn), 0);
	CHECK_INT(ntohl(hdr(frame)->addr.qkey), 0);
	CHECK_INT(hdr(frame)->addr.grh_present, 0);
	CHECK_INT(hdr(frame)->addr.sl, 0);
	CHECK_INT(hdr(frame)->addr.pkey_index, 0);
	CHECK_INT(hdr(frame)->agent_id, 0);
	CHECK_INT(hdr(frame)->status, 0);
	CHECK_INT(hdr(frame)->timeout_ms, 0);
	CHECK_INT(hdr(frame)->retries, 0);
	CHECK_INT(hdr(frame)->length, 64 + 256);

	/* dr= alone implies the class; names are case-insensitive. */
	PARSE_OK("dr=0,1,3 METHOD=Get attr=nodeinfo");
	CHECK_INT(field(frame, IB_MAD_MGMTCLASS_F), IB_SMI_DIRECT_CLASS);
	CHECK_INT(field(frame, IB_DRSMP_HOPCNT_F), 2);
	PARSE_OK("class=DR method=get attr=NodeInfo dr=0");
	CHECK_INT(field(frame, IB_DRSMP_HOPCNT_F), 0);
	CHECK_INT(ntohs(hdr(frame)->addr.lid), 0xffff);

	/* The longest path: 63 hops. */
	{
		char line[400] = "method=get attr=NodeInfo dr=0";
		int i;

		for (i = 1; i <= 63; i++)
			snprintf(line + strlen(line), sizeof(line) - strlen(line),
				 ",%d", i % 36 + 1);
		PARSE_OK(line);
		CHECK_INT(field(frame, IB_DRSMP_HOPCNT_F), 63);
		mad_get_array(mad_of(frame), 0, IB_DRSMP_PATH_F, path);
		CHECK_INT(path[63], 63 % 36 + 1);
		strcat(line, ",1");
		PARSE_FAILS_STR(line, -EINVAL, "more than 63 hops");
	}

	/* drslid/drdlid override; direction; status is 15 bits; mkey. */
	PARSE_OK("dr=0,2 method=set attr=PortInfo attrmod=2 drslid=5 drdlid=0x7 "
		 "status=0x7fff mkey=0x1122334455667788 lid=9");
	CHECK_INT(field(frame, IB_DRSMP_DRSLID_F), 5);
	CHECK_INT(field(frame, IB_DRSMP_DRDLID_F), 7);
	CHECK_INT(field(frame, IB_MAD_STATUS_F), 0x7fff);
	CHECK_INT(field(frame, IB_DRSMP_DIRECTION_F), 0);
	CHECK_INT(mad_get_field64(mad_of(frame), 0, IB_MAD_MKEY_F),
		  0x1122334455667788ULL);
	CHECK_INT(ntohs(hdr(frame)->addr.lid), 9);
	PARSE_OK("dr=0,2 method=getresp attr=PortInfo");
	CHECK_INT(field(frame, IB_DRSMP_DIRECTION_F), 1);
	CHECK_INT(field(frame, IB_MAD_RESPONSE_F), 1);
	PARSE_OK("dr=0,2 method=getresp attr=PortInfo direction=0");
	CHECK_INT(field(frame, IB_DRSMP_DIRECTION_F), 0);
	PARSE_OK("dr=0,2 method=get attr=PortInfo direction=1");
	CHECK_INT(field(frame, IB_DRSMP_DIRECTION_F), 1);
}

static void test_names_and_numbers(void)
{
	PARSE_OK("class=0x81 method=0x1 attr=0x11 dr=0");
	CHECK_INT(field(frame, IB_MAD_MGMTCLASS_F), 0x81);
	CHECK_INT(field(frame, IB_MAD_ATTRID_F), 0x11);
	PARSE_OK("class=129 method=1 attr=17 dr=0");
	CHECK_INT(field(frame, IB_MAD_MGMTCLASS_F), 0x81);
	CHECK_INT(field(frame, IB_MAD_ATTRID_F), 17);

	CHECK_INT(madtext_class_from_name("smi", 3), IB_SMI_CLASS);
	CHECK_INT(madtext_class_from_name("SMI-DR", 6), IB_SMI_DIRECT_CLASS);
	CHECK_INT(madtext_class_from_name("dr", 2), IB_SMI_DIRECT_CLASS);
	CHECK_INT(madtext_class_from_name("sa", 2), IB_SA_CLASS);
	CHECK_INT(madtext_class_from_name("perf", 4), IB_PERFORMANCE_CLASS);
	CHECK_INT(madtext_class_from_name("Pma", 3), IB_PERFORMANCE_CLASS);
	CHECK_INT(madtext_class_from_name("bm", 2), IB_BOARD_MGMT_CLASS);
	CHECK_INT(madtext_class_from_name("dm", 2), IB_DEVICE_MGMT_CLASS);
	CHECK_INT(madtext_class_from_name("cm", 2), IB_CM_CLASS);
	CHECK_INT(madtext_class_from_name("snmp", 4), IB_SNMP_CLASS);
	CHECK_INT(madtext_class_from_name("smix", 3), IB_SMI_CLASS);	/* n counts */
	CHECK_INT(madtext_class_from_name("smi", 2), -1);
	CHECK_INT(madtext_class_from_name("nope", 4), -1);
	CHECK_STR(madtext_class_name(IB_SMI_DIRECT_CLASS), "smi-dr");
	CHECK_STR(madtext_class_name(IB_PERFORMANCE_CLASS), "perf");
	CHECK(madtext_class_name(0x0a) == NULL);

	CHECK_INT(madtext_method_from_name("GetTableResp", 12),
		  IB_MAD_METHOD_GET_TABLE_RESPONSE);
	CHECK_INT(madtext_method_from_name("trapress", 8),
		  IB_MAD_METHOD_TRAP_REPRESS);
	CHECK_STR(madtext_method_name(IB_MAD_METHOD_GET_RESPONSE), "getresp");
	CHECK_STR(madtext_method_name(IB_MAD_METHOD_GET_TRACE_TABLE),
		  "gettraceable");
	CHECK_STR(madtext_method_name(IB_MAD_METHOD_DELETE_RESPONSE),
		  "deleteresp");
	CHECK(madtext_method_name(0x7e) == NULL);

	/* Attribute ids overlap between classes. */
	CHECK_STR(madtext_attr_name(IB_SMI_CLASS, 0x11), "NodeInfo");
	CHECK_STR(madtext_attr_name(IB_SMI_DIRECT_CLASS, 0x11), "NodeInfo");
	CHECK_STR(madtext_attr_name(IB_SA_CLASS, 0x11), "NodeRecord");
	CHECK_STR(madtext_attr_name(IB_PERFORMANCE_CLASS, 0x11),
		  "PortSamplesResult");
	CHECK_STR(madtext_attr_name(IB_SA_CLASS, IB_SA_ATTR_PATHRECORD),
		  "PathRecord");
	CHECK_STR(madtext_attr_name(IB_PERFORMANCE_CLASS, IB_GSI_PORT_COUNTERS_EXT),
		  "PortCountersExtended");
	CHECK_STR(madtext_attr_name(0x0a, 0x0001), "ClassPortInfo");
	CHECK(madtext_attr_name(IB_SMI_CLASS, 0x9999) == NULL);
	CHECK_INT(madtext_attr_from_name(IB_SA_CLASS, "mcmemberrecord", 14),
		  IB_SA_ATTR_MCRECORD);
	CHECK_INT(madtext_attr_from_name(IB_SMI_CLASS, "NodeRecord", 10), -1);

	CHECK(mad_method_is_response(IB_MAD_METHOD_GET_RESPONSE));
	CHECK(mad_method_is_response(IB_MAD_METHOD_TRAP_REPRESS));
	CHECK(!mad_method_is_response(IB_MAD_METHOD_TRAP));
	CHECK(mad_class_uses_rmpp(IB_SA_CLASS));
	CHECK(mad_class_uses_rmpp(0x30));
	CHECK(!mad_class_uses_rmpp(IB_PERFORMANCE_CLASS));
}

static void test_lid_routed_and_keys(void)
{
	const uint8_t gid[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
				  0x00, 0x02, 0xc9, 0x03, 0x00, 0x01, 0x02, 0x03 };

	PARSE_OK("class=smi method=get attr=PortInfo attrmod=1 lid=5");
	CHECK_INT(field(frame, IB_MAD_MGMTCLASS_F), IB_SMI_CLASS);
	CHECK_INT(field(frame, IB_MAD_CLASSVER_F), 1);
	CHECK_INT(field(frame, IB_MAD_ATTRMOD_F), 1);
	CHECK_INT(ntohs(hdr(frame)->addr.lid), 5);
	CHECK_INT(ntohl(hdr(frame)->addr.qpn), 0);
	CHECK_INT(ntohl(hdr(frame)->addr.qkey), 0);

	/* SA: version 2, QP1 and its Q_Key, SA header fields. */
	PARSE_OK("class=sa method=gettable attr=NodeRecord lid=1 comp_mask=0x1 "
		 "smkey=0x0102030405060708 attr_offset=7");
	CHECK_INT(field(frame, IB_MAD_CLASSVER_F), 2);
	CHECK_INT(field(frame, IB_MAD_METHOD_F), IB_MAD_METHOD_GET_TABLE);
	CHECK_INT(field(frame, IB_MAD_ATTRID_F), IB_SA_ATTR_NODERECORD);
	CHECK_INT(mad_get_field64(mad_of(frame), 0, IB_SA_COMPMASK_F), 1);
	CHECK_INT(mad_get_field64(mad_of(frame), 0, IB_SA_MKEY_F),
		  0x0102030405060708ULL);
	CHECK_INT(field(frame, IB_SA_ATTROFFS_F), 7);
	CHECK_INT(ntohl(hdr(frame)->addr.qpn), 1);
	CHECK_INT(ntohl(hdr(frame)->addr.qkey), IB_DEFAULT_QP1_QKEY);

	/* Version defaults per class, and the override. */
	PARSE_OK("class=perf method=get attr=PortCounters lid=2");
	CHECK_INT(field(frame, IB_MAD_CLASSVER_F), 1);
	PARSE_OK("class=cm method=send attr=ConnectRequest lid=2");
	CHECK_INT(field(frame, IB_MAD_CLASSVER_F), 2);
	CHECK_INT(field(frame, IB_MAD_ATTRID_F), 0x10);
	PARSE_OK("class=dm method=get attr=IOUnitInfo lid=2");
	CHECK_INT(field(frame, IB_MAD_CLASSVER_F), 1);
	PARSE_OK("class=0x0a method=get attr=1 lid=2 version=3");
	CHECK_INT(field(frame, IB_MAD_CLASSVER_F), 3);
	CHECK_INT(field(frame, IB_MAD_MGMTCLASS_F), 0x0a);

	/* tid, status, attrmod, and every address key. */
	PARSE_OK("\tclass=perf  method=get attr=PortCounters lid=0x1234 "
		 "tid=0x1122334455667788 status=0x001c attrmod=0xffffffff sl=15 "
		 "pkey_index=3 path_bits=0x7f qp=5 qkey=0x1234 timeout=100 retries=3 ");
	CHECK(req.tid_given);
	CHECK_INT(req.timeout_ms, 100);
	CHECK_INT(req.retries, 3);
	CHECK_INT(hdr(frame)->timeout_ms, 100);
	CHECK_INT(hdr(frame)->retries, 3);
	CHECK_INT(mad_get_field64(mad_of(frame), 0, IB_MAD_TRID_F),
		  0x1122334455667788ULL);
	CHECK_INT(field(frame, IB_MAD_STATUS_F), 0x1c);
	CHECK_INT(field(frame, IB_MAD_ATTRMOD_F), 0xffffffff);
	CHECK_INT(ntohs(hdr(frame)->addr.lid), 0x1234);
	CHECK_INT(hdr(frame)->addr.sl, 15);
	CHECK_INT(hdr(frame)->addr.pkey_index, 3);
	CHECK_INT(hdr(frame)->addr.path_bits, 0x7f);
	CHECK_INT(ntohl(hdr(frame)->addr.qpn), 5);
	CHECK_INT(ntohl(hdr(frame)->addr.qkey), 0x1234);
	CHECK_INT(hdr(frame)->addr.grh_present, 0);

	/* qp=0 on a GSI class: Q_Key default follows the QP. */
	PARSE_OK("class=sa method=get attr=ClassPortInfo lid=1 qp=0");
	CHECK_INT(ntohl(hdr(frame)->addr.qkey), 0);

	/* GRH: IPv6 form, defaults for the rest. */
	PARSE_OK("class=sa method=get attr=PathRecord lid=1 gid=fe80::2:c903:1:203");
	CHECK_INT(hdr(frame)->addr.grh_present, 1);
	CHECK(memcmp(hdr(frame)->addr.gid, gid, 16) == 0);
	CHECK_INT(hdr(frame)->addr.gid_index, 0);
	CHECK_INT(hdr(frame)->addr.hop_limit, 255);
	CHECK_INT(hdr(frame)->addr.traffic_class, 0);
	CHECK_INT(ntohl(hdr(frame)->addr.flow_label), 0);
	/* 32 hex digits, and every GRH key. */
	PARSE_OK("class=sa method=get attr=PathRecord lid=1 "
		 "gid=fe800000000000000002C90300010203 gid_index=2 hop_limit=1 "
		 "traffic_class=0x20 flow_label=0xfffff");
	CHECK(memcmp(hdr(frame)->addr.gid, gid, 16) == 0);
	CHECK_INT(hdr(frame)->addr.gid_index, 2);
	CHECK_INT(hdr(frame)->addr.hop_limit, 1);
	CHECK_INT(hdr(frame)->addr.traffic_class, 0x20);
	CHECK_INT(ntohl(hdr(frame)->addr.flow_label), 0xfffff);
	PARSE_OK("class=sa method=get attr=PathRecord lid=1 "
		 "gid=0xfe800000000000000002c90300010203");
	CHECK(memcmp(hdr(frame)->addr.gid, gid, 16) == 0);

	/* Vendor class with OUI (libibmad's IB_VEND2_OUI_F). */
	PARSE_OK("class=0x32 method=get attr=0x10 lid=3 oui=0x001405");
	CHECK_INT(field(frame, IB_VEND2_OUI_F), IB_OPENIB_OUI);
	CHECK_INT(mad_of(frame)[37], 0x00);
	CHECK_INT(mad_of(frame)[38], 0x14);
	CHECK_INT(mad_of(frame)[39], 0x05);

	/* Output-only keys are accepted and ignored. */
	PARSE_OK("class=perf method=get attr=PortCounters lid=2 error=timeout len=256");
	CHECK_INT(hdr(frame)->status, 0);
	CHECK_INT(req.mad_len, 256);
}

/* data= of n bytes 0x01.. lands at off, rest of the area zero. */
static void check_data_at(const char *prefix, size_t off, size_t area)
{
	char line[1024];
	uint8_t want[8] = { 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04 };

	snprintf(line, sizeof(line), "%s data=DEADbeef01020304", prefix);
	PARSE_OK(line);
	if (memcmp(mad_of(frame) + off, want, sizeof(want)) != 0) {
		fprintf(stderr, "%s:%d: data= not at offset %zu for \"%s\"\n",
			__FILE__, __LINE__, off, prefix);
		check_failures++;
	}
	CHECK(all_zero(mad_of(frame) + off + 8, area - 8));
	CHECK_INT(req.mad_len, 256);
	CHECK_INT(madtext_data_offset(mad_of(frame)[1]), off);
	CHECK_INT(madtext_data_size(mad_of(frame)[1]), area);
}

static void test_data_placement(void)
{
	char line[1200];
	size_t i;

	check_data_at("class=smi method=set attr=PortInfo lid=1", 64, 64);
	check_data_at("dr=0,1 method=set attr=PortInfo", 64, 64);
	check_data_at("class=sa method=set attr=InformInfo lid=1", 56, 200);
	check_data_at("class=perf method=set attr=PortCounters lid=1", 64, 192);
	check_data_at("class=0x30 method=get attr=1 lid=1", 40, 216);
	check_data_at("class=0x4f method=get attr=1 lid=1", 40, 216);
	check_data_at("class=0x09 method=get attr=1 lid=1", 24, 232);
	check_data_at("class=cm method=send attr=ConnectRequest lid=1", 24, 232);
	check_data_at("class=dm method=get attr=IOUnitInfo lid=1", 64, 192);
	check_data_at("class=bm method=get attr=BKeyInfo lid=1", 64, 192);
	/* An SMP's data must not spill into the DR paths. */
	PARSE_OK("dr=0,1 method=set attr=PortInfo data=ff");
	CHECK(all_zero(mad_of(frame) + 128 + 2, 126));

	/* Exactly full is fine; one more byte is not (no RMPP). */
	strcpy(line, "class=perf method=set attr=PortCounters lid=1 data=");
	for (i = 0; i < 192; i++)
		strcat(line, "ab");
	PARSE_OK(line);
	CHECK_INT(mad_of(frame)[255], 0xab);
	strcat(line, "ab");
	PARSE_FAILS_STR(line, -EMSGSIZE, "carries at most 192");

	/* SA data past one MAD makes an RMPP send: header Active, DATA. */
	strcpy(line, "class=sa method=gettableresp attr=NodeRecord lid=1 data=");
	for (i = 0; i < 300; i++)
		strcat(line, "5a");
	PARSE_OK(line);
	CHECK_INT(req.mad_len, 56 + 300);
	CHECK_INT(hdr(frame)->length, 64 + 56 + 300);
	CHECK_INT(field(frame, IB_SA_RMPP_VERS_F), 1);
	CHECK_INT(field(frame, IB_SA_RMPP_TYPE_F), IB_RMPP_TYPE_DATA);
	CHECK_INT(field(frame, IB_SA_RMPP_FLAGS_F) & IB_RMPP_FLAG_ACTIVE, 1);
	CHECK_INT(mad_of(frame)[56], 0x5a);
	CHECK_INT(mad_of(frame)[56 + 299], 0x5a);
}

static void test_mad_and_override(void)
{
	char line[2400];
	uint8_t orig[256];
	size_t i;

	for (i = 0; i < sizeof(orig); i++)
		orig[i] = (uint8_t)(i * 7 + 3);
	orig[0] = 1;			/* base version */
	orig[1] = IB_PERFORMANCE_CLASS;
	orig[2] = 1;
	orig[3] = IB_MAD_METHOD_GET;

	strcpy(line, "lid=4 mad=");
	for (i = 0; i < sizeof(orig); i++)
		sprintf(line + strlen(line), "%02x", orig[i]);
	PARSE_OK(line);
	CHECK(memcmp(mad_of(frame), orig, 256) == 0);
	CHECK(!req.tid_given);

	/* Keys override the fields they name, nothing else. */
	strcat(line, " method=getresp status=0x0004 attrmod=9");
	PARSE_OK(line);
	CHECK_INT(mad_of(frame)[3], IB_MAD_METHOD_GET_RESPONSE);
	CHECK_INT(field(frame, IB_MAD_STATUS_F), 4);
	CHECK_INT(field(frame, IB_MAD_ATTRMOD_F), 9);
	CHECK(memcmp(mad_of(frame) + 8, orig + 8, 12) == 0);	/* tid, attr */
	CHECK(memcmp(mad_of(frame) + 24, orig + 24, 232) == 0);

	/* data= goes after mad= and replaces the whole data area. */
	strcat(line, " data=0102");
	PARSE_OK(line);
	CHECK(memcmp(mad_of(frame) + 24, orig + 24, 40) == 0);
	CHECK_INT(mad_of(frame)[64], 1);
	CHECK_INT(mad_of(frame)[65], 2);
	CHECK(all_zero(mad_of(frame) + 66, 190));

	/* Short mad= is zero-padded; class/method come from it. */
	PARSE_OK("mad=01040181 lid=1");
	CHECK_INT(field(frame, IB_MAD_MGMTCLASS_F), IB_PERFORMANCE_CLASS);
	CHECK_INT(mad_of(frame)[3], IB_MAD_METHOD_GET_RESPONSE);
	CHECK(all_zero(mad_of(frame) + 4, 252));
	CHECK_INT(req.mad_len, 256);

	/* Longer than one MAD: only RMPP classes with the Active flag. */
	{
		uint8_t rmpp[400] = { 1, IB_SA_CLASS, 2, IB_MAD_METHOD_GET_TABLE_RESPONSE };

		mad_set_field(rmpp, 0, IB_SA_RMPP_VERS_F, 1);
		mad_set_field(rmpp, 0, IB_SA_RMPP_TYPE_F, IB_RMPP_TYPE_DATA);
		mad_set_field(rmpp, 0, IB_SA_RMPP_FLAGS_F, IB_RMPP_FLAG_ACTIVE);
		rmpp[399] = 0x77;
		strcpy(line, "lid=1 mad=");
		for (i = 0; i < sizeof(rmpp); i++)
			sprintf(line + strlen(line), "%02x", rmpp[i]);
		PARSE_OK(line);
		CHECK_INT(req.mad_len, 400);
		CHECK_INT(hdr(frame)->length, 64 + 400);
		CHECK_INT(mad_of(frame)[399], 0x77);
		/* class= overrides mad='s class: PMA has no RMPP. */
		strcat(line, " class=perf");
		PARSE_FAILS_STR(line, -EMSGSIZE, "class perf does not use RMPP");
		/* RMPP flags 0x01 -> 0x00 (byte 26, hex digits 52-53). */
		line[strlen(line) - strlen(" class=perf")] = '\0';
		CHECK(line[10 + 53] == '1');
		line[10 + 53] = '0';
		PARSE_FAILS_STR(line, -EINVAL, "not Active");
	}
}

/* format -> parse -> format must give the same line and the same frame. */
static void round_trip(const void *f, size_t mad_len, uint64_t tid,
		       const char *must_contain, int line_no)
{
	static char line1[UMAD_FRAME_HDR_SIZE * 2 + 20000];
	static char line2[sizeof(line1)];
	static uint8_t frame2[FRAME_CAP];
	const struct ib_user_mad *h1 = f;
	struct ib_user_mad *h2 = (struct ib_user_mad *)frame2;
	uint8_t want_mad[8192];
	ssize_t n1, n2;
	int r;

	n1 = madtext_format(f, mad_len, tid, 0, line1, sizeof(line1));
	if (n1 <= 0 || line1[n1 - 1] != '\n' || memchr(line1, '\n', n1 - 1)) {
		fprintf(stderr, "test_madtext.c:%d: format gave %zd\n", line_no, n1);
		check_failures++;
		return;
	}
	line1[n1] = '\0';
	if (must_contain && !strstr(line1, must_contain)) {
		fprintf(stderr, "test_madtext.c:%d: \"%s\" lacks \"%s\"\n",
			line_no, line1, must_contain);
		check_failures++;
	}
	r = madtext_parse(line1, n1 - 1, frame2, sizeof(frame2), &req, err,
			  sizeof(err));
	if (r) {
		fprintf(stderr, "test_madtext.c:%d: re-parse of \"%s\": %s\n",
			line_no, line1, err);
		check_failures++;
		return;
	}
	/* Same MAD (with the shown TID), same address. */
	memcpy(want_mad, (const uint8_t *)f + 64, mad_len);
	mad_set_field64(want_mad, 0, IB_MAD_TRID_F, tid);
	if (req.mad_len != mad_len || memcmp(frame2 + 64, want_mad, mad_len)) {
		fprintf(stderr, "test_madtext.c:%d: MAD differs after re-parse\n",
			line_no);
		check_failures++;
	}
	if (memcmp(&h2->addr, &h1->addr, sizeof(h1->addr))) {
		fprintf(stderr, "test_madtext.c:%d: address differs after re-parse\n",
			line_no);
		check_failures++;
	}
	/* error= is output-only: the status comes from the kernel. */
	h2->status = h1->status;
	n2 = madtext_format(frame2, req.mad_len, tid, 0, line2, sizeof(line2));
	if (n2 != n1 || memcmp(line1, line2, (size_t)n1)) {
		line2[n2 > 0 ? n2 : 0] = '\0';
		fprintf(stderr, "test_madtext.c:%d: round trip differs:\n  %s  %s",
			line_no, line1, line2);
		check_failures++;
	}
}

static void fill_random(uint8_t *p, size_t n, unsigned int seed)
{
	while (n--) {
		seed = seed * 1103515245 + 12345;
		*p++ = (uint8_t)(seed >> 16);
	}
}

static void test_round_trips(void)
{
	static uint8_t f[FRAME_CAP];
	struct ib_user_mad *h = (struct ib_user_mad *)f;
	uint8_t *m = f + 64;
	uint8_t path[64] = { 0, 1, 3 };
	static char line[2000];
	ssize_t n;

	/* DR NodeInfo response as the kernel returns it. */
	memset(f, 0, sizeof(f));
	fill_random(m + 64, 64, 1);
	mad_set_field(m, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(m, 0, IB_MAD_MGMTCLASS_F, IB_SMI_DIRECT_CLASS);
	mad_set_field(m, 0, IB_MAD_CLASSVER_F, 1);
	mad_set_field(m, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
	mad_set_field(m, 0, IB_MAD_RESPONSE_F, 1);
	mad_set_field(m, 0, IB_DRSMP_DIRECTION_F, 1);
	mad_set_field(m, 0, IB_DRSMP_HOPCNT_F, 2);
	mad_set_field(m, 0, IB_DRSMP_HOPPTR_F, 3);
	mad_set_field(m, 0, IB_MAD_ATTRID_F, IB_ATTR_NODE_INFO);
	mad_set_field64(m, 0, IB_MAD_TRID_F, 0xabcd000000001234ULL);
	mad_set_field(m, 0, IB_DRSMP_DRSLID_F, 0xffff);
	mad_set_field(m, 0, IB_DRSMP_DRDLID_F, 0xffff);
	mad_set_array(m, 0, IB_DRSMP_PATH_F, path);
	path[1] = 2;
	path[2] = 4;
	mad_set_array(m, 0, IB_DRSMP_RPATH_F, path);
	h->addr.lid = htons(0xffff);
	round_trip(f, 256, 0x1234,
		   "tid=0x1234 class=smi-dr version=1 method=getresp status=0x0000 "
		   "attr=NodeInfo attrmod=0x0 lid=0xffff sl=0 qp=0 qkey=0x0 "
		   "pkey_index=0 dr=0,1,3 len=256 mad=01810181800003020000000000001234",
		   __LINE__);
	/* Same with D disagreeing, odd DrSLID and a path dr= cannot show. */
	mad_set_field(m, 0, IB_DRSMP_DIRECTION_F, 0);
	mad_set_field(m, 0, IB_DRSMP_DRSLID_F, 0x12);
	round_trip(f, 256, 7, " drslid=0x12 direction=0 ", __LINE__);
	m[128] = 9;
	round_trip(f, 256, 7, NULL, __LINE__);
	n = madtext_format(f, 256, 7, 0, line, sizeof(line));
	CHECK(n > 0);
	CHECK(!memmem(line, (size_t)n, " dr=", 4));

	/* SA GetTableResp reassembled by RMPP, longer than 256, via a GRH. */
	memset(f, 0, sizeof(f));
	fill_random(m + 56, 1000 - 56, 2);
	mad_set_field(m, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(m, 0, IB_MAD_MGMTCLASS_F, IB_SA_CLASS);
	mad_set_field(m, 0, IB_MAD_CLASSVER_F, 2);
	mad_set_field(m, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET_TABLE);
	mad_set_field(m, 0, IB_MAD_RESPONSE_F, 1);
	mad_set_field(m, 0, IB_MAD_ATTRID_F, IB_SA_ATTR_NODERECORD);
	mad_set_field(m, 0, IB_SA_RMPP_VERS_F, 1);
	mad_set_field(m, 0, IB_SA_RMPP_TYPE_F, IB_RMPP_TYPE_DATA);
	mad_set_field(m, 0, IB_SA_RMPP_FLAGS_F,
		      IB_RMPP_FLAG_ACTIVE | IB_RMPP_FLAG_FIRST);
	mad_set_field(m, 0, IB_SA_RMPP_SEGNUM_F, 1);
	mad_set_field(m, 0, IB_SA_ATTROFFS_F, 14);
	h->addr.lid = htons(1);
	h->addr.qpn = htonl(1);
	h->addr.qkey = htonl(IB_DEFAULT_QP1_QKEY);
	h->addr.sl = 3;
	h->addr.pkey_index = 1;
	h->addr.path_bits = 2;
	h->addr.grh_present = 1;
	h->addr.gid_index = 1;
	h->addr.hop_limit = 64;
	h->addr.traffic_class = 5;
	h->addr.flow_label = htonl(0x12345);
	memcpy(h->addr.gid, "\xfe\x80\0\0\0\0\0\0\0\x02\xc9\x03\0\x01\x02\x03", 16);
	round_trip(f, 1000, 0x99,
		   "class=sa version=2 method=gettableresp status=0x0000 "
		   "attr=NodeRecord attrmod=0x0 lid=0x1 sl=3 qp=1 qkey=0x80010000 "
		   "pkey_index=1 path_bits=2 gid=fe80::2:c903:1:203 gid_index=1 "
		   "hop_limit=64 traffic_class=5 flow_label=0x12345 len=1000 mad=",
		   __LINE__);

	/* PMA PortCounters response. */
	memset(f, 0, sizeof(f));
	fill_random(m + 64, 192, 3);
	mad_set_field(m, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(m, 0, IB_MAD_MGMTCLASS_F, IB_PERFORMANCE_CLASS);
	mad_set_field(m, 0, IB_MAD_CLASSVER_F, 1);
	mad_set_field(m, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
	mad_set_field(m, 0, IB_MAD_RESPONSE_F, 1);
	mad_set_field(m, 0, IB_MAD_ATTRID_F, IB_GSI_PORT_COUNTERS);
	mad_set_field(m, 0, IB_MAD_STATUS_F, 0x001c);
	h->addr.lid = htons(0x17);
	h->addr.qpn = htonl(1);
	h->addr.qkey = htonl(IB_DEFAULT_QP1_QKEY);
	round_trip(f, 256, 0xffffffffffffffffULL,
		   "tid=0xffffffffffffffff class=perf version=1 method=getresp "
		   "status=0x001c attr=PortCounters attrmod=0x0 lid=0x17 ",
		   __LINE__);

	/* A request that timed out: the kernel returns it with status 110. */
	memset(f, 0, sizeof(f));
	mad_set_field(m, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(m, 0, IB_MAD_MGMTCLASS_F, IB_SMI_CLASS);
	mad_set_field(m, 0, IB_MAD_CLASSVER_F, 1);
	mad_set_field(m, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
	mad_set_field(m, 0, IB_MAD_ATTRID_F, IB_ATTR_PORT_INFO);
	mad_set_field(m, 0, IB_MAD_ATTRMOD_F, 1);
	h->addr.lid = htons(5);
	h->status = ETIMEDOUT;
	round_trip(f, 256, 42, " error=timeout len=256 ", __LINE__);
	h->status = EIO;
	round_trip(f, 256, 42, " error=EIO ", __LINE__);

	/* Unknown class, method and attribute print as numbers. */
	memset(f, 0, sizeof(f));
	m[0] = 1;
	m[1] = 0x0a;
	m[2] = 7;
	m[3] = 0x7e;
	mad_set_field(m, 0, IB_MAD_ATTRID_F, 0x9999);
	h->addr.lid = htons(3);
	h->addr.qpn = htonl(0x123456);
	round_trip(f, 256, 1, "class=0x0a version=7 method=0x7e status=0x0000 "
		   "attr=0x9999 ", __LINE__);
	/* Vendor range 2 shows its OUI. */
	m[1] = 0x32;
	mad_set_field(m, 0, IB_VEND2_OUI_F, IB_OPENIB_OUI);
	round_trip(f, 256, 1, " oui=0x001405 ", __LINE__);

	/* And the other way: a written line, formatted back. */
	PARSE_OK("dr=0,1,3 method=get attr=NodeInfo tid=5");
	round_trip(frame, req.mad_len, 5,
		   "tid=0x5 class=smi-dr version=1 method=get status=0x0000 "
		   "attr=NodeInfo attrmod=0x0 lid=0xffff sl=0 qp=0 qkey=0x0 "
		   "pkey_index=0 dr=0,1,3 len=256 mad=0181010100000002",
		   __LINE__);
}

static void test_format_limits(void)
{
	static uint8_t f[UMAD_FRAME_MAX];
	char small[100];
	static char big[2000];

	memset(f, 0, sizeof(f));
	f[64] = 1;
	f[65] = 1;
	f[66] = 1;
	f[67] = 1;
	CHECK_INT(madtext_format(f, 256, 0, 0, small, sizeof(small)), -ENOSPC);
	CHECK_INT(madtext_format(f, 23, 0, 0, big, sizeof(big)), -EINVAL);
	CHECK(madtext_format_max(256, 0) <= sizeof(big));
	CHECK(madtext_format(f, 256, 0, 0, big, madtext_format_max(256, 0)) > 0);
	CHECK_INT(madtext_format(f, 256, 0, 0, big, madtext_format_max(256, 0) - 1),
		  -ENOSPC);
}

static void test_errors(void)
{
	static char line[20000];
	size_t i;

	PARSE_FAILS("", 0, -EINVAL, "empty line");
	PARSE_FAILS_STR("   \t ", -EINVAL, "empty line");
	PARSE_FAILS_STR("class=perf method=get lid=1 foo=1", -EINVAL,
			"unknown key 'foo' at column 29");
	PARSE_FAILS_STR("class=perf method=get lid", -EINVAL,
			"expected key=value, got 'lid' at column 23");
	PARSE_FAILS_STR("class=perf =1 method=get", -EINVAL, "expected key=value");
	PARSE_FAILS_STR("class=perf method=get lid=", -EINVAL, "empty value for lid=");
	PARSE_FAILS_STR("class=perf method=get attr=PortCounters lid=1 data=0g",
			-EINVAL, "bad hex in data= at column 53 ('g')");
	PARSE_FAILS_STR("class=perf method=get attr=PortCounters lid=1 data=abc",
			-EINVAL, "bad hex in data= at column 52 (odd length");
	PARSE_FAILS_STR("lid=1 mad=0104010x", -EINVAL, "bad hex in mad=");
	PARSE_FAILS_STR("method=get attr=PortCounters lid=1", -EINVAL,
			"class= missing");
	PARSE_FAILS_STR("lid=1 mad=00", -EINVAL, "class= missing (and mad= has class 0)");
	PARSE_FAILS_STR("class=perf attr=PortCounters lid=1", -EINVAL,
			"method= missing");
	PARSE_FAILS_STR("class=perf method=get attr=PortCounters", -EINVAL,
			"lid= missing");
	PARSE_FAILS_STR("class=smi method=get attr=NodeInfo", -EINVAL,
			"lid= missing");
	PARSE_FAILS_STR("class=perf method=get lid=1 sl=16", -EINVAL,
			"sl=16 out of range (max 0xf)");
	PARSE_FAILS_STR("class=0x100 method=get lid=1", -EINVAL,
			"class=0x100 out of range (0x01-0xff)");
	PARSE_FAILS_STR("class=0 method=get lid=1", -EINVAL, "out of range");
	PARSE_FAILS_STR("class=perf method=0x100 lid=1", -EINVAL, "out of range");
	PARSE_FAILS_STR("class=perf method=get lid=0x10000", -EINVAL, "out of range");
	PARSE_FAILS_STR("class=perf method=get lid=1 qp=0x1000000", -EINVAL,
			"out of range");
	PARSE_FAILS_STR("class=perf method=get lid=1 tid=0x10000000000000000",
			-EINVAL, "bad number");
	PARSE_FAILS_STR("class=perf method=get lid=1 tid=18446744073709551616",
			-EINVAL, "bad number");
	PARSE_FAILS_STR("class=perf method=get lid=-1", -EINVAL, "bad number '-1'");
	PARSE_FAILS_STR("class=perf method=get lid=0x", -EINVAL, "bad number");
	PARSE_FAILS_STR("class=perf method=get lid=1 flow_label=0x100000 gid=::1",
			-EINVAL, "out of range");
	PARSE_FAILS_STR("class=perf method=get lid=1 timeout=2147483648",
			-EINVAL, "out of range");
	PARSE_FAILS_STR("class=perf method=get lid=1 lid=2", -EINVAL,
			"duplicate key 'lid' at column 29 (first at column 23)");
	PARSE_FAILS_STR("class=nope method=get lid=1", -EINVAL, "unknown class 'nope'");
	PARSE_FAILS_STR("class=perf method=fetch lid=1", -EINVAL, "unknown method");
	PARSE_FAILS_STR("class=perf method=get attr=NodeInfo lid=1", -EINVAL,
			"unknown attr 'NodeInfo' for class perf");
	PARSE_FAILS_STR("class=perf method=get lid=1 gid=fe80::zz", -EINVAL, "bad gid");
	PARSE_FAILS_STR("class=perf method=get lid=1 hop_limit=3", -EINVAL,
			"hop_limit= at column 29 needs gid=");
	PARSE_FAILS_STR("class=perf method=get lid=1 dr=0,1", -EINVAL,
			"needs class smi-dr");
	PARSE_FAILS_STR("class=perf method=get lid=1 drslid=1", -EINVAL,
			"applies only to class smi-dr");
	PARSE_FAILS_STR("class=perf method=get lid=1 comp_mask=1", -EINVAL,
			"applies only to class sa");
	PARSE_FAILS_STR("class=perf method=get lid=1 oui=1", -EINVAL,
			"applies only to vendor classes");
	PARSE_FAILS_STR("class=sa method=get lid=1 mkey=1", -EINVAL,
			"applies only to classes smi and smi-dr");
	PARSE_FAILS_STR("method=get dr=1,2", -EINVAL, "must start with 0");
	PARSE_FAILS_STR("method=get dr=0,,2", -EINVAL, "bad port ''");
	PARSE_FAILS_STR("method=get dr=0,256", -EINVAL, "bad port '256'");
	PARSE_FAILS_STR("method=get dr=0,1, ", -EINVAL, "bad port");
	PARSE_FAILS_STR("method=get dr=0 status=0x8000", -EINVAL,
			"out of range for class smi-dr");
	PARSE_FAILS_STR("class=perf method=get lid=1\r", -EINVAL,
			"carriage return at column 28");
	PARSE_FAILS_STR("class=perf method=get\x01\xff lid=1", -EINVAL,
			"invalid byte 0x01 at column 22");
	PARSE_FAILS_STR("class=perf method=get lid=1 \xff", -EINVAL,
			"invalid byte 0xff at column 29");
	PARSE_FAILS("class=perf\0method=get lid=1", 27, -EINVAL,
		    "invalid byte 0x00 at column 11");

	/* Too long data= for a one-MAD class, and for the frame. */
	strcpy(line, "dr=0 method=set attr=PortInfo data=");
	for (i = 0; i < 65; i++)
		strcat(line, "00");
	PARSE_FAILS_STR(line, -EMSGSIZE, "data= is 65 bytes; class smi-dr carries at most 64");
	strcpy(line, "class=sa method=set lid=1 data=");
	for (i = 0; i < 8192; i++)
		strcat(line, "00");
	PARSE_FAILS_STR(line, -EMSGSIZE, "more than the");
	strcpy(line, "lid=1 mad=");
	for (i = 0; i < 8193; i++)
		strcat(line, "00");
	PARSE_FAILS_STR(line, -EMSGSIZE, "mad= is 8193 bytes");

	/* Frame buffer too small for one MAD. */
	CHECK_INT(madtext_parse("dr=0 method=get", 15, frame, UMAD_FRAME_MAX - 1,
				&req, err, sizeof(err)), -EMSGSIZE);
	/* errlen 0: no reason written, still an error. */
	CHECK_INT(madtext_parse("x", 1, frame, sizeof(frame), &req, NULL, 0), -EINVAL);
}

static void test_blank(void)
{
	CHECK(madtext_is_blank("", 0));
	CHECK(madtext_is_blank(" \t ", 3));
	CHECK(madtext_is_blank("# comment", 9));
	CHECK(madtext_is_blank("  #x", 4));
	CHECK(!madtext_is_blank("dr=0", 4));
	CHECK(!madtext_is_blank(" a#", 3));
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Hand-run: ns per line for a DR NodeInfo request and its response. */
static int bench(void)
{
	static const char request[] = "class=smi-dr method=get attr=NodeInfo dr=0,1,3";
	static char line[2000];
	const int rounds = 2000000;
	volatile size_t sink = 0;
	double t0, t_parse, t_format, t_reparse;
	ssize_t n = 0;
	int i;

	PARSE_OK(request);
	fill_random(mad_of(frame) + 64, 64, 9);
	mad_set_field(mad_of(frame), 0, IB_MAD_RESPONSE_F, 1);

	t0 = now_ns();
	for (i = 0; i < rounds; i++) {
		madtext_parse(request, sizeof(request) - 1, frame, sizeof(frame),
			      &req, err, sizeof(err));
		sink += req.mad_len;
	}
	t_parse = (now_ns() - t0) / rounds;

	t0 = now_ns();
	for (i = 0; i < rounds; i++) {
		n = madtext_format(frame, 256, (uint64_t)i, 0, line, sizeof(line));
		sink += (size_t)n;
	}
	t_format = (now_ns() - t0) / rounds;

	t0 = now_ns();
	for (i = 0; i < rounds; i++) {
		madtext_parse(line, (size_t)n - 1, frame, sizeof(frame), &req,
			      err, sizeof(err));
		sink += req.mad_len;
	}
	t_reparse = (now_ns() - t0) / rounds;

	printf("parse  request (%zu bytes): %6.1f ns/line\n",
	       sizeof(request) - 1, t_parse);
	printf("format response (%zd bytes): %6.1f ns/line\n", n, t_format);
	printf("parse  response (%zd bytes): %6.1f ns/line (%.2f ns/byte)\n",
	       n, t_reparse, t_reparse / (double)n);
	(void)sink;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--bench"))
		return bench();

	test_dr_nodeinfo();
	test_names_and_numbers();
	test_lid_routed_and_keys();
	test_data_placement();
	test_mad_and_override();
	test_round_trips();
	test_format_limits();
	test_errors();
	test_blank();
	CHECK_DONE();
}
