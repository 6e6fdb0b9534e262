/* Open replies for the files of queues (stream.h). */
#include <string.h>

#include <linux/fuse.h>

#include "umadfs/fuse/stream.h"

int reply_open_stream(fuse_req_t req, const struct fuse_file_info *fi)
{
	struct fuse_open_out out;

	memset(&out, 0, sizeof(out));
	out.fh = fi->fh;
	out.open_flags = FOPEN_DIRECT_IO | FOPEN_NONSEEKABLE | FOPEN_STREAM;
	if (fi->noflush)
		out.open_flags |= FOPEN_NOFLUSH;
	return fuse_reply_buf(req, (const char *)&out, sizeof(out));
}

int reply_open_lines(fuse_req_t req, struct fuse_file_info *fi)
{
	fi->direct_io = 1;
	fi->nonseekable = 0;
	return fuse_reply_open(req, fi);
}
