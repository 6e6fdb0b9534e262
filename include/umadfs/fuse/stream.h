/* Opens of files whose state is per open (queues' files, fabric's big
 * texts) and the replies of queues' files: direct I/O, never the page
 * cache; and the buffer a read is filled in. */
#ifndef UMADFS_STREAM_H
#define UMADFS_STREAM_H

#include <stddef.h>

#include <fuse_lowlevel.h>

/* Replies to an open with FOPEN_STREAM (no file position at all), direct
 * I/O and no seeking: a reader blocked on one fd must not hold the
 * position lock a writer on the same fd needs (umad, send).  libfuse 3.14
 * has no field for FOPEN_STREAM, so the reply is built by hand; it keeps
 * fi->noflush.  Returns fuse_reply_buf()'s result: -ENOENT when the open
 * was interrupted, and then no release will come for fi->fh (the caller
 * frees it). */
int stream_reply_open(fuse_req_t req, const struct fuse_file_info *fi);

/* Replies to an open of a file read as lines (recv, events) with direct
 * I/O and a file position: lseek() succeeds, as line readers (GNU head,
 * bash's read) need, but moves nothing; reads continue where the queue
 * stands.  A read blocked on a shared fd holds the kernel's position lock,
 * so these files are read-only.  Returns as stream_reply_open(). */
int stream_reply_open_lines(fuse_req_t req, struct fuse_file_info *fi);

/* A read-only file's open: refused with EACCES unless read-only (root
 * passes the kernel's mode checks; sysfs refuses writes so), else size
 * zeroed bytes of per-open state.  NULL with the error replied. */
void *stream_open_read_only(fuse_req_t req, const struct fuse_file_info *fi,
			    size_t size);

/* Replies to a read of size bytes at off of text[0..len), which stays
 * alive until the open's release: the bytes there, none past the end. */
void stream_reply_text_slice(fuse_req_t req, const char *text, size_t len,
			     size_t size, off_t off);

/* A buffer for a read of size bytes: the calling thread's own, kept for
 * its next read, up to 256 KiB; else a mapping of its own (the kernel's
 * reads go up to 1 MiB), which stream_read_buf_done() gives back.  NULL
 * on ENOMEM. */
char *stream_read_buf(size_t size);
/* After the reply of a read of size bytes made in buf (NULL: none). */
void stream_read_buf_done(char *buf, size_t size);

#endif
