// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: umadfs's -o options (see docs/bad-input.md).
 *
 * The input up to its first NUL is the value of one -o:
 * options_parse() runs on "umadfs -o INPUT /tmp" as main() calls it, so
 * libfuse's option splitting (commas, backslash escapes), umadfs's own
 * options (attrs=, queue_len=, mad_group=, mad_group_smi) and the fabric's
 * (fabric_interval=, fabric_port=CA:N, fabric=) all see it.  It must not
 * crash or leak; it must return OPTIONS_RUN, 0 or 2, and 2 only with a
 * message on stderr (captured here, each message ending in '\n');
 * accepted, queue_len is 0 (not given) or 1 to 1000000.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *opt, const char *err)
{
	fprintf(stderr, "fuzz_options: %s\n  -o %s\n  stderr: %s\n", what, opt,
		err);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char err[4096];
	static FILE *errf;
	char prog[] = "umadfs", o_flag[] = "-o", mnt[] = "/tmp";
	char *argv[5], *value;
	struct options o;
	FILE *saved;
	size_t len;
	int r;

	if (!errf) {
		errf = fmemopen(err, sizeof(err) - 1, "w");
		if (!errf)
			abort();
		setvbuf(errf, NULL, _IONBF, 0);
	}
	value = malloc(size + 1);
	if (!value)
		return 0;
	memcpy(value, data, size);
	value[size] = '\0';
	argv[0] = prog;
	argv[1] = o_flag;
	argv[2] = value;
	argv[3] = mnt;
	argv[4] = NULL;

	memset(err, 0, sizeof(err));
	rewind(errf);
	saved = stderr;
	stderr = errf;		/* what options_parse() and libfuse say */
	r = options_parse(4, argv, &o);
	stderr = saved;
	len = strlen(err);

	if (r != OPTIONS_RUN && r != 0 && r != 2)
		die("options_parse() returned something else", value, err);
	if (r == 2 && (!len || err[len - 1] != '\n'))
		die("refused without a message", value, err);
	if (r == OPTIONS_RUN && o.queue_len > 1000000)
		die("queue_len accepted out of range", value, err);
	options_free(&o);
	free(value);
	return 0;
}
