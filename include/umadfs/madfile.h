/* The MAD files of a channel directory (a port's own, or agents/NAME):
 * send, recv (text), umad (binary frames), timeout_ms, retries,
 * last_error, stats. */
#ifndef UMADFS_MADFILE_H
#define UMADFS_MADFILE_H

struct node;
struct channel;

int madfiles_add(struct node *dir, struct channel *ch);

#endif
