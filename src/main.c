/* umadfs: InfiniBand CAs, ports and MADs as files.
 *
 * Options, mount, the session loop, and the order of shutdown. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fuse_lowlevel.h>

#include "config.h"
#include "umadfs/channel/access.h"
#include "umadfs/channel/channel.h"
#include "umadfs/ca/device.h"
#include "umadfs/fabric/fabric.h"
#include "umadfs/fuse/fs.h"
#include "umadfs/fuse/readq.h"
#include "umadfs/base/log.h"
#include "umadfs/supervisor.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"

struct umadfs_options {
	char *first_arg;    /* the first non-option: source or mount point */
	char *attrs;        /* attrs=auto|sysfs|smp */
	char *queue_len;    /* queue_len=N: items per channel queue */
	char *mad_group;    /* mad_group=GROUP: who else may use the MAD files */
	int mad_group_smi;  /* and send SMPs and Sets too */
	bool allow_other;   /* seen, and passed on to libfuse */
};

enum { KEY_ALLOW_OTHER };

#define UMADFS_OPT(t, p) { t, offsetof(struct umadfs_options, p), 1 }

static const struct fuse_opt umadfs_opts[] = {
	UMADFS_OPT("attrs=%s", attrs),
	UMADFS_OPT("queue_len=%s", queue_len),
	UMADFS_OPT("mad_group=%s", mad_group),
	UMADFS_OPT("mad_group_smi", mad_group_smi),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_END
};

static bool has_nonopt(const struct fuse_args *args)
{
	for (int i = 1; i < args->argc; i++) {
		if (args->argv[i][0] != '-')
			return true;
		if (!strcmp(args->argv[i], "-o"))
			i++; /* its value */
	}
	return false;
}

/* mount(8) and fstab run "umadfs SOURCE MOUNTPOINT -o ...": the first of
 * two non-options is the source (any word; "umadfs" by convention) and is
 * put aside; a lone one is the mount point. */
static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct umadfs_options *uo = data;

	if (key == KEY_ALLOW_OTHER) {
		uo->allow_other = true;
		return 1;
	}
	if (key != FUSE_OPT_KEY_NONOPT || uo->first_arg)
		return 1;
	uo->first_arg = strdup(arg);
	return uo->first_arg ? 0 : -1;
}

static void usage(const char *prog)
{
	printf("usage: %s [options] [SOURCE] MOUNTPOINT\n\n"
	       "Presents the host's InfiniBand CAs and ports as files.\n\n"
	       "umadfs options:\n"
	       "    -o attrs=auto|sysfs|smp  where port attributes come from:\n"
	       "                           sysfs: libibumad (the kernel's sysfs);\n"
	       "                           smp: live PortInfo from the port's SMA;\n"
	       "                           auto (default): smp under the ibsim\n"
	       "                           simulator (umad2sim), sysfs otherwise\n"
	       "    -o queue_len=N         received MADs a channel queues before it\n"
	       "                           drops (and counts) the newest: 1 to\n"
	       "                           1000000 (default %u)\n"
	       "    -o mad_group=GROUP     the group (name or GID) may use the MAD\n"
	       "                           files and make channels in agents/\n"
	       "                           (modes 0660, 0220, 0440, 1770); needs\n"
	       "                           allow_other.  SMPs (classes 0x01, 0x81)\n"
	       "                           and Set/Delete methods stay root's\n"
	       "    -o mad_group_smi       the group may send those too\n"
	       "    -o fabric_interval=MS  sweep the whole fabric (fabric/) every\n"
	       "                           MS ms; 0 (default): only when asked\n"
	       "    -o fabric_port=CA:N    sweep out of this port (default: the\n"
	       "                           first ACTIVE one)\n"
	       "    -o fabric=off          no fabric/ directory, no sweeps\n\n"
	       "General options:\n"
	       "    -h   --help            print help\n"
	       "    -V   --version         print version\n"
	       "    -f                     stay in the foreground (needed under umad2sim)\n"
	       "    -d                     debug output (implies -f)\n"
	       "    -s                     single-threaded\n"
	       "    -o OPT[,OPT...]        mount options (see below)\n\n"
	       "See umadfs(8) for the tree, the files and their formats.\n\n",
	       prog, CHANNEL_QUEUE_DEFAULT);
}

static int parse_attr_source(const char *s, enum attr_source *out)
{
	if (!s || !strcmp(s, "auto"))
		*out = ATTR_SOURCE_AUTO;
	else if (!strcmp(s, "sysfs"))
		*out = ATTR_SOURCE_SYSFS;
	else if (!strcmp(s, "smp"))
		*out = ATTR_SOURCE_SMP;
	else
		return -EINVAL;
	return 0;
}

/* The device number of the newest mount on path, from mountinfo. */
static int mounted_dev(const char *path, dev_t *out)
{
	char line[4096], *real = realpath(path, NULL);
	unsigned maj, min;
	int r = -ENOENT;
	FILE *f;

	if (!real)
		return -errno;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		r = -errno;
		goto out;
	}
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ...": the last match is on top.
	 * (Paths with spaces are octal-escaped there; they never match.) */
	while (fgets(line, sizeof(line), f)) {
		char mnt[4096];

		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, mnt) == 3 &&
		    strcmp(mnt, real) == 0) {
			*out = makedev(maj, min);
			r = 0;
		}
	}
	fclose(f);
out:
	free(real);
	return r;
}

static bool connection_gone(struct fuse_session *se)
{
	struct pollfd pfd = { .fd = fuse_session_fd(se), .events = 0 };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR);
}

/* Shutdown: every read waiting in the daemon fails with ENODEV. */
static void release_waiting_reads(void)
{
	readq_release_all();
	fabric_release();
}

static void block_signals(void)
{
	sigset_t set;

	/* Blocked in every thread, umad2sim's own included: the supervisor
	 * takes them from a signalfd. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct umadfs_options uo = { 0 };
	struct fuse_cmdline_opts opts;
	struct fuse_loop_config *loop_cfg = NULL;
	struct fuse_session *se;
	enum attr_source source;
	dev_t mount_dev;
	gid_t group;
	bool detached;
	int ret = 1, r;

	block_signals();
	if (fabric_parse_options(&args) < 0)
		return 2;
	if (fuse_opt_parse(&args, &uo, umadfs_opts, opt_proc) != 0)
		return 2;
	if (uo.first_arg && !has_nonopt(&args) &&
	    fuse_opt_add_arg(&args, uo.first_arg) != 0)
		return 2;
	if (fuse_parse_cmdline(&args, &opts) != 0)
		return 2;
	if (opts.show_help) {
		usage(argv[0]);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		ret = 0;
		goto err_args;
	}
	if (opts.show_version) {
		printf("umadfs version %s\n", UMADFS_VERSION);
		fuse_lowlevel_version();
		ret = 0;
		goto err_args;
	}
	if (!opts.mountpoint) {
		fprintf(stderr, "umadfs: no mount point given (see %s --help)\n",
			argv[0]);
		ret = 2;
		goto err_args;
	}
	if (parse_attr_source(uo.attrs, &source) < 0) {
		fprintf(stderr, "umadfs: attrs=%s: expected auto, sysfs or smp\n",
			uo.attrs);
		ret = 2;
		goto err_args;
	}
	if (uo.queue_len) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(uo.queue_len, &end, 0);
		if (errno || *end || !*uo.queue_len || uo.queue_len[0] == '-' ||
		    v < 1 || v > 1000000) {
			fprintf(stderr, "umadfs: queue_len=%s: expected a number "
				"from 1 to 1000000\n", uo.queue_len);
			ret = 2;
			goto err_args;
		}
		channel_queue_limit = (unsigned)v;
	}
	if (uo.mad_group_smi && !uo.mad_group) {
		fprintf(stderr, "umadfs: mad_group_smi needs mad_group=GROUP\n");
		ret = 2;
		goto err_args;
	}
	if (uo.mad_group) {
		char why[128];

		/* Without allow_other the kernel lets nobody else in at all. */
		if (!uo.allow_other) {
			fprintf(stderr, "umadfs: mad_group=%s needs allow_other: "
				"without it no other user reaches the mount\n",
				uo.mad_group);
			ret = 2;
			goto err_args;
		}
		if (access_set_group(uo.mad_group, uo.mad_group_smi, why,
				     sizeof(why)) < 0) {
			fprintf(stderr, "umadfs: mad_group=%s: %s\n", uo.mad_group, why);
			ret = 2;
			goto err_args;
		}
	}
	log_init(opts.debug);
	/* The kernel enforces the modes for everyone but root (which the
	 * handlers check themselves), also with allow_other. */
	fuse_opt_add_arg(&args, "-odefault_permissions");
	fuse_opt_add_arg(&args, "-ofsname=umadfs");
	if (!opts.nodefault_subtype)
		fuse_opt_add_arg(&args, "-osubtype=umadfs");

	r = tree_init();
	if (r < 0)
		goto err_args;
	r = devices_scan(tree_root(), source);
	if (r < 0) {
		log_err("scanning the CAs failed: %s", strerror(-r));
		goto err_tree;
	}
	if (r == 0)
		log_warn("libibumad reports no CA: the mount will be empty");

	se = fuse_session_new(&args, &fs_ops, sizeof(fs_ops), NULL);
	if (!se)
		goto err_devices;
	if (fuse_session_mount(se, opts.mountpoint) != 0)
		goto err_session;
	/* Not stat(): that would wait for our own answer, and we are not
	 * serving yet. */
	r = mounted_dev(opts.mountpoint, &mount_dev);
	if (r < 0) {
		log_err("%s: cannot find the new mount in mountinfo: %s",
			opts.mountpoint, strerror(-r));
		goto err_unmount;
	}
	/* In the foreground, keep the working directory: fuse_daemonize()
	 * would move it to "/", and umad2sim finds its emulated sysfs
	 * relative to it. */
	if (!opts.foreground) {
		if (fuse_daemonize(0) != 0)
			goto err_unmount;
		log_use_syslog();
	}
	/* Threads only now: fuse_daemonize() forks. */
	devices_start();
	if (fabric_add_dir(tree_root(), access_group(&group) ? &group : NULL) < 0)
		log_warn("fabric/: cannot start (out of memory)");
	r = supervisor_start(se, opts.mountpoint, mount_dev,
			     release_waiting_reads);
	if (r < 0) {
		log_err("starting the supervisor: %s", strerror(-r));
		goto err_unmount;
	}
	log_info("mounted on %s", opts.mountpoint);

	if (opts.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		loop_cfg = fuse_loop_cfg_create();
		fuse_loop_cfg_set_clone_fd(loop_cfg, (unsigned)opts.clone_fd);
		/* Passing the default (-1) makes libfuse 3.14 print a bogus
		 * error: only set what was asked for. */
		if (opts.max_idle_threads != UINT_MAX && opts.max_idle_threads)
			fuse_loop_cfg_set_idle_threads(loop_cfg, opts.max_idle_threads);
		if (opts.max_threads)
			fuse_loop_cfg_set_max_threads(loop_cfg, opts.max_threads);
		ret = fuse_session_loop_mt(se, loop_cfg);
		fuse_loop_cfg_destroy(loop_cfg);
	}
	/* The connection ending is a normal stop: ENODEV once the kernel has
	 * let the mount go, ECONNABORTED once it was aborted (by the
	 * supervisor's fusectl abort, by an administrator's, or by the kernel
	 * tearing a lazily detached mount down with requests still queued). */
	if (ret == -ECONNABORTED)
		log_info("the connection was aborted");
	else if (ret < 0 && ret != -ENODEV)
		log_err("session loop: %s", strerror(-ret));
	ret = ret < 0 && ret != -ENODEV && ret != -ECONNABORTED ? 1 : 0;
	detached = supervisor_stop();
	/* Open files whose RELEASE never came first, while their channels
	 * are still listed (tree_destroy() frees agents/ channels); then the
	 * tree: agents/ channels drop their agents while the engines are
	 * still there. */
	readq_drop_opens();
	textfile_drop_opens();
	fabric_stop();
	tree_destroy();
	devices_close();
	/* After a lazy detach the path may name something else by now:
	 * unmount only if the connection is still there.  With it gone
	 * (POLLERR) fuse_session_unmount() just closes and frees. */
	if (!detached || connection_gone(se))
		fuse_session_unmount(se);
	fuse_session_destroy(se);
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	free(uo.attrs);
	free(uo.queue_len);
	free(uo.mad_group);
	free(uo.first_arg);
	log_info("stopped");
	return ret;

err_unmount:
	fuse_session_unmount(se);
err_session:
	fuse_session_destroy(se);
err_devices:
	fabric_stop();
	devices_close();
err_tree:
	tree_destroy();
err_args:
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	free(uo.attrs);
	free(uo.queue_len);
	free(uo.mad_group);
	free(uo.first_arg);
	return ret;
}
