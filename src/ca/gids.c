/* A port's gids/ (gids.h): its GID table as the kernel's sysfs shows it,
 * one file an entry ("fe80:0000:0000:0000:0002:c903:00a1:b2c3\n").
 *
 * Where the port's attributes come from its SMA (attrs_from_smp: the
 * simulator), the table is PortInfo's GidPrefix before each GUID of
 * GUIDInfo, as many entries as PortInfo's GUIDCap, an entry whose GUID is
 * 0 shown as the zero GID (the kernel's cache keeps no zero entry of an
 * IB port, and shows one it lacks as zeros); elsewhere each file is the
 * kernel's own line, and the table is as long as the kernel's gids/ (a
 * RoCE port's entries are the kernel's, not the SMA's). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/ca/attr.h"
#include "umadfs/ca/gids.h"
#include "umadfs/device/device.h"
#include "umadfs/device/sysfmt.h"
#include "umadfs/engine/ibumad.h"
#include "umadfs/fuse/tree.h"

#define GIDS_MAX 4096 /* the most entries made (the kernel has up to 256 on RoCE, 128 on IB) */
#define GUIDS_PER_BLOCK 8

static void sysfs_gids_path(const struct ca_port *port, char *path, size_t cap)
{
	snprintf(path, cap, "%s/%s/ports/%d/gids", SYS_INFINIBAND, port->ca->name,
		 port->portnum);
}

/* The length of the kernel's table: its highest entry's index plus one. */
static int sysfs_gids_count(const struct ca_port *port)
{
	char path[256];
	struct dirent *de;
	DIR *dir;
	long most = -1;

	sysfs_gids_path(port, path, sizeof(path));
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char *end;
		long i;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		i = strtol(de->d_name, &end, 10);
		if (!*end && i > most && i < GIDS_MAX)
			most = i;
	}
	closedir(dir);
	return (int)(most + 1);
}

/* The table's length: GUIDCap from the SMA, else the kernel's. */
static int gids_count(struct ca_port *port)
{
	uint8_t pi[IB_SMP_DATA_SIZE];
	int r;

	if (!port->attrs_from_smp)
		return sysfs_gids_count(port);
	r = ca_port_smp_get(port, IB_ATTR_PORT_INFO, (unsigned)port->portnum, pi);
	if (r < 0)
		return r == -EPROTO || r == -ETIMEDOUT ? -EIO : r;
	return (int)mad_get_field(pi, 0, IB_PORT_GUID_CAP_F);
}

static int gid_show_smp(struct ca_port *port, unsigned index, char *buf, size_t cap)
{
	uint8_t pi[IB_SMP_DATA_SIZE], gi[IB_SMP_DATA_SIZE];
	uint64_t guid;
	int r = ca_port_smp_get(port, IB_ATTR_PORT_INFO, (unsigned)port->portnum, pi);

	if (r == 0)
		r = ca_port_smp_get(port, IB_ATTR_GUID_INFO, index / GUIDS_PER_BLOCK, gi);
	if (r < 0)
		return r == -EPROTO || r == -ETIMEDOUT ? -EIO : r;
	guid = mad_get_field64(gi, 0, (enum MAD_FIELDS)(IB_GI_GUID0_F + index % GUIDS_PER_BLOCK));
	if (!guid)
		return sysfmt_gid(buf, cap, 0, 0);
	return sysfmt_gid(buf, cap, mad_get_field64(pi, 0, IB_PORT_GID_PREFIX_F), guid);
}

/* gids/N: entry N, the kernel's line or made from the SMA's answers. */
static int gid_show(struct node *n, char *buf, size_t cap)
{
	struct ca_port *port = n->owner;
	char path[300];

	if (port->attrs_from_smp)
		return gid_show_smp(port, (unsigned)n->attr, buf, cap);
	sysfs_gids_path(port, path, sizeof(path) - 16);
	snprintf(path + strlen(path), 16, "/%d", n->attr);
	return attr_sysfs_line(path, buf, cap) < 0 ? -EIO : (int)strlen(buf);
}

static const struct node_ops gid_ops = { .show = gid_show };

/* The entries, made at the directory's first lookup or listing, when the
 * port's engine is up to ask its table's length (tree write lock held: a
 * Get of the port's own SMA). */
static int gids_populate(struct node *dir)
{
	struct ca_port *port = dir->owner;
	int count = gids_count(port);
	char name[16];

	if (count < 0)
		return count;
	if (count > GIDS_MAX)
		count = GIDS_MAX;
	for (int i = 0; i < count; i++) {
		snprintf(name, sizeof(name), "%d", i);
		if (!tree_child(dir, name) &&
		    !tree_add(dir, name, S_IFREG | 0444, &gid_ops, port, i))
			return -ENOMEM;
	}
	return 0;
}

static const struct dir_ops gids_dops = { .populate = gids_populate };

int gids_add_dir(struct node *port_dir, struct ca_port *port)
{
	struct node *dir = tree_add(port_dir, "gids", S_IFDIR | 0555, NULL, port, 0);

	if (!dir)
		return -ENOMEM;
	dir->dops = &gids_dops;
	dir->lazy = true;
	return 0;
}
