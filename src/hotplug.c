/* CA hot-plug: the scan of /sys/class/infiniband_mad, the comparison of two
 * scans, and the thread that rescans, debounced, after each uevent of the
 * RDMA classes (include/umadfs/hotplug.h says what counts as a CA). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libudev.h>

#include "umadfs/base/clock.h"
#include "umadfs/base/log.h"
#include "umadfs/engine/ibumad.h"
#include "umadfs/hotplug.h"

/* `rdma link delete/add` sends its 4 uevents within ~20 ms (measured in the
 * VM tier, tests/vm/hotplug): one rescan DEBOUNCE_MS after the last event
 * of a burst, and no later than DEBOUNCE_MAX_MS after its first. */
#define DEBOUNCE_MS 150
#define DEBOUNCE_MAX_MS 1000
#define FALLBACK_MS 1000 /* rescan period when no uevent socket opened */

static struct {
	hotplug_fn fn;
	void *ctx;
	struct udev *udev;
	struct udev_monitor *mon; /* NULL: rescan every FALLBACK_MS */
	int wake_fd;              /* eventfd: hotplug_kick, hotplug_stop */
	pthread_t thread;
	pthread_mutex_t lock;
	bool started;                /* lock */
	bool stopping;               /* lock */
	struct hotplug_names kicked; /* lock: from hotplug_kick */
	struct hotplug_cas known;    /* hotplug thread: as last reported */
	struct hotplug_names gone;   /* hotplug thread: since the last report */
} hp = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake_fd = -1 };

/* ---- the scan --------------------------------------------------------------- */

/* SplitMix64's finalizer over an inode number, from a seed per role (the
 * CA's directory, a umad device's): every bit of ino changes the whole id,
 * so that no two registrations add up to the same one. */
#define SEED_CA 0x243f6a8885a308d3ULL
#define SEED_UMAD 0x13198a2e03707344ULL

static uint64_t mix(uint64_t seed, uint64_t ino)
{
	uint64_t z = ino ^ seed;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Formats a path into out[PATH_MAX]; -ENAMETOOLONG if it does not fit. */
__attribute__((format(printf, 2, 3)))
static int pathf(char *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	return n >= 0 && n < PATH_MAX ? 0 : -ENAMETOOLONG;
}

/* The first line of dir/name, without its newline. */
static int read_line(const char *dir, const char *name, char *buf,
		     size_t size)
{
	char path[PATH_MAX];
	bool ok;
	FILE *f;

	if (pathf(path, "%s/%s", dir, name))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static struct hotplug_ca *find_ca(const struct hotplug_cas *cas,
				  const char *name)
{
	for (int i = 0; i < cas->n; i++)
		if (strcmp(cas->ca[i].name, name) == 0)
			return (struct hotplug_ca *)&cas->ca[i];
	return NULL;
}

/* "umad" and digits: a port's MAD device (not issmN, not abi_version). */
static bool is_umad_name(const char *name)
{
	if (strncmp(name, "umad", 4) != 0 || !name[4])
		return false;
	return strspn(name + 4, "0123456789") == strlen(name + 4);
}

/* Counts the umad device dir/umadN towards the CA its ibdev names. */
static void add_umad(const char *dir, const char *umad,
		     struct hotplug_cas *out)
{
	char path[PATH_MAX], ibdev[UMAD_CA_NAME_LEN + 2];
	struct hotplug_ca *ca;
	struct stat st;

	if (pathf(path, "%s/%s", dir, umad) ||
	    read_line(path, "ibdev", ibdev, sizeof(ibdev)) ||
	    !ibdev[0] || strlen(ibdev) >= UMAD_CA_NAME_LEN ||
	    stat(path, &st) < 0)
		return; /* going away while we look */
	ca = find_ca(out, ibdev);
	if (!ca) {
		if (out->n == HOTPLUG_MAX_CAS)
			return;
		ca = &out->ca[out->n++];
		memset(ca, 0, sizeof(*ca));
		strcpy(ca->name, ibdev);
	}
	ca->nports++;
	ca->id += mix(SEED_UMAD, st.st_ino);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct hotplug_ca *)a)->name,
		      ((const struct hotplug_ca *)b)->name);
}

/* Adds the inode of root/class/infiniband/NAME to each CA's id; drops the
 * CAs whose directory is gone. */
static void add_ca_dirs(const char *root, struct hotplug_cas *cas)
{
	char path[PATH_MAX];
	struct stat st;
	int kept = 0;

	for (int i = 0; i < cas->n; i++) {
		if (pathf(path, "%s/class/infiniband/%s", root,
			  cas->ca[i].name) ||
		    stat(path, &st) < 0)
			continue;
		cas->ca[kept] = cas->ca[i];
		cas->ca[kept++].id += mix(SEED_CA, st.st_ino);
	}
	cas->n = kept;
	qsort(cas->ca, cas->n, sizeof(cas->ca[0]), by_name);
}

int hotplug_scan(const char *sysfs_root, struct hotplug_cas *out)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *d;

	out->n = 0;
	if (pathf(dir, "%s/class/infiniband_mad", sysfs_root))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)))
		if (is_umad_name(e->d_name))
			add_umad(dir, e->d_name, out);
	closedir(d);
	add_ca_dirs(sysfs_root, out);
	return 0;
}

/* ---- the comparison ------------------------------------------------------------ */

void hotplug_names_add(struct hotplug_names *names, const char *name)
{
	if (strlen(name) >= UMAD_CA_NAME_LEN || names->n == HOTPLUG_MAX_CAS)
		return;
	for (int i = 0; i < names->n; i++)
		if (strcmp(names->name[i], name) == 0)
			return;
	strcpy(names->name[names->n++], name);
}

static bool names_have(const struct hotplug_names *names, const char *name)
{
	for (int i = 0; names && i < names->n; i++)
		if (strcmp(names->name[i], name) == 0)
			return true;
	return false;
}

void hotplug_diff(const struct hotplug_cas *known,
		  const struct hotplug_cas *now,
		  const struct hotplug_names *gone,
		  struct hotplug_change *out)
{
	out->removed.n = 0;
	out->added.n = 0;
	for (int i = 0; i < known->n; i++) {
		const struct hotplug_ca *k = &known->ca[i];
		const struct hotplug_ca *c = find_ca(now, k->name);

		if (!c || c->id != k->id || c->nports != k->nports ||
		    names_have(gone, k->name))
			out->removed.ca[out->removed.n++] = *k;
	}
	for (int i = 0; i < now->n; i++) {
		const struct hotplug_ca *c = &now->ca[i];

		if (!find_ca(known, c->name) || find_ca(&out->removed, c->name))
			out->added.ca[out->added.n++] = *c;
	}
}

/* ---- the thread ---------------------------------------------------------------- */

/* When a burst of events began and when its last one came (ms); first is 0
 * while no rescan is pending. */
struct debounce {
	int64_t first, last;
};

static void debounce_note(struct debounce *db)
{
	db->last = clock_now_ms();
	if (!db->first)
		db->first = db->last;
}

static int64_t debounce_due(const struct debounce *db)
{
	int64_t quiet = db->last + DEBOUNCE_MS;
	int64_t latest = db->first + DEBOUNCE_MAX_MS;

	return quiet < latest ? quiet : latest;
}

/* poll's timeout: until the pending rescan, else forever (or the fallback
 * period without uevents). */
static int wait_ms(const struct debounce *db)
{
	int64_t left;

	if (!db->first)
		return hp.mon ? -1 : FALLBACK_MS;
	left = debounce_due(db) - clock_now_ms();
	return left > 0 ? (int)left : 0;
}

static void log_change(const struct hotplug_change *change)
{
	for (int i = 0; i < change->removed.n; i++)
		log_info("hotplug: %s removed", change->removed.ca[i].name);
	for (int i = 0; i < change->added.n; i++)
		log_info("hotplug: %s added (%d port%s)",
			 change->added.ca[i].name, change->added.ca[i].nports,
			 change->added.ca[i].nports == 1 ? "" : "s");
}

static void rescan_and_report(void)
{
	struct hotplug_change change;
	struct hotplug_cas now;
	int r = hotplug_scan("/sys", &now);

	if (r) {
		log_warn("hotplug: scanning /sys/class/infiniband_mad: %s",
			 strerror(-r));
		return; /* keep what is gone for the next scan */
	}
	hotplug_diff(&hp.known, &now, &hp.gone, &change);
	hp.known = now;
	hp.gone.n = 0;
	if (!change.removed.n && !change.added.n)
		return;
	log_change(&change);
	hp.fn(hp.ctx, &change);
}

/* Takes what hotplug_kick and hotplug_stop left; returns true to stop. */
static bool take_requests(void)
{
	uint64_t count;
	bool stop;

	if (read(hp.wake_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		log_warn("hotplug: eventfd: %s", strerror(errno));
	pthread_mutex_lock(&hp.lock);
	stop = hp.stopping;
	for (int i = 0; i < hp.kicked.n; i++)
		hotplug_names_add(&hp.gone, hp.kicked.name[i]);
	hp.kicked.n = 0;
	pthread_mutex_unlock(&hp.lock);
	return stop;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* Reads every queued uevent; returns true if a rescan is needed (an event
 * of our classes, or events lost to a full socket). */
static bool take_uevents(void)
{
	struct udev_device *dev;
	bool any = false;

	for (;;) {
		const char *action, *subsystem, *sysname;

		errno = 0;
		dev = udev_monitor_receive_device(hp.mon);
		if (!dev)
			return any || (errno && errno != EAGAIN);
		action = or_empty(udev_device_get_action(dev));
		subsystem = or_empty(udev_device_get_subsystem(dev));
		sysname = or_empty(udev_device_get_sysname(dev));
		log_dbg("hotplug: uevent %s %s/%s", action, subsystem, sysname);
		/* the CA itself: its name counts even if it is back by the
		 * time of the rescan */
		if (!strcmp(action, "remove") && !strcmp(subsystem, "infiniband"))
			hotplug_names_add(&hp.gone, sysname);
		udev_device_unref(dev);
		any = true;
	}
}

static void *hotplug_main(void *arg)
{
	struct pollfd fds[2] = {
		{ .fd = hp.wake_fd, .events = POLLIN },
		{ .fd = hp.mon ? udev_monitor_get_fd(hp.mon) : -1,
		  .events = POLLIN },
	};
	struct debounce db = { 0 };

	for (;;) {
		int n = poll(fds, 2, wait_ms(&db));

		if (n < 0 && errno != EINTR) {
			log_err("hotplug: poll: %s", strerror(errno));
			break;
		}
		if (n > 0 && (fds[0].revents & POLLIN)) {
			if (take_requests())
				break;
			debounce_note(&db);
		}
		if (n > 0 && (fds[1].revents & POLLIN) && take_uevents())
			debounce_note(&db);
		if ((db.first && clock_now_ms() >= debounce_due(&db)) ||
		    (n == 0 && !hp.mon)) {
			db.first = 0;
			rescan_and_report();
		}
	}
	return NULL;
}

/* ---- start, stop, kick -------------------------------------------------------- */

static void close_monitor(void)
{
	if (hp.mon)
		udev_monitor_unref(hp.mon);
	if (hp.udev)
		udev_unref(hp.udev);
	hp.mon = NULL;
	hp.udev = NULL;
}

/* The "kernel" source: uevents straight from the kernel, udevd or not. */
static void open_monitor(void)
{
	static const char *const classes[] = {
		"infiniband", "infiniband_mad", "infiniband_verbs",
	};
	bool ok;

	hp.udev = udev_new();
	hp.mon = hp.udev ? udev_monitor_new_from_netlink(hp.udev, "kernel")
			 : NULL;
	ok = hp.mon != NULL;
	for (size_t i = 0; ok && i < sizeof(classes) / sizeof(classes[0]); i++)
		ok = udev_monitor_filter_add_match_subsystem_devtype(
			     hp.mon, classes[i], NULL) >= 0;
	if (ok && udev_monitor_enable_receiving(hp.mon) >= 0)
		return;
	log_warn("hotplug: no uevent socket (%s): rescanning every %d ms",
		 strerror(errno), FALLBACK_MS);
	close_monitor();
}

/* The thread starts with every signal blocked. */
static int start_thread(void)
{
	sigset_t all, old;
	int r;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&hp.thread, NULL, hotplug_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

int hotplug_start(hotplug_fn fn, void *ctx)
{
	int r;

	if (ibumad_simulated()) {
		log_dbg("hotplug: simulated fabric: no CA hot-plug");
		return 0;
	}
	if (hp.wake_fd >= 0)
		return -EALREADY;
	hp.fn = fn;
	hp.ctx = ctx;
	hp.stopping = false;
	hp.kicked.n = 0;
	hp.gone.n = 0;
	hp.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (hp.wake_fd < 0)
		return -errno;
	open_monitor(); /* before the scan: a change after it is heard */
	r = hotplug_scan("/sys", &hp.known);
	if (r)
		goto err_monitor;
	r = start_thread();
	if (r)
		goto err_monitor;
	pthread_mutex_lock(&hp.lock);
	hp.started = true;
	pthread_mutex_unlock(&hp.lock);
	return 0;

err_monitor:
	close_monitor();
	close(hp.wake_fd);
	hp.wake_fd = -1;
	return r;
}

static void wake_thread(void)
{
	uint64_t one = 1;

	if (write(hp.wake_fd, &one, sizeof(one)) < 0)
		log_warn("hotplug: eventfd: %s", strerror(errno));
}

void hotplug_kick(const char *ca)
{
	pthread_mutex_lock(&hp.lock);
	if (hp.started) {
		if (ca)
			hotplug_names_add(&hp.kicked, ca);
		wake_thread();
	}
	pthread_mutex_unlock(&hp.lock);
}

void hotplug_stop(void)
{
	pthread_mutex_lock(&hp.lock);
	if (!hp.started) {
		pthread_mutex_unlock(&hp.lock);
		return;
	}
	hp.started = false;
	hp.stopping = true;
	wake_thread();
	pthread_mutex_unlock(&hp.lock);
	pthread_join(hp.thread, NULL);
	close_monitor();
	close(hp.wake_fd);
	hp.wake_fd = -1;
}
