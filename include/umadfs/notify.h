/* Readiness for the service manager: tells systemd (Type=notify) that the
 * mount is up and answering. */
#ifndef UMADFS_NOTIFY_H
#define UMADFS_NOTIFY_H

/* Call once, after the mount is ready and before the session loop.  A no-op
 * when the daemon does not run under a service manager ($NOTIFY_SOCKET
 * unset). */
void notify_ready(const char *mountpoint);

#endif
