// SPDX-License-Identifier: GPL-2.0-or-later
/* umadframe: checks of a binary frame written to `umad`.  See umadframe.h. */
#include "umadfs/mad/umadframe.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "umadfs/mad/madtext.h"

_Static_assert(UMADFRAME_MIN == MADTEXT_FRAME_HDR_SIZE + 24,
	       "umad header + common MAD header");

static int refuse(char *why, size_t whylen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(char *why, size_t whylen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

int umadframe_check(const void *buf, size_t size, size_t *mad_len, char *why,
		    size_t whylen)
{
	const uint8_t *mad = (const uint8_t *)buf + MADTEXT_FRAME_HDR_SIZE;
	size_t len;

	if (whylen)
		why[0] = '\0';
	if (size < UMADFRAME_MIN)
		return refuse(why, whylen, -EINVAL,
			      "frame of %zu bytes: shorter than the 64-byte "
			      "umad header and a MAD header", size);
	if (size > UMADFRAME_MAX)
		return refuse(why, whylen, -EMSGSIZE,
			      "frame of %zu bytes: longer than %u", size,
			      UMADFRAME_MAX);
	len = size - MADTEXT_FRAME_HDR_SIZE;
	/* More than one MAD is an RMPP message: the class must have RMPP and
	 * the RMPP header must say Active (flags bit 0), or the kernel would
	 * refuse it. */
	if (len > MADTEXT_MAD_SIZE &&
	    (!madtext_class_uses_rmpp(mad[1]) || !(mad[26] & 1)))
		return refuse(why, whylen, -EMSGSIZE,
			      "frame of %zu bytes: more than one MAD needs an "
			      "RMPP class and RMPP Active", size);
	*mad_len = len < MADTEXT_MAD_SIZE ? MADTEXT_MAD_SIZE : len;
	return 0;
}
