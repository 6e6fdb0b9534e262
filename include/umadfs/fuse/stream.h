/* Open replies for the files of queues (MAD files, rq/ files, fabric
 * events): direct I/O, never the page cache. */
#ifndef UMADFS_STREAM_H
#define UMADFS_STREAM_H

#include <fuse_lowlevel.h>

/* Replies to an open with FOPEN_STREAM (no file position at all), direct
 * I/O and no seeking: a reader blocked on one fd must not hold the
 * position lock a writer on the same fd needs (umad, send).  libfuse 3.14
 * has no field for FOPEN_STREAM, so the reply is built by hand; it keeps
 * fi->noflush.  Returns fuse_reply_buf()'s result: -ENOENT when the open
 * was interrupted, and then no release will come for fi->fh (the caller
 * frees it). */
int reply_open_stream(fuse_req_t req, const struct fuse_file_info *fi);

/* Replies to an open of a file read as lines (recv, events) with direct
 * I/O and a file position: lseek() succeeds, as line readers (GNU head,
 * bash's read) need, but moves nothing; reads continue where the queue
 * stands.  A read blocked on a shared fd holds the kernel's position lock,
 * so these files are read-only.  Returns as reply_open_stream(). */
int reply_open_lines(fuse_req_t req, struct fuse_file_info *fi);

#endif
