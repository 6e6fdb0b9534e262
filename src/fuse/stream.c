/* Opens with per-open state, the open replies of queues' files, and the
 * buffer each thread fills its reads in (stream.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* Reads are filled in a buffer of the calling thread's, kept for its next
 * read: a malloc of the read's size (64 KiB and more) per read costs page
 * faults as the heap grows and shrinks.  Freed when the thread exits. */
struct thread_buf {
	size_t cap;
	char data[];
};

static pthread_key_t thread_buf_key;
static pthread_once_t thread_buf_once = PTHREAD_ONCE_INIT;

static void thread_buf_key_init(void)
{
	if (pthread_key_create(&thread_buf_key, free))
		abort();
}

static char *thread_buf(size_t size)
{
	struct thread_buf *b;

	pthread_once(&thread_buf_once, thread_buf_key_init);
	b = pthread_getspecific(thread_buf_key);
	if (!b || b->cap < size) {
		struct thread_buf *bigger = malloc(sizeof(*bigger) + (size ? size : 1));

		if (!bigger)
			return NULL;
		bigger->cap = size;
		if (pthread_setspecific(thread_buf_key, bigger)) {
			free(bigger);
			return NULL;
		}
		free(b);
		b = bigger;
	}
	return b->data;
}

/* A few threads reading megabytes do not keep megabytes each. */
#define THREAD_BUF_KEEP (256u << 10)

char *stream_read_buf(size_t size)
{
	void *p;

	if (size <= THREAD_BUF_KEEP)
		return thread_buf(size);
	/* Not malloc: glibc raises its mmap threshold to the size of a
	 * mapped chunk freed, and then keeps the next in the thread's arena
	 * (1 MiB reads of a 9 MB file grew the daemon by 10 MiB). */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void stream_read_buf_done(char *buf, size_t size)
{
	if (buf && size > THREAD_BUF_KEEP)
		munmap(buf, size);
}
