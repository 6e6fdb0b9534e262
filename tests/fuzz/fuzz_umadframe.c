// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: a binary frame written to `umad` (see docs/bad-input.md).
 *
 * fuzz_frame() (fuzzframe.h) with decode=none: umadframe_check() on any
 * bytes, a reason for every refusal; an accepted frame formatted as `recv`
 * shows it without named fields, within the bounds, and parsed back to the
 * same MAD where it parses.  scripts/fuzz.sh gives frames of up to 1 KiB
 * (one MAD, or a short RMPP send) so that the target runs at its full
 * rate; big frames and named fields are fuzz_madformat's.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzzframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_frame("fuzz_umadframe", data, size, 0);
	return 0;
}
