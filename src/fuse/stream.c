/* Opens with per-open state, and the open replies of queues' files
 * (stream.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <linux/fuse.h>

#include "umadfs/fuse/stream.h"

int stream_reply_open(fuse_req_t req, const struct fuse_file_info *fi)
{
	struct fuse_open_out out;

	memset(&out, 0, sizeof(out));
	out.fh = fi->fh;
	out.open_flags = FOPEN_DIRECT_IO | FOPEN_NONSEEKABLE | FOPEN_STREAM;
	if (fi->noflush)
		out.open_flags |= FOPEN_NOFLUSH;
	return fuse_reply_buf(req, (const char *)&out, sizeof(out));
}

int stream_reply_open_lines(fuse_req_t req, struct fuse_file_info *fi)
{
	fi->direct_io = 1;
	fi->nonseekable = 0;
	return fuse_reply_open(req, fi);
}

void *stream_open_read_only(fuse_req_t req, const struct fuse_file_info *fi,
			    size_t size)
{
	void *state;

	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EACCES);
		return NULL;
	}
	state = calloc(1, size);
	if (!state)
		fuse_reply_err(req, ENOMEM);
	return state;
}

void stream_reply_text_slice(fuse_req_t req, const char *text, size_t len,
			     size_t size, off_t off)
{
	if (off < 0 || (size_t)off >= len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > len - (size_t)off)
		size = len - (size_t)off;
	fuse_reply_buf(req, text + off, size);
}
