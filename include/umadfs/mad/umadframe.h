/*
 * umadframe: the checks a frame written to a `umad` file must pass before
 * it is sent (docs/files.md, "Binary: umad").  No I/O, no allocation: the
 * daemon's umad_write() and the fuzz target tests/fuzz/fuzz_umadframe.c
 * call the same function.
 */
#ifndef UMADFS_UMADFRAME_H
#define UMADFS_UMADFRAME_H

#include <stddef.h>

/* The 64-byte struct ib_user_mad header and the 24-byte common MAD header:
 * the shortest frame a write may hold. */
#define UMADFRAME_MIN		(64 + 24)
/* The longest frame a write may hold: one RMPP send. */
#define UMADFRAME_MAX		(64u * 1024)

/*
 * Check one frame (size bytes at buf: umad header + MAD) written to `umad`.
 *
 * Returns 0 and sets *mad_len to the MAD bytes to send: size - 64, or 256
 * for a frame shorter than a whole MAD (the caller zero-pads it to 64 + 256
 * bytes).  Otherwise returns
 *   -EINVAL    shorter than UMADFRAME_MIN;
 *   -EMSGSIZE  longer than UMADFRAME_MAX, or more than one MAD for a class
 *              without RMPP or without RMPP Active (MAD byte 26 bit 0);
 * and, if whylen > 0, writes the reason (NUL-terminated, no newline, as
 * last_error shows it) to why, e.g.
 * "frame of 70 bytes: shorter than the 64-byte umad header and a MAD header".
 * *mad_len is left alone on error.
 */
int umadframe_check(const void *buf, size_t size, size_t *mad_len, char *why,
		    size_t whylen);

#endif /* UMADFS_UMADFRAME_H */
