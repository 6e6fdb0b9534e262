/*
 * What fuzz_umadframe and fuzz_madformat do to one frame (fuzzframe.c):
 * the checks of a `umad` write, then the line `recv` would show for it.
 */
#ifndef UMADFS_FUZZFRAME_H
#define UMADFS_FUZZFRAME_H

#include <stddef.h>
#include <stdint.h>

/* size bytes as one write to `umad`: umadframe_check() must not crash and
 * must give -EINVAL/-EMSGSIZE and a reason for every refusal.  An accepted
 * frame is padded as umad_write() pads it and formatted with flags
 * (MADTEXT_FIELDS or 0): one printable line within madtext_format_max()
 * and madtext_format_need(), and -ENOSPC one byte below the need.  A line
 * of at most MADTEXT_LINE_MAX is parsed back: it need not parse (a header
 * the kernel never produces, such as a 32-bit QPN, has no text form), but
 * when it does the MAD must be the frame's.  name prefixes what abort()s. */
void fuzz_frame(const char *name, const uint8_t *data, size_t size,
		unsigned int flags);

#endif
