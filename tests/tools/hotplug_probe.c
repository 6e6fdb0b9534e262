/* hotplug_probe: what the kernel does when a CA goes and comes, for the VM
 * tier (tests/vm/hotplug).  Every line it prints starts with the guest's
 * uptime (CLOCK_BOOTTIME, as /proc/uptime) so lines of several runs line up.
 *
 *   hotplug_probe uevents SECS          raw kernel uevents (netlink), one line
 *                                       each: ACTION DEVPATH and every KEY=VALUE
 *   hotplug_probe udev SECS             the same through libudev's "kernel"
 *                                       monitor, filtered to the infiniband,
 *                                       infiniband_mad and infiniband_verbs
 *                                       classes
 *   hotplug_probe umad CA PORT SECS     opens the port's umad device, registers
 *                                       a GSI agent, then polls; on an event
 *                                       prints revents, read's and write's errno;
 *                                       closes after SECS
 *   hotplug_probe umadread CA PORT SECS the same with one blocking read(2)
 *                                       instead of poll
 *   hotplug_probe verbs CA SECS         opens the device, a PD, a CQ on a
 *                                       completion channel and a UD QP in RTS;
 *                                       polls the async and completion fds and
 *                                       prints each async event; closes after
 *                                       SECS
 *   hotplug_probe scan                  what libibumad and /sys/class/infiniband_mad
 *                                       show now
 *   hotplug_probe ready CA SECS         after `rdma link add`: when libibumad
 *                                       lists CA, when umad_get_ca gives its
 *                                       ports, when port 1 is ACTIVE with GID 0,
 *                                       when umad_open_port + register work
 *
 * Exit status 2 on a usage error, 1 when a step failed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/umad.h>
#include <infiniband/verbs.h>
#include <libudev.h>

static double uptime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say(const char *fmt, ...)
{
	va_list ap;

	printf("%.3f ", uptime());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static int cmd_uevents(double secs)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	char buf[8192], line[9000];
	double end = uptime() + secs;
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			NETLINK_KOBJECT_UEVENT);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		say("uevents: socket: %s", strerror(errno));
		return 1;
	}
	say("uevents: listening");
	while (uptime() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		size_t off, len = 0;

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* "ACTION@DEVPATH\0KEY=VALUE\0..." */
		for (off = 0; off < (size_t)n; off += strlen(buf + off) + 1)
			len += snprintf(line + len, sizeof(line) - len, "%s%s",
					off ? " " : "", buf + off);
		say("uevent %s", line);
	}
	close(fd);
	return 0;
}

static int cmd_udev(double secs)
{
	static const char *const classes[] = {
		"infiniband", "infiniband_mad", "infiniband_verbs",
	};
	struct udev *udev = udev_new();
	struct udev_monitor *mon;
	double end = uptime() + secs;

	mon = udev ? udev_monitor_new_from_netlink(udev, "kernel") : NULL;
	if (!mon) {
		say("udev: no monitor: %s", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		udev_monitor_filter_add_match_subsystem_devtype(mon, classes[i],
								NULL);
	if (udev_monitor_enable_receiving(mon) < 0) {
		say("udev: enable_receiving: %s", strerror(errno));
		return 1;
	}
	say("udev: listening (kernel source)");
	while (uptime() < end) {
		struct pollfd p = { .fd = udev_monitor_get_fd(mon),
				    .events = POLLIN };
		struct udev_device *d;

		if (poll(&p, 1, 200) <= 0)
			continue;
		d = udev_monitor_receive_device(mon);
		if (!d)
			continue;
		say("udev action=%s subsystem=%s sysname=%s devnode=%s seqnum=%llu",
		    udev_device_get_action(d), udev_device_get_subsystem(d),
		    udev_device_get_sysname(d), udev_device_get_devnode(d) ?: "-",
		    udev_device_get_seqnum(d));
		udev_device_unref(d);
	}
	udev_monitor_unref(mon);
	udev_unref(udev);
	return 0;
}

static void umad_try_io(int fd, int agent)
{
	char frame[64 + 256];
	ssize_t n;

	n = read(fd, frame, sizeof(frame));
	say("umad: read=%zd errno=%s", n, n < 0 ? strerror(errno) : "-");
	memset(frame, 0, sizeof(frame));
	((struct ib_user_mad *)frame)->agent_id = agent;
	n = write(fd, frame, sizeof(frame));
	say("umad: write=%zd errno=%s", n, n < 0 ? strerror(errno) : "-");
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* One read(2) without O_NONBLOCK, cut by SIGALRM after secs if the kernel
 * never wakes it. */
static void umad_blocking_read(int fd, double secs)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	char frame[64 + 256];
	ssize_t n;

	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned)secs);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	say("umad: blocking read (SIGALRM in %.0f s)", secs);
	n = read(fd, frame, sizeof(frame));
	say("umad: read=%zd errno=%s", n, n < 0 ? strerror(errno) : "-");
}

static int cmd_umad(const char *ca, int port, double secs, bool block)
{
	double end = uptime() + secs;
	int fd, agent, events = 0;

	umad_init();
	fd = umad_open_port(ca, port);
	if (fd < 0) {
		say("umad: open %s/%d: %d", ca, port, fd);
		return 1;
	}
	agent = umad_register(fd, 0x04, 1, 0, NULL);
	say("umad: open %s/%d fd=%d agent=%d", ca, port, fd, agent);
	if (block) {
		umad_blocking_read(fd, secs);
		umad_try_io(fd, agent);
	}
	while (uptime() < end && !block) {
		struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };
		int r = poll(&p, 1, 100);

		/* POLLOUT is always set on a live umad fd: report it once */
		if (r <= 0 || (p.revents == POLLOUT && events++))
			continue;
		say("umad: poll revents=0x%x%s%s%s", p.revents,
		    p.revents & POLLIN ? " IN" : "",
		    p.revents & POLLERR ? " ERR" : "",
		    p.revents & POLLHUP ? " HUP" : "");
		if (p.revents & (POLLERR | POLLHUP | POLLIN)) {
			umad_try_io(fd, agent);
			break;
		}
	}
	while (uptime() < end)
		usleep(50000);
	say("umad: unregister=%d", umad_unregister(fd, agent));
	say("umad: close=%d", umad_close_port(fd));
	return 0;
}

struct verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

static int verbs_open(struct verbs *v, const char *ca)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x11111111 };

	for (int i = 0; list && list[i] && !v->ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), ca))
			v->ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!v->ctx)
		return -1;
	v->pd = ibv_alloc_pd(v->ctx);
	v->ch = ibv_create_comp_channel(v->ctx);
	v->cq = v->ch ? ibv_create_cq(v->ctx, 8, NULL, v->ch, 0) : NULL;
	if (!v->pd || !v->cq || ibv_req_notify_cq(v->cq, 0))
		return -1;
	qa.send_cq = qa.recv_cq = v->cq;
	v->qp = ibv_create_qp(v->pd, &qa);
	if (!v->qp || ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? -1 : 0;
}

static void verbs_close(struct verbs *v)
{
	say("verbs: destroy qp=%d", v->qp ? ibv_destroy_qp(v->qp) : -1);
	say("verbs: destroy cq=%d", v->cq ? ibv_destroy_cq(v->cq) : -1);
	say("verbs: destroy channel=%d",
	    v->ch ? ibv_destroy_comp_channel(v->ch) : -1);
	say("verbs: dealloc pd=%d", v->pd ? ibv_dealloc_pd(v->pd) : -1);
	say("verbs: close device=%d", v->ctx ? ibv_close_device(v->ctx) : -1);
}

static void verbs_async(struct verbs *v)
{
	struct ibv_async_event ev;

	if (ibv_get_async_event(v->ctx, &ev)) {
		say("verbs: ibv_get_async_event: %s", strerror(errno));
		return;
	}
	say("verbs: async event %d (%s)", ev.event_type,
	    ibv_event_type_str(ev.event_type));
	ibv_ack_async_event(&ev);
}

static int cmd_verbs(const char *ca, double secs)
{
	struct verbs v = { 0 };
	double end = uptime() + secs, next = uptime();
	struct ibv_port_attr pa;

	if (verbs_open(&v, ca)) {
		say("verbs: open %s: %s", ca, strerror(errno));
		return 1;
	}
	say("verbs: %s open, UD QP %u in RTS", ca, v.qp->qp_num);
	while (uptime() < end) {
		if (uptime() >= next) {
			int r = ibv_query_port(v.ctx, 1, &pa);

			say("verbs: query_port=%d (%s) state=%d", r,
			    r ? strerror(r) : "ok", r ? -1 : (int)pa.state);
			next += 2;
		}
		struct pollfd p[2] = {
			{ .fd = v.ctx->async_fd, .events = POLLIN },
			{ .fd = v.ch->fd, .events = POLLIN },
		};

		if (poll(p, 2, 100) <= 0)
			continue;
		say("verbs: poll async revents=0x%x comp revents=0x%x",
		    p[0].revents, p[1].revents);
		if (p[0].revents & POLLIN)
			verbs_async(&v);
		if (p[0].revents & ~POLLIN || p[1].revents) {
			int r = ibv_query_port(v.ctx, 1, &pa);

			say("verbs: query_port=%d (%s)", r, r ? strerror(r) : "ok");
			usleep(500000);
		}
	}
	verbs_close(&v);
	return 0;
}

static bool ca_listed(const char *ca)
{
	char names[32][UMAD_CA_NAME_LEN];
	int n = umad_get_cas_names(names, 32);

	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], ca))
			return true;
	return false;
}

static bool port_active(const char *ca)
{
	char path[256], s[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/state",
		 ca);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(s, sizeof(s), f))
		s[0] = '\0';
	fclose(f);
	return !strncmp(s, "4: ACTIVE", 9);
}

static bool umad_works(const char *ca)
{
	int fd = umad_open_port(ca, 1), agent;

	if (fd < 0)
		return false;
	agent = umad_register(fd, 0x04, 1, 0, NULL);
	umad_close_port(fd);
	return agent >= 0;
}

static void scan_umad_class(void)
{
	char line[512] = "";
	size_t len = 0;
	DIR *d = opendir("/sys/class/infiniband_mad");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[300], ibdev[64] = "?";
		FILE *f;

		if (strncmp(e->d_name, "umad", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband_mad/%s/ibdev",
			 e->d_name);
		f = fopen(path, "r");
		if (f && fscanf(f, "%63s", ibdev) != 1)
			strcpy(ibdev, "?");
		if (f)
			fclose(f);
		len += snprintf(line + len, sizeof(line) - len, " %s=%s",
				e->d_name, ibdev);
	}
	if (d)
		closedir(d);
	say("scan: infiniband_mad:%s", line);
}

static int cmd_scan(void)
{
	char names[32][UMAD_CA_NAME_LEN];
	int n;

	umad_init();
	n = umad_get_cas_names(names, 32);
	for (int i = 0; i < n; i++) {
		umad_ca_t c;
		int r = umad_get_ca(names[i], &c), fd;

		fd = umad_open_port(names[i], 1);
		say("scan: umad_get_cas_names[%d]=%s umad_get_ca=%d ports=%d "
		    "state=%d umad_open_port=%d", i, names[i], r,
		    r ? -1 : c.numports,
		    !r && c.ports[1] ? (int)c.ports[1]->state : -1, fd);
		if (!r)
			umad_release_ca(&c);
		if (fd >= 0)
			umad_close_port(fd);
	}
	scan_umad_class();
	return 0;
}

static int cmd_ready(const char *ca, double secs)
{
	double t0 = uptime(), end = t0 + secs;
	bool listed = false, ports = false, active = false, works = false;

	umad_init();
	while (uptime() < end && !(listed && ports && active && works)) {
		umad_ca_t c;

		if (!listed && (listed = ca_listed(ca)))
			say("ready: umad_get_cas_names lists %s (+%.3f)", ca,
			    uptime() - t0);
		if (!ports && umad_get_ca(ca, &c) == 0) {
			ports = c.numports > 0 && c.ports[1];
			if (ports)
				say("ready: umad_get_ca %s: %d ports (+%.3f)", ca,
				    c.numports, uptime() - t0);
			umad_release_ca(&c);
		}
		if (!active && (active = port_active(ca)))
			say("ready: port 1 ACTIVE (+%.3f)", uptime() - t0);
		if (!works && (works = umad_works(ca)))
			say("ready: umad_open_port + register (+%.3f)",
			    uptime() - t0);
		usleep(5000);
	}
	return listed && ports && active && works ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (!strcmp(cmd, "uevents") && argc == 3)
		return cmd_uevents(atof(argv[2]));
	if (!strcmp(cmd, "udev") && argc == 3)
		return cmd_udev(atof(argv[2]));
	if (!strcmp(cmd, "umad") && argc == 5)
		return cmd_umad(argv[2], atoi(argv[3]), atof(argv[4]), false);
	if (!strcmp(cmd, "umadread") && argc == 5)
		return cmd_umad(argv[2], atoi(argv[3]), atof(argv[4]), true);
	if (!strcmp(cmd, "scan") && argc == 2)
		return cmd_scan();
	if (!strcmp(cmd, "verbs") && argc == 4)
		return cmd_verbs(argv[2], atof(argv[3]));
	if (!strcmp(cmd, "ready") && argc == 4)
		return cmd_ready(argv[2], atof(argv[3]));
	fprintf(stderr, "usage: hotplug_probe uevents SECS | udev SECS | "
		"umad CA PORT SECS | verbs CA SECS | ready CA SECS\n");
	return 2;
}
