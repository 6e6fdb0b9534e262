/* Logging for the daemon and for libfuse: one line per message, level
 * first, to stderr or (daemonized) syslog. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <fuse_log.h>

#include "umadfs/base/log.h"

static bool log_debug_on;
static bool log_to_syslog;

/* A line to stderr in one write(2), not through stdio: libfuse cancels
 * its idle workers at the end of the loop, and one cancelled inside
 * perror() (it prints "fuse: reading device: ..." when the connection is
 * aborted) leaves stderr's stdio lock taken for good, so the next
 * fprintf(stderr) - ours at "stopped" - would wait forever. */
static void write_line(const char *text)
{
	size_t len = strlen(text), off = 0;

	while (off < len) {
		ssize_t n = write(STDERR_FILENO, text + off, len - off);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
}

/* libfuse's own messages (fuse_log: unmount errors and the like) where
 * ours go: stderr, in one write(2), or syslog once daemonized.  They carry
 * their "fuse: " prefix and newline. */
static void log_fuse_message(enum fuse_log_level level, const char *fmt,
			       va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (log_to_syslog)
		syslog((int)level, "%s", line); /* the same numbers as syslog's */
	else
		write_line(line);
}

void log_init(bool debug)
{
	log_debug_on = debug;
	fuse_set_log_func(log_fuse_message);
}

void log_use_syslog(void)
{
	openlog("umadfs", LOG_PID, LOG_DAEMON);
	log_to_syslog = true;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[LOG_LVL_ERROR] = "error", [LOG_LVL_WARNING] = "warning",
		[LOG_LVL_INFO] = "info", [LOG_LVL_DEBUG] = "debug",
	};
	static const int prio[] = {
		[LOG_LVL_ERROR] = LOG_ERR, [LOG_LVL_WARNING] = LOG_WARNING,
		[LOG_LVL_INFO] = LOG_INFO, [LOG_LVL_DEBUG] = LOG_DEBUG,
	};
	char line[1024], out[1100];
	va_list ap;

	if (level == LOG_LVL_DEBUG && !log_debug_on)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_to_syslog) {
		syslog(prio[level], "%s: %s", prefix[level], line);
	} else {
		snprintf(out, sizeof(out), "umadfs: %s: %s\n", prefix[level], line);
		write_line(out);
	}
}

const char *log_errno_name(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "EIO";
}
