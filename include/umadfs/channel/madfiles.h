/* The MAD files of a channel directory (a port's own, or agents/NAME):
 * send, recv (text), umad (binary frames), timeout_ms, retries,
 * last_error, stats. */
#ifndef UMADFS_MADFILES_H
#define UMADFS_MADFILES_H

#include <sys/types.h>

struct node;
struct channel;

/* owner: root's for a port's own files, the creator's in agents/. */
int madfiles_add(struct node *dir, struct channel *ch, uid_t owner);

#endif
