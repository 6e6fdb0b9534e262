// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: the text codec on arbitrary bytes (see docs/bad-input.md).
 *
 * The input is one line as a write to `send` delivers it (without its
 * '\n'); scripts/fuzz.sh gives lines of up to about one MAD's worth (1 KiB).
 * madtext_parse() must not crash on it and must give a one-line reason for
 * every refusal; when it succeeds, the frame is formatted as `recv` would
 * show it with decode=none, and that line must parse again to the same MAD
 * and address and format to the same line: the round trip
 * tests/unit/test_madtext.c checks on hand-made frames.
 *
 * Named fields in the input are parsed here; formatting them (decode=fields,
 * a hundred times the cost of the line itself) and big frames are
 * fuzz_madformat's, so that this target runs at its full rate.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

#include "umadfs/mad/madtext.h"

/* What `recv` shows: decode=none (named fields: fuzz_madformat). */
#define FLAGS		0

/* As text_write() sizes it: the longest line's mad= plus one MAD. */
#define FRAME_CAP	(UMAD_FRAME_HDR_SIZE + MADTEXT_LINE_MAX / 2 + MAD_SIZE)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *line1, size_t n1,
		const char *line2, size_t n2)
{
	fprintf(stderr, "fuzz_madtext: %s\n", what);
	if (line1)
		fprintf(stderr, "  line 1: %.*s\n", (int)n1, line1);
	if (line2)
		fprintf(stderr, "  line 2: %.*s\n", (int)n2, line2);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame1[FRAME_CAP], frame2[FRAME_CAP];
	static char *line1, *line2;
	static size_t line_cap;
	const struct ib_user_mad *h1 = (const void *)frame1;
	const struct ib_user_mad *h2 = (const void *)frame2;
	struct madtext_request req1, req2;
	char err[256];
	ssize_t n1, n2;
	uint64_t tid;
	int r;

	/* Copy the input so that ASan sees any read past its end. */
	char *line = malloc(size ? size : 1);

	if (!line)
		return 0;
	if (!line1) {
		line_cap = madtext_format_max(FRAME_CAP, FLAGS);
		line1 = malloc(line_cap);
		line2 = malloc(line_cap);
		if (!line1 || !line2)
			abort();
	}
	memcpy(line, data, size);
	madtext_is_blank(line, size);
	r = madtext_parse(line, size, frame1, sizeof(frame1), &req1, err, sizeof(err));
	free(line);
	if (r) {
		if (!err[0] || memchr(err, '\n', strlen(err)))
			die("error without a one-line reason", err, strlen(err), NULL, 0);
		return 0;
	}
	if (req1.mad_len < MAD_SIZE || req1.mad_len > FRAME_CAP - UMAD_FRAME_HDR_SIZE ||
	    h1->length != UMAD_FRAME_HDR_SIZE + req1.mad_len)
		die("bad mad_len or umad length", NULL, 0, NULL, 0);

	/* What `recv` would show for this frame, with the TID it holds. */
	tid = mad_tid(frame1 + UMAD_FRAME_HDR_SIZE);
	if (madtext_format_max(req1.mad_len, FLAGS) > line_cap)
		die("madtext_format_max too large", NULL, 0, NULL, 0);
	n1 = madtext_format(frame1, req1.mad_len, tid, FLAGS, line1,
			    madtext_format_max(req1.mad_len, FLAGS));
	if (n1 <= 0 || line1[n1 - 1] != '\n' || memchr(line1, '\n', (size_t)n1 - 1))
		die("format gave no single line", line1, n1 > 0 ? (size_t)n1 : 0,
		    NULL, 0);

	r = madtext_parse(line1, (size_t)n1 - 1, frame2, sizeof(frame2), &req2,
			  err, sizeof(err));
	if (r)
		die(err, line1, (size_t)n1, NULL, 0);
	if (req2.mad_len != req1.mad_len ||
	    memcmp(frame1 + UMAD_FRAME_HDR_SIZE, frame2 + UMAD_FRAME_HDR_SIZE, req1.mad_len))
		die("MAD differs after re-parse", line1, (size_t)n1, NULL, 0);
	if (memcmp(&h1->addr, &h2->addr, sizeof(h1->addr)))
		die("address differs after re-parse", line1, (size_t)n1, NULL, 0);

	n2 = madtext_format(frame2, req2.mad_len, tid, FLAGS, line2,
			    line_cap);
	if (n2 != n1 || memcmp(line1, line2, (size_t)n1))
		die("round trip differs", line1, (size_t)n1, line2,
		    n2 > 0 ? (size_t)n2 : 0);
	return 0;
}
