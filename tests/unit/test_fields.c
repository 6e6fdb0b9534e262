/*
 * Named fields (src/mad/fields.c): Attribute.Field=value keys formatted from
 * frames and parsed back, quoting, SA records, the EINVAL reasons, and the
 * round trip of every line of the fuzz corpus with fields on.
 */
#include "check.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include <infiniband/mad.h>

#include "umadfs/mad/madtext.h"

#define FRAME_CAP (UMAD_FRAME_HDR_SIZE + MADTEXT_LINE_MAX / 2 + MAD_SIZE)

static uint8_t frame1[FRAME_CAP], frame2[FRAME_CAP];
static char *line1, *line2;
static size_t line_cap;
static char err[256];

/* Parse text and format it with fields into line1 (NUL-terminated);
 * returns the parse result. */
static int format_line(const char *text, unsigned flags)
{
	struct madtext_request req;
	ssize_t n;
	int r;

	r = madtext_parse(text, strlen(text), frame1, sizeof(frame1), &req, err,
			  sizeof(err));
	if (r)
		return r;
	n = madtext_format(frame1, req.mad_len, mad_tid(frame1 + UMAD_FRAME_HDR_SIZE),
			   flags, line1, line_cap);
	CHECK(n > 0);
	line1[n > 0 ? n - 1 : 0] = '\0';
	return 0;
}

static void check_has(const char *text, const char *want)
{
	CHECK_INT(format_line(text, MADTEXT_FIELDS), 0);
	if (!strstr(line1, want)) {
		fprintf(stderr, "\"%s\"\n  lacks \"%s\"\n", line1, want);
		check_failures++;
	}
}

static void check_error(const char *text, int want, const char *reason)
{
	CHECK_INT(format_line(text, MADTEXT_FIELDS), want);
	if (!strstr(err, reason)) {
		fprintf(stderr, "\"%s\": got \"%s\", want \"%s\"\n", text, err, reason);
		check_failures++;
	}
}

static void test_numbers(void)
{
	const char *ni = "dr=0,1 method=getresp attr=NodeInfo NodeInfo.NumPorts=12 "
			 "NodeInfo.Guid=0x200001 NodeInfo.NodeType=2 nodeinfo.devid=7";

	check_has(ni, " len=256 NodeInfo.BaseVers=0 NodeInfo.ClassVers=0 "
		      "NodeInfo.NodeType=2 NodeInfo.NumPorts=12 "
		      "NodeInfo.SystemGuid=0x0000000000000000 "
		      "NodeInfo.Guid=0x0000000000200001 ");
	check_has(ni, " NodeInfo.DevId=0x0007 ");
	/* The bytes are libibmad's: NumPorts is SMP data byte 3. */
	CHECK_INT(frame1[UMAD_FRAME_HDR_SIZE + 64 + 3], 12);
	/* Sub-byte fields: LinkState is the low nibble of data byte 32. */
	check_has("dr=0 method=set attr=PortInfo PortInfo.LinkState=15 PortInfo.HoqLife=31",
		  " PortInfo.LinkState=15 ");
	CHECK_INT(frame1[UMAD_FRAME_HDR_SIZE + 64 + 32], 0x0f);
	CHECK_INT(frame1[UMAD_FRAME_HDR_SIZE + 64 + 42] & 0x1f, 31);
	/* 64-bit counters in decimal. */
	check_has("class=perf lid=1 method=getresp attr=PortCountersExtended "
		  "PortCountersExtended.PortXmitData=18446744073709551615",
		  " PortCountersExtended.PortXmitData=18446744073709551615 ");
	/* Fields go over data= and mad=. */
	check_has("class=perf lid=1 method=set attr=PortCounters data=00020000ffff "
		  "PortCounters.PortSelect=1", " PortCounters.PortSelect=1 "
		  "PortCounters.CounterSelect=0x0000 PortCounters.SymbolErrorCounter=65535 ");
}

static void test_strings(void)
{
	const uint8_t *desc = frame1 + UMAD_FRAME_HDR_SIZE + 64;

	check_has("dr=0 method=getresp attr=NodeDescription "
		  "NodeDescription.NodeDesc=\"a \\\"b\\\" \\\\ \\x01\"",
		  " NodeDescription.NodeDesc=\"a \\\"b\\\" \\\\ \\x01\" mad=");
	CHECK(memcmp(desc, "a \"b\" \\ \x01\0", 10) == 0);
	/* An inner NUL is kept, trailing ones are not shown. */
	check_has("dr=0 method=getresp attr=NodeDescription "
		  "NodeDescription.NodeDesc=\"x\\x00y\"", "NodeDesc=\"x\\x00y\" ");
	/* 64 bytes fill the field; hex bytes too. */
	check_has("dr=0 method=getresp attr=NodeDescription NodeDescription.NodeDesc=0x4142",
		  "NodeDesc=\"\\x00\\x00");
	check_error("dr=0 method=set attr=NodeDescription NodeDescription.NodeDesc=\""
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"",
		    -EINVAL, "bad value");
	check_error("dr=0 method=set attr=NodeDescription NodeDescription.NodeDesc=\"ab",
		    -EINVAL, "unterminated quote at column 63");
	check_error("dr=0 method=set attr=NodeDescription NodeDescription.NodeDesc=\"ab\"x",
		    -EINVAL, "junk after the closing quote at column 67");
	check_error("dr=0 method=set attr=NodeDescription NodeDescription.NodeDesc=\"a\\qb\"",
		    -EINVAL, "bad value");
	check_error("dr=0 method=set attr=NodeDescription NodeDescription.NodeDesc=\"a\tb\"",
		    -EINVAL, "invalid byte 0x09 in a quoted value at column 65");
	/* A quote is only special in a field's value. */
	check_error("dr=0 method=get attr=\"x y\"", -EINVAL, "");
}

static void test_records(void)
{
	check_has("class=sa lid=1 method=gettableresp attr=PathRecord attr_offset=8 "
		  "PathRecord[0].PathRecDLid=3 PathRecord[2].PathRecSLid=4",
		  " PathRecord[0].PathRecDGid=0x00000000000000000000000000000000 ");
	check_has("class=sa lid=1 method=gettableresp attr=PathRecord attr_offset=8 "
		  "PathRecord[0].PathRecDLid=3 PathRecord[2].PathRecSLid=4",
		  " PathRecord[2].PathRecSLid=4 ");
	/* Trailing all-zero records are padding: not shown. */
	CHECK(!strstr(line1, "PathRecord[3]"));
	/* Other SA methods: one record, no index. */
	check_has("class=sa lid=1 method=get attr=NodeRecord comp_mask=1 NodeRecord.Lid=9",
		  " NodeRecord.Lid=9 NodeRecord.BaseVers=0 ");
	check_has("class=sa lid=1 method=getresp attr=PortInfoRecord PortInfoRecord.Lid=5",
		  " PortInfoRecord.Lid=5 ");
	CHECK_INT(frame1[UMAD_FRAME_HDR_SIZE + 56 + 4 + 17], 5);
	check_error("class=sa lid=1 method=gettableresp attr=PathRecord "
		    "PathRecord[1].PathRecDLid=3", -EINVAL, "needs attr_offset=");
	check_error("class=sa lid=1 method=gettableresp attr=NodeRecord attr_offset=14 "
		    "NodeRecord[1].Lid=3", -EINVAL, "past the MAD's end");
	check_error("dr=0 method=get attr=NodeInfo NodeInfo[1].Guid=1", -EINVAL,
		    "only SA records take an index");
	check_error("dr=0 method=get attr=NodeInfo NodeInfo[x].Guid=1", -EINVAL,
		    "bad field key");
}

static void test_errors(void)
{
	check_error("dr=0 method=get attr=NodeInfo PortInfo.Lid=1", -EINVAL,
		    "field 'PortInfo.Lid' at column 31 is not of attribute NodeInfo");
	check_error("dr=0 method=get attr=NodeInfo NodeInfo.Foo=1", -EINVAL,
		    "unknown field 'Foo' of NodeInfo at column 31");
	check_error("dr=0 method=set attr=PortInfo PortInfo.LinkState=16", -EINVAL,
		    "bad value '16' for PortInfo.LinkState at column 50 (4-bit field");
	check_error("dr=0 method=set attr=PortInfo PortInfo.Lid=0x10000", -EINVAL,
		    "16-bit field");
	check_error("dr=0 method=get attr=0x1234 NodeInfo.Guid=1", -EINVAL,
		    "attribute 0x1234 of this class has no named fields");
	check_error("dr=0 method=get attr=NodeInfo NodeInfo.Guid=1 nodeinfo.GUID=2",
		    -EINVAL, "duplicate key 'nodeinfo.GUID' at column 47 (first at column 31)");
	check_error("dr=0 method=get attr=NodeInfo .Guid=1", -EINVAL, "bad field key");
	check_error("dr=0 method=get attr=NodeInfo NodeInfo.=1", -EINVAL, "bad field key");
	check_error("dr=0 method=get attr=NodeInfo foo=1", -EINVAL, "unknown key 'foo'");
}

/* The two attributes described by hand (libibmad has no fields for them). */
static void test_hand_fields(void)
{
	const uint8_t *data = frame1 + UMAD_FRAME_HDR_SIZE + 64;
	const uint8_t *rec = frame1 + UMAD_FRAME_HDR_SIZE + 56;

	check_has("dr=0 method=getresp attr=PKeyTable attrmod=1 PKeyTable.PKey0=0xffff "
		  "pkeytable.pkey31=0x8001", " len=256 PKeyTable.PKey0=0xffff "
		  "PKeyTable.PKey1=0x0000 PKeyTable.PKey2=0x0000 ");
	check_has("dr=0 method=getresp attr=PKeyTable attrmod=1 PKeyTable.PKey0=0xffff "
		  "pkeytable.pkey31=0x8001", " PKeyTable.PKey31=0x8001 mad=");
	CHECK(data[0] == 0xff && data[1] == 0xff && data[62] == 0x80 && data[63] == 0x01);
	check_error("dr=0 method=set attr=PKeyTable PKeyTable.PKey32=1", -EINVAL,
		    "unknown field 'PKey32' of PKeyTable");
	check_error("dr=0 method=set attr=PKeyTable PKeyTable.PKey3=0x10000", -EINVAL,
		    "(16-bit field");

	check_has("class=sa lid=1 method=gettableresp attr=LinkRecord attr_offset=1 "
		  "LinkRecord[0].FromLID=3 LinkRecord[0].FromPort=1 LinkRecord[0].ToPort=1 "
		  "LinkRecord[0].ToLID=2 LinkRecord[1].FromLID=0x102 LinkRecord[1].ToPort=255",
		  " len=256 LinkRecord[0].FromLID=3 LinkRecord[0].FromPort=1 "
		  "LinkRecord[0].ToPort=1 LinkRecord[0].ToLID=2 LinkRecord[1].FromLID=258 "
		  "LinkRecord[1].FromPort=0 LinkRecord[1].ToPort=255 LinkRecord[1].ToLID=0 mad=");
	CHECK(!memcmp(rec, "\x00\x03\x01\x01\x00\x02\x00\x00\x01\x02\x00\xff", 12));
	check_has("class=sa lid=1 method=get attr=LinkRecord comp_mask=0x3 "
		  "LinkRecord.FromLID=3 LinkRecord.FromPort=1",
		  " LinkRecord.FromLID=3 LinkRecord.FromPort=1 LinkRecord.ToPort=0 "
		  "LinkRecord.ToLID=0 mad=");
	check_error("class=sa lid=1 method=get attr=LinkRecord LinkRecord.ToPort=256",
		    -EINVAL, "(8-bit field");
	/* A line with a full table of them needs no more than the bound. */
	CHECK(madtext_format_need(frame1, MAD_SIZE, MADTEXT_FIELDS) <= 8192);
}

/* No fields: decode off, an error status, a timeout, no table. */
static void test_no_fields(void)
{
	CHECK_INT(format_line("dr=0 method=getresp attr=NodeInfo", 0), 0);
	CHECK(!strstr(line1, "NodeInfo."));
	CHECK_INT(format_line("dr=0 method=getresp attr=NodeInfo status=0x0004",
			      MADTEXT_FIELDS), 0);
	CHECK(!strstr(line1, "NodeInfo."));
	CHECK_INT(format_line("dr=0 method=getresp attr=LinearForwardingTable",
			      MADTEXT_FIELDS), 0);
	CHECK(!strstr(line1, "LinearForwardingTable."));
	CHECK_INT(format_line("dr=0 method=getresp attr=NodeInfo error=timeout",
			      MADTEXT_FIELDS), 0);
	CHECK(strstr(line1, "NodeInfo.NumPorts=0"));	/* error= is output only */
}

/* parse -> format -> parse -> format, fields on: the same MAD and line. */
static void round_trip(const char *text, size_t len, const char *name)
{
	struct madtext_request req1, req2;
	ssize_t n1, n2;
	uint64_t tid;

	if (madtext_parse(text, len, frame1, sizeof(frame1), &req1, err, sizeof(err)))
		return;		/* the bad-* seeds */
	tid = mad_tid(frame1 + UMAD_FRAME_HDR_SIZE);
	n1 = madtext_format(frame1, req1.mad_len, tid, MADTEXT_FIELDS, line1, line_cap);
	CHECK(n1 > 0);
	if (n1 <= 0)
		return;
	if (madtext_parse(line1, (size_t)n1 - 1, frame2, sizeof(frame2), &req2, err,
			  sizeof(err))) {
		fprintf(stderr, "%s: %.*s\n  does not parse: %s\n", name, (int)n1,
			line1, err);
		check_failures++;
		return;
	}
	CHECK(req2.mad_len == req1.mad_len &&
	      !memcmp(frame1 + UMAD_FRAME_HDR_SIZE, frame2 + UMAD_FRAME_HDR_SIZE,
		      req1.mad_len));
	n2 = madtext_format(frame2, req2.mad_len, tid, MADTEXT_FIELDS, line2, line_cap);
	CHECK(n2 == n1 && !memcmp(line1, line2, (size_t)n1));
}

static void test_corpus_round_trip(const char *dir)
{
	static char text[MADTEXT_LINE_MAX + 1];
	struct dirent *de;
	char path[4096];
	DIR *d = opendir(dir);
	int files = 0;

	CHECK(d != NULL);
	if (!d)
		return;
	while ((de = readdir(d))) {
		FILE *f;
		size_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		round_trip(text, n, de->d_name);
		files++;
	}
	closedir(d);
	CHECK(files >= 20);
}

int main(int argc, char **argv)
{
	line_cap = madtext_format_max(FRAME_CAP, MADTEXT_FIELDS);
	line1 = malloc(line_cap);
	line2 = malloc(line_cap);
	if (!line1 || !line2)
		return 1;
	test_numbers();
	test_strings();
	test_records();
	test_errors();
	test_hand_fields();
	test_no_fields();
	if (argc > 1)
		test_corpus_round_trip(argv[1]);
	free(line1);
	free(line2);
	CHECK_DONE();
}
