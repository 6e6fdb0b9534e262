/* One wrapper over libibumad whose functions all return 0 (or a count, an
 * fd, an agent id) on success and -errno on failure.  libibumad itself mixes
 * -errno, -1 with errno, a fixed -EPERM or -EIO with the real cause in errno,
 * and positive errno values; callers of this module never see that. */
#ifndef UMADFS_IBUMAD_H
#define UMADFS_IBUMAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/umad.h>

int ibumad_init(void);
/* Fills names[max] with the CAs libibumad reports; returns how many. */
int ibumad_ca_names(char names[][UMAD_CA_NAME_LEN], int max);
int ibumad_get_ca(const char *ca, umad_ca_t *out);
void ibumad_release_ca(umad_ca_t *ca);
int ibumad_get_port(const char *ca, int portnum, umad_port_t *out);
void ibumad_release_port(umad_port_t *port);
/* Returns the port's umad fd (libibumad's "portid"). */
int ibumad_open_port(const char *ca, int portnum);
void ibumad_close_port(int fd);
/* Registers an agent; oui (host order, 24 bits) only for vendor classes
 * 0x30-0x4F; method_mask NULL for a send-only agent.  Returns its id. */
int ibumad_register(int fd, int mgmt_class, int class_version,
		    int rmpp_version, uint32_t oui, const uint64_t method_mask[2]);
int ibumad_unregister(int fd, int agent_id);
/* Sends one frame (header + mad_len bytes); timeout/retries from the header
 * fields the caller filled. */
int ibumad_send(int fd, int agent_id, void *frame, size_t mad_len,
		int timeout_ms, int retries);
/* Waits up to timeout_ms for something to read: 0 ready, -ETIMEDOUT. */
int ibumad_poll(int fd, int timeout_ms);
/* Reads one frame without waiting.  On success returns 0 and sets *mad_len
 * to the MAD bytes read.  -ENOSPC: the frame needs *mad_len bytes of MAD
 * room and stays queued (an RMPP message larger than the buffer).
 * -EAGAIN: nothing queued. */
int ibumad_recv(int fd, void *frame, size_t *mad_len);

/* Whether an error of ibumad_send(), ibumad_recv() or ibumad_poll() is
 * about one MAD, the moment or memory (EAGAIN, ENOMEM, EINVAL, EMSGSIZE,
 * EBUSY...), not about the transport under libibumad.  err: positive. */
bool ibumad_transient(int err);

/* True when libibumad is carried to ibsim by umad2sim (LD_PRELOAD). */
bool ibumad_simulated(void);
/* Opens the port's issm device without waiting (EAGAIN while another
 * process holds it); returns the fd or -errno. */
int ibumad_open_issm(const char *ca, int portnum);

#endif
