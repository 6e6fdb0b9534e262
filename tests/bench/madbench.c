/* madbench: MADs per second, directly through libibumad or through the
 * MAD files of a umadfs mount.  The request is always the same: a
 * directed-route SMP Get(NodeInfo) with hop count 0, i.e. the local
 * port's own SMA.
 *
 *   madbench direct [-n N] [-t SECONDS] [-w SECONDS] [-C CA] [-P PORT]
 *       libibumad: umad_open_port, umad_register (class 0x81), umad_send
 *       and umad_recv, N requests in flight (refilled one per answer).
 *   madbench umad [-n N] ... PORT_DIR_OR_FILE
 *       the `umad` file: one kernel frame per write(), one per read().
 *   madbench text [-n N] [-b LINES] [-r BYTES] ... PORT_DIR
 *       `send` and `recv`: up to LINES request lines per write() (as many
 *       as the window has room for, at least LINES or what is left of N),
 *       reads of BYTES (default 64 KiB) from recv.
 *
 *   madbench fuse ... PORT_DIR
 *       FUSE round trips: non-blocking reads of an empty `recv` (EAGAIN).
 *
 * Runs -w seconds of warm-up (default 0.3), then counts the answers of the
 * next -t seconds (default 2), and prints one line of key=value:
 *   mode=text outstanding=32 batch=32 answers=123456 errors=0 seconds=2.000
 *   rate=61728.0
 * Exit status 1 if any answer was an error (timeout, bad status). */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>

#define HDR 64  /* sizeof(struct ib_user_mad) with the P_Key index */
#define MAD 256
#define MAX_WINDOW 4096

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* A DR SMP Get(NodeInfo), hop count 0, in a umad frame. */
static void make_frame(uint8_t *frame, uint64_t tid)
{
	struct ib_user_mad *u = (struct ib_user_mad *)frame;
	uint8_t *m = frame + HDR;
	uint64_t be;

	memset(frame, 0, HDR + MAD);
	u->timeout_ms = 1000;
	u->retries = 0;
	u->addr.qpn = 0;
	u->addr.qkey = 0;
	u->addr.lid = htobe16(0xffff);
	m[0] = 1;    /* base version */
	m[1] = 0x81; /* directed-route SMP */
	m[2] = 1;    /* class version */
	m[3] = 0x01; /* Get */
	/* status, D bit, hop pointer, hop count: all 0 */
	be = htobe64(tid);
	memcpy(m + 8, &be, 8);
	m[16] = 0x00;
	m[17] = 0x11; /* NodeInfo */
	/* attribute modifier 0, M_Key 0 */
	m[32] = m[33] = 0xff; /* DrSLID */
	m[34] = m[35] = 0xff; /* DrDLID */
}

/* Not a GetResp with status 0 (a timeout, a DR status). */
static bool answer_bad(const uint8_t *frame)
{
	const struct ib_user_mad *u = (const void *)frame;

	return u->status || frame[HDR + 3] != 0x81 ||
	       (frame[HDR + 4] & 0x7f) || frame[HDR + 5];
}

struct opts {
	const char *mode, *path, *ca;
	int port, outstanding, batch;
	size_t rbytes;
	double seconds, warmup;
};

struct count {
	double t0, t1, end;
	unsigned long answers, errors;
	bool counting;
};

/* Counts n answers (e of them errors); false when time is up. */
static bool account(struct count *c, unsigned long n, unsigned long e)
{
	double t = now_s();

	if (!c->counting && t >= c->t0) {
		c->counting = true;
		c->t0 = t;
		return true; /* this batch started before the window */
	}
	if (c->counting) {
		c->answers += n;
		c->errors += e;
	}
	if (t >= c->end) {
		c->t1 = t;
		return false;
	}
	return true;
}

static void count_start(struct count *c, const struct opts *o)
{
	memset(c, 0, sizeof(*c));
	c->t0 = now_s() + o->warmup;
	c->end = c->t0 + o->seconds;
}

static void report(const struct opts *o, const struct count *c)
{
	double dt = c->t1 - c->t0;

	printf("mode=%s outstanding=%d batch=%d answers=%lu errors=%lu "
	       "seconds=%.3f rate=%.1f\n", o->mode, o->outstanding,
	       strcmp(o->mode, "text") ? 1 : o->batch, c->answers, c->errors,
	       dt, dt > 0 ? c->answers / dt : 0.0);
}

static int run_direct(const struct opts *o)
{
	uint8_t *frame = malloc(HDR + MAD), *in = malloc(HDR + MAD);
	struct count c;
	uint64_t tid = 1;
	int fd, agent;

	if (!frame || !in)
		die("malloc");
	if (umad_init() < 0)
		die("umad_init");
	fd = umad_open_port(o->ca, o->port);
	if (fd < 0) {
		errno = -fd;
		die("umad_open_port");
	}
	agent = umad_register(fd, 0x81, 1, 0, NULL);
	if (agent < 0) {
		errno = -agent;
		die("umad_register");
	}
	for (int i = 0; i < o->outstanding; i++) {
		make_frame(frame, tid++);
		if (umad_send(fd, agent, frame, MAD, 1000, 0) < 0)
			die("umad_send");
	}
	count_start(&c, o);
	for (;;) {
		int len = MAD;

		if (umad_recv(fd, in, &len, -1) < 0)
			die("umad_recv");
		if (!account(&c, 1, answer_bad(in)))
			break;
		make_frame(frame, tid++);
		if (umad_send(fd, agent, frame, MAD, 1000, 0) < 0)
			die("umad_send");
	}
	/* Take the answers still in flight: ibsim, which cannot tell a
	 * client that went away, would hand them to the next one. */
	for (int i = 1; i < o->outstanding; i++) {
		int len = MAD;

		if (umad_recv(fd, in, &len, 2000) < 0)
			break;
	}
	report(o, &c);
	umad_unregister(fd, agent);
	umad_close_port(fd);
	free(frame);
	free(in);
	return c.errors ? 1 : 0;
}

static int open_in(const char *path, const char *name, int flags)
{
	struct stat st;
	char buf[4096];
	int fd;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(buf, sizeof(buf), "%s/%s", path, name);
		path = buf;
	}
	fd = open(path, flags);
	if (fd < 0)
		die(path);
	return fd;
}

static int run_umad(const struct opts *o)
{
	uint8_t frame[HDR + MAD], in[HDR + MAD];
	int fd = open_in(o->path, "umad", O_RDWR);
	uint64_t tid = 1;
	struct count c;

	for (int i = 0; i < o->outstanding; i++) {
		make_frame(frame, tid++);
		if (write(fd, frame, sizeof(frame)) != (ssize_t)sizeof(frame))
			die("write umad");
	}
	count_start(&c, o);
	for (;;) {
		ssize_t n = read(fd, in, sizeof(in));

		if (n < HDR + 24)
			die("read umad");
		if (!account(&c, 1, answer_bad(in)))
			break;
		make_frame(frame, tid++);
		if (write(fd, frame, sizeof(frame)) != (ssize_t)sizeof(frame))
			die("write umad");
	}
	report(o, &c);
	close(fd); /* answers still in flight go with the private channel */
	return c.errors ? 1 : 0;
}

static int run_text(const struct opts *o)
{
	static const char line[] = "dr=0 method=get attr=NodeInfo\n";
	const size_t ll = sizeof(line) - 1;
	int sfd = open_in(o->path, "send", O_WRONLY);
	int rfd = open_in(o->path, "recv", O_RDONLY);
	char *lines = malloc(ll * (size_t)o->outstanding);
	char *buf = malloc(o->rbytes);
	long inflight = 0;
	unsigned long reads = 0, writes = 0;
	struct count c;
	bool more = true;

	if (!lines || !buf)
		die("malloc");
	for (int i = 0; i < o->outstanding; i++)
		memcpy(lines + ll * (size_t)i, line, ll);
	count_start(&c, o);
	while (more || inflight > 0) {
		long room = o->outstanding - inflight;
		unsigned long nl = 0, ne = 0;
		ssize_t n;

		if (more && room >= (o->batch < o->outstanding ? o->batch : o->outstanding)) {
			if (write(sfd, lines, ll * (size_t)room) != (ssize_t)(ll * (size_t)room))
				die("write send");
			inflight += room;
			writes += c.counting;
			continue;
		}
		n = read(rfd, buf, o->rbytes);
		if (n <= 0)
			die("read recv");
		for (char *p = buf, *e = buf + n; (p = memchr(p, '\n', (size_t)(e - p))); p++)
			nl++;
		/* Errors are rare: look for them only where they can be. */
		for (char *p = buf; (p = memmem(p, (size_t)(buf + n - p), " error=", 7)); p++)
			ne++;
		inflight -= (long)nl;
		reads += c.counting;
		if (more)
			more = account(&c, nl, ne);
	}
	report(o, &c);
	printf("lines_per_read=%.2f lines_per_write=%.2f\n",
	       reads ? (double)c.answers / reads : 0.0,
	       writes ? (double)c.answers / writes : 0.0);
	close(sfd);
	close(rfd);
	free(lines);
	free(buf);
	return c.errors ? 1 : 0;
}

/* One FUSE round trip per call: a non-blocking read of an empty `recv`
 * (EAGAIN), the least the daemon can do for a request. */
static int run_fuse(const struct opts *o)
{
	int fd = open_in(o->path, "recv", O_RDONLY | O_NONBLOCK);
	struct count c;
	char buf[4096];

	count_start(&c, o);
	for (;;) {
		if (read(fd, buf, sizeof(buf)) >= 0 || errno != EAGAIN) {
			fprintf(stderr, "madbench: recv of %s is not empty\n", o->path);
			return 2;
		}
		if (!account(&c, 1, 0))
			break;
	}
	report(o, &c);
	close(fd);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: madbench direct [-n N] [-t S] [-w S] [-C CA] [-P PORT]\n"
		"       madbench umad [-n N] [-t S] [-w S] PORT_DIR|UMAD_FILE\n"
		"       madbench text [-n N] [-b LINES] [-r BYTES] [-t S] [-w S] PORT_DIR\n"
		"       madbench fuse [-t S] [-w S] PORT_DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = {
		.outstanding = 1, .batch = 32, .rbytes = 65536,
		.seconds = 2, .warmup = 0.3,
	};
	int opt;

	if (argc < 2)
		usage();
	o.mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "n:b:r:t:w:C:P:")) != -1) {
		switch (opt) {
		case 'n': o.outstanding = atoi(optarg); break;
		case 'b': o.batch = atoi(optarg); break;
		case 'r': o.rbytes = (size_t)atol(optarg); break;
		case 't': o.seconds = atof(optarg); break;
		case 'w': o.warmup = atof(optarg); break;
		case 'C': o.ca = optarg; break;
		case 'P': o.port = atoi(optarg); break;
		default: usage();
		}
	}
	if (o.outstanding < 1 || o.outstanding > MAX_WINDOW || o.batch < 1 ||
	    o.rbytes < 1024 || o.seconds <= 0 || o.warmup < 0)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(o.mode, "direct"))
		return optind == argc ? run_direct(&o) : (usage(), 2);
	if (optind != argc - 1)
		usage();
	o.path = argv[optind];
	if (!strcmp(o.mode, "umad"))
		return run_umad(&o);
	if (!strcmp(o.mode, "text"))
		return run_text(&o);
	if (!strcmp(o.mode, "fuse"))
		return run_fuse(&o);
	usage();
	return 2;
}
