/* A write parked until another thread has its answer (a MAD's, for the
 * action files): answered exactly once, by that thread or, first, by an
 * interrupt (EINTR). */
#ifndef UMADFS_PARKEDWRITE_H
#define UMADFS_PARKEDWRITE_H

#include <stddef.h>

#include <fuse_lowlevel.h>

struct parkedwrite;

/* Parks req, a write of size bytes: NULL on ENOMEM (not parked, the
 * caller replies). */
struct parkedwrite *parkedwrite_new(fuse_req_t req, size_t size);
/* Answers the write: its size when err is 0, else err; does nothing
 * more if an interrupt answered it.  Frees pw. */
void parkedwrite_answer(struct parkedwrite *pw, int err);

#endif
