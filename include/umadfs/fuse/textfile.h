/* Read-only text files whose content is made on open: the value is
 * formatted once into a per-open copy, so every read of one open file
 * sees the same bytes (as sysfs does) and offsets work.  textfile_read and
 * textfile_release are node_ops handlers as they are. */
#ifndef UMADFS_TEXTFILE_H
#define UMADFS_TEXTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <fuse_lowlevel.h>

struct node;

#define TEXTFILE_MAX 4096 /* a sysfs page */

/* Formats the file's value into buf; returns its length or -errno. */
typedef int (*textfile_show_fn)(struct node *n, char *buf, size_t cap);
/* Whether the opener of req is privileged (e.g. may do everything), for
 * the feature to say, at open, as the kernel decides a write by f_cred. */
typedef bool (*textfile_privilege_fn)(fuse_req_t req);

void textfile_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi,
		   textfile_show_fn show);
/* As textfile_open, but an error of show other than ENOENT is the reads'
 * (sysfs runs show at read: node_exporter skips a file whose read, not
 * open, fails with EOPNOTSUPP or EINVAL). */
void textfile_open_late(fuse_req_t req, struct node *n,
			struct fuse_file_info *fi, textfile_show_fn show);
/* An open of a text the caller made (of any length: over TEXTFILE_MAX
 * too), served by textfile_read and textfile_release.  (fs.c refuses an
 * open against the node's mode bits before any of these: a read-only
 * file's writer, a write-only file's reader, root's too.) */
void textfile_open_text(fuse_req_t req, struct fuse_file_info *fi,
			const char *text, size_t len);
/* For files that are also written (settings, register): a read-only open
 * gets a copy; an open for writing none, but privilege's answer for the
 * opener (if privilege) is kept for the write handler. */
void textfile_open_settable(fuse_req_t req, struct node *n,
			    struct fuse_file_info *fi, textfile_show_fn show,
			    textfile_privilege_fn privilege);
/* A file written to act (a reset, mode 0200): its ops are .show =
 * textfile_show_nothing (its size, 0), .open = textfile_open_action and
 * its write; it has no read bit, so a read open fails with EACCES, root's
 * too (node_exporter skips a counters/ file it may not read). */
int textfile_show_nothing(struct node *n, char *buf, size_t cap);
void textfile_open_action(fuse_req_t req, struct node *n, struct fuse_file_info *fi);
/* One-value files (settings): a writer's text is one value, a line,
 * taken whole when it is complete: at its newline, or at the close
 * (FLUSH) of a descriptor of its open if it has none.  A write is joined
 * to the line the open's writes before left unfinished and checked by the
 * feature's take: text[0..len), trailing spaces and newlines cut;
 * complete when ended (a newline, a close, TEXTFILE_VALUE_MAX bytes or
 * more).  Complete, take returns 0 (taken) or -errno (refused: the write
 * or close fails with it, the feature has said why).  Unfinished, it
 * takes nothing: -EAGAIN if the text is, or more bytes could make it, a
 * value (the write succeeds; the text waits for the rest, or the close),
 * else -errno (refused now: no more bytes can help).  So "10" then "00\n"
 * is 1000, and a value is never taken in part.  The node's flush is
 * textfile_flush_value with the same take. */
#define TEXTFILE_VALUE_MAX 64
typedef int (*textfile_value_fn)(struct node *n, const char *text, size_t len,
				 bool complete);
void textfile_write_value(fuse_req_t req, struct node *n, const char *buf,
			  size_t size, struct fuse_file_info *fi,
			  textfile_value_fn take);
void textfile_flush_value(fuse_req_t req, struct node *n,
			  struct fuse_file_info *fi, textfile_value_fn take);
/* For a write handler: whether the opener is privileged (false without a
 * privilege function). */
bool textfile_opener_privileged(const struct fuse_file_info *fi);
/* EBADF on a file opened for writing only. */
void textfile_read(fuse_req_t req, struct node *n, size_t size, off_t off,
		   struct fuse_file_info *fi);
void textfile_release(fuse_req_t req, struct node *n, struct fuse_file_info *fi);
/* At exit: frees the copies whose RELEASE never came (the kernel drops
 * those still queued when the connection ends) and the values kept for
 * the next open (textfile_size). */
void textfile_drop_opens(void);
/* st_size: the length the value has now, 0 if it cannot be read.  The
 * value itself is what the next open of n within 50 ms reads, so a
 * copy that stats, opens and reads st_size bytes gets it whole. */
off_t textfile_size(struct node *n, textfile_show_fn show);

#endif
