/*
 * madtext: the text codec of the send/recv files.
 *
 * One line of text is one MAD.  madtext_parse() turns a line written to a
 * port's `send` file into a kernel umad frame (struct ib_user_mad followed
 * by the MAD bytes); madtext_format() turns a received frame into the line
 * a reader of `recv` gets.  The codec does no I/O and no allocation: it
 * works in the caller's buffers so that the daemon can push 100k+ lines/s.
 *
 * The format itself is described in docs/text-format.md.
 */
#ifndef UMADFS_MADTEXT_H
#define UMADFS_MADTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "umadfs/mad/mad.h"

/*
 * Longest line (without its '\n') the send file accepts.  The caller
 * enforces it (-EMSGSIZE); madtext_parse() itself takes any length.  At two
 * hex digits per byte this bounds an RMPP send given with mad= to a little
 * under 8 KiB.  Received lines are not bounded by it: see
 * madtext_format_max().
 */
#define MADTEXT_LINE_MAX	16384

/* What madtext_parse() found on the line besides the frame contents. */
struct madtext_request {
	/* Bytes of MAD after the umad header: 256, or more for an RMPP send. */
	size_t mad_len;
	/* timeout= in ms, or -1 when the line has none (use the file default). */
	int timeout_ms;
	/* retries=, or -1 when the line has none. */
	int retries;
	/* The line had tid=.  (A TID that came with mad= does not count.) */
	bool tid_given;
};

/*
 * Parse one line (len bytes, without the '\n') into frame: the 64-byte umad
 * header (address, timeout_ms/retries as given else 0, length = 64 + mad_len;
 * agent_id and status 0) followed by the MAD.  frame_cap must be at least
 * UMAD_FRAME_MAX (one MAD); RMPP sends need more.
 *
 * Returns 0, -EINVAL (syntax, unknown or duplicate key, bad or out-of-range
 * value, missing class/method/lid, ...) or -EMSGSIZE (payload larger than
 * the class carries or than frame_cap).  On error err (if errlen > 0) holds
 * a one-line reason without a trailing newline, e.g.
 * "unknown key 'foo' at column 12".  The frame is garbage after an error.
 */
int madtext_parse(const char *line, size_t len, void *frame, size_t frame_cap,
		  struct madtext_request *req, char *err, size_t errlen);

/* madtext_format() flags. */
enum {
	/* Add the attribute's fields as Attribute.Field=value keys (the
	 * channel's decode setting "fields"). */
	MADTEXT_FIELDS = 1 << 0,
};

/*
 * Format one received frame (64-byte umad header + mad_len bytes of MAD,
 * mad_len >= 24) as one line ending in '\n' into buf.  tid is the TID to show
 * (the daemon rewrites TIDs and passes the caller's original); it is shown
 * in tid= and also inside mad=.  A nonzero umad status (hdr->status, an errno
 * such as ETIMEDOUT) is shown as error=.  flags: MADTEXT_FIELDS or 0.  No
 * NUL is written.
 *
 * Returns the number of bytes written, -ENOSPC if cap is below
 * madtext_format_need() (madtext_format_max() is always enough) or -EINVAL
 * if mad_len < 24.
 */
ssize_t madtext_format(const void *frame, size_t mad_len, uint64_t tid,
		       unsigned int flags, char *buf, size_t cap);

/* The text format's one quoting rule (docs/text-format.md): '"', the n
 * bytes of s with '"' and '\\' after a backslash and bytes outside
 * printable ASCII as \xNN, then '"'.  Writes at most
 * MADTEXT_QUOTED_MAX(n) bytes at p, no NUL; returns the end. */
#define MADTEXT_QUOTED_MAX(n) (2 + 4 * (size_t)(n))
char *madtext_quote(char *p, const uint8_t *s, size_t n);

/* Upper bound on the bytes madtext_format() writes for mad_len MAD bytes
 * with these flags, whatever the frame. */
size_t madtext_format_max(size_t mad_len, unsigned int flags);

/* The buffer madtext_format() needs for this frame (mad_len >= 24): at
 * most madtext_format_max(), less when the attribute has few fields. */
size_t madtext_format_need(const void *frame, size_t mad_len,
			   unsigned int flags);

/*
 * True for lines the send file skips: empty, only spaces/tabs, or whose
 * first non-blank character is '#'.
 */
bool madtext_is_blank(const char *line, size_t len);

/*
 * Name tables, case-insensitive on input, canonical spelling on output.
 * *_from_name() return the number or -1 if the name is unknown (they do not
 * accept numbers); *_name() return NULL when there is no name.
 */
int madtext_class_from_name(const char *s, size_t n);
const char *madtext_class_name(int mgmt_class);

int madtext_method_from_name(const char *s, size_t n);
const char *madtext_method_name(int method);

/* Attribute ids overlap between classes (SMI 0x11 NodeInfo, SA 0x11
 * NodeRecord, PMA 0x11 PortSamplesResult), so these take the class. */
int madtext_attr_from_name(int mgmt_class, const char *s, size_t n);
const char *madtext_attr_name(int mgmt_class, int attr_id);

/*
 * MAD layout per management class, as used by data=: the offset of the
 * class's data area in the MAD and its size in one MAD.  Classes that use
 * RMPP continue their data past one MAD (mad_class_uses_rmpp()).
 */
size_t madtext_data_offset(int mgmt_class);
size_t madtext_data_size(int mgmt_class);

#endif /* UMADFS_MADTEXT_H */
