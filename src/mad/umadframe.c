/* umadframe: checks of a binary frame written to `umad`.  See umadframe.h. */
#include "umadfs/mad/umadframe.h"

#include <errno.h>
#include <stdint.h>

#include <infiniband/mad.h>

#include "umadfs/mad/mad.h"
#include "codec_priv.h"

_Static_assert(UMADFRAME_MIN == UMAD_FRAME_HDR_SIZE + MAD_HDR_SIZE,
	       "umad header + common MAD header");

int umadframe_check(const void *buf, size_t size, size_t *mad_len, char *why,
		    size_t whylen)
{
	const uint8_t *mad = (const uint8_t *)buf + UMAD_FRAME_HDR_SIZE;
	size_t len;

	if (whylen)
		why[0] = '\0';
	if (size < UMADFRAME_MIN)
		return codec_error(why, whylen, -EINVAL,
			"frame of %zu bytes: shorter than the 64-byte "
			"umad header and a MAD header", size);
	if (size > UMADFRAME_MAX)
		return codec_error(why, whylen, -EMSGSIZE,
			"frame of %zu bytes: longer than %u", size,
			UMADFRAME_MAX);
	len = size - UMAD_FRAME_HDR_SIZE;
	/* More than one MAD is an RMPP message: the class must have RMPP and
	 * the RMPP header must say Active, or the kernel would refuse it. */
	if (len > MAD_SIZE && (!mad_class_uses_rmpp(mad[1]) ||
			       !(mad_get_field((void *)mad, 0, IB_SA_RMPP_FLAGS_F) &
				 IB_RMPP_FLAG_ACTIVE)))
		return codec_error(why, whylen, -EMSGSIZE,
			"frame of %zu bytes: more than one MAD needs an "
			"RMPP class and RMPP Active", size);
	*mad_len = len < MAD_SIZE ? MAD_SIZE : len;
	return 0;
}
