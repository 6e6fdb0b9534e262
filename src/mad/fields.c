/*
 * fields: Attribute.Field=value keys, the named fields of a MAD's attribute
 * (fields.h).  The attributes covered are listed as ranges of libibmad's
 * IB_*_F enums; each field's width and byte span are learnt once by setting
 * it to all ones in a zero buffer, and whether the diags print it in hex
 * from libibmad's own dump function.  The only offsets written here are
 * those of the two attributes libibmad has no fields for (hand_fields).
 */
#include "umadfs/mad/fields.h"

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/base/number.h"
#include "umadfs/mad/mad.h"
#include "umadfs/mad/madtext.h"
#include "codec_priv.h"

/* How a field's value is written. */
enum field_form {
	FORM_NONE,	/* not a field of ours (or no width) */
	FORM_DEC,	/* up to 64 bits, decimal */
	FORM_HEX,	/* up to 64 bits, 0x-hex (GUIDs, masks, keys) */
	FORM_BYTES,	/* wider: 0x and every byte in hex (GIDs) */
	FORM_STRING,	/* wider, text: quoted (NodeDescription) */
};

struct field_info {
	const char *name;
	uint8_t name_len;
	uint8_t form;
	uint16_t bits;
	uint16_t end;	/* one past the field's last byte, from base 0 */
};

/*
 * PKeyTable and LinkRecord: libibmad has no IB_*_F fields for them, so
 * they are described here, as big-endian whole bytes at an offset from the
 * record's base.  Their ids follow libibmad's enum.
 */
enum hand_field_id {
	HF_PKEY0 = IB_FIELD_LAST_,	/* PKeyTable, IBA 14.2.5.7 */
	HF_LINK_FIRST = HF_PKEY0 + 32,	/* LinkRecord, IBA 15.2.5.13 */
	HF_LAST = HF_LINK_FIRST + 4,
};

struct hand_field {
	const char *name;
	uint8_t offset, bits, form;
};

/* P_Key i of the block attrmod names; printed in hex as smpquery pkeys. */
#define PKEY(i)	{ "PKey" #i, 2 * (i), 16, FORM_HEX }

static const struct hand_field hand_fields[HF_LAST - IB_FIELD_LAST_] = {
	PKEY(0), PKEY(1), PKEY(2), PKEY(3), PKEY(4), PKEY(5), PKEY(6), PKEY(7),
	PKEY(8), PKEY(9), PKEY(10), PKEY(11), PKEY(12), PKEY(13), PKEY(14),
	PKEY(15), PKEY(16), PKEY(17), PKEY(18), PKEY(19), PKEY(20), PKEY(21),
	PKEY(22), PKEY(23), PKEY(24), PKEY(25), PKEY(26), PKEY(27), PKEY(28),
	PKEY(29), PKEY(30), PKEY(31),
	/* Names and decimal as saquery prints them. */
	{ "FromLID", 0, 16, FORM_DEC }, { "FromPort", 2, 8, FORM_DEC },
	{ "ToPort", 3, 8, FORM_DEC }, { "ToLID", 4, 16, FORM_DEC },
};

static struct field_info field_info[HF_LAST];

/* [first, last) of libibmad's enum. */
struct field_range {
	int first, last;
};

#define FIELD_RANGES_MAX	2

struct field_attr {
	uint8_t mgmt_class;	/* IB_SMI_CLASS stands for smi-dr too */
	uint16_t attr_id;
	uint16_t base;		/* the fields' base in the record */
	struct field_range ranges[FIELD_RANGES_MAX];
	/* Filled in once: */
	const char *name;	/* madtext_attr_name() */
	uint8_t name_len;
	uint16_t span;		/* bytes from the record's start to the last field's end */
	uint16_t text_max;	/* longest text of one record's keys */
	bool records;		/* an SA attribute: GetTableResp has several */
};

#define ONE(f)	{ f, (f) + 1 }
#define FIELD_ATTR(c, a, b, ...) \
	{ .mgmt_class = c, .attr_id = a, .base = b, .ranges = { __VA_ARGS__ } }

static struct field_attr field_attrs[] = {
	FIELD_ATTR(IB_SMI_CLASS, IB_ATTR_NODE_INFO, 0,
		   { IB_NODE_FIRST_F, IB_NODE_LAST_F }),
	FIELD_ATTR(IB_SMI_CLASS, IB_ATTR_NODE_DESC, 0, ONE(IB_NODE_DESC_F)),
	FIELD_ATTR(IB_SMI_CLASS, IB_ATTR_PORT_INFO, 0,
		   { IB_PORT_FIRST_F, IB_PORT_LAST_F },
		   { IB_PORT_CAPMASK2_F, IB_PORT_LINK_SPEED_EXT_LAST_F }),
	FIELD_ATTR(IB_SMI_CLASS, IB_ATTR_SWITCH_INFO, 0,
		   { IB_SW_FIRST_F, IB_SW_LAST_F }),
	FIELD_ATTR(IB_SMI_CLASS, IB_ATTR_SMINFO, 0,
		   { IB_SMINFO_GUID_F, IB_SMINFO_STATE_F + 1 }),
	FIELD_ATTR(IB_SMI_CLASS, IB_ATTR_GUID_INFO, 0,
		   { IB_GI_GUID0_F, IB_GI_GUID7_F + 1 }),
	FIELD_ATTR(IB_SMI_CLASS, IB_ATTR_PKEY_TBL, 0, { HF_PKEY0, HF_LINK_FIRST }),
	FIELD_ATTR(IB_PERFORMANCE_CLASS, CLASS_PORT_INFO, 0,
		   { IB_CPI_BASEVER_F, IB_CPI_TRAP_QKEY_F + 1 }),
	FIELD_ATTR(IB_PERFORMANCE_CLASS, IB_GSI_PORT_COUNTERS, 0,
		   { IB_PC_FIRST_F, IB_PC_LAST_F }, ONE(IB_PC_QP1_DROP_F)),
	FIELD_ATTR(IB_PERFORMANCE_CLASS, IB_GSI_PORT_COUNTERS_EXT, 0,
		   { IB_PC_EXT_FIRST_F, IB_PC_EXT_LAST_F },
		   { IB_PC_EXT_COUNTER_SELECT2_F, IB_PC_EXT_ERR_LAST_F }),
	FIELD_ATTR(IB_SA_CLASS, CLASS_PORT_INFO, 0,
		   { IB_CPI_BASEVER_F, IB_CPI_TRAP_QKEY_F + 1 }),
	FIELD_ATTR(IB_SA_CLASS, IB_SA_ATTR_NODERECORD, 0,
		   { IB_SA_NR_FIRST_F, IB_SA_NR_LAST_F }),
	/* PortInfoRecord: EndportLID, PortNum, Options, then a PortInfo
	 * (IBA 15.2.5.3); libibmad names the PortInfo's fields only. */
	FIELD_ATTR(IB_SA_CLASS, IB_SA_ATTR_PORTINFORECORD, 4,
		   { IB_PORT_FIRST_F, IB_PORT_LAST_F },
		   { IB_PORT_CAPMASK2_F, IB_PORT_LINK_SPEED_EXT_LAST_F }),
	FIELD_ATTR(IB_SA_CLASS, IB_SA_ATTR_PATHRECORD, 0,
		   { IB_SA_PR_DGID_F, IB_SA_PR_SL_F + 1 }),
	FIELD_ATTR(IB_SA_CLASS, IB_SA_ATTR_GUIDINFORECORD, 0,
		   { IB_SA_GIR_LID_F, IB_SA_GIR_GUID7_F + 1 }),
	FIELD_ATTR(IB_SA_CLASS, IB_SA_ATTR_LINKRECORD, 0,
		   { HF_LINK_FIRST, HF_LAST }),
};

#define FIELD_ATTR_COUNT (sizeof(field_attrs) / sizeof(field_attrs[0]))

#define for_each_field(fa, r, f)					\
	for (r = 0; r < FIELD_RANGES_MAX; r++)				\
		for (f = (fa)->ranges[r].first; f < (fa)->ranges[r].last; f++) \
			if (field_info[f].form != FORM_NONE)

/* Width and span of field f: set it to all ones in a zero buffer. */
static void probe_width(enum MAD_FIELDS f, struct field_info *fi)
{
	uint8_t buf[2 * MAD_SIZE] = { 0 }, ones[MAD_SIZE];
	unsigned int bits = 0;
	size_t i;

	memset(ones, 0xff, sizeof(ones));
	mad_encode_field(buf, f, ones);
	for (i = 0; i < sizeof(buf); i++) {
		if (!buf[i])
			continue;
		bits += (unsigned int)__builtin_popcount(buf[i]);
		fi->end = (uint16_t)(i + 1);
	}
	fi->bits = (uint16_t)bits;
}

/* How the diags print field f, from its libibmad dump function. */
static enum field_form probe_form(enum MAD_FIELDS f, unsigned int bits)
{
	uint8_t val[MAD_SIZE] = { 1 };
	char out[MAD_SIZE * 4];

	if (bits > 64) {
		if (bits & 7)
			return FORM_NONE;
		val[0] = 'A';
		mad_dump_val(f, out, sizeof(out), val);
		return out[0] == '\'' || out[0] == 'A' ? FORM_STRING : FORM_BYTES;
	}
	mad_dump_val(f, out, sizeof(out), val);
	return out[0] == '0' && out[1] == 'x' ? FORM_HEX : FORM_DEC;
}

/* Longest text of field f's value. */
static size_t value_max(const struct field_info *fi)
{
	size_t digits = 1;
	uint64_t max;

	switch (fi->form) {
	case FORM_STRING:
		return 2 + 4 * (size_t)(fi->bits / 8);	/* "\xNN..." */
	case FORM_BYTES:
		return 2 + 2 * (size_t)(fi->bits / 8);
	case FORM_HEX:
		return 2 + (fi->bits + 3) / 4;
	default:
		max = fi->bits == 64 ? UINT64_MAX : (UINT64_C(1) << fi->bits) - 1;
		while (max /= 10)
			digits++;
		return digits;
	}
}

/* Name, width, end and form of field f: from libibmad, or hand_fields. */
static void describe_field(int f, struct field_info *fi)
{
	const struct hand_field *h;
	const char *fname;

	if (f >= IB_FIELD_LAST_) {
		h = &hand_fields[f - IB_FIELD_LAST_];
		fi->name = h->name;
		fi->bits = h->bits;
		fi->end = (uint16_t)(h->offset + h->bits / 8);
		fi->form = h->form;
	} else {
		fname = mad_field_name((enum MAD_FIELDS)f);
		if (!fname || !fname[0])
			return;
		fi->name = fname;
		probe_width((enum MAD_FIELDS)f, fi);
		fi->form = fi->bits ? (uint8_t)probe_form((enum MAD_FIELDS)f, fi->bits)
				    : FORM_NONE;
	}
	fi->name_len = (uint8_t)strlen(fi->name);
}

static void probe_attr(struct field_attr *fa)
{
	const char *name = madtext_attr_name(fa->mgmt_class, fa->attr_id);
	size_t text = 0;
	int r, f;

	fa->name = name;
	fa->name_len = (uint8_t)strlen(name);
	fa->records = fa->mgmt_class == IB_SA_CLASS;
	for (r = 0; r < FIELD_RANGES_MAX; r++) {
		for (f = fa->ranges[r].first; f < fa->ranges[r].last; f++) {
			struct field_info *fi = &field_info[f];

			describe_field(f, fi);
			if (fi->form == FORM_NONE)
				continue;
			if (fa->base + fi->end > fa->span)
				fa->span = (uint16_t)(fa->base + fi->end);
			/* " Attr[65535].Field=" and the value */
			text += 1 + fa->name_len + (fa->records ? 7 : 0) + 1 +
				fi->name_len + 1 + value_max(fi);
		}
	}
	fa->text_max = (uint16_t)text;
}

static pthread_once_t fields_once = PTHREAD_ONCE_INIT;

static void probe_fields(void)
{
	size_t i;

	for (i = 0; i < FIELD_ATTR_COUNT; i++)
		probe_attr(&field_attrs[i]);
}

static const struct field_attr *find_attr(unsigned int mgmt_class,
					  unsigned int attr_id)
{
	size_t i;

	pthread_once(&fields_once, probe_fields);
	if (mgmt_class == IB_SMI_DIRECT_CLASS)
		mgmt_class = IB_SMI_CLASS;
	for (i = 0; i < FIELD_ATTR_COUNT; i++)
		if (field_attrs[i].mgmt_class == mgmt_class &&
		    field_attrs[i].attr_id == attr_id)
			return &field_attrs[i];
	return NULL;
}

/* The longest text of attribute fa's keys in mad_len bytes of MAD. */
static size_t attr_text_max(const struct field_attr *fa, size_t mad_len)
{
	return (fa->records ? mad_len / fa->span + 1 : 1) * fa->text_max;
}

size_t fields_format_max(size_t mad_len)
{
	size_t i, n, max = 0;

	pthread_once(&fields_once, probe_fields);
	for (i = 0; i < FIELD_ATTR_COUNT; i++) {
		n = attr_text_max(&field_attrs[i], mad_len);
		if (n > max)
			max = n;
	}
	return max;
}

size_t fields_format_need(uint8_t *mad, size_t mad_len)
{
	const struct field_attr *fa;

	fa = find_attr(mad[1], mad_get_field(mad, 0, IB_MAD_ATTRID_F));
	return fa ? attr_text_max(fa, mad_len) : 0;
}

/* ---- reading ---- */

char *madtext_quote(char *p, const uint8_t *s, size_t n)
{
	size_t i;

	*p++ = '"';
	for (i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\') {
			*p++ = '\\';
			*p++ = (char)s[i];
		} else if (s[i] >= 0x20 && s[i] < 0x7f) {
			*p++ = (char)s[i];
		} else {
			*p++ = '\\';
			*p++ = 'x';
			memcpy(p, &codec_hex_pairs[2 * s[i]], 2);
			p += 2;
		}
	}
	*p++ = '"';
	return p;
}

/* A string field: quoted up to its last nonzero byte. */
static char *put_string(char *p, const uint8_t *s, size_t n)
{
	while (n && !s[n - 1])
		n--;
	return madtext_quote(p, s, n);
}

/* Field f of up to 64 bits at base; hand_fields are big-endian bytes. */
static uint64_t get_number(uint8_t *mad, int base, int f,
			   const struct field_info *fi)
{
	const uint8_t *b = mad + base + fi->end - fi->bits / 8;
	uint64_t v = 0;
	int i;

	if (f >= IB_FIELD_LAST_) {
		for (i = 0; i < fi->bits / 8; i++)
			v = v << 8 | b[i];
		return v;
	}
	return fi->bits == 64 ? mad_get_field64(mad, base, (enum MAD_FIELDS)f)
			      : mad_get_field(mad, base, (enum MAD_FIELDS)f);
}

static void set_number(uint8_t *mad, int base, int f,
		       const struct field_info *fi, uint64_t v)
{
	uint8_t *b = mad + base + fi->end - fi->bits / 8;
	int i;

	if (f >= IB_FIELD_LAST_) {
		for (i = fi->bits / 8 - 1; i >= 0; i--, v >>= 8)
			b[i] = (uint8_t)v;
	} else if (fi->bits == 64) {
		mad_set_field64(mad, base, (enum MAD_FIELDS)f, v);
	} else {
		mad_set_field(mad, base, (enum MAD_FIELDS)f, (uint32_t)v);
	}
}

static char *put_value(char *p, const struct field_info *fi, uint8_t *mad,
		       int base, int f)
{
	uint8_t bytes[MAD_SIZE];
	uint64_t v;

	switch (fi->form) {
	case FORM_STRING:
		mad_get_array(mad, base, (enum MAD_FIELDS)f, bytes);
		return put_string(p, bytes, fi->bits / 8);
	case FORM_BYTES:
		mad_get_array(mad, base, (enum MAD_FIELDS)f, bytes);
		*p++ = '0';
		*p++ = 'x';
		return codec_hex_encode(p, bytes, fi->bits / 8);
	default:
		break;
	}
	v = get_number(mad, base, f, fi);
	if (fi->form == FORM_HEX)
		return codec_put_hex(p, v, (fi->bits + 3) / 4);
	return codec_put_dec(p, v);
}

/* One record's keys; index < 0 for a key without [i]. */
static char *put_record(char *p, const struct field_attr *fa, uint8_t *mad,
			int base, long index)
{
	int r, f;

	for_each_field(fa, r, f) {
		const struct field_info *fi = &field_info[f];

		*p++ = ' ';
		memcpy(p, fa->name, fa->name_len);
		p += fa->name_len;
		if (index >= 0) {
			*p++ = '[';
			p = codec_put_dec(p, (uint64_t)index);
			*p++ = ']';
		}
		*p++ = '.';
		memcpy(p, fi->name, fi->name_len);
		p += fi->name_len;
		*p++ = '=';
		p = put_value(p, fi, mad, base + fa->base, f);
	}
	return p;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	return n == 0 || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

/* A GetTableResp's records: as many whole records of attr_offset words as
 * the data holds (the RMPP payload length, when Active), less trailing
 * all-zero ones (padding of the last segment). */
static char *put_table(char *p, const struct field_attr *fa, uint8_t *mad,
		       size_t mad_len)
{
	size_t size = 8 * (size_t)mad_get_field(mad, 0, IB_SA_ATTROFFS_F);
	size_t avail = mad_len - IB_SA_DATA_OFFS, count, i;

	if (size < fa->span)
		return p;
	if (mad_get_field(mad, 0, IB_SA_RMPP_FLAGS_F) & IB_RMPP_FLAG_ACTIVE) {
		size_t paylen = mad_get_field(mad, 0, IB_SA_RMPP_LEN_F);

		/* PayloadLength counts the 20-byte SA header. */
		if (paylen > 20 && paylen - 20 < avail)
			avail = paylen - 20;
	}
	count = avail / size;
	while (count && all_zero(mad + IB_SA_DATA_OFFS + (count - 1) * size, size))
		count--;
	for (i = 0; i < count; i++)
		p = put_record(p, fa, mad, (int)(IB_SA_DATA_OFFS + i * size),
			       (long)i);
	return p;
}

char *fields_format(char *p, uint8_t *mad, size_t mad_len)
{
	unsigned int mgmt_class = mad[1], status;
	const struct field_attr *fa;
	size_t off;

	fa = find_attr(mgmt_class, mad_get_field(mad, 0, IB_MAD_ATTRID_F));
	if (!fa)
		return p;
	status = mad_get_field(mad, 0, IB_MAD_STATUS_F);
	if (mgmt_class == IB_SMI_DIRECT_CLASS)
		status &= DRSMP_STATUS_MASK;
	if (status)
		return p;
	off = madtext_data_offset((int)mgmt_class);
	if (off > mad_len)
		return p;
	if (mgmt_class == IB_SA_CLASS && mad[3] == IB_MAD_METHOD_GET_TABLE_RESPONSE)
		return put_table(p, fa, mad, mad_len);
	if (off + fa->span > mad_len)
		return p;
	return put_record(p, fa, mad, (int)off, -1);
}

/* ---- writing ---- */

/* A quoted string (the token ends at its closing quote) into out[0..cap):
 * the bytes it holds, or -1 for a bad escape or too many bytes. */
static ssize_t parse_string(const char *v, size_t n, uint8_t *out, size_t cap)
{
	size_t i, len = 0;

	for (i = 1; i + 1 < n; i++) {
		uint8_t b = (uint8_t)v[i];

		if (b == '\\') {
			if (i + 2 < n && (v[i + 1] == '"' || v[i + 1] == '\\')) {
				b = (uint8_t)v[++i];
			} else if (i + 4 < n && v[i + 1] == 'x' &&
				   codec_hex_decode(v + i + 2, 2, &b) < 0) {
				i += 3;
			} else {
				return -1;
			}
		}
		if (len == cap)
			return -1;
		out[len++] = b;
	}
	return (ssize_t)len;
}

/* 0x and up to 2 * n hex digits, right-aligned into n bytes. */
static int parse_bytes(const char *v, size_t len, uint8_t *out, size_t n)
{
	uint8_t tmp[MAD_SIZE + 1];
	size_t digits;

	if (len < 3 || v[0] != '0' || (v[1] != 'x' && v[1] != 'X'))
		return -1;
	v += 2;
	digits = len - 2;
	if (digits > 2 * n)
		return -1;
	memset(out, 0, n);
	if (digits & 1) {
		char first[2] = { '0', v[0] };

		if (codec_hex_decode(first, 2, tmp) >= 0)
			return -1;
		out[n - (digits + 1) / 2] = tmp[0];
		v++;
		digits--;
	}
	if (codec_hex_decode(v, digits, out + n - digits / 2) >= 0)
		return -1;
	return 0;
}

/* Write the value text of field f (described by fi) at base. */
static int put_field(uint8_t *mad, int base, int f,
		     const struct field_info *fi, const char *v, size_t n)
{
	uint8_t bytes[MAD_SIZE];
	size_t size = fi->bits / 8;
	uint64_t num;
	ssize_t len;

	if (fi->form == FORM_STRING && n >= 2 && v[0] == '"') {
		len = parse_string(v, n, bytes, size);
		if (len < 0)
			return -1;
		memset(bytes + len, 0, size - (size_t)len);
		mad_set_array(mad, base, (enum MAD_FIELDS)f, bytes);
		return 0;
	}
	if (fi->form == FORM_STRING || fi->form == FORM_BYTES) {
		if (parse_bytes(v, n, bytes, size))
			return -1;
		mad_set_array(mad, base, (enum MAD_FIELDS)f, bytes);
		return 0;
	}
	if (number_parse(v, n, &num))
		return -1;
	if (fi->bits < 64 && num >> fi->bits)
		return -1;
	set_number(mad, base, f, fi, num);
	return 0;
}

static int find_field(const struct field_attr *fa, const char *s, size_t n)
{
	int r, f;

	for_each_field(fa, r, f)
		if (field_info[f].name_len == n &&
		    codec_name_equal(field_info[f].name, s, n))
			return f;
	return -1;
}

/* A key's parts: Attr, [index] (-1 if none), Field. */
struct field_key {
	const char *attr, *field;
	size_t attr_len, field_len;
	long index;
};

static int split_key(const char *key, size_t len, struct field_key *fk)
{
	const char *dot = memchr(key, '.', len);
	const char *open;
	uint64_t index;

	if (!dot || dot == key || dot + 1 == key + len)
		return -1;
	fk->attr = key;
	fk->attr_len = (size_t)(dot - key);
	fk->field = dot + 1;
	fk->field_len = len - fk->attr_len - 1;
	fk->index = -1;
	open = memchr(key, '[', fk->attr_len);
	if (!open)
		return 0;
	if (dot[-1] != ']' || open == key ||
	    number_parse(open + 1, (size_t)(dot - 1 - open - 1), &index) ||
	    index > 0xffff)
		return -1;
	fk->attr_len = (size_t)(open - key);
	fk->index = (long)index;
	return 0;
}

/* The base of the record the key names, or -1 with the reason in err. */
static int record_base(const uint8_t *mad, size_t mad_len,
		       const struct field_attr *fa, const struct field_key *fk,
		       size_t col, char *err, size_t errlen)
{
	unsigned int mgmt_class = mad[1];
	size_t off = madtext_data_offset((int)mgmt_class), size;

	if (fk->index > 0) {
		if (mgmt_class != IB_SA_CLASS)
			return codec_error(err, errlen, -EINVAL,
				"%.*s[%ld] at column %zu: only SA records take an index",
				fa->name_len, fa->name, fk->index, col);
		size = 8 * (size_t)mad_get_field((void *)mad, 0, IB_SA_ATTROFFS_F);
		if (size < fa->span)
			return codec_error(err, errlen, -EINVAL,
				"%.*s[%ld] at column %zu needs attr_offset= of at least %u",
				fa->name_len, fa->name, fk->index, col,
				(fa->span + 7) / 8);
		off += (size_t)fk->index * size;
	}
	if (off + fa->span > mad_len)
		return codec_error(err, errlen, -EINVAL,
			"field at column %zu is past the MAD's end (%zu bytes: give data= or mad= that long)",
			col, mad_len);
	return (int)off;
}

int fields_set(uint8_t *mad, size_t mad_len, const char *key, size_t key_len,
	       const char *val, size_t val_len, size_t col, char *err,
	       size_t errlen)
{
	unsigned int attr_id = mad_get_field(mad, 0, IB_MAD_ATTRID_F);
	const struct field_attr *fa = find_attr(mad[1], attr_id);
	struct field_key fk;
	int f, base;

	if (split_key(key, key_len, &fk))
		return codec_error(err, errlen, -EINVAL,
			"bad field key '%.*s' at column %zu (want Attribute.Field or Attribute[i].Field)",
			(int)key_len, key, col);
	if (!fa)
		return codec_error(err, errlen, -EINVAL,
			"field '%.*s' at column %zu: attribute 0x%04x of this class has no named fields",
			(int)key_len, key, col, attr_id);
	if (fk.attr_len != fa->name_len ||
	    !codec_name_equal(fa->name, fk.attr, fk.attr_len))
		return codec_error(err, errlen, -EINVAL,
			"field '%.*s' at column %zu is not of attribute %s",
			(int)key_len, key, col, fa->name);
	f = find_field(fa, fk.field, fk.field_len);
	if (f < 0)
		return codec_error(err, errlen, -EINVAL,
			"unknown field '%.*s' of %s at column %zu",
			(int)fk.field_len, fk.field, fa->name, col);
	base = record_base(mad, mad_len, fa, &fk, col, err, errlen);
	if (base < 0)
		return base;
	if (put_field(mad, base + fa->base, f, &field_info[f],
		      val, val_len))
		return codec_error(err, errlen, -EINVAL,
			"bad value '%.*s' for %.*s at column %zu (%u-bit field: %s)",
			(int)val_len, val, (int)key_len, key, col + key_len + 1,
			field_info[f].bits,
			field_info[f].form == FORM_STRING ? "a quoted string or 0x-hex bytes" :
			field_info[f].form == FORM_BYTES ? "0x-hex bytes" :
			"a number that fits");
	return 0;
}
