/* Receive queues: CA/ports/N/rq/NAME is a UD QP of its own on the port's
 * verbs device, with a pool of posted buffers, a completion thread, and
 * the datagrams it received waiting to be read from `recv` (text lines) or
 * `recv_bin` (binary records).  See docs/rq.md. */
#ifndef UMADFS_RQ_H
#define UMADFS_RQ_H

#include <stdint.h>

struct node;

#define RQ_QKEY_DEFAULT 0x11111111u
#define RQ_DEPTH_DEFAULT 256u
#define RQ_DEPTH_MAX 4096u          /* also capped by the device's limits */
#define RQ_GRH_BYTES 40u            /* UD: the first 40 bytes of a buffer */
#define RQ_MSG_SIZE_MAX (4096u + RQ_GRH_BYTES) /* largest MTU + GRH */
#define RQ_MSG_SIZE_MIN RQ_GRH_BYTES           /* empty datagrams only */

/* recv_bin: one record per read, this header then `len` payload bytes.
 * Every field is little-endian; GIDs are in wire (network) order. */
enum rq_record_flags {
	RQ_REC_GRH = 1 << 0,  /* a GRH came: sgid..hop_limit are valid */
	RQ_REC_IMM = 1 << 1,  /* immediate data came: imm is valid */
	RQ_REC_IPV4 = 1 << 2, /* RoCEv2 over IPv4: GIDs are ::ffff:a.b.c.d */
};

struct rq_record {
	uint16_t hdr_len;       /*  0: sizeof(struct rq_record); payload at this offset */
	uint16_t flags;         /*  2: enum rq_record_flags */
	uint32_t len;           /*  4: payload bytes (GRH excluded; 0 on error) */
	uint32_t status;        /*  8: enum ibv_wc_status, 0 = success */
	uint32_t vendor_err;    /* 12 */
	uint32_t src_qp;        /* 16 */
	uint32_t imm;           /* 20: the immediate as a number (RQ_REC_IMM) */
	uint16_t slid;          /* 24 */
	uint16_t pkey_index;    /* 26 */
	uint8_t sl;             /* 28 */
	uint8_t dlid_path_bits; /* 29 */
	uint8_t traffic_class;  /* 30 */
	uint8_t hop_limit;      /* 31 */
	uint32_t flow_label;    /* 32 */
	uint32_t reserved;      /* 36: 0 */
	uint64_t seq;           /* 40: the completion's number on this queue, from 1 */
	uint8_t sgid[16];       /* 48 */
	uint8_t dgid[16];       /* 64 */
};                              /* 80 */

/* Makes port_dir/rq for port portnum of CA ca when the host has a verbs
 * device of that name (none under the ibsim simulator: then nothing is
 * made).  Returns 0 or -errno. */
int rq_add_dir(struct node *port_dir, const char *ca, int portnum);
/* The port's device is gone: every queue of port_dir/rq is torn down now
 * (its verbs context closed: the kernel's removal of the device waits for
 * that), its readers failed with EIO. */
void rq_port_gone(struct node *port_dir);

#endif
