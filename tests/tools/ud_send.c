/* ud_send: sends UD datagrams with libibverbs, for testing rq/ queues.
 *
 *   ud_send -d DEV -q QPN -g GID [options]
 *
 * -d DEV       verbs device (rxe0)            -p PORT  port (1)
 * -q QPN       destination QP number          -k QKEY  its Q_Key (0x11111111)
 * -g GID       destination GID (colon form, as in the rq's gid file); RoCE
 *              needs it, and IB then routes with a GRH too
 * -l LID       destination LID (IB without GRH)
 * -x IDX       source GID index (0)
 * -s SIZES     payload sizes, comma separated, used in turn (64)
 * -n COUNT     datagrams to send (1)
 * -i IMM       immediate data for every datagram; -I: IMM + datagram number
 * -P PATTERN   payload: "inc" (byte j of datagram m is (m + j) & 0xff, the
 *              default), "zero", "byte:0xNN", "hex:0011AA..." (exact bytes,
 *              repeated to the size)
 * -r RATE      datagrams per second (0: as fast as the send queue goes)
 * -w USEC      pause after each datagram
 * -v           prints each datagram sent
 *
 * Prints "qpn=N" (its own QP number, the receiver's src_qp) first and
 * "sent=N errors=N seconds=S" last.  Exit status 0 when every send
 * completed successfully. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define SQ_DEPTH 64
#define MAX_PAYLOAD 4096
#define MAX_SIZES 64

static void die(const char *what)
{
	fprintf(stderr, "ud_send: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void usage(void)
{
	fprintf(stderr, "usage: ud_send -d DEV -q QPN (-g GID | -l LID) [-p PORT] "
		"[-k QKEY] [-x GIDIDX] [-s SIZES] [-n COUNT] [-i IMM] [-I] "
		"[-P PATTERN] [-r RATE] [-w USEC] [-v]\n");
	exit(2);
}

static unsigned long num(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || !*s) {
		fprintf(stderr, "ud_send: %s: '%s' is not a number\n", what, s);
		exit(2);
	}
	return v;
}

static int parse_gid(const char *s, union ibv_gid *gid)
{
	unsigned v[8];
	char tail;

	/* The rq's gid file: eight groups of four hex digits. */
	if (sscanf(s, "%x:%x:%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7], &tail) == 8) {
		for (int i = 0; i < 8; i++) {
			gid->raw[2 * i] = (uint8_t)(v[i] >> 8);
			gid->raw[2 * i + 1] = (uint8_t)v[i];
		}
		return 0;
	}
	return inet_pton(AF_INET6, s, gid->raw) == 1 ? 0 : -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int main(int argc, char **argv)
{
	const char *dev_name = NULL, *pattern = "inc", *gid_s = NULL;
	unsigned long qpn = 0, qkey = 0x11111111, lid = 0, count = 1, imm = 0;
	unsigned long rate = 0, pause_us = 0, port = 1, gid_index = 0;
	size_t sizes[MAX_SIZES] = { 64 }, nsizes = 1;
	bool have_qpn = false, have_imm = false, imm_inc = false, verbose = false;
	uint8_t pat[MAX_PAYLOAD];
	size_t pat_len = 0;
	int opt;

	while ((opt = getopt(argc, argv, "d:p:q:k:g:l:x:s:n:i:IP:r:w:v")) != -1) {
		switch (opt) {
		case 'd': dev_name = optarg; break;
		case 'p': port = num(optarg, "-p"); break;
		case 'q': qpn = num(optarg, "-q"); have_qpn = true; break;
		case 'k': qkey = num(optarg, "-k"); break;
		case 'g': gid_s = optarg; break;
		case 'l': lid = num(optarg, "-l"); break;
		case 'x': gid_index = num(optarg, "-x"); break;
		case 's': {
			char *save = NULL, *tok, *copy = strdup(optarg);

			nsizes = 0;
			for (tok = strtok_r(copy, ",", &save); tok && nsizes < MAX_SIZES;
			     tok = strtok_r(NULL, ",", &save)) {
				sizes[nsizes] = num(tok, "-s");
				if (sizes[nsizes] > MAX_PAYLOAD) {
					fprintf(stderr, "ud_send: size %zu > %d\n",
						sizes[nsizes], MAX_PAYLOAD);
					return 2;
				}
				nsizes++;
			}
			free(copy);
			if (!nsizes)
				usage();
			break;
		}
		case 'n': count = num(optarg, "-n"); break;
		case 'i': imm = num(optarg, "-i"); have_imm = true; break;
		case 'I': imm_inc = true; have_imm = true; break;
		case 'P': pattern = optarg; break;
		case 'r': rate = num(optarg, "-r"); break;
		case 'w': pause_us = num(optarg, "-w"); break;
		case 'v': verbose = true; break;
		default: usage();
		}
	}
	if (!dev_name || !have_qpn || (!gid_s && !lid))
		usage();
	if (!strncmp(pattern, "hex:", 4)) {
		const char *h = pattern + 4;

		for (; h[0] && h[1] && pat_len < sizeof(pat); h += 2) {
			unsigned b;

			if (sscanf(h, "%2x", &b) != 1)
				usage();
			pat[pat_len++] = (uint8_t)b;
		}
		if (!pat_len || *h)
			usage();
	} else if (!strncmp(pattern, "byte:", 5)) {
		pat[0] = (uint8_t)num(pattern + 5, "-P byte:");
		pat_len = 1;
	} else if (!strcmp(pattern, "zero")) {
		pat[0] = 0;
		pat_len = 1;
	} else if (strcmp(pattern, "inc")) {
		usage();
	}

	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int ndev;

	list = ibv_get_device_list(&ndev);
	if (!list)
		die("ibv_get_device_list");
	for (int i = 0; i < ndev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		errno = errno ? errno : ENODEV;
		die(dev_name);
	}

	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, SQ_DEPTH, NULL, NULL, 0) : NULL;

	if (!cq)
		die("pd/cq");
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		die("ibv_create_qp");
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0,
				 .port_num = (uint8_t)port, .qkey = (uint32_t)qkey };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_QKEY))
		die("INIT");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("RTR");
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0 };
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("RTS");

	struct ibv_ah_attr ah_attr = { .dlid = (uint16_t)lid, .port_num = (uint8_t)port };

	if (gid_s) {
		if (parse_gid(gid_s, &ah_attr.grh.dgid) < 0) {
			fprintf(stderr, "ud_send: -g %s: not a GID\n", gid_s);
			return 2;
		}
		ah_attr.is_global = 1;
		ah_attr.grh.sgid_index = (uint8_t)gid_index;
		ah_attr.grh.hop_limit = 64;
	}
	struct ibv_ah *ah = ibv_create_ah(pd, &ah_attr);

	if (!ah)
		die("ibv_create_ah");

	/* One payload slot per send queue entry: a slot is reused only
	 * after its send completed. */
	static uint8_t bufs[SQ_DEPTH][MAX_PAYLOAD];
	struct ibv_mr *mr = ibv_reg_mr(pd, bufs, sizeof(bufs), IBV_ACCESS_LOCAL_WRITE);

	if (!mr)
		die("ibv_reg_mr");
	printf("qpn=%u\n", qp->qp_num);
	fflush(stdout);

	unsigned long sent = 0, done = 0, errors = 0, outstanding = 0;
	double t0 = now(), next = t0;

	while (done < count) {
		while (sent < count && outstanding < SQ_DEPTH) {
			size_t len = sizes[sent % nsizes];
			uint8_t *p = bufs[sent % SQ_DEPTH];
			struct ibv_sge sge = { .addr = (uintptr_t)p, .length = (uint32_t)len,
					       .lkey = mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = sent, .sg_list = &sge, .num_sge = 1,
				.opcode = have_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED,
			}, *bad;
			int r;

			for (size_t j = 0; j < len; j++)
				p[j] = pat_len ? pat[j % pat_len] : (uint8_t)(sent + j);
			if (have_imm)
				wr.imm_data = htonl((uint32_t)(imm_inc ? imm + sent : imm));
			wr.wr.ud.ah = ah;
			wr.wr.ud.remote_qpn = (uint32_t)qpn;
			wr.wr.ud.remote_qkey = (uint32_t)qkey;
			if (rate) {
				sleep_until(next);
				next += 1.0 / (double)rate;
			}
			r = ibv_post_send(qp, &wr, &bad);
			if (r) {
				errno = r;
				die("ibv_post_send");
			}
			if (verbose)
				printf("sent %lu len=%zu\n", sent, len);
			sent++;
			outstanding++;
			if (pause_us)
				usleep((useconds_t)pause_us);
		}
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(cq, 16, wc);

		if (n < 0)
			die("ibv_poll_cq");
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				errors++;
				fprintf(stderr, "ud_send: datagram %lu: %s\n",
					(unsigned long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status));
			}
		}
		done += (unsigned long)n;
		outstanding -= (unsigned long)n;
		/* Waiting only: leave the CPU to rxe and the receiver. */
		if (!n && (outstanding == SQ_DEPTH || sent == count))
			usleep(50);
	}
	printf("sent=%lu errors=%lu seconds=%.3f\n", sent, errors, now() - t0);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return errors ? 1 : 0;
}
