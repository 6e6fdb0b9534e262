/* The supervisor thread: turns SIGINT/SIGTERM/SIGHUP and the disappearance
 * of the mount (a lazy unmount, `fusermount3 -uz`) into one orderly
 * shutdown, from a thread that handles no FUSE request. */
#ifndef UMADFS_SUPERVISOR_H
#define UMADFS_SUPERVISOR_H

#include <stdbool.h>
#include <sys/types.h>

struct fuse_session;

/* Called once when shutdown begins, before the mount is detached: release
 * whatever waits inside the daemon (parked reads) with an error. */
typedef void (*supervisor_release_fn)(void);

/* The caller has blocked SIGINT, SIGTERM and SIGHUP in every thread. */
int supervisor_start(struct fuse_session *se, const char *mountpoint,
		     dev_t mount_dev, supervisor_release_fn release);
/* Called when the session loop has returned; joins the thread.  Returns
 * true if the mount was detached already (do not unmount again). */
bool supervisor_stop(void);

#endif
