/* CA hot-plug: a thread that follows the kernel's CAs through the uevents of
 * the infiniband, infiniband_mad and infiniband_verbs classes (libudev's
 * "kernel" netlink source: no udevd needed) and reports, debounced, which CAs
 * went away and which came.
 *
 * A CA counts as present while it has umad devices
 * (/sys/class/infiniband_mad/umadN/ibdev names it): `rdma link delete` drops
 * them at once, while /sys/class/infiniband/CA (which libibumad lists) stays
 * until every verbs context on the CA is closed. */
#ifndef UMADFS_HOTPLUG_H
#define UMADFS_HOTPLUG_H

#include <stdint.h>
#include <infiniband/umad.h>

#define HOTPLUG_MAX_CAS UMAD_MAX_DEVICES

/* A CA usable through ib_umad. */
struct hotplug_ca {
	char name[UMAD_CA_NAME_LEN];
	/* Changes whenever the CA or its umad devices are registered anew:
	 * made of the inode numbers of their sysfs directories (the node
	 * GUID stays the same when rxe0 is deleted and added again). */
	uint64_t id;
	int nports; /* ports with a umad device */
};

struct hotplug_cas {
	int n;
	struct hotplug_ca ca[HOTPLUG_MAX_CAS];
};

/* CA names seen going away (a remove uevent, hotplug_kick). */
struct hotplug_names {
	int n;
	char name[HOTPLUG_MAX_CAS][UMAD_CA_NAME_LEN];
};

/* What changed: tear the removed CAs down, then set the added ones up.  A
 * CA registered anew under its old name is in both lists. */
struct hotplug_change {
	struct hotplug_cas removed; /* as they were known, old id */
	struct hotplug_cas added;   /* as they are now */
};

/* Runs on the hotplug thread, one call at a time; it must not call
 * hotplug_stop. */
typedef void (*hotplug_fn)(void *ctx, const struct hotplug_change *change);

/* Takes the CAs present now as known and starts the thread; fn hears of
 * every change after that.  Under umad2sim (no uevents, no sysfs) it does
 * nothing.  If the uevent socket cannot be opened (e.g. a network namespace
 * other than the host's gets no device uevents) it rescans every second.
 * Returns 0, -EALREADY if started already, or -errno. */
int hotplug_start(hotplug_fn fn, void *ctx);
/* Stops and joins the thread; a no-op if it never started. */
void hotplug_stop(void);
/* The CA's umad fd failed (POLLERR, EIO): count it as removed and rescan.
 * With NULL: just rescan (SIGHUP).  Callable from any thread. */
void hotplug_kick(const char *ca);

/* The CAs under sysfs_root ("/sys", or a fake tree in tests), by name.
 * Returns 0 (an empty set if ib_umad is not loaded) or -errno. */
int hotplug_scan(const char *sysfs_root, struct hotplug_cas *out);
/* Compares the known CAs with a new scan: a known CA is removed if it is
 * gone from now, has another id or port count there, or its name is in
 * gone (a removal event, even if the name is back); a CA of now is added
 * unless it is known and kept. */
void hotplug_diff(const struct hotplug_cas *known,
		  const struct hotplug_cas *now,
		  const struct hotplug_names *gone,
		  struct hotplug_change *out);
/* Adds name to names unless it is there already or names is full. */
void hotplug_names_add(struct hotplug_names *names, const char *name);

#endif
