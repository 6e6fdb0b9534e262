/*
 * textscan: the first pass of madtext_parse(), one line to a struct
 * scanned_line (keys found, values converted), which textbuild.c turns
 * into a frame.  Private to the codec.
 */
#ifndef UMADFS_MAD_TEXTSCAN_H
#define UMADFS_MAD_TEXTSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/mad.h>

enum key_id {
	KEY_CLASS,
	KEY_VERSION,
	KEY_METHOD,
	KEY_ATTR,
	KEY_ATTRMOD,
	KEY_TID,
	KEY_STATUS,
	KEY_LID,
	KEY_QP,
	KEY_QKEY,
	KEY_SL,
	KEY_PKEY_INDEX,
	KEY_PATH_BITS,
	KEY_GID,
	KEY_GID_INDEX,
	KEY_HOP_LIMIT,
	KEY_TRAFFIC_CLASS,
	KEY_FLOW_LABEL,
	KEY_DR,
	KEY_DRSLID,
	KEY_DRDLID,
	KEY_DIRECTION,
	KEY_MKEY,
	KEY_COMP_MASK,
	KEY_SMKEY,
	KEY_ATTR_OFFSET,
	KEY_OUI,
	KEY_DATA,
	KEY_MAD,
	KEY_TIMEOUT,
	KEY_RETRIES,
	KEY_ERROR,
	KEY_LEN,
	KEY_COUNT
};

enum value_kind {
	VAL_NUMBER,	/* 0..max */
	VAL_CLASS,	/* class name or 1..0xff */
	VAL_METHOD,	/* method name or 1..0xff */
	VAL_ATTR,	/* number now, or a name resolved once the class is known */
	VAL_HEX,	/* data=, mad=: decoded straight into the frame later */
	VAL_GID,
	VAL_PATH,
	VAL_IGNORED,	/* output-only keys, accepted so received lines re-parse */
};

struct key_desc {
	char name[15];
	uint8_t len;
	uint8_t kind;
	uint64_t max;
};

/* The keys, indexed by enum key_id. */
extern const struct key_desc text_keys[KEY_COUNT];

#define KEY_BIT(k) (UINT64_C(1) << (k))
_Static_assert(KEY_COUNT <= 64, "scanned_line.present is a 64-bit mask");

/* One line after the first pass. */
struct scanned_line {
	uint64_t present;			/* KEY_BIT()s seen */
	uint64_t num[KEY_COUNT];		/* VAL_NUMBER/CLASS/METHOD/ATTR */
	const char *text[KEY_COUNT];		/* VAL_HEX, and VAL_ATTR by name */
	size_t text_len[KEY_COUNT];
	size_t column[KEY_COUNT];		/* 1-based, of the token */
	bool attr_by_name;
	uint8_t gid[16];
	uint8_t path[IB_SUBNET_PATH_HOPS_MAX];
	size_t path_len;			/* elements in dr= */
	/* Attribute.Field keys are resolved by textbuild once the attribute
	 * is known: it walks them with textscan_next_field(). */
	const char *line;
	size_t len;
	size_t first_field;			/* offset, or SIZE_MAX: none */
};

/* An Attribute.Field=value token. */
struct field_token {
	const char *key, *value;
	size_t key_len, value_len;
	size_t column;				/* 1-based, of the key */
};

static inline bool has(const struct scanned_line *sl, enum key_id k)
{
	return sl->present & KEY_BIT(k);
}

/* A token byte is printable ASCII other than space; one compare. */
static inline bool is_token_byte(unsigned char c)
{
	return (unsigned char)(c - 0x21) <= 0x7e - 0x21;
}

/* Split line into key=value tokens, look up the keys and convert the
 * values that do not depend on other keys: 0 or -EINVAL with err set. */
int textscan_line(const char *line, size_t len, struct scanned_line *sl,
		  char *err, size_t errlen);

/* The next Attribute.Field token of the line textscan_line() accepted, from
 * offset *pos on: true with tok filled and *pos past it, false at the end. */
bool textscan_next_field(const struct scanned_line *sl, size_t *pos,
			 struct field_token *tok);

#endif
