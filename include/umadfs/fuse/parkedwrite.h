/* A write parked until another thread has its answer (a MAD's, for the
 * action files), or an open until what it waits for is free (the issm
 * file's): answered exactly once, by that thread or, first, by an
 * interrupt (EINTR). */
#ifndef UMADFS_PARKEDWRITE_H
#define UMADFS_PARKEDWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <fuse_lowlevel.h>

struct parkedwrite;

/* Parks req, a write of size bytes: NULL on ENOMEM (not parked, the
 * caller replies). */
struct parkedwrite *parkedwrite_new(fuse_req_t req, size_t size);
/* Parks req, an open whose fi is kept for the answer: NULL on ENOMEM. */
struct parkedwrite *parkedwrite_new_open(fuse_req_t req,
					 const struct fuse_file_info *fi);
/* Answers the write (its size when err is 0) or the open (its fi), else
 * err; does nothing more if an interrupt answered it.  Frees pw.  True
 * when this call answered it (the writer or opener has the answer). */
bool parkedwrite_answer(struct parkedwrite *pw, int err);
/* As parkedwrite_answer, an open's fi->fh set to fh first. */
bool parkedwrite_answer_fh(struct parkedwrite *pw, int err, uint64_t fh);
/* Whether nothing has answered it yet (an interrupt may have). */
bool parkedwrite_pending(struct parkedwrite *pw);

#endif
