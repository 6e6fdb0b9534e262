/* Signals, lazy unmounts, and the way out.
 *
 * Workers block in read(/dev/fuse) with signals blocked, so shutdown ends
 * the session by ending the connection: detach the mount (the kernel then
 * destroys the connection once no file is open, and every read returns
 * ENODEV), and if open files keep it alive past a grace period, abort it
 * through the fusectl filesystem, as `echo 1 > .../abort` would. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "umadfs/base/log.h"
#include "umadfs/mountinfo.h"
#include "umadfs/supervisor.h"

#define GRACE_MS 800 /* open files get this long before the abort */

static struct {
	struct fuse_session *se;
	char *mountpoint;
	dev_t dev;
	supervisor_release_fn release;
	pthread_t thread;
	int wake_pipe[2];     /* written by supervisor_stop */
	volatile int detached; /* the mount is gone from the namespace */
} sv;

static void detach_mount(void)
{
	pid_t pid;

	if (umount2(sv.mountpoint, MNT_DETACH) == 0 || errno == EINVAL ||
	    errno == ENOENT) {
		sv.detached = 1;
		return;
	}
	/* Not root: the setuid helper may do it for us. */
	pid = fork();
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-u", "-z", "-q",
		       sv.mountpoint, (char *)NULL);
		_exit(127);
	}
	if (pid > 0) {
		int status;

		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			sv.detached = 1;
	}
}

/* Ends the connection whatever holds it open. */
static bool abort_connection(void)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort",
		 minor(sv.dev));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		mount("fusectl", "/sys/fs/fuse/connections", "fusectl", 0, NULL);
		fd = open(path, O_WRONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return false;
	if (write(fd, "1", 1) != 1) {
		close(fd);
		return false;
	}
	close(fd);
	return true;
}

static void shutdown_session(bool by_signal)
{
	struct pollfd wake = { .fd = sv.wake_pipe[0], .events = POLLIN };

	/* The session goes on serving: readers released with ENODEV must
	 * still be able to close, and their RELEASE is what frees their
	 * state.  No new open can come once the mount is detached. */
	if (sv.release)
		sv.release();
	if (by_signal && !sv.detached)
		detach_mount();
	else
		sv.detached = 1;
	/* The kernel ends the connection, and so the loop, once the last
	 * file is closed. */
	if (poll(&wake, 1, GRACE_MS) > 0)
		return;
	log_info("files still open after %d ms: aborting the connection", GRACE_MS);
	fuse_session_exit(sv.se);
	if (!abort_connection()) {
		log_warn("cannot abort the FUSE connection (fusectl); exiting");
		_exit(1);
	}
}

static void *supervisor_main(void *arg)
{
	struct pollfd fds[3];
	sigset_t set;
	int sfd, mfd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	/* mountinfo signals POLLPRI whenever the mount table changes. */
	mfd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);

	fds[0] = (struct pollfd){ .fd = sv.wake_pipe[0], .events = POLLIN };
	fds[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	fds[2] = (struct pollfd){ .fd = mfd, .events = POLLPRI };
	for (;;) {
		/* A finite wait: a missed mount change is caught within 1 s. */
		int n = poll(fds, 3, 1000);

		if (n < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			break;
		if (fds[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si))
				log_info("signal %u: unmounting", si.ssi_signo);
			shutdown_session(true);
			break;
		}
		if (!mountinfo_has_dev(sv.dev)) {
			log_info("%s was unmounted: stopping", sv.mountpoint);
			shutdown_session(false);
			break;
		}
	}
	if (sfd >= 0)
		close(sfd);
	if (mfd >= 0)
		close(mfd);
	return NULL;
}

int supervisor_start(struct fuse_session *se, const char *mountpoint,
		     dev_t mount_dev, supervisor_release_fn release)
{
	int r;

	sv.se = se;
	sv.dev = mount_dev;
	sv.release = release;
	sv.mountpoint = realpath(mountpoint, NULL);
	if (!sv.mountpoint)
		return -errno;
	if (pipe2(sv.wake_pipe, O_CLOEXEC) < 0) {
		r = -errno;
		goto err_free;
	}
	r = -pthread_create(&sv.thread, NULL, supervisor_main, NULL);
	if (r)
		goto err_pipe;
	return 0;

err_pipe:
	close(sv.wake_pipe[0]);
	close(sv.wake_pipe[1]);
err_free:
	free(sv.mountpoint);
	return r;
}

bool supervisor_stop(void)
{
	if (write(sv.wake_pipe[1], "x", 1) < 0)
		log_warn("supervisor wake-up: %s", strerror(errno));
	pthread_join(sv.thread, NULL);
	close(sv.wake_pipe[0]);
	close(sv.wake_pipe[1]);
	free(sv.mountpoint);
	return sv.detached;
}
