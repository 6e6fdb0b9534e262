/* sim_issm: an LD_PRELOAD shim for tests under ibsim/umad2sim.
 *
 * ibsim hands unsolicited GSI requests (e.g. ibping's pings) only to a
 * client that holds its port's issm device.  `ibping -S` never opens it,
 * so load this after libumad2sim.so:
 *
 *     LD_PRELOAD="libumad2sim.so sim_issm.so" ibping -S
 *
 * Its constructor opens the issm device of ibsim0 port SIM_ISSM_PORT
 * (default 1, an HCA's port) and keeps it open for the life of the process.
 *
 * Holding issm also makes ibsim set the port's IsSM capability bit, and
 * the SM then sends SubnGet(SMInfo) (class 0x81 and 0x01) to this client.
 * umad2sim's receiver thread dereferences NULL for a MAD of a class that
 * no agent of the process registered, so before opening issm the shim
 * registers SMI agents on an fd of its own (the SMPs queue there unread).
 *
 * Start the program directly (not through a shell): the constructor runs
 * in every process that loads the shim.  SIM_ISSM_VERBOSE=1 reports.
 *
 * Build: cc -shared -fPIC -o sim_issm.so sim_issm.c -libumad -ldl
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad.h>

static int issm_fd = -1, smi_fd = -1;

__attribute__((constructor)) static void sim_issm_open(void)
{
	int (*open_fn)(const char *, int, ...);
	const char *ca = getenv("SIM_ISSM_CA");
	const char *port_s = getenv("SIM_ISSM_PORT");
	int port = port_s ? atoi(port_s) : 1;
	int verbose = getenv("SIM_ISSM_VERBOSE") != NULL;
	char path[256];
	static const int classes[] = { 0x01, 0x81 };

	if (!ca)
		ca = "ibsim0";
	/* Through the symbol "open": a direct call could bind to open64,
	 * which umad2sim does not wrap. */
	open_fn = (int (*)(const char *, int, ...))dlsym(RTLD_DEFAULT, "open");
	if (!open_fn) {
		fprintf(stderr, "sim_issm: no open()\n");
		return;
	}
	if (umad_init() < 0) {
		fprintf(stderr, "sim_issm: umad_init failed\n");
		return;
	}
	smi_fd = umad_open_port((char *)ca, port);
	if (smi_fd < 0) {
		fprintf(stderr, "sim_issm: umad_open_port(%s, %d): %s\n", ca, port,
			strerror(-smi_fd));
		return;
	}
	for (unsigned i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		int id = umad_register(smi_fd, classes[i], 1, 0, NULL);

		if (id < 0)
			fprintf(stderr, "sim_issm: umad_register class 0x%02x: %s\n",
				classes[i], strerror(-id));
	}
	if (umad_get_issm_path((char *)ca, port, path, sizeof(path)) < 0) {
		fprintf(stderr, "sim_issm: no issm path for %s port %d\n", ca, port);
		return;
	}
	issm_fd = open_fn(path, O_RDWR);
	if (issm_fd < 0)
		fprintf(stderr, "sim_issm: open %s: %s\n", path, strerror(errno));
	else if (verbose)
		fprintf(stderr, "sim_issm: %s open (fd %d); SMI agents on fd %d\n",
			path, issm_fd, smi_fd);
}
