/* Logging: stderr while in the foreground, syslog (the journal) once
 * daemonized.  Messages are single lines prefixed with their level, so a
 * test can grep a daemon log for "error:". */
#ifndef UMADFS_LOG_H
#define UMADFS_LOG_H

#include <stdbool.h>

enum log_level { LOG_LVL_ERROR, LOG_LVL_WARNING, LOG_LVL_INFO, LOG_LVL_DEBUG };

void log_init(bool debug);
/* Switch to syslog; call after fuse_daemonize() when not in the foreground. */
void log_use_syslog(void);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The name of errno value err ("ETIMEDOUT") for log and event lines;
 * "EIO" for a number without one. */
const char *log_errno_name(int err);

#define log_err(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_dbg(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
