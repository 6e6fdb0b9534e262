/* Received datagrams as recv's text lines and recv_bin's records
 * (docs/rq.md): their completion, GRH area and payload. */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "rq_priv.h"

_Static_assert(sizeof(struct rq_record) == 80, "rq_record is 80 bytes");

void rq_put_gid(char *out, const uint8_t *g)
{
	/* sysfs's %pI6: eight groups of four hex digits. */
	sprintf(out, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		"%02x%02x:%02x%02x", g[0], g[1], g[2], g[3], g[4], g[5], g[6],
		g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

struct grh_info {
	uint8_t sgid[16], dgid[16];
	uint32_t flow_label;
	uint8_t traffic_class, hop_limit;
	bool ipv4;
};

/* The GRH area of a UD buffer: an IB GRH / IPv6 header in its 40 bytes,
 * or (RoCEv2 over IPv4) 20 zero bytes and then the IPv4 header, whose
 * addresses become IPv4-mapped GIDs as the kernel's GID table has them. */
static void parse_grh(const uint8_t *d, struct grh_info *g)
{
	const uint8_t *ip = d + 20;
	uint32_t vtf;

	memset(g, 0, sizeof(*g));
	if ((d[0] >> 4) != 6 && (ip[0] >> 4) == 4) {
		g->ipv4 = true;
		g->traffic_class = ip[1];
		g->hop_limit = ip[8];
		g->sgid[10] = g->sgid[11] = 0xff;
		g->dgid[10] = g->dgid[11] = 0xff;
		memcpy(g->sgid + 12, ip + 12, 4);
		memcpy(g->dgid + 12, ip + 16, 4);
		return;
	}
	vtf = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 |
	      (uint32_t)d[2] << 8 | d[3];
	g->traffic_class = (uint8_t)(vtf >> 20);
	g->flow_label = vtf & 0xfffff;
	g->hop_limit = d[7];
	memcpy(g->sgid, d + 8, 16);
	memcpy(g->dgid, d + 24, 16);
}

/* Payload bytes after the GRH area; 0 for an error completion. */
uint32_t rq_payload_len(const struct rq_buf *b)
{
	if (b->wc.status != IBV_WC_SUCCESS || b->wc.byte_len < RQ_GRH_BYTES)
		return 0;
	return b->wc.byte_len - RQ_GRH_BYTES;
}

/* One datagram as a text line into out (RQ_LINE_MAX bytes).  Returns its
 * length. */
size_t rq_format_line(const struct rq_buf *b, char *out)
{
	const struct ibv_wc *wc = &b->wc;
	static const char hex[] = "0123456789abcdef";
	uint32_t len = rq_payload_len(b);
	const uint8_t *p = b->data + RQ_GRH_BYTES;
	char *o = out;

	if (wc->status != IBV_WC_SUCCESS)
		return (size_t)sprintf(out, "status=%d vendor_err=0x%x error=%s\n",
				       (int)wc->status, wc->vendor_err,
				       ibv_wc_status_str(wc->status));
	o += sprintf(o, "src_qp=%u slid=0x%x sl=%u pkey_index=%u", wc->src_qp,
		     wc->slid, wc->sl, wc->pkey_index);
	if (wc->wc_flags & IBV_WC_GRH) {
		struct grh_info g;
		char sgid[40], dgid[40];

		parse_grh(b->data, &g);
		rq_put_gid(sgid, g.sgid);
		rq_put_gid(dgid, g.dgid);
		o += sprintf(o, " sgid=%s dgid=%s flow_label=0x%x traffic_class=%u "
			     "hop_limit=%u", sgid, dgid, g.flow_label,
			     g.traffic_class, g.hop_limit);
	}
	if (wc->wc_flags & IBV_WC_WITH_IMM)
		o += sprintf(o, " imm=0x%08x", be32toh(wc->imm_data));
	o += sprintf(o, " len=%u data=", len);
	for (uint32_t i = 0; i < len; i++) {
		*o++ = hex[p[i] >> 4];
		*o++ = hex[p[i] & 15];
	}
	*o++ = '\n';
	return (size_t)(o - out);
}

/* The fields of a successful completion into a record. */
static uint16_t record_success(const struct rq_buf *b, struct rq_record *rec)
{
	const struct ibv_wc *wc = &b->wc;
	uint16_t flags = 0;

	rec->src_qp = htole32(wc->src_qp);
	rec->slid = htole16(wc->slid);
	rec->pkey_index = htole16(wc->pkey_index);
	rec->sl = wc->sl;
	rec->dlid_path_bits = wc->dlid_path_bits;
	if (wc->wc_flags & IBV_WC_WITH_IMM) {
		flags |= RQ_REC_IMM;
		rec->imm = htole32(be32toh(wc->imm_data));
	}
	if (wc->wc_flags & IBV_WC_GRH) {
		struct grh_info g;

		parse_grh(b->data, &g);
		flags |= RQ_REC_GRH | (g.ipv4 ? RQ_REC_IPV4 : 0);
		rec->traffic_class = g.traffic_class;
		rec->hop_limit = g.hop_limit;
		rec->flow_label = htole32(g.flow_label);
		memcpy(rec->sgid, g.sgid, 16);
		memcpy(rec->dgid, g.dgid, 16);
	}
	return flags;
}

/* One datagram's record header; its payload (rq_payload_len bytes at
 * b->data + RQ_GRH_BYTES) follows it in recv_bin. */
void rq_format_record(const struct rq_buf *b, struct rq_record *rec)
{
	const struct ibv_wc *wc = &b->wc;
	uint16_t flags = 0;

	memset(rec, 0, sizeof(*rec));
	rec->hdr_len = htole16(sizeof(*rec));
	rec->len = htole32(rq_payload_len(b));
	rec->status = htole32((uint32_t)wc->status);
	rec->vendor_err = htole32(wc->vendor_err);
	rec->seq = htole64(b->seq);
	if (wc->status == IBV_WC_SUCCESS)
		flags = record_success(b, rec);
	rec->flags = htole16(flags);
}
