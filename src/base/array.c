/* Growing arrays (array.h): capacities doubled, overflow refused. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/array.h"

int array_grow(void *arrayp, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t more = *cap ? *cap : first;
	void *v, *bigger;

	if (need <= *cap)
		return 0;
	if (!more)
		more = 1;
	while (more < need) {
		if (more > SIZE_MAX / 2)
			return -ENOMEM;
		more *= 2;
	}
	if (size && more > SIZE_MAX / size)
		return -ENOMEM;
	/* The caller's pointer, whatever its type, by its bytes. */
	memcpy(&v, arrayp, sizeof(v));
	bigger = realloc(v, more * size);
	if (!bigger)
		return -ENOMEM;
	memcpy(arrayp, &bigger, sizeof(bigger));
	*cap = more;
	return 0;
}
