/* A growing array: room for more elements, its capacity doubled from a
 * first size, the one way every growing array and buffer of umadfs gets
 * bigger. */
#ifndef UMADFS_ARRAY_H
#define UMADFS_ARRAY_H

#include <stddef.h>

/* Room in the array at *arrayp (a pointer to its first element, NULL
 * with *cap 0) for need elements of size bytes: 0, with *cap the first
 * of first, 2 first, 4 first ... (or of *cap doubled) that holds need and
 * the array moved there if it had to; or -ENOMEM, the array and *cap as
 * they were.  Its elements are kept; those added are not initialised. */
int array_grow(void *arrayp, size_t *cap, size_t need, size_t size, size_t first);

/* array_grow() for an array a (an lvalue of a pointer type) and its
 * capacity c (a size_t lvalue). */
#define ARRAY_GROW(a, c, need, first) \
	array_grow(&(a), &(c), (need), sizeof(*(a)), (first))

#endif
