/* umad_pong: a binary MAD server as a program ported from libibumad writes
 * one, through a umadfs channel's `umad` file: reads request frames, writes
 * each back on the same open file as a GetResp with a marker in its data.
 *
 *   umad_pong UMAD_FILE COUNT SECONDS
 *
 * Serves COUNT Gets (whatever class the channel registered) or gives up
 * after SECONDS; prints "answered N" and exits 0 when N == COUNT.  The
 * response carries 0xc0ffee at MAD offset 40 (the data of vendor classes
 * 0x30-0x4f) and keeps the request's address, TID and the rest. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define HDR 64   /* struct ib_user_mad */
#define MAD 256
#define QKEY_OFF 24  /* ib_mad_addr_t.qkey, after five u32s and qpn */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The request in frame (n bytes) made a response, written back on fd. */
static int answer(int fd, uint8_t *frame, ssize_t n)
{
	uint32_t zero = 0, qkey = htonl(0x80010000);
	uint8_t *mad = frame + HDR;

	if (n < HDR + 24 || mad[3] != 0x01) {
		fprintf(stderr, "umad_pong: not a Get (%zd bytes, method 0x%02x)\n",
			n, n > HDR + 3 ? mad[3] : 0);
		return -1;
	}
	mad[3] = 0x81;
	memset(mad + 40, 0, MAD - 40);
	mad[40] = 0xc0;
	mad[41] = 0xff;
	mad[42] = 0xee;
	memcpy(frame + 4, &zero, 4);  /* status */
	memcpy(frame + 8, &zero, 4);  /* timeout_ms: a response waits for nothing */
	memcpy(frame + 12, &zero, 4); /* retries */
	memcpy(frame + QKEY_OFF, &qkey, 4); /* QP1's, as libibmad's mad_respond */
	if (write(fd, frame, HDR + MAD) != HDR + MAD) {
		perror("umad_pong: write");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t frame[HDR + 8192];
	int fd, count, answered = 0;
	double deadline;

	if (argc != 4) {
		fprintf(stderr, "usage: umad_pong UMAD_FILE COUNT SECONDS\n");
		return 2;
	}
	count = atoi(argv[2]);
	deadline = now() + atof(argv[3]);
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	while (answered < count && now() < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, frame, sizeof(frame));
		if (n < 0) {
			perror("umad_pong: read");
			break;
		}
		if (answer(fd, frame, n) < 0)
			break;
		answered++;
	}
	close(fd);
	printf("answered %d\n", answered);
	return answered == count ? 0 : 1;
}
