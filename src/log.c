/* Logging for the daemon: one line per message, level first. */
#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>

#include "umadfs/log.h"

static bool log_debug_on;
static bool log_to_syslog;

void log_init(bool debug)
{
	log_debug_on = debug;
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
	char line[1024];
	va_list ap;

	if (level == LOG_LVL_DEBUG && !log_debug_on)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_to_syslog)
		syslog(prio[level], "%s: %s", prefix[level], line);
	else
		fprintf(stderr, "umadfs: %s: %s\n", prefix[level], line);
}
