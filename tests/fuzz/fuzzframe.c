// SPDX-License-Identifier: GPL-2.0-or-later
/* One frame through the umad checks and the recv formatter (fuzzframe.h). */
#include "fuzzframe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/mad/madtext.h"
#include "umadfs/mad/umadframe.h"

static void die(const char *name, const char *what)
{
	fprintf(stderr, "%s: %s\n", name, what);
	abort();
}

/* The line of n bytes (with its '\n') parsed back: no crash, a reason on
 * a refusal, the same MAD on success. */
static void parse_back(const char *name, const char *line, size_t n,
		       const uint8_t *frame, size_t mad_len)
{
	static uint8_t reparsed[UMAD_FRAME_HDR_SIZE + MADTEXT_LINE_MAX / 2 +
				MAD_SIZE];
	struct madtext_request req;
	char err[256];

	if (madtext_parse(line, n - 1, reparsed, sizeof(reparsed), &req, err,
			  sizeof(err))) {
		if (!err[0])
			die(name, "parse back refused without a reason");
		return;
	}
	if (req.mad_len != mad_len ||
	    memcmp(reparsed + UMAD_FRAME_HDR_SIZE, frame + UMAD_FRAME_HDR_SIZE,
		   mad_len)) {
		fprintf(stderr, "%s: line: %.*s", name, (int)n, line);
		die(name, "the line parses to another MAD");
	}
}

void fuzz_frame(const char *name, const uint8_t *data, size_t size,
		unsigned int flags)
{
	size_t mad_len = 0, cap, need;
	uint8_t *frame, *copy;
	char why[256], *line;
	uint64_t tid;
	ssize_t n;
	int r;

	/* An exact-size copy: ASan flags any read past the written bytes. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return;
	memcpy(copy, data, size);
	r = umadframe_check(copy, size, &mad_len, why, sizeof(why));
	if (r) {
		if ((r != -EINVAL && r != -EMSGSIZE) || !why[0])
			die(name, "refused without -EINVAL/-EMSGSIZE and a reason");
		free(copy);
		return;
	}
	if (size < UMADFRAME_MIN || size > UMADFRAME_MAX ||
	    mad_len != (size < UMAD_FRAME_MAX ? MAD_SIZE : size - UMAD_FRAME_HDR_SIZE))
		die(name, "accepted with a bad size or mad_len");

	frame = calloc(1, UMAD_FRAME_HDR_SIZE + mad_len);
	if (!frame) {
		free(copy);
		return;
	}
	memcpy(frame, copy, size);
	free(copy);
	tid = mad_tid(frame + UMAD_FRAME_HDR_SIZE);

	cap = madtext_format_max(mad_len, flags);
	need = madtext_format_need(frame, mad_len, flags);
	if (need > cap)
		die(name, "madtext_format_need() above madtext_format_max()");
	line = malloc(cap);
	if (!line) {
		free(frame);
		return;
	}
	n = madtext_format(frame, mad_len, tid, flags, line, cap);
	if (n <= 0 || (size_t)n > need || line[n - 1] != '\n' ||
	    memchr(line, '\n', (size_t)n - 1))
		die(name, "format gave no single line within madtext_format_need()");
	for (ssize_t i = 0; i < n - 1; i++)
		if (line[i] < 0x20 || line[i] > 0x7e)
			die(name, "format wrote a byte a line may not hold");
	/* One byte less than the need must be refused, not overrun. */
	if (madtext_format(frame, mad_len, tid, flags, line, need - 1) != -ENOSPC)
		die(name, "format took a buffer below madtext_format_need()");
	if ((size_t)n - 1 <= MADTEXT_LINE_MAX)
		parse_back(name, line, (size_t)n, frame, mad_len);
	free(line);
	free(frame);
}
