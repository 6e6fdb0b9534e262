// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: a binary frame written to `umad` (see docs/bad-input.md).
 *
 * umadframe_check() must not crash on any bytes and must give a reason for
 * every refusal.  A frame it accepts is padded as umad_write() pads it and
 * formatted as `recv` would show it (the same frame can come back from the
 * kernel): madtext_format() must write one line within madtext_format_max(),
 * and parsing that line back must not crash (it need not succeed: a header
 * the kernel never produces, such as a 32-bit QPN, has no text form).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/mad/madtext.h"
#include "umadfs/mad/umadframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_umadframe: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t reparsed[UMAD_FRAME_HDR_SIZE + MADTEXT_LINE_MAX / 2 +
				MAD_SIZE];
	struct madtext_request req;
	size_t mad_len = 0, cap;
	uint8_t *frame, *copy;
	char why[256], err[256], *line;
	uint64_t tid;
	ssize_t n;
	int r;

	/* An exact-size copy: ASan flags any read past the written bytes. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	r = umadframe_check(copy, size, &mad_len, why, sizeof(why));
	if (r) {
		if ((r != -EINVAL && r != -EMSGSIZE) || !why[0])
			die("refused without -EINVAL/-EMSGSIZE and a reason");
		free(copy);
		return 0;
	}
	if (size < UMADFRAME_MIN || size > UMADFRAME_MAX ||
	    mad_len != (size < UMAD_FRAME_MAX ? MAD_SIZE : size - UMAD_FRAME_HDR_SIZE))
		die("accepted with a bad size or mad_len");

	frame = calloc(1, UMAD_FRAME_HDR_SIZE + mad_len);
	if (!frame) {
		free(copy);
		return 0;
	}
	memcpy(frame, copy, size);
	free(copy);
	tid = mad_tid(frame + UMAD_FRAME_HDR_SIZE);

	cap = madtext_format_max(mad_len, MADTEXT_FIELDS);
	line = malloc(cap);
	if (!line) {
		free(frame);
		return 0;
	}
	n = madtext_format(frame, mad_len, tid, MADTEXT_FIELDS, line, cap);
	if (n <= 0 || (size_t)n > cap || line[n - 1] != '\n' ||
	    memchr(line, '\n', (size_t)n - 1))
		die("format gave no single line");
	for (ssize_t i = 0; i < n - 1; i++)
		if (line[i] < 0x20 || line[i] > 0x7e)
			die("format wrote a byte a line may not hold");
	/* One byte less than the bound must be refused, not overrun. */
	if (madtext_format_need(frame, mad_len, MADTEXT_FIELDS) > cap)
		die("madtext_format_need() above madtext_format_max()");
	if (madtext_format(frame, mad_len, tid, MADTEXT_FIELDS, line,
			   madtext_format_need(frame, mad_len, MADTEXT_FIELDS) - 1) != -ENOSPC)
		die("format took a buffer below madtext_format_need()");
	if ((size_t)n - 1 <= MADTEXT_LINE_MAX)
		madtext_parse(line, (size_t)n - 1, reparsed, sizeof(reparsed),
			      &req, err, sizeof(err));
	free(line);
	free(frame);
	return 0;
}
