// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What the fuzz targets (tests/fuzz/, docs/bad-input.md) found, as plain
 * unit tests that run in every build, with or without clang.  The inputs
 * themselves are also kept in the fuzz corpora (regress-*).
 */
#include "check.h"

#include <stdint.h>
#include <sys/types.h>

#include <infiniband/mad.h>

#include "umadfs/mad/madtext.h"

#define FRAME_CAP (UMAD_FRAME_HDR_SIZE + MADTEXT_LINE_MAX / 2 + MAD_SIZE)

static uint8_t frame1[FRAME_CAP], frame2[FRAME_CAP];
static char line1[2 * FRAME_CAP + 1024], line2[sizeof(line1)], err[256];

/* parse(text) -> format -> parse -> format: the same MAD and line twice. */
static void round_trip(const char *text, const char *want_in, const char *want_out)
{
	struct madtext_request req1, req2;
	ssize_t n1, n2;
	uint64_t tid;

	if (madtext_parse(text, strlen(text), frame1, sizeof(frame1), &req1, err,
			  sizeof(err))) {
		fprintf(stderr, "parse(\"%s\"): %s\n", text, err);
		check_failures++;
		return;
	}
	tid = mad_tid(frame1 + UMAD_FRAME_HDR_SIZE);
	n1 = madtext_format(frame1, req1.mad_len, tid, 0, line1, sizeof(line1));
	CHECK(n1 > 0);
	if (n1 <= 0)
		return;
	line1[n1] = '\0';
	if (want_in && !strstr(line1, want_in)) {
		fprintf(stderr, "\"%s\" lacks \"%s\"\n", line1, want_in);
		check_failures++;
	}
	if (want_out && strstr(line1, want_out)) {
		fprintf(stderr, "\"%s\" has \"%s\"\n", line1, want_out);
		check_failures++;
	}
	CHECK_INT(madtext_parse(line1, (size_t)n1 - 1, frame2, sizeof(frame2), &req2,
				err, sizeof(err)), 0);
	CHECK_INT(req2.mad_len, req1.mad_len);
	CHECK(memcmp(frame1 + UMAD_FRAME_HDR_SIZE, frame2 + UMAD_FRAME_HDR_SIZE, req1.mad_len) == 0);
	CHECK(memcmp(frame1 + 16, frame2 + 16, 48) == 0);	/* the address */
	n2 = madtext_format(frame2, req2.mad_len, tid, 0, line2, sizeof(line2));
	CHECK_INT(n2, n1);
	CHECK(n2 == n1 && memcmp(line1, line2, (size_t)n1) == 0);
}

/*
 * fuzz_madtext, first campaign: a DR SMP whose initial path has bytes past
 * its hop count (hop count 0, path 00 00 02 09) was shown as dr=0, and dr=
 * clears the whole path when parsed: the line read from recv and written
 * back sent another MAD.  madtext_format() now omits dr= for such a path
 * (it stays in mad=).
 */
static void test_dr_path_bytes_past_hop_count(void)
{
	char text[600] = "mad=";
	uint8_t mad[256] = { 1, 0x81, 1, 0x81, 0x80 };
	int i;

	mad[128 + 2] = 2;
	mad[128 + 3] = 9;
	for (i = 0; i < 256; i++)
		sprintf(text + strlen(text), "%02x", mad[i]);
	round_trip(text, " class=smi-dr ", " dr=");

	/* Hop count 2, path 0,1,3 and then a stray 5: no dr= either. */
	round_trip("dr=0,1,3 method=get attr=NodeInfo", " dr=0,1,3 ", NULL);
	memset(mad, 0, sizeof(mad));
	mad[0] = 1;
	mad[1] = 0x81;
	mad[2] = 1;
	mad[3] = 1;
	mad[7] = 2;
	mad[129] = 1;
	mad[130] = 3;
	mad[131] = 5;
	strcpy(text, "mad=");
	for (i = 0; i < 256; i++)
		sprintf(text + strlen(text), "%02x", mad[i]);
	round_trip(text, " class=smi-dr ", " dr=");
	/* The longest path, 63 hops, fills it: shown. */
	strcpy(text, "method=get attr=NodeInfo dr=0");
	for (i = 1; i <= 63; i++)
		sprintf(text + strlen(text), ",%d", i);
	round_trip(text, ",62,63 ", NULL);
}

int main(void)
{
	test_dr_path_bytes_past_hop_count();
	CHECK_DONE();
}
