/* The expected topology (expected.c): the topology the fabric should
 * have, loaded from -o fabric_expected=PATH, written by the user
 * (fabric/expected: expectedfile.h; saved to PATH), or else the first
 * complete sweep since mount (ok, and no node unreachable).  It is kept as
 * a snapshot in topofile.h's terms that never changes once published. */
#ifndef UMADFS_EXPECTED_H
#define UMADFS_EXPECTED_H

#include <stddef.h>

struct fab_snap;

/* At mount: loads path (NULL: none) and keeps it to save texts to.  A
 * missing file is no expectation yet (the first write creates it); a
 * malformed one, or one that cannot be read, -EINVAL with the reason
 * (line and column) on stderr.  Called again, it replaces what it set. */
int expected_configure(const char *path);
/* A new snapshot, before it is judged (the sweep thread): when there is no
 * expectation and snap is complete (ok, no node unreachable), its
 * topology becomes the expectation. */
void expected_offer(struct fab_snap *snap);
/* The expected topology (a reference; fabsnap_put it), or NULL. */
struct fab_snap *expected_get(void);
/* A text's snapshot s (taken) made the expectation (without nodes: none,
 * the next complete sweep), text[0..len) saved to PATH first: 0, or
 * -errno with the reason in why; the expectation is then as it was. */
int expected_apply(struct fab_snap *s, const char *text, size_t len, char *why,
		   size_t cap);
/* At exit: drops the expectation and PATH. */
void expected_close(void);

#endif
