/* log.c: a message gets out even while another thread holds stderr's
 * stdio lock for good (as a libfuse worker cancelled inside perror()
 * does), and libfuse's own messages go the same way; errno names. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fuse_log.h>

#include "check.h"
#include "umadfs/base/log.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stage; /* 1: stderr locked; 2: may unlock */

static void *hold_stderr(void *arg)
{
	(void)arg;
	flockfile(stderr);
	pthread_mutex_lock(&mu);
	stage = 1;
	pthread_cond_broadcast(&cv);
	while (stage < 2)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	funlockfile(stderr);
	return NULL;
}

static void *log_some(void *arg)
{
	(void)arg;
	log_info("stopped %d", 42);
	fuse_log(FUSE_LOG_ERR, "fuse: from libfuse\n");
	return NULL;
}

int main(void)
{
	char path[] = "/tmp/umadfs-test-log-XXXXXX", got[256] = "";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	struct timespec deadline;
	pthread_t holder, logger;
	ssize_t n;

	CHECK(fd >= 0 && saved >= 0);
	unlink(path);
	dup2(fd, STDERR_FILENO);
	log_init(false);

	pthread_create(&holder, NULL, hold_stderr, NULL);
	pthread_mutex_lock(&mu);
	while (stage < 1)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);

	pthread_create(&logger, NULL, log_some, NULL);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	if (pthread_timedjoin_np(logger, NULL, &deadline) != 0) {
		static const char msg[] = "log_msg waited for stderr's stdio lock\n";

		/* Not stdio: its lock is what is held. */
		dup2(saved, STDERR_FILENO);
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(2);
		_exit(1);
	}
	pthread_mutex_lock(&mu);
	stage = 2;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(holder, NULL);

	dup2(saved, STDERR_FILENO);
	n = pread(fd, got, sizeof(got) - 1, 0);
	CHECK(n > 0);
	CHECK_STR(got, "umadfs: info: stopped 42\nfuse: from libfuse\n");
	close(fd);
	/* errno names for log and event lines (errno=ETIMEDOUT). */
	CHECK_STR(log_errno_name(ETIMEDOUT), "ETIMEDOUT");
	CHECK_STR(log_errno_name(EHOSTUNREACH), "EHOSTUNREACH");
	CHECK_STR(log_errno_name(9999), "EIO");
	CHECK_DONE();
}
