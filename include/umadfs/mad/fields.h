/*
 * fields: a MAD's attribute as named fields, the Attribute.Field=value keys
 * of the text format (docs/text-format.md).  Names, positions and widths
 * come from libibmad's field table (IB_*_F), except for PKeyTable and
 * LinkRecord, which it lacks; nothing here allocates.
 */
#ifndef UMADFS_MAD_FIELDS_H
#define UMADFS_MAD_FIELDS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Write the fields of the MAD's attribute at p as " Attr.Field=value" keys
 * (SA GetTableResp records as " Attr[i].Field=value"); returns the end.
 * Writes nothing for an attribute without named fields, a nonzero MAD
 * status or a MAD too short for the attribute.  At most
 * fields_format_max(mad_len) bytes.
 */
char *fields_format(char *p, uint8_t *mad, size_t mad_len);

/* Upper bound on what fields_format() writes for mad_len bytes of MAD:
 * for any MAD, and for this one (mad_len >= 24). */
size_t fields_format_max(size_t mad_len);
size_t fields_format_need(uint8_t *mad, size_t mad_len);

/*
 * Set one field from the key key[0..key_len) ("Attr.Field" or
 * "Attr[i].Field") and its value val[0..val_len) (a number, 0x-hex bytes
 * or a quoted string) in the MAD, whose class and attribute are already
 * set.  col is the key's 1-based column for messages.  Returns 0 or
 * -EINVAL with the reason in err.
 */
int fields_set(uint8_t *mad, size_t mad_len, const char *key, size_t key_len,
	       const char *val, size_t val_len, size_t col, char *err,
	       size_t errlen);

/* The longest quoted string fields_set() takes: a field of this many bytes. */
#define FIELDS_STRING_MAX	64

#endif /* UMADFS_MAD_FIELDS_H */
