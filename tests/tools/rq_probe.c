/* rq_probe: what busybox cannot do with an rq/ file, for the VM checks.
 *
 *   rq_probe poll FILE MS        poll() for POLLIN; prints "ready revents=0x.."
 *                                (exit 0) or "timeout" (exit 1)
 *   rq_probe epoll FILE MS       the same with epoll
 *   rq_probe nbread FILE         one O_NONBLOCK read: "errno=EAGAIN" or "read=N"
 *   rq_probe intr FILE MS        a blocking read, SIGALRM after MS (no
 *                                SA_RESTART): prints "errno=EINTR" or what came
 *   rq_probe bin FILE [SIZE]     one read of SIZE (default 65536) bytes of
 *                                recv_bin, printed as a line of key=value
 *   rq_probe lines FILE N SECS   a poll() loop reading recv until N lines came
 *                                or SECS passed; copies them to stdout; exit 0
 *                                when N came.  "polls=P reads=R" on stderr.
 *
 * Exit status 2 on a usage or open error. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0) {
		fprintf(stderr, "rq_probe: %s: %s\n", path, strerror(errno));
		exit(2);
	}
	return fd;
}

static const char *errname(int e)
{
	switch (e) {
	case EAGAIN: return "EAGAIN";
	case EINTR: return "EINTR";
	case EINVAL: return "EINVAL";
	case ENODEV: return "ENODEV";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	default: return strerror(e);
	}
}

static void on_alarm(int sig)
{
	(void)sig;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char buf[1 << 17];
	const char *cmd = argc > 2 ? argv[1] : "";
	int fd;
	ssize_t n;

	if (!strcmp(cmd, "poll") && argc == 4) {
		struct pollfd p;

		fd = open_or_die(argv[2], O_RDONLY | O_NONBLOCK);
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		n = poll(&p, 1, atoi(argv[3]));
		if (n > 0 && (p.revents & POLLIN)) {
			printf("ready revents=0x%x\n", p.revents);
			return 0;
		}
		printf("timeout revents=0x%x\n", n > 0 ? p.revents : 0);
		return 1;
	}
	if (!strcmp(cmd, "epoll") && argc == 4) {
		struct epoll_event ev = { .events = EPOLLIN }, out;
		int ep = epoll_create1(0);

		fd = open_or_die(argv[2], O_RDONLY | O_NONBLOCK);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			perror("rq_probe: epoll");
			return 2;
		}
		n = epoll_wait(ep, &out, 1, atoi(argv[3]));
		if (n > 0 && (out.events & EPOLLIN)) {
			printf("ready events=0x%x\n", out.events);
			return 0;
		}
		printf("timeout\n");
		return 1;
	}
	if (!strcmp(cmd, "nbread") && argc == 3) {
		fd = open_or_die(argv[2], O_RDONLY | O_NONBLOCK);
		n = read(fd, buf, sizeof(buf));
		if (n < 0)
			printf("errno=%s\n", errname(errno));
		else
			printf("read=%zd\n", n);
		return 0;
	}
	if (!strcmp(cmd, "intr") && argc == 4) {
		struct sigaction sa;
		double t0;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm; /* no SA_RESTART */
		sigaction(SIGALRM, &sa, NULL);
		fd = open_or_die(argv[2], O_RDONLY);
		ualarm((useconds_t)atoi(argv[3]) * 1000, 0);
		t0 = now();
		n = read(fd, buf, sizeof(buf));
		if (n < 0)
			printf("errno=%s after=%.2f\n", errname(errno), now() - t0);
		else
			printf("read=%zd\n", n);
		return 0;
	}
	if (!strcmp(cmd, "bin") && (argc == 3 || argc == 4)) {
		size_t size = argc == 4 ? (size_t)atol(argv[3]) : 65536;
		const uint8_t *r = (const uint8_t *)buf;

		if (size > sizeof(buf))
			size = sizeof(buf);
		fd = open_or_die(argv[2], O_RDONLY);
		n = read(fd, buf, size);
		if (n < 0) {
			printf("errno=%s\n", errname(errno));
			return 0;
		}
		if (n < 80) {
			printf("short=%zd\n", n);
			return 1;
		}
		printf("read=%zd hdr_len=%u flags=0x%x len=%u status=%u src_qp=%u "
		       "imm=0x%08x slid=0x%x pkey_index=%u sl=%u tclass=%u hop_limit=%u "
		       "seq=%u data=", n, le16(r), le16(r + 2), le32(r + 4), le32(r + 8),
		       le32(r + 16), le32(r + 20), le16(r + 24), le16(r + 26), r[28],
		       r[30], r[31], le32(r + 40));
		for (ssize_t i = le16(r); i < n; i++)
			printf("%02x", r[i]);
		printf("\n");
		return 0;
	}
	if (!strcmp(cmd, "lines") && argc == 5) {
		long want = atol(argv[3]), got = 0, polls = 0, reads = 0;
		double end = now() + atof(argv[4]);

		fd = open_or_die(argv[2], O_RDONLY | O_NONBLOCK);
		while (got < want) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			double left = end - now();

			if (left <= 0)
				break;
			polls++;
			if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
				continue;
			n = read(fd, buf, sizeof(buf));
			if (n < 0) {
				if (errno == EAGAIN)
					continue; /* a spurious wake-up */
				fprintf(stderr, "rq_probe: read: %s\n", strerror(errno));
				return 1;
			}
			reads++;
			for (ssize_t i = 0; i < n; i++)
				got += buf[i] == '\n';
			if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
				return 2;
		}
		fflush(stdout);
		fprintf(stderr, "lines=%ld polls=%ld reads=%ld\n", got, polls, reads);
		return got >= want ? 0 : 1;
	}
	fprintf(stderr, "usage: rq_probe poll|epoll|nbread|intr|bin|lines FILE ...\n");
	return 2;
}
