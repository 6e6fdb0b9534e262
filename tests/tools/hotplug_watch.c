/* hotplug_watch: runs the daemon's CA hot-plug thread (src/hotplug.c) and
 * prints each change it reports, for the VM tier (tests/vm/hotplug).
 *
 *   hotplug_watch [-d]     -d: the module's debug log (each uevent) on stderr
 *
 * Prints "<uptime> started <r>", then one line per change
 * "<uptime> change removed=A,B added=C" (each list "-" when empty), and on
 * SIGTERM or SIGINT "<uptime> stopped in S s". */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/log.h"
#include "umadfs/hotplug.h"

static double uptime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void list(const char *what, const struct hotplug_cas *cas)
{
	printf(" %s=", what);
	for (int i = 0; i < cas->n; i++)
		printf("%s%s", i ? "," : "", cas->ca[i].name);
	if (!cas->n)
		putchar('-');
}

static void print_change(void *ctx, const struct hotplug_change *change)
{
	(void)ctx;
	printf("%.3f change", uptime());
	list("removed", &change->removed);
	list("added", &change->added);
	putchar('\n');
	fflush(stdout);
}

int main(int argc, char **argv)
{
	sigset_t set;
	double t0;
	int sig, r;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	log_init(argc > 1 && !strcmp(argv[1], "-d"));
	r = hotplug_start(print_change, NULL);
	printf("%.3f started %d\n", uptime(), r);
	fflush(stdout);
	sigwait(&set, &sig);
	t0 = uptime();
	hotplug_stop();
	printf("%.3f stopped in %.3f s\n", uptime(), uptime() - t0);
	return r ? 1 : 0;
}
