/* Open replies for files that are streams (MAD files, rq/ recv). */
#ifndef UMADFS_STREAM_H
#define UMADFS_STREAM_H

#include <fuse_lowlevel.h>

/* Replies to an open with FOPEN_STREAM (no file position at all), direct
 * I/O and no seeking: a reader blocked on one fd must not hold the
 * position lock a writer on the same fd needs.  libfuse 3.14 has no field
 * for FOPEN_STREAM, so the reply is built by hand.  Returns
 * fuse_reply_buf()'s result: -ENOENT when the open was interrupted, and
 * then no release will come for fi->fh (the caller frees it). */
int reply_open_stream(fuse_req_t req, const struct fuse_file_info *fi);

#endif
