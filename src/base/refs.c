/* Reference counts (refs.h): atomic, a hold relaxed, a release that
 * orders the holder's writes before the last one's free. */
#include "umadfs/base/refs.h"

void refs_get(int *refs)
{
	__atomic_add_fetch(refs, 1, __ATOMIC_RELAXED);
}

bool refs_put(int *refs)
{
	return __atomic_sub_fetch(refs, 1, __ATOMIC_ACQ_REL) == 0;
}
