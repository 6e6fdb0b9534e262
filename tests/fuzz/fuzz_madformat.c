// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: a received frame formatted with named fields (see
 * docs/bad-input.md).
 *
 * fuzz_frame() (fuzzframe.h) with decode=fields, on frames up to a little
 * over 64 KiB (a whole RMPP response: an SA GetTable of records, each with
 * its fields): the umad checks (the 64 KiB limit included), then
 * madtext_format() with MADTEXT_FIELDS within madtext_format_max() and
 * madtext_format_need(), -ENOSPC one byte below the need, one printable
 * line; where the line fits MADTEXT_LINE_MAX it is parsed back, and a line
 * that parses must give the frame's MAD (fields are set over mad= with
 * the values mad= already holds).  Slow by nature (a 64 KiB SA response is
 * milliseconds under ASan): the fast targets keep to one-MAD inputs.
 */
#include <stddef.h>
#include <stdint.h>

#include "umadfs/mad/madtext.h"
#include "fuzzframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_frame("fuzz_madformat", data, size, MADTEXT_FIELDS);
	return 0;
}
