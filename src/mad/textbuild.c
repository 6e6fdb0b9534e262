/*
 * textbuild: madtext_parse(), the second pass: a scanned line to a umad
 * frame.  The keys come in any order but their effects do not commute, so
 * the frame is built in a fixed order: mad= first, then the header keys that
 * override what it holds, then data=, then the Attribute.Field keys
 * (fields.c), then the umad header (the address).
 *
 * MAD header fields are read and written with libibmad's field accessors
 * (IB_MAD_*_F, IB_DRSMP_*_F, IB_SA_*_F, IB_VEND2_OUI_F) so that the byte
 * positions come from one place.
 */
#include "umadfs/mad/madtext.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/mad/fields.h"
#include "codec_priv.h"
#include "textscan_priv.h"

_Static_assert(sizeof(struct ib_user_mad) == UMAD_FRAME_HDR_SIZE,
	       "struct ib_user_mad is not the 64-byte kernel umad header");
_Static_assert(IB_MAD_SIZE == MAD_SIZE, "MAD size");

/* A class's name for messages, or its number in label. */
static const char *class_label(int mgmt_class, char label[8])
{
	const char *name = madtext_class_name(mgmt_class);

	if (name)
		return name;
	snprintf(label, 8, "0x%02x", mgmt_class);
	return label;
}

/* Class version when the line gives none and there is no mad= (IBA: SA and
 * CM are version 2, everything else we know is version 1). */
static unsigned int default_class_version(int mgmt_class)
{
	switch (mgmt_class) {
	case IB_SA_CLASS:
	case IB_CM_CLASS:
		return 2;
	default:
		return 1;
	}
}

/* -EINVAL with the reason if byte c (at column col) may not be in a line. */
static int junk_byte(unsigned char c, size_t col, char *err, size_t errlen)
{
	if (is_token_byte(c) || c == ' ' || c == '\t')
		return 0;
	if (c == '\r')
		return codec_error(err, errlen, -EINVAL,
			"carriage return at column %zu (CRLF line ending?)", col);
	return codec_error(err, errlen, -EINVAL,
		"invalid byte 0x%02x at column %zu", c, col);
}

/* Decode a hex value (mad= or data=) into dst; reports junk bytes, bad
 * digits and odd length, in that order, with the column of the culprit. */
static int decode_hex_value(const struct scanned_line *sl, int k, uint8_t *dst,
			    char *err, size_t errlen)
{
	const char *v = sl->text[k];
	size_t n = sl->text_len[k];
	size_t col = sl->column[k] + text_keys[k].len + 1;
	ssize_t bad = codec_hex_decode(v, n, dst);
	int ret;

	if (bad >= 0) {
		ret = junk_byte((unsigned char)v[bad], col + (size_t)bad, err,
				errlen);
		if (ret)
			return ret;
		return codec_error(err, errlen, -EINVAL,
			"bad hex in %s= at column %zu ('%c')", text_keys[k].name,
			col + (size_t)bad, v[bad]);
	}
	if (n & 1)
		return codec_error(err, errlen, -EINVAL,
			"bad hex in %s= at column %zu (odd length %zu)",
			text_keys[k].name, col, n);
	return 0;
}

/* Start the MAD: mad= if given (every other key overrides the fields it
 * names), else zeros and base version 1. */
static int load_mad(const struct scanned_line *sl, uint8_t *mad,
		    size_t mad_cap, size_t *mad_len, char *err, size_t errlen)
{
	size_t n;
	int ret;

	*mad_len = MAD_SIZE;
	if (!has(sl, KEY_MAD)) {
		memset(mad, 0, MAD_SIZE);
		mad_set_field(mad, 0, IB_MAD_BASEVER_F, 1);
		return 0;
	}
	n = sl->text_len[KEY_MAD] / 2;
	if (n > mad_cap)
		return codec_error(err, errlen, -EMSGSIZE,
			"mad= is %zu bytes, more than the %zu that fit",
			n, mad_cap);
	ret = decode_hex_value(sl, KEY_MAD, mad, err, errlen);
	if (ret)
		return ret;
	if (n < MAD_SIZE)
		memset(mad + n, 0, MAD_SIZE - n);
	else
		*mad_len = n;
	return 0;
}

/* Class: class=, else dr= implies smi-dr, else whatever mad= holds. */
static int set_class(const struct scanned_line *sl, uint8_t *mad,
		     int *mgmt_class, char *err, size_t errlen)
{
	char label[8];
	int c;

	if (has(sl, KEY_CLASS)) {
		c = (int)sl->num[KEY_CLASS];
		if (has(sl, KEY_DR) && c != IB_SMI_DIRECT_CLASS)
			return codec_error(err, errlen, -EINVAL,
				"dr= at column %zu needs class smi-dr, not class %s",
				sl->column[KEY_DR], class_label(c, label));
		mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, c);
	} else if (has(sl, KEY_DR)) {
		c = IB_SMI_DIRECT_CLASS;
		mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, c);
	} else {
		c = (int)mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F);
		if (!c)
			return codec_error(err, errlen, -EINVAL,
				has(sl, KEY_MAD) ? "class= missing (and mad= has class 0)"
						 : "class= missing");
	}
	*mgmt_class = c;
	return 0;
}

static bool class_is_dr(unsigned mgmt_class)
{
	return mgmt_class == IB_SMI_DIRECT_CLASS;
}

static bool class_is_sa(unsigned mgmt_class)
{
	return mgmt_class == IB_SA_CLASS;
}

/* Keys that make sense only for some classes. */
static const struct class_key_rule {
	enum key_id key;
	bool (*allowed)(unsigned mgmt_class);
	const char *what;
} class_key_rules[] = {
	{ KEY_DR, class_is_dr, "class smi-dr" },
	{ KEY_DRSLID, class_is_dr, "class smi-dr" },
	{ KEY_DRDLID, class_is_dr, "class smi-dr" },
	{ KEY_DIRECTION, class_is_dr, "class smi-dr" },
	{ KEY_MKEY, mad_class_is_smi, "classes smi and smi-dr" },
	{ KEY_COMP_MASK, class_is_sa, "class sa" },
	{ KEY_SMKEY, class_is_sa, "class sa" },
	{ KEY_ATTR_OFFSET, class_is_sa, "class sa" },
	{ KEY_OUI, mad_class_is_vendor_range2, "vendor classes 0x30-0x4f" },
};

static int check_class_keys(const struct scanned_line *sl, int mgmt_class,
			    char *err, size_t errlen)
{
	char label[8];
	size_t i;

	for (i = 0; i < sizeof(class_key_rules) / sizeof(class_key_rules[0]); i++) {
		const struct class_key_rule *r = &class_key_rules[i];

		if (has(sl, r->key) && !r->allowed((unsigned)mgmt_class))
			return codec_error(err, errlen, -EINVAL,
				"%s= at column %zu applies only to %s, not class %s",
				text_keys[r->key].name, sl->column[r->key],
				r->what, class_label(mgmt_class, label));
	}
	return 0;
}

/* Method: method= (the whole byte, R bit included), else mad='s. */
static int set_method(const struct scanned_line *sl, uint8_t *mad,
		      int *method, char *err, size_t errlen)
{
	int m;

	if (has(sl, KEY_METHOD)) {
		m = (int)sl->num[KEY_METHOD];
		/* IB_MAD_METHOD_F is 7 bits and IB_MAD_RESPONSE_F the 8th. */
		mad_set_field(mad, 0, IB_MAD_METHOD_F, m & ~IB_MAD_RESPONSE);
		mad_set_field(mad, 0, IB_MAD_RESPONSE_F, !!(m & IB_MAD_RESPONSE));
	} else {
		m = (int)(mad_get_field(mad, 0, IB_MAD_METHOD_F) |
			  (mad_get_field(mad, 0, IB_MAD_RESPONSE_F) << 7));
		if (!m)
			return codec_error(err, errlen, -EINVAL,
				has(sl, KEY_MAD) ? "method= missing (and mad= has method 0)"
						 : "method= missing");
	}
	*method = m;
	return 0;
}

/* attr=, a number or a name of the class's attributes. */
static int set_attr(const struct scanned_line *sl, uint8_t *mad,
		    int mgmt_class, char *err, size_t errlen)
{
	char label[8];
	int attr;

	if (!has(sl, KEY_ATTR))
		return 0;
	if (!sl->attr_by_name) {
		attr = (int)sl->num[KEY_ATTR];
	} else {
		attr = madtext_attr_from_name(mgmt_class, sl->text[KEY_ATTR],
					      sl->text_len[KEY_ATTR]);
		if (attr < 0)
			return codec_error(err, errlen, -EINVAL,
				"unknown attr '%.*s' for class %s at column %zu",
				(int)sl->text_len[KEY_ATTR], sl->text[KEY_ATTR],
				class_label(mgmt_class, label),
				sl->column[KEY_ATTR] + 5);
	}
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, (uint32_t)attr);
	return 0;
}

/* The common MAD header after the class: version, method, attribute, TID. */
static int set_common_header(const struct scanned_line *sl, uint8_t *mad,
			     int mgmt_class, int *method, char *err,
			     size_t errlen)
{
	int ret;

	if (has(sl, KEY_VERSION))
		mad_set_field(mad, 0, IB_MAD_CLASSVER_F,
			      (uint32_t)sl->num[KEY_VERSION]);
	else if (!has(sl, KEY_MAD))
		mad_set_field(mad, 0, IB_MAD_CLASSVER_F,
			      default_class_version(mgmt_class));
	ret = set_method(sl, mad, method, err, errlen);
	if (ret)
		return ret;
	ret = set_attr(sl, mad, mgmt_class, err, errlen);
	if (ret)
		return ret;
	if (has(sl, KEY_ATTRMOD))
		mad_set_field(mad, 0, IB_MAD_ATTRMOD_F,
			      (uint32_t)sl->num[KEY_ATTRMOD]);
	if (has(sl, KEY_TID))
		mad_set_field64(mad, 0, IB_MAD_TRID_F, sl->num[KEY_TID]);
	return 0;
}

/* The directed-route fields: D bit, hop pointer and count, path, DR LIDs. */
static void set_dr_fields(const struct scanned_line *sl, uint8_t *mad,
			  int method)
{
	uint32_t direction;

	/* D (0 outbound, 1 returning) follows the method unless the line
	 * says otherwise: a request goes out, a response comes back.  So
	 * editing a received request into a GetResp flips it. */
	if (has(sl, KEY_DIRECTION))
		direction = (uint32_t)sl->num[KEY_DIRECTION];
	else if (has(sl, KEY_METHOD) || !has(sl, KEY_MAD))
		direction = !!(method & IB_MAD_RESPONSE);
	else
		direction = mad_get_field(mad, 0, IB_DRSMP_DIRECTION_F);
	mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, direction);

	if (!has(sl, KEY_MAD)) {
		mad_set_field(mad, 0, IB_DRSMP_HOPPTR_F, 0);
		mad_set_field(mad, 0, IB_DRSMP_DRSLID_F, MAD_LID_PERMISSIVE);
		mad_set_field(mad, 0, IB_DRSMP_DRDLID_F, MAD_LID_PERMISSIVE);
	}
	if (has(sl, KEY_DR)) {
		uint8_t path[IB_SUBNET_PATH_HOPS_MAX] = { 0 };

		memcpy(path, sl->path, sl->path_len);
		mad_set_field(mad, 0, IB_DRSMP_HOPCNT_F,
			      (uint32_t)(sl->path_len - 1));
		mad_set_array(mad, 0, IB_DRSMP_PATH_F, path);
	}
	if (has(sl, KEY_DRSLID))
		mad_set_field(mad, 0, IB_DRSMP_DRSLID_F,
			      (uint32_t)sl->num[KEY_DRSLID]);
	if (has(sl, KEY_DRDLID))
		mad_set_field(mad, 0, IB_DRSMP_DRDLID_F,
			      (uint32_t)sl->num[KEY_DRDLID]);
}

/* status=, which a directed-route SMP shares with its D bit. */
static int set_status(const struct scanned_line *sl, uint8_t *mad,
		      int mgmt_class, char *err, size_t errlen)
{
	if (!has(sl, KEY_STATUS))
		return 0;
	if (mgmt_class == IB_SMI_DIRECT_CLASS &&
	    sl->num[KEY_STATUS] > DRSMP_STATUS_MASK)
		return codec_error(err, errlen, -EINVAL,
			"status=0x%" PRIx64 " out of range for class smi-dr (max 0x7fff: the top bit is the D bit) at column %zu",
			sl->num[KEY_STATUS], sl->column[KEY_STATUS]);
	mad_set_field(mad, 0, IB_MAD_STATUS_F, (uint32_t)sl->num[KEY_STATUS]);
	return 0;
}

/* The class headers' keys (check_class_keys() allowed them). */
static void set_class_fields(const struct scanned_line *sl, uint8_t *mad)
{
	if (has(sl, KEY_MKEY))
		mad_set_field64(mad, 0, IB_MAD_MKEY_F, sl->num[KEY_MKEY]);
	if (has(sl, KEY_COMP_MASK))
		mad_set_field64(mad, 0, IB_SA_COMPMASK_F, sl->num[KEY_COMP_MASK]);
	if (has(sl, KEY_SMKEY))
		mad_set_field64(mad, 0, IB_SA_MKEY_F, sl->num[KEY_SMKEY]);
	if (has(sl, KEY_ATTR_OFFSET))
		mad_set_field(mad, 0, IB_SA_ATTROFFS_F,
			      (uint32_t)sl->num[KEY_ATTR_OFFSET]);
	if (has(sl, KEY_OUI))
		mad_set_field(mad, 0, IB_VEND2_OUI_F, (uint32_t)sl->num[KEY_OUI]);
}

/* The kernel segments a send only if the RMPP header says Active; fill in
 * what ibmad would for a DATA message unless mad= already did. */
static void set_rmpp_active(uint8_t *mad)
{
	if (mad_get_field(mad, 0, IB_SA_RMPP_FLAGS_F) & IB_RMPP_FLAG_ACTIVE)
		return;
	mad_set_field(mad, 0, IB_SA_RMPP_VERS_F, 1);
	mad_set_field(mad, 0, IB_SA_RMPP_TYPE_F, IB_RMPP_TYPE_DATA);
	mad_set_field(mad, 0, IB_SA_RMPP_FLAGS_F, IB_RMPP_FLAG_ACTIVE);
}

/* data= replaces the whole data area, after mad=; past one MAD (an RMPP
 * class only) it sets the MAD's length. */
static int set_data(const struct scanned_line *sl, uint8_t *mad,
		    size_t mad_cap, int mgmt_class, size_t *mad_len,
		    char *err, size_t errlen)
{
	size_t off, area, n;
	char label[8];
	int ret;

	if (!has(sl, KEY_DATA))
		return 0;
	off = madtext_data_offset(mgmt_class);
	area = madtext_data_size(mgmt_class);
	n = sl->text_len[KEY_DATA] / 2;
	if (n > area && !mad_class_uses_rmpp((unsigned)mgmt_class))
		return codec_error(err, errlen, -EMSGSIZE,
			"data= is %zu bytes; class %s carries at most %zu",
			n, class_label(mgmt_class, label), area);
	if (off + n > mad_cap)
		return codec_error(err, errlen, -EMSGSIZE,
			"data= is %zu bytes, more than the %zu that fit",
			n, mad_cap - off);
	ret = decode_hex_value(sl, KEY_DATA, mad + off, err, errlen);
	if (ret)
		return ret;
	if (n <= area) {
		memset(mad + off + n, 0, area - n);
		*mad_len = MAD_SIZE;
	} else {
		*mad_len = off + n;
		set_rmpp_active(mad);
	}
	return 0;
}

/* -EINVAL if the field key of tok came earlier on the line (keys compare
 * without case, as all keys do).  Only lines with fields pay for this. */
static int check_field_once(const struct scanned_line *sl,
			    const struct field_token *tok, char *err,
			    size_t errlen)
{
	struct field_token prev;
	size_t pos = sl->first_field, i;

	while (textscan_next_field(sl, &pos, &prev) &&
	       prev.column < tok->column) {
		if (prev.key_len != tok->key_len)
			continue;
		for (i = 0; i < prev.key_len; i++)
			if (ascii_lower((unsigned char)prev.key[i]) !=
			    ascii_lower((unsigned char)tok->key[i]))
				break;
		if (i == prev.key_len)
			return codec_error(err, errlen, -EINVAL,
				"duplicate key '%.*s' at column %zu (first at column %zu)",
				(int)tok->key_len, tok->key, tok->column,
				prev.column);
	}
	return 0;
}

/* The Attribute.Field keys, over mad= and data=. */
static int set_fields(const struct scanned_line *sl, uint8_t *mad,
		      size_t mad_len, char *err, size_t errlen)
{
	struct field_token tok;
	size_t pos = sl->first_field;
	int ret;

	if (pos == SIZE_MAX)
		return 0;
	while (textscan_next_field(sl, &pos, &tok)) {
		ret = check_field_once(sl, &tok, err, errlen);
		if (ret)
			return ret;
		ret = fields_set(mad, mad_len, tok.key, tok.key_len, tok.value,
				 tok.value_len, tok.column, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

/* A MAD longer than one must be an RMPP class's, marked Active. */
static int check_length(const uint8_t *mad, size_t mad_len, int mgmt_class,
			char *err, size_t errlen)
{
	char label[8];

	if (mad_len <= MAD_SIZE)
		return 0;
	if (!mad_class_uses_rmpp((unsigned)mgmt_class))
		return codec_error(err, errlen, -EMSGSIZE,
			"MAD is %zu bytes; class %s does not use RMPP (max %d)",
			mad_len, class_label(mgmt_class, label), MAD_SIZE);
	if (!(mad_get_field((void *)mad, 0, IB_SA_RMPP_FLAGS_F) &
	      IB_RMPP_FLAG_ACTIVE))
		return codec_error(err, errlen, -EINVAL,
			"MAD is %zu bytes but its RMPP header is not Active (byte 26 bit 0)",
			mad_len);
	return 0;
}

/* The MAD: the common header, class headers and payload. */
static int build_mad(const struct scanned_line *sl, uint8_t *mad,
		     size_t mad_cap, size_t *mad_len, char *err, size_t errlen)
{
	int mgmt_class = 0, method = 0;
	int ret;

	ret = load_mad(sl, mad, mad_cap, mad_len, err, errlen);
	if (ret)
		return ret;
	ret = set_class(sl, mad, &mgmt_class, err, errlen);
	if (ret)
		return ret;
	ret = check_class_keys(sl, mgmt_class, err, errlen);
	if (ret)
		return ret;
	ret = set_common_header(sl, mad, mgmt_class, &method, err, errlen);
	if (ret)
		return ret;
	ret = set_status(sl, mad, mgmt_class, err, errlen);
	if (ret)
		return ret;
	if (mgmt_class == IB_SMI_DIRECT_CLASS)
		set_dr_fields(sl, mad, method);
	set_class_fields(sl, mad);
	ret = set_data(sl, mad, mad_cap, mgmt_class, mad_len, err, errlen);
	if (ret)
		return ret;
	ret = set_fields(sl, mad, *mad_len, err, errlen);
	if (ret)
		return ret;
	return check_length(mad, *mad_len, mgmt_class, err, errlen);
}

/* The GRH fields, given only with gid=. */
static int set_grh(const struct scanned_line *sl, ib_mad_addr_t *addr,
		   char *err, size_t errlen)
{
	static const enum key_id grh_keys[] = {
		KEY_GID_INDEX, KEY_HOP_LIMIT, KEY_TRAFFIC_CLASS, KEY_FLOW_LABEL,
	};
	size_t i;

	if (!has(sl, KEY_GID)) {
		for (i = 0; i < sizeof(grh_keys) / sizeof(grh_keys[0]); i++)
			if (has(sl, grh_keys[i]))
				return codec_error(err, errlen, -EINVAL,
					"%s= at column %zu needs gid=",
					text_keys[grh_keys[i]].name,
					sl->column[grh_keys[i]]);
		return 0;
	}
	addr->grh_present = 1;
	memcpy(addr->gid, sl->gid, sizeof(addr->gid));
	addr->gid_index = has(sl, KEY_GID_INDEX) ?
				  (uint8_t)sl->num[KEY_GID_INDEX] : 0;
	/* Like ibmad: a GRH that may cross routers unless told not to. */
	addr->hop_limit = has(sl, KEY_HOP_LIMIT) ?
				  (uint8_t)sl->num[KEY_HOP_LIMIT] : 0xff;
	addr->traffic_class = has(sl, KEY_TRAFFIC_CLASS) ?
				      (uint8_t)sl->num[KEY_TRAFFIC_CLASS] : 0;
	addr->flow_label = htonl(has(sl, KEY_FLOW_LABEL) ?
					 (uint32_t)sl->num[KEY_FLOW_LABEL] : 0);
	return 0;
}

/* The peer's address: LID, QP and Q_Key (defaulted by class), SL, ... */
static int set_address(const struct scanned_line *sl, ib_mad_addr_t *addr,
		       int mgmt_class, char *err, size_t errlen)
{
	uint32_t qp, qkey;
	uint16_t lid;

	if (has(sl, KEY_LID))
		lid = (uint16_t)sl->num[KEY_LID];
	else if (mgmt_class == IB_SMI_DIRECT_CLASS)
		lid = MAD_LID_PERMISSIVE;
	else
		return codec_error(err, errlen, -EINVAL,
				   "lid= missing (needed unless dr=)");
	if (has(sl, KEY_QP))
		qp = (uint32_t)sl->num[KEY_QP];
	else
		qp = mad_class_is_smi((unsigned)mgmt_class) ? 0 : 1;
	if (has(sl, KEY_QKEY))
		qkey = (uint32_t)sl->num[KEY_QKEY];
	else
		qkey = qp == 0 ? 0 : IB_DEFAULT_QP1_QKEY;

	addr->qpn = htonl(qp);
	addr->qkey = htonl(qkey);
	addr->lid = htons(lid);
	if (has(sl, KEY_SL))
		addr->sl = (uint8_t)sl->num[KEY_SL];
	if (has(sl, KEY_PATH_BITS))
		addr->path_bits = (uint8_t)sl->num[KEY_PATH_BITS];
	if (has(sl, KEY_PKEY_INDEX))
		addr->pkey_index = (uint16_t)sl->num[KEY_PKEY_INDEX];
	return set_grh(sl, addr, err, errlen);
}

/* The umad header: the peer's address and the per-line send options. */
static int build_umad_header(const struct scanned_line *sl,
			     struct ib_user_mad *hdr, int mgmt_class,
			     size_t mad_len, char *err, size_t errlen)
{
	int ret;

	memset(hdr, 0, sizeof(*hdr));
	ret = set_address(sl, &hdr->addr, mgmt_class, err, errlen);
	if (ret)
		return ret;
	hdr->timeout_ms = has(sl, KEY_TIMEOUT) ? (uint32_t)sl->num[KEY_TIMEOUT] : 0;
	hdr->retries = has(sl, KEY_RETRIES) ? (uint32_t)sl->num[KEY_RETRIES] : 0;
	hdr->length = (uint32_t)(UMAD_FRAME_HDR_SIZE + mad_len);
	return 0;
}

int madtext_parse(const char *line, size_t len, void *frame, size_t frame_cap,
		  struct madtext_request *req, char *err, size_t errlen)
{
	struct scanned_line sl;
	uint8_t *mad = (uint8_t *)frame + UMAD_FRAME_HDR_SIZE;
	size_t mad_len = 0;
	int ret;

	if (errlen)
		err[0] = '\0';
	if (frame_cap < UMAD_FRAME_MAX)
		return codec_error(err, errlen, -EMSGSIZE,
			"frame buffer of %zu bytes is smaller than %d",
			frame_cap, UMAD_FRAME_MAX);

	ret = textscan_line(line, len, &sl, err, errlen);
	if (ret)
		return ret;
	ret = build_mad(&sl, mad, frame_cap - UMAD_FRAME_HDR_SIZE, &mad_len,
			err, errlen);
	if (ret)
		return ret;
	ret = build_umad_header(&sl, frame, mad[1], mad_len, err, errlen);
	if (ret)
		return ret;

	req->mad_len = mad_len;
	req->timeout_ms = has(&sl, KEY_TIMEOUT) ? (int)sl.num[KEY_TIMEOUT] : -1;
	req->retries = has(&sl, KEY_RETRIES) ? (int)sl.num[KEY_RETRIES] : -1;
	req->tid_given = has(&sl, KEY_TID);
	return 0;
}
