/* fabric/expected: the topology the fabric should have, in ibnetdiscover's
 * format, loaded from -o fabric_expected=PATH, written by the user (saved
 * to PATH), or else the first complete sweep since mount.  It is kept as
 * a snapshot: nodes with their type, ports and description, and each
 * linked port's peer_guid/peer_port, and width/speed/ext_speed when the
 * line's comment gives them (`4xEDR`), else 0. */
#ifndef UMADFS_EXPECTED_H
#define UMADFS_EXPECTED_H

#include <sys/types.h>

struct node;
struct fab_snap;

/* At mount: loads path (NULL: none) and keeps it to save writes to.
 * -EINVAL with the reason (line and column) on stderr. */
int expected_configure(const char *path);
/* Adds fabric/expected: root's, and group's if not NULL (mode 0664). */
int expected_add(struct node *fabric_dir, const gid_t *group);
/* A complete sweep: the expectation when there is none yet.  The sweep
 * thread, before health_judge. */
void expected_offer(struct fab_snap *snap);
/* The expected topology (a reference; fabsnap_put it), or NULL. */
struct fab_snap *expected_get(void);
/* Parses an ibnetdiscover text into a new snapshot (*out); -EINVAL with
 * "line L column C: reason" in why; -ENOMEM. */
int expected_parse(const char *text, size_t len, struct fab_snap **out,
		   char *why, size_t cap);
void expected_close(void);

#endif
