/* umadfs: InfiniBand CAs, ports and MADs as files.
 *
 * main(): the order of things, from the command line to the mount, the
 * session loop, and the way out. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fuse_lowlevel.h>

#include "umadfs/base/log.h"
#include "umadfs/ca/counters.h"
#include "umadfs/cas.h"
#include "umadfs/channel/access.h"
#include "umadfs/channel/channel.h"
#include "umadfs/fabric/fabric.h"
#include "umadfs/fuse/fs.h"
#include "umadfs/fuse/readq.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mountinfo.h"
#include "umadfs/notify.h"
#include "umadfs/options.h"
#include "umadfs/supervisor.h"

static bool connection_gone(struct fuse_session *se)
{
	struct pollfd pfd = { .fd = fuse_session_fd(se), .events = 0 };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR);
}

/* Shutdown: every read waiting in the daemon fails with ENODEV. */
static void fail_waiting_reads(void)
{
	readq_shutdown_all();
	fabric_shutdown();
	cas_fail_waits();
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

/* The kernel enforces the modes for everyone but root (which the handlers
 * check themselves), also with allow_other. */
static void add_mount_args(struct options *o)
{
	fuse_opt_add_arg(&o->args, "-odefault_permissions");
	fuse_opt_add_arg(&o->args, "-ofsname=umadfs");
	if (!o->cmd.nodefault_subtype)
		fuse_opt_add_arg(&o->args, "-osubtype=umadfs");
}

static int run_loop(struct fuse_session *se, const struct fuse_cmdline_opts *cmd)
{
	struct fuse_loop_config *cfg;
	int ret;

	if (cmd->singlethread)
		return fuse_session_loop(se);
	cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_clone_fd(cfg, (unsigned)cmd->clone_fd);
	/* Passing the default (-1) makes libfuse 3.14 print a bogus error:
	 * only set what was asked for. */
	if (cmd->max_idle_threads != UINT_MAX && cmd->max_idle_threads)
		fuse_loop_cfg_set_idle_threads(cfg, cmd->max_idle_threads);
	if (cmd->max_threads)
		fuse_loop_cfg_set_max_threads(cfg, cmd->max_threads);
	ret = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return ret;
}

/* The loop's result as the exit status.  The connection ending is a
 * normal stop: ENODEV once the kernel has let the mount go, ECONNABORTED
 * once it was aborted (by the supervisor's fusectl abort, an
 * administrator's, or the kernel tearing a lazily detached mount down
 * with requests still queued). */
static int loop_status(int ret)
{
	if (ret == -ECONNABORTED)
		log_info("the connection was aborted");
	else if (ret < 0 && ret != -ENODEV)
		log_err("session loop: %s", strerror(-ret));
	return ret < 0 && ret != -ENODEV && ret != -ECONNABORTED ? 1 : 0;
}

/* From the mount to the end of the loop: the exit status, or -1 when
 * nothing was started (the caller unmounts). */
static int serve(struct fuse_session *se, const struct options *o)
{
	dev_t mount_dev;
	gid_t group;
	int r;

	/* Not stat(): that would wait for our own answer, and we are not
	 * serving yet. */
	r = mountinfo_dev_of(o->cmd.mountpoint, &mount_dev);
	if (r < 0) {
		log_err("%s: cannot find the new mount in mountinfo: %s",
			o->cmd.mountpoint, strerror(-r));
		return -1;
	}
	/* In the foreground, keep the working directory: fuse_daemonize()
	 * would move it to "/", and umad2sim finds its emulated sysfs
	 * relative to it. */
	if (!o->cmd.foreground) {
		if (fuse_daemonize(0) != 0)
			return -1;
		log_use_syslog();
	}
	/* Threads only now: fuse_daemonize() forks. */
	cas_start(se);
	if (fabric_add_dir(tree_root(), access_group(&group) ? &group : NULL,
			   cas_ports) < 0)
		log_warn("fabric/: cannot start (out of memory)");
	r = supervisor_start(se, o->cmd.mountpoint, mount_dev,
			     fail_waiting_reads);
	if (r < 0) {
		log_err("starting the supervisor: %s", strerror(-r));
		cas_stop_hotplug();
		return -1;
	}
	log_info("mounted on %s", o->cmd.mountpoint);
	notify_ready(o->cmd.mountpoint);
	r = loop_status(run_loop(se, &o->cmd));
	cas_stop_hotplug();
	return r;
}

/* The way out once the loop has ended: the supervisor stopped, what the
 * mount held freed, the mount let go. */
static void shut_down(struct fuse_session *se)
{
	bool detached = supervisor_stop();

	/* Open files whose RELEASE never came first, while their channels
	 * are still listed (tree_destroy() frees agents/ channels); then the
	 * tree: agents/ channels drop their agents while the engines are
	 * still there. */
	readq_drop_opens();
	textfile_drop_opens();
	fabric_stop();
	tree_destroy();
	cas_free_all();
	/* After a lazy detach the path may name something else by now:
	 * unmount only if the connection is still there.  With it gone
	 * (POLLERR) fuse_session_unmount() just closes and frees. */
	if (!detached || connection_gone(se))
		fuse_session_unmount(se);
	fuse_session_destroy(se);
}

int main(int argc, char *argv[])
{
	struct fuse_session *se;
	struct options o;
	gid_t admin;
	int ret, r;

	block_signals();
	ret = options_parse(argc, argv, &o);
	if (ret != OPTIONS_RUN)
		goto out_options;
	ret = 1;
	if (o.queue_len)
		channel_queue_limit = o.queue_len;
	log_init(o.cmd.debug);
	add_mount_args(&o);

	if (tree_init() < 0)
		goto out_options;
	counters_configure(fabric_admin_group(&admin) ? &admin : NULL, fabric_note);
	r = cas_build_all(tree_root(), o.source);
	if (r < 0) {
		log_err("scanning the CAs failed: %s", strerror(-r));
		goto err_cas;
	}
	if (r == 0)
		log_warn("libibumad reports no CA: the mount is empty until one "
			 "appears");
	se = fuse_session_new(&o.args, &fs_ops, sizeof(fs_ops), NULL);
	if (!se)
		goto err_cas;
	if (fuse_session_mount(se, o.cmd.mountpoint) != 0)
		goto err_session;

	ret = serve(se, &o);
	if (ret < 0) {
		ret = 1;
		goto err_unmount;
	}
	shut_down(se);
	options_free(&o);
	log_info("stopped");
	return ret;

err_unmount:
	fuse_session_unmount(se);
err_session:
	fuse_session_destroy(se);
err_cas:
	fabric_stop();
	tree_destroy();
	cas_free_all();
out_options:
	options_free(&o);
	return ret;
}
