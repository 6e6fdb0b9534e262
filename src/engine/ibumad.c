/* libibumad, with its error conventions normalised to -errno, and which of
 * its errors are about one MAD or the moment rather than the transport. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/engine/ibumad.h"

/* libibumad sometimes returns a fixed code and leaves the cause in errno. */
static int errno_or(int fallback)
{
	return errno > 0 ? -errno : fallback;
}

int ibumad_init(void)
{
	return umad_init() < 0 ? -EIO : 0;
}

int ibumad_ca_names(char names[][UMAD_CA_NAME_LEN], int max)
{
	int n = umad_get_cas_names(names, max);

	return n < 0 ? -ENODEV : n;
}

int ibumad_get_ca(const char *ca, umad_ca_t *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = umad_get_ca(ca, out);
	return r < 0 ? (r == -1 ? errno_or(-ENODEV) : r) : 0;
}

void ibumad_release_ca(umad_ca_t *ca)
{
	umad_release_ca(ca);
}

int ibumad_get_port(const char *ca, int portnum, umad_port_t *out)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = umad_get_port(ca, portnum, out);
	return r < 0 ? (r == -1 ? errno_or(-ENODEV) : r) : 0;
}

void ibumad_release_port(umad_port_t *port)
{
	umad_release_port(port);
}

int ibumad_open_port(const char *ca, int portnum)
{
	int fd;

	errno = 0;
	fd = umad_open_port(ca, portnum);
	/* -EIO means open(2) failed; errno says why (EACCES, ENOENT...). */
	if (fd == -EIO)
		return errno_or(-EIO);
	return fd;
}

void ibumad_close_port(int fd)
{
	umad_close_port(fd);
}

int ibumad_register(int fd, int mgmt_class, int class_version,
		    int rmpp_version, uint32_t oui, const uint64_t method_mask[2])
{
	struct umad_reg_attr attr;
	uint32_t id;
	int r;

	memset(&attr, 0, sizeof(attr));
	attr.mgmt_class = (uint8_t)mgmt_class;
	attr.mgmt_class_version = (uint8_t)class_version;
	attr.rmpp_version = (uint8_t)rmpp_version;
	attr.oui = oui;
	if (method_mask) {
		attr.method_mask[0] = method_mask[0];
		attr.method_mask[1] = method_mask[1];
	}
	errno = 0;
	r = umad_register2(fd, &attr, &id); /* positive errno on failure */
	if (r)
		return -r;
	return (int)id;
}

int ibumad_unregister(int fd, int agent_id)
{
	errno = 0;
	return umad_unregister(fd, agent_id) ? errno_or(-EINVAL) : 0;
}

int ibumad_send(int fd, int agent_id, void *frame, size_t mad_len,
		int timeout_ms, int retries)
{
	errno = 0;
	if (umad_send(fd, agent_id, frame, (int)mad_len, timeout_ms, retries))
		return errno_or(-EIO);
	return 0;
}

int ibumad_poll(int fd, int timeout_ms)
{
	int r;

	errno = 0;
	r = umad_poll(fd, timeout_ms);
	if (r == -EIO)
		return errno_or(-EIO);
	return r;
}

int ibumad_recv(int fd, void *frame, size_t *mad_len)
{
	int len = (int)*mad_len;
	int r;

	errno = 0;
	r = umad_recv(fd, frame, &len, 0);
	if (r >= 0) {
		*mad_len = (size_t)len;
		return 0;
	}
	if (errno == ENOSPC) {
		*mad_len = (size_t)len;
		return -ENOSPC;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return -EAGAIN;
	return errno_or(r);
}

bool ibumad_transient(int err)
{
	switch (err) {
	case EAGAIN: case EINTR: case ENOMEM: case ENOBUFS: case EINVAL:
	case EMSGSIZE: case EBUSY: case ENOSPC: case ETIMEDOUT:
		return true;
	default:
		return false;
	}
}

bool ibumad_simulated(void)
{
	const char *preload = getenv("LD_PRELOAD");

	return preload && strstr(preload, "umad2sim");
}

int ibumad_open_issm(const char *ca, int portnum)
{
	/* Through the symbol "open" itself: with _FILE_OFFSET_BITS=64 a
	 * direct call binds to open64, which umad2sim does not wrap. */
	int (*open_fn)(const char *, int, ...) =
		(int (*)(const char *, int, ...))dlsym(RTLD_DEFAULT, "open");
	char path[256];
	int fd, r = umad_get_issm_path(ca, portnum, path, sizeof(path));

	if (r < 0)
		return r;
	if (!open_fn)
		return -ENOSYS;
	fd = open_fn(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}
