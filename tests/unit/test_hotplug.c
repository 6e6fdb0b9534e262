/* Unit tests for src/hotplug.c: the comparison of two CA sets, the scan of
 * a fake sysfs tree, and the thread's start, kick and stop. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "umadfs/hotplug.h"

static struct hotplug_ca ca(const char *name, uint64_t id, int nports)
{
	struct hotplug_ca c = { .id = id, .nports = nports };

	snprintf(c.name, sizeof(c.name), "%s", name);
	return c;
}

/* "name name ..." of a set, for CHECK_STR */
static const char *names(const struct hotplug_cas *cas)
{
	static char buf[4][256];
	static int which;
	char *b = buf[which++ % 4];
	size_t len = 0;

	b[0] = '\0';
	for (int i = 0; i < cas->n; i++)
		len += snprintf(b + len, 256 - len, "%s%s", i ? " " : "",
				cas->ca[i].name);
	return b;
}

static void test_diff(void)
{
	struct hotplug_cas known = { 2, { ca("mlx5_0", 7, 2), ca("rxe0", 9, 1) } };
	struct hotplug_cas now = known;
	struct hotplug_names gone = { 0 };
	struct hotplug_change ch;

	hotplug_diff(&known, &now, NULL, &ch);
	CHECK_STR(names(&ch.removed), "");
	CHECK_STR(names(&ch.added), "");

	/* rxe0 deleted; rxe9 added */
	now = (struct hotplug_cas){ 2, { ca("mlx5_0", 7, 2), ca("rxe9", 3, 1) } };
	hotplug_diff(&known, &now, &gone, &ch);
	CHECK_STR(names(&ch.removed), "rxe0");
	CHECK_STR(names(&ch.added), "rxe9");
	CHECK_INT(ch.removed.ca[0].id, 9); /* as it was known */

	/* rxe0 re-added: same name and node GUID, a new sysfs directory */
	now = (struct hotplug_cas){ 2, { ca("mlx5_0", 7, 2), ca("rxe0", 10, 1) } };
	hotplug_diff(&known, &now, &gone, &ch);
	CHECK_STR(names(&ch.removed), "rxe0");
	CHECK_STR(names(&ch.added), "rxe0");
	CHECK_INT(ch.added.ca[0].id, 10);

	/* a removal event counts even if the name and id look the same */
	now = known;
	hotplug_names_add(&gone, "rxe0");
	hotplug_diff(&known, &now, &gone, &ch);
	CHECK_STR(names(&ch.removed), "rxe0");
	CHECK_STR(names(&ch.added), "rxe0");

	/* ... and when the CA has not come back */
	now = (struct hotplug_cas){ 1, { ca("mlx5_0", 7, 2) } };
	hotplug_diff(&known, &now, &gone, &ch);
	CHECK_STR(names(&ch.removed), "rxe0");
	CHECK_STR(names(&ch.added), "");

	/* a removal event of a CA never known: just a new CA */
	gone.n = 0;
	hotplug_names_add(&gone, "rxe7");
	now = (struct hotplug_cas){ 3, { ca("mlx5_0", 7, 2), ca("rxe0", 9, 1),
					 ca("rxe7", 1, 1) } };
	hotplug_diff(&known, &now, &gone, &ch);
	CHECK_STR(names(&ch.removed), "");
	CHECK_STR(names(&ch.added), "rxe7");

	/* a port's umad device more or less: the CA is rebuilt */
	now = (struct hotplug_cas){ 2, { ca("mlx5_0", 7, 1), ca("rxe0", 9, 1) } };
	hotplug_diff(&known, &now, NULL, &ch);
	CHECK_STR(names(&ch.removed), "mlx5_0");
	CHECK_STR(names(&ch.added), "mlx5_0");

	/* from nothing, and to nothing */
	now.n = 0;
	hotplug_diff(&now, &known, NULL, &ch);
	CHECK_STR(names(&ch.removed), "");
	CHECK_STR(names(&ch.added), "mlx5_0 rxe0");
	hotplug_diff(&known, &now, NULL, &ch);
	CHECK_STR(names(&ch.removed), "mlx5_0 rxe0");
	CHECK_STR(names(&ch.added), "");
}

static void test_names_add(void)
{
	struct hotplug_names n = { 0 };
	char longname[UMAD_CA_NAME_LEN + 1];

	hotplug_names_add(&n, "rxe0");
	hotplug_names_add(&n, "rxe0");
	hotplug_names_add(&n, "rxe1");
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	hotplug_names_add(&n, longname);
	CHECK_INT(n.n, 2);
	for (int i = 2; i < HOTPLUG_MAX_CAS + 5; i++) {
		char name[16];

		snprintf(name, sizeof(name), "ca%d", i);
		hotplug_names_add(&n, name);
	}
	CHECK_INT(n.n, HOTPLUG_MAX_CAS);
}

/* ---- a fake sysfs tree ---- */

static char root[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void dir(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	CHECK(mkdir(path, 0755) == 0);
}

/* A CA directory as the kernel makes it: class/infiniband/NAME is a link to
 * devices/virtual/infiniband/NAME. */
static void ca_dir(const char *name)
{
	char rel[128], path[256], target[160];

	snprintf(rel, sizeof(rel), "devices/virtual/infiniband/%s", name);
	dir(rel);
	snprintf(path, sizeof(path), "%s/class/infiniband/%s", root, name);
	snprintf(target, sizeof(target), "../../%s", rel);
	CHECK(symlink(target, path) == 0);
}

static void umad_dev(const char *umad, const char *ibdev, const char *port)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "class/infiniband_mad/%s", umad);
	dir(rel);
	snprintf(rel, sizeof(rel), "class/infiniband_mad/%s/ibdev", umad);
	put(rel, ibdev);
	snprintf(rel, sizeof(rel), "class/infiniband_mad/%s/port", umad);
	put(rel, port);
}

static void rm(const char *fmt, const char *arg)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/", root);
	snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), fmt, arg);
	CHECK(system(cmd) == 0);
}

/* Replaces the directory rel by a new, empty one: made before the old one
 * goes, so that its inode number cannot be the old one's. */
static void renew_dir(const char *rel)
{
	char path[256], tmp[300];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	CHECK(mkdir(tmp, 0755) == 0);
	rm("%s", rel);
	CHECK(rename(tmp, path) == 0);
}

static void make_tree(void)
{
	snprintf(root, sizeof(root), "/tmp/umadfs-hotplug.XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	dir("class");
	dir("class/infiniband");
	dir("devices");
	dir("devices/virtual");
	dir("devices/virtual/infiniband");
	ca_dir("rxe0");
	ca_dir("mlx5_0");
	ca_dir("siw0"); /* iWARP: no umad device, not a CA for us */
	dir("class/infiniband_mad");
	put("class/infiniband_mad/abi_version", "5\n");
	umad_dev("umad0", "rxe0\n", "1\n");
	umad_dev("issm0", "rxe0\n", "1\n");
	umad_dev("umad1", "mlx5_0\n", "1\n");
	umad_dev("umad2", "mlx5_0\n", "2\n");
	umad_dev("umad3", "ghost0\n", "1\n"); /* its CA directory is gone */
}

static void test_scan(void)
{
	struct hotplug_cas a, b;
	struct hotplug_change ch;

	make_tree();
	CHECK_INT(hotplug_scan(root, &a), 0);
	CHECK_STR(names(&a), "mlx5_0 rxe0");
	CHECK_INT(a.ca[0].nports, 2);
	CHECK_INT(a.ca[1].nports, 1);
	CHECK(a.ca[0].id != 0 && a.ca[1].id != 0 && a.ca[0].id != a.ca[1].id);

	/* the same tree scanned again: nothing changed */
	CHECK_INT(hotplug_scan(root, &b), 0);
	hotplug_diff(&a, &b, NULL, &ch);
	CHECK_INT(ch.removed.n + ch.added.n, 0);

	/* rdma link delete with a verbs context open: the umad devices go,
	 * class/infiniband/rxe0 stays until the context closes */
	rm("%s", "class/infiniband_mad/umad0");
	rm("%s", "class/infiniband_mad/issm0");
	CHECK_INT(hotplug_scan(root, &b), 0);
	CHECK_STR(names(&b), "mlx5_0");

	/* rxe0 deleted and added again: a new directory, a new umad device */
	renew_dir("devices/virtual/infiniband/rxe0");
	umad_dev("umad4", "rxe0\n", "1\n");
	CHECK_INT(hotplug_scan(root, &b), 0);
	CHECK_STR(names(&b), "mlx5_0 rxe0");
	hotplug_diff(&a, &b, NULL, &ch);
	CHECK_STR(names(&ch.removed), "rxe0");
	CHECK_STR(names(&ch.added), "rxe0");

	/* ib_umad reloaded: same CA directories, new umad devices (made
	 * before the old one goes: no inode number reused) */
	umad_dev("umad5", "mlx5_0\n", "1\n");
	rm("%s", "class/infiniband_mad/umad1");
	a = b;
	CHECK_INT(hotplug_scan(root, &b), 0);
	hotplug_diff(&a, &b, NULL, &ch);
	CHECK_STR(names(&ch.removed), "mlx5_0");
	CHECK_STR(names(&ch.added), "mlx5_0");

	/* ib_umad not loaded: no CA, no error */
	rm("%s", "class/infiniband_mad");
	CHECK_INT(hotplug_scan(root, &b), 0);
	CHECK_INT(b.n, 0);
	rm("%s", "");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int calls;

static void count_change(void *ctx, const struct hotplug_change *change)
{
	(void)ctx;
	(void)change;
	calls++;
}

/* The thread on this host: a kick rescans (nothing changes here, so no
 * call), stop returns at once; under umad2sim nothing starts at all. */
static void test_thread(void)
{
	double t0;

	CHECK_INT(hotplug_start(count_change, NULL), 0);
	CHECK_INT(hotplug_start(count_change, NULL), -EALREADY);
	hotplug_kick("no-such-ca0");
	hotplug_kick(NULL);
	usleep(400 * 1000);
	t0 = now_s();
	hotplug_stop();
	CHECK(now_s() - t0 < 0.5);
	hotplug_stop(); /* twice: harmless */
	hotplug_kick("rxe0"); /* stopped: ignored */
	CHECK_INT(hotplug_start(count_change, NULL), 0); /* and again */
	hotplug_stop();

	setenv("LD_PRELOAD", "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so", 1);
	CHECK_INT(hotplug_start(count_change, NULL), 0);
	hotplug_kick("rxe0");
	hotplug_stop();
	unsetenv("LD_PRELOAD");
	CHECK_INT(calls, 0);
}

int main(void)
{
	test_diff();
	test_names_add();
	test_scan();
	test_thread();
	CHECK_DONE();
}
