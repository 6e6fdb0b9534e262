/* Who may use the MAD files: the mount's policy and its checks.
 *
 * By default as the kernel's umad devices: attributes for everyone, MAD
 * files and channel creation for root.  `-o mad_group=GROUP` gives a group
 * the MAD files (group-owned, the owner's rw bits copied to the group) and
 * mkdir in agents/; the kernel enforces the modes (default_permissions).
 * Even then, what a member writes is checked: subnet management (SMI
 * classes 0x01 and 0x81, QP0) and the methods that change state (Set,
 * Delete) stay root's unless `-o mad_group_smi` is given too.
 *
 * Privilege is judged from the credentials of the opener, recorded at
 * open, as the kernel judges a write() by file->f_cred: a privileged
 * program tricked into writing to a descriptor someone else opened gains
 * that someone nothing. */
#ifndef UMADFS_ACCESS_H
#define UMADFS_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <fuse_lowlevel.h>

struct node;

/* -o mad_group=GROUP (a name or a number), -o mad_group_smi.  Returns 0,
 * or -ENOENT for a group that does not exist (a reason in why). */
int access_set_group(const char *group, bool smi, char *why, size_t whylen);

/* The mad_group= group: true with its GID in *out, false without one. */
bool access_group(gid_t *out);

/* A MAD file (send, recv, umad, settings, register) of a channel made by
 * owner: with a group, the group gets the owner's rw bits and owns it. */
void access_share_file(struct node *n, uid_t owner);
/* agents/ (sticky: members remove only their own channels) and a channel
 * directory: with a group, 0770 (1770) and group-owned; else unchanged. */
void access_share_dir(struct node *n, uid_t owner, bool sticky);

/* True if the opener of req may send and register everything: root, or
 * a member of the group with mad_group_smi.  Called at open. */
bool access_opener_privileged(fuse_req_t req);

/* 0 if an unprivileged opener may send this MAD, else -EPERM and why. */
int access_check_mad(const uint8_t *mad, char *why, size_t whylen);
/* 0 if an unprivileged opener may register for this class, else -EPERM. */
int access_check_class(unsigned mgmt_class, char *why, size_t whylen);

#endif
