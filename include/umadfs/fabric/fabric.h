/* fabric/: the whole fabric as files, swept through a port's MAD engine.
 * The process layer parses the options, attaches the directory, and stops
 * the sweeps at shutdown. */
#ifndef UMADFS_FABRIC_H
#define UMADFS_FABRIC_H

#include <stdbool.h>
#include <sys/types.h>

#include <fuse_lowlevel.h>

#include "umadfs/fabric/watch/sweeper.h"

struct node;

/* Takes -o fabric_interval=MS, -o fabric_interval_min=MS,
 * -o fabric_expected=PATH, -o fabric_thresholds=PATH,
 * -o fabric_port=CA:N, -o fabric_routes=off, -o fabric_traps=off,
 * -o fabric_light_sweep=MS, -o fabric_metrics=GROUP+...,
 * -o fabric_admin_group=GROUP and -o fabric=off out of args.  Returns 0,
 * or -EINVAL with a message on stderr. */
int fabric_parse_options(struct fuse_args *args);
/* Adds fabric/ under root and starts the sweep thread (threads: after
 * fuse_daemonize()); ports lists the host's ports (the process layer
 * owns the CAs, which come and go).  sweep and interval_ms are root's, and writable by
 * group too if not NULL (mad_group=).  Nothing with fabric=off.  0 or
 * -errno. */
int fabric_add_dir(struct node *root, const gid_t *group, sweeper_ports_fn ports);
/* -o fabric_admin_group=: the group that may act too, into *out; false
 * when only root may. */
bool fabric_admin_group(gid_t *out);
/* Notes a line in fabric/events now (an action elsewhere: a local CA's
 * counters reset); nothing with fabric=off.  Any thread. */
void fabric_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Shutdown: answers every waiting writer (ENODEV) and stops a running
 * sweep promptly.  Any thread; may be called twice. */
void fabric_shutdown(void);
/* After the session: joins the sweep thread, frees the snapshot. */
void fabric_stop(void);

#endif
