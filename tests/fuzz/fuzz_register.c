// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: a line written to an agents/NAME/register file (see
 * docs/bad-input.md).
 *
 * The input up to its first '\n' is one line, as register's write handler
 * hands it to agents_parse_registration().  It must not crash; a refusal
 * must come with a one-line reason; an accepted registration must hold
 * what the grammar allows (class 1-0xff, version to 0xff, a 24-bit OUI;
 * methods are request methods, 0-0x7f, by the size of the mask), and
 * written back as a line ("class=0x.. version=..
 * methods=0x..,.. oui=0x.. rmpp=..") it must parse to the same
 * registration.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/channel/agents.h"
#include "umadfs/engine/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what, const char *line, size_t n)
{
	fprintf(stderr, "fuzz_register: %s\n  line: %.*s\n", what, (int)n, line);
	abort();
}

/* reg as a line the parser takes; returns its length. */
static size_t put_registration(char *p, size_t cap,
			       const struct engine_registration *reg)
{
	size_t n = (size_t)snprintf(p, cap, "class=0x%02x version=%u",
				    reg->mgmt_class, reg->class_version);
	const char *sep = " methods=";

	for (int m = 0; m < 128; m++) {
		if (!(reg->methods[m / 64] >> (m % 64) & 1))
			continue;
		n += (size_t)snprintf(p + n, cap - n, "%s0x%x", sep, m);
		sep = ",";
	}
	n += (size_t)snprintf(p + n, cap - n, " oui=0x%06" PRIx32 " rmpp=%d",
			      reg->oui, reg->rmpp);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct engine_registration reg, again;
	const char *nl = memchr(data, '\n', size);
	size_t len = nl ? (size_t)(nl - (const char *)data) : size, n;
	char why[256], line[2048];
	char *copy = malloc(len ? len : 1);	/* ASan: nothing read past it */
	int r;

	if (!copy)
		return 0;
	memcpy(copy, data, len);
	why[0] = '\0';
	r = agents_parse_registration(copy, len, &reg, why, sizeof(why));
	if (r) {
		if (r != -EINVAL || !why[0] || strchr(why, '\n'))
			die("refused without -EINVAL and a one-line reason", copy, len);
		free(copy);
		return 0;
	}
	if (reg.mgmt_class < 1 || reg.mgmt_class > 0xff ||
	    reg.class_version > 0xff || reg.oui > 0xffffff)
		die("accepted out of range", copy, len);
	n = put_registration(line, sizeof(line), &reg);
	if (n >= sizeof(line))
		die("registration line too long", copy, len);
	r = agents_parse_registration(line, n, &again, why, sizeof(why));
	if (r)
		die(why, line, n);
	if (again.mgmt_class != reg.mgmt_class ||
	    again.class_version != reg.class_version || again.oui != reg.oui ||
	    again.rmpp != reg.rmpp || memcmp(again.methods, reg.methods,
					     sizeof(reg.methods)))
		die("written back, the registration parses differently", line, n);
	free(copy);
	return 0;
}
