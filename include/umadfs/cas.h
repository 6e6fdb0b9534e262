/* The CAs the mount shows: each assembled from the device model (src/ca)
 * and the features (the MAD files, agents/ and rq/ of each port), started,
 * and, when the kernel removes the CA, failed and taken down; CAs that
 * appear while mounted are added (hotplug.c reports both). */
#ifndef UMADFS_CAS_H
#define UMADFS_CAS_H

#include "umadfs/device/device.h"

struct fuse_session;

/* Builds every CA libibumad lists now (no thread: before
 * fuse_daemonize()).  Returns how many, or -errno. */
int cas_build_all(struct node *root, enum attr_source source);
/* Opens the engines and starts following the kernel's CAs; se is told
 * when a CA's directory goes (fuse_lowlevel_notify_inval_entry). */
void cas_start(struct fuse_session *se);
/* Copies up to max ports of the CAs present now into out, CA by CA in
 * port order; returns how many.  They stay valid until cas_free_all()
 * (a removed CA's structs outlive its removal). */
int cas_ports(struct ca_port **out, int max);
/* Shutdown: the opens waiting in the CA tree (an issm's second holder)
 * fail with ENODEV, and no more wait. */
void cas_fail_waits(void);
/* Stops following the kernel (before the session ends). */
void cas_stop_hotplug(void);
/* At exit, after tree_destroy(): closes the engines and frees the CAs,
 * the removed ones included. */
void cas_free_all(void);

#endif
