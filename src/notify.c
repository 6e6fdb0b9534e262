/* Readiness for the service manager: one sd_notify(3) "READY=1" once the
 * mount is up, so that units ordered after umadfs.service (Type=notify)
 * start only when the files are there. */
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "umadfs/base/log.h"
#include "umadfs/notify.h"

void notify_ready(const char *mountpoint)
{
	int r;

	/* unset_environment=0: nothing we start would use it anyway. */
	r = sd_notifyf(0, "READY=1\nSTATUS=mounted on %s", mountpoint);
	if (r < 0)
		log_warn("telling the service manager we are ready: %s",
			 strerror(-r));
}
