/* fabric/expected, the file (expectedfile.c): the expected topology
 * (expected.h) read as a topology text, and a text written taken whole at
 * close, or refused without a change. */
#ifndef UMADFS_EXPECTEDFILE_H
#define UMADFS_EXPECTEDFILE_H

#include <sys/types.h>

struct node;

/* Bytes held at once by all the opens of fabric/expected being written. */
#define EXPECTED_PENDING_MAX (128u << 20)

/* Adds fabric/expected: root's, and group's if not NULL (mode 0664). */
int expectedfile_add(struct node *fabric_dir, const gid_t *group);
/* At exit: the opens whose RELEASE never came. */
void expectedfile_close(void);

#endif
