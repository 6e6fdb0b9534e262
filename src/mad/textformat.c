/*
 * textformat: madtext_format(), a received umad frame to the line a reader
 * of `recv` gets: header keys, address, directed-route and vendor fields,
 * the attribute's named fields (fields.c), then the whole MAD in mad=.
 * Every line re-parses to the same frame.
 */
#include "umadfs/mad/madtext.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/mad/fields.h"
#include "codec_priv.h"

/*
 * Everything but mad='s hex fits in this: 25 keys with their longest
 * values (dr= with 64 hops is the big one, ~260) come to under 800.
 */
#define FORMAT_FIXED_MAX	1024
/* Longest attribute/error name we print, so FORMAT_FIXED_MAX holds. */
#define FORMAT_NAME_MAX		40

size_t madtext_format_max(size_t mad_len, unsigned int flags)
{
	size_t max = FORMAT_FIXED_MAX + 2 * mad_len;

	if (flags & MADTEXT_FIELDS)
		max += fields_format_max(mad_len);
	return max;
}

size_t madtext_format_need(const void *frame, size_t mad_len,
			   unsigned int flags)
{
	size_t need = FORMAT_FIXED_MAX + 2 * mad_len;

	if (flags & MADTEXT_FIELDS)
		need += fields_format_need((uint8_t *)frame + UMAD_FRAME_HDR_SIZE,
					   mad_len);
	return need;
}

static inline char *put_str(char *p, const char *s)
{
	size_t n = strnlen(s, FORMAT_NAME_MAX);

	memcpy(p, s, n);
	return p + n;
}

/* Write a key literal including its '='; sizeof - 1 drops the NUL. */
#define PUT_KEY(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

/* A name when there is one, else the number in hex. */
static char *put_name(char *p, const char *name, uint64_t v, int min_digits)
{
	return name ? put_str(p, name) : codec_put_hex(p, v, min_digits);
}

static char *put_errno(char *p, uint32_t status)
{
	const char *name;

	if (status == ETIMEDOUT)
		return put_str(p, "timeout");
	name = status <= INT_MAX ? strerrorname_np((int)status) : NULL;
	if (name)
		return put_str(p, name);
	p = put_str(p, "errno");
	return codec_put_dec(p, status);
}

/* The common MAD header's keys, tid= first. */
static char *put_mad_header(char *p, uint8_t *mad, uint64_t tid)
{
	int mgmt_class = (int)mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F);
	int method = mad[3];
	int attr = (int)mad_get_field(mad, 0, IB_MAD_ATTRID_F);
	uint32_t status = mad_get_field(mad, 0, IB_MAD_STATUS_F);

	p = PUT_KEY(p, "tid=");
	p = codec_put_hex(p, tid, 1);
	p = PUT_KEY(p, " class=");
	p = put_name(p, madtext_class_name(mgmt_class), (uint64_t)mgmt_class, 2);
	p = PUT_KEY(p, " version=");
	p = codec_put_dec(p, mad_get_field(mad, 0, IB_MAD_CLASSVER_F));
	p = PUT_KEY(p, " method=");
	p = put_name(p, madtext_method_name(method), (uint64_t)method, 2);
	p = PUT_KEY(p, " status=");
	if (mgmt_class == IB_SMI_DIRECT_CLASS)
		status &= DRSMP_STATUS_MASK;
	p = codec_put_hex(p, status, 4);
	p = PUT_KEY(p, " attr=");
	p = put_name(p, madtext_attr_name(mgmt_class, attr), (uint64_t)attr, 4);
	p = PUT_KEY(p, " attrmod=");
	return codec_put_hex(p, mad_get_field(mad, 0, IB_MAD_ATTRMOD_F), 1);
}

static char *put_grh(char *p, const ib_mad_addr_t *addr)
{
	char gid[INET6_ADDRSTRLEN];

	p = PUT_KEY(p, " gid=");
	if (inet_ntop(AF_INET6, addr->gid, gid, sizeof(gid))) {
		size_t n = strlen(gid);

		memcpy(p, gid, n);
		p += n;
	} else {
		p = codec_hex_encode(p, addr->gid, sizeof(addr->gid));
	}
	p = PUT_KEY(p, " gid_index=");
	p = codec_put_dec(p, addr->gid_index);
	p = PUT_KEY(p, " hop_limit=");
	p = codec_put_dec(p, addr->hop_limit);
	p = PUT_KEY(p, " traffic_class=");
	p = codec_put_dec(p, addr->traffic_class);
	p = PUT_KEY(p, " flow_label=");
	return codec_put_hex(p, ntohl(addr->flow_label), 1);
}

/* The peer's address from the umad header. */
static char *put_address(char *p, const ib_mad_addr_t *addr)
{
	p = PUT_KEY(p, " lid=");
	p = codec_put_hex(p, ntohs(addr->lid), 1);
	p = PUT_KEY(p, " sl=");
	p = codec_put_dec(p, addr->sl);
	p = PUT_KEY(p, " qp=");
	p = codec_put_dec(p, ntohl(addr->qpn));
	p = PUT_KEY(p, " qkey=");
	p = codec_put_hex(p, ntohl(addr->qkey), 1);
	p = PUT_KEY(p, " pkey_index=");
	p = codec_put_dec(p, addr->pkey_index);
	if (addr->path_bits) {
		p = PUT_KEY(p, " path_bits=");
		p = codec_put_dec(p, addr->path_bits);
	}
	if (addr->grh_present)
		p = put_grh(p, addr);
	return p;
}

/* The path in the notation dr= takes.  A path dr= could not express (first
 * byte not 0, too many hops, or nonzero bytes past the hop count, which dr=
 * would clear) stays in mad= only, so the line still re-parses to the same
 * frame. */
static char *put_dr_path(char *p, uint8_t *mad)
{
	uint8_t path[IB_SUBNET_PATH_HOPS_MAX];
	uint32_t hops = mad_get_field(mad, 0, IB_DRSMP_HOPCNT_F);
	uint32_t i;

	mad_get_array(mad, 0, IB_DRSMP_PATH_F, path);
	if (hops >= IB_SUBNET_PATH_HOPS_MAX || path[0] != 0)
		return p;
	for (i = hops + 1; i < IB_SUBNET_PATH_HOPS_MAX; i++)
		if (path[i])
			return p;
	p = PUT_KEY(p, " dr=0");
	for (i = 1; i <= hops; i++) {
		*p++ = ',';
		p = codec_put_dec(p, path[i]);
	}
	return p;
}

/* A directed-route SMP's fields where they differ from what parsing
 * would assume. */
static char *put_dr_fields(char *p, uint8_t *mad)
{
	uint32_t drslid = mad_get_field(mad, 0, IB_DRSMP_DRSLID_F);
	uint32_t drdlid = mad_get_field(mad, 0, IB_DRSMP_DRDLID_F);
	uint32_t direction = mad_get_field(mad, 0, IB_DRSMP_DIRECTION_F);

	p = put_dr_path(p, mad);
	if (drslid != MAD_LID_PERMISSIVE) {
		p = PUT_KEY(p, " drslid=");
		p = codec_put_hex(p, drslid, 1);
	}
	if (drdlid != MAD_LID_PERMISSIVE) {
		p = PUT_KEY(p, " drdlid=");
		p = codec_put_hex(p, drdlid, 1);
	}
	/* Only when D disagrees with the method, since parsing derives it
	 * from the method otherwise. */
	if (direction != !!(mad[3] & IB_MAD_RESPONSE)) {
		p = PUT_KEY(p, " direction=");
		p = codec_put_dec(p, direction);
	}
	return p;
}

/* mad=, with the TID shown in tid= rather than the daemon's. */
static char *put_mad_bytes(char *p, const uint8_t *mad, size_t mad_len,
			   uint64_t tid)
{
	uint8_t hdr[MAD_HDR_SIZE];

	memcpy(hdr, mad, sizeof(hdr));
	mad_set_tid(hdr, tid);
	p = PUT_KEY(p, " mad=");
	p = codec_hex_encode(p, hdr, sizeof(hdr));
	return codec_hex_encode(p, mad + sizeof(hdr), mad_len - sizeof(hdr));
}

ssize_t madtext_format(const void *frame, size_t mad_len, uint64_t tid,
		       unsigned int flags, char *buf, size_t cap)
{
	const struct ib_user_mad *hdr = frame;
	/* libibmad's getters take a non-const buffer but only read it. */
	uint8_t *mad = (uint8_t *)frame + UMAD_FRAME_HDR_SIZE;
	unsigned mgmt_class = mad[1];
	char *p = buf;

	if (mad_len < MAD_HDR_SIZE)
		return -EINVAL;
	if (cap < madtext_format_need(frame, mad_len, flags))
		return -ENOSPC;

	p = put_mad_header(p, mad, tid);
	p = put_address(p, &hdr->addr);
	if (mgmt_class == IB_SMI_DIRECT_CLASS && mad_len >= MAD_SIZE)
		p = put_dr_fields(p, mad);
	if (mad_class_is_vendor_range2(mgmt_class) &&
	    mad_len >= IB_VENDOR_RANGE2_DATA_OFFS) {
		p = PUT_KEY(p, " oui=");
		p = codec_put_hex(p, mad_get_field(mad, 0, IB_VEND2_OUI_F), 6);
	}
	if (hdr->status) {
		p = PUT_KEY(p, " error=");
		p = put_errno(p, hdr->status);
	}
	p = PUT_KEY(p, " len=");
	p = codec_put_dec(p, mad_len);
	if ((flags & MADTEXT_FIELDS) && !hdr->status)
		p = fields_format(p, mad, mad_len);
	p = put_mad_bytes(p, mad, mad_len, tid);
	*p++ = '\n';
	return p - buf;
}
