/* CA and port attribute files.
 *
 * Each table row is one file: its sysfs name where sysfs has the attribute
 * (same value format, see sysfmt.c), a plain name otherwise.  Values come
 * from libibumad on every open; for ports whose attrs_from_smp is set
 * (under the simulator, whose emulated sysfs is a snapshot taken when the
 * daemon started) the live fields are overlaid from a PortInfo SMP that the
 * port's own SMA answers - which is where the kernel gets them too. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/mad.h>

#include "umadfs/ca/attr.h"
#include "umadfs/device/device.h"
#include "umadfs/device/sysfmt.h"
#include "umadfs/engine/ibumad.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/ibcodes.h"

/* ---- CA attributes ---- */

typedef int (*ca_show_fn)(const umad_ca_t *ca, char *buf, size_t cap);

static int show_node_type(const umad_ca_t *ca, char *buf, size_t cap)
{
	return sysfmt_node_type(buf, cap, ca->node_type);
}

static int show_node_guid(const umad_ca_t *ca, char *buf, size_t cap)
{
	return sysfmt_guid_colon(buf, cap, be64toh(ca->node_guid));
}

static int show_sys_image_guid(const umad_ca_t *ca, char *buf, size_t cap)
{
	return sysfmt_guid_colon(buf, cap, be64toh(ca->system_guid));
}

static int show_fw_ver(const umad_ca_t *ca, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "%s\n", ca->fw_ver);
}

static int show_hw_rev(const umad_ca_t *ca, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "%s\n", ca->hw_ver);
}

static int show_hca_type(const umad_ca_t *ca, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "%s\n", ca->ca_type);
}

/* The kernel's board_id (the board's part number); the CA type where
 * sysfs has none (umad2sim's): node_exporter skips a device without it. */
static int show_board_id(const umad_ca_t *ca, char *buf, size_t cap)
{
	char path[256];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s/board_id", SYS_INFINIBAND, ca->ca_name);
	n = attr_sysfs_line(path, buf, cap);
	return n < 0 ? sysfmt_line(buf, cap, "%s\n", ca->ca_type) : (int)n;
}

static int show_ca_name(const umad_ca_t *ca, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "%s\n", ca->ca_name);
}

static int show_num_ports(const umad_ca_t *ca, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "%d\n", ca->numports);
}

static const struct {
	const char *name;
	ca_show_fn show;
} ca_attrs[] = {
	{ "node_type", show_node_type },
	{ "node_guid", show_node_guid },
	{ "sys_image_guid", show_sys_image_guid },
	{ "fw_ver", show_fw_ver },
	{ "hw_rev", show_hw_rev },
	{ "hca_type", show_hca_type },
	{ "board_id", show_board_id },
	{ "ca_name", show_ca_name },
	{ "num_ports", show_num_ports },
};

static int ca_attr_show(struct node *n, char *buf, size_t cap)
{
	struct ca *dev = n->owner;
	umad_ca_t ca;
	int r = ibumad_get_ca(dev->name, &ca);

	if (r < 0)
		return r;
	r = ca_attrs[n->attr].show(&ca, buf, cap);
	ibumad_release_ca(&ca);
	return r;
}

/* ---- port attributes ---- */

/* One reading of a port: libibumad's view, live fields overlaid. */
struct port_snap {
	umad_port_t up;
	char rate[64];
};

ssize_t attr_sysfs_line(const char *path, char *buf, size_t cap)
{
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, cap - 2);
		close(fd);
	}
	if (n <= 0)
		return -1;
	if (buf[n - 1] != '\n')
		buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

static void read_sysfs_rate(const umad_port_t *up, char *rate, size_t cap)
{
	char path[256];

	/* umad_port_t keeps only the integer part of the rate; sysfs has
	 * the whole line ("2.5 Gb/sec (1X SDR)"). */
	snprintf(path, sizeof(path), "%s/%s/ports/%d/rate", SYS_INFINIBAND,
		 up->ca_name, up->portnum);
	if (attr_sysfs_line(path, rate, cap) < 0)
		snprintf(rate, cap, "%u Gb/sec\n", up->rate);
}

static int port_snapshot(struct ca_port *port, struct port_snap *s)
{
	uint8_t pi[IB_SMP_DATA_SIZE];
	unsigned capmask;
	int r = ibumad_get_port(port->ca->name, port->portnum, &s->up);

	if (r < 0)
		return r;
	if (!port->attrs_from_smp) {
		read_sysfs_rate(&s->up, s->rate, sizeof(s->rate));
		return 0;
	}
	r = ca_port_smp_get(port, IB_ATTR_PORT_INFO, (unsigned)port->portnum, pi);
	if (r < 0) {
		ibumad_release_port(&s->up);
		return r == -EPROTO || r == -ETIMEDOUT ? -EIO : r;
	}
	capmask = mad_get_field(pi, 0, IB_PORT_CAPMASK_F);
	s->up.base_lid = mad_get_field(pi, 0, IB_PORT_LID_F);
	s->up.lmc = mad_get_field(pi, 0, IB_PORT_LMC_F);
	s->up.sm_lid = mad_get_field(pi, 0, IB_PORT_SMLID_F);
	s->up.sm_sl = mad_get_field(pi, 0, IB_PORT_SMSL_F);
	s->up.state = mad_get_field(pi, 0, IB_PORT_STATE_F);
	s->up.phys_state = mad_get_field(pi, 0, IB_PORT_PHYS_STATE_F);
	s->up.capmask = htobe32(capmask);
	s->up.gid_prefix = htobe64(mad_get_field64(pi, 0, IB_PORT_GID_PREFIX_F));
	if (sysfmt_rate(s->rate, sizeof(s->rate),
			mad_get_field(pi, 0, IB_PORT_LINK_WIDTH_ACTIVE_F),
			mad_get_field(pi, 0, IB_PORT_LINK_SPEED_ACTIVE_F),
			capmask & IB_PORT_CAP_HAS_EXT_SPEEDS ?
				mad_get_field(pi, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F) : 0) < 0)
		snprintf(s->rate, sizeof(s->rate), "%u Gb/sec\n", s->up.rate);
	return 0;
}

typedef int (*port_show_fn)(const struct port_snap *s, char *buf, size_t cap);

static int show_state(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_port_state(buf, cap, s->up.state);
}

static int show_phys_state(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_phys_state(buf, cap, s->up.phys_state);
}

static int show_rate(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "%s", s->rate);
}

static int show_lid(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "0x%x\n", s->up.base_lid);
}

static int show_sm_lid(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "0x%x\n", s->up.sm_lid);
}

static int show_lmc(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "%u\n", s->up.lmc);
}

static int show_sm_sl(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "%u\n", s->up.sm_sl);
}

static int show_cap_mask(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "0x%08x\n", be32toh(s->up.capmask));
}

static int show_link_layer(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "%s\n", s->up.link_layer);
}

static int show_port_guid(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_guid_hex(buf, cap, be64toh(s->up.port_guid));
}

static int show_gid_prefix(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_guid_hex(buf, cap, be64toh(s->up.gid_prefix));
}

static int show_port_num(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "%d\n", s->up.portnum);
}

static int show_port_ca_name(const struct port_snap *s, char *buf, size_t cap)
{
	return sysfmt_line(buf, cap, "%s\n", s->up.ca_name);
}

static const struct {
	const char *name;
	port_show_fn show;
} port_attrs[] = {
	{ "state", show_state },
	{ "phys_state", show_phys_state },
	{ "rate", show_rate },
	{ "lid", show_lid },
	{ "lid_mask_count", show_lmc },
	{ "sm_lid", show_sm_lid },
	{ "sm_sl", show_sm_sl },
	{ "cap_mask", show_cap_mask },
	{ "link_layer", show_link_layer },
	{ "port_guid", show_port_guid },
	{ "gid_prefix", show_gid_prefix },
	{ "port_num", show_port_num },
	{ "ca_name", show_port_ca_name },
};

static int port_attr_show(struct node *n, char *buf, size_t cap)
{
	struct port_snap s;
	int r = port_snapshot(n->owner, &s);

	if (r < 0)
		return r;
	r = port_attrs[n->attr].show(&s, buf, cap);
	ibumad_release_port(&s.up);
	return r;
}

/* pkeys/N: P_Key table entry N, "0xffff\n" as in sysfs. */
static int pkey_show(struct node *n, char *buf, size_t cap)
{
	struct ca_port *port = n->owner;
	umad_port_t up;
	int r = ibumad_get_port(port->ca->name, port->portnum, &up);

	if (r < 0)
		return r;
	if ((unsigned)n->pkey < up.pkeys_size)
		r = sysfmt_line(buf, cap, "0x%04x\n", up.pkeys[n->pkey]);
	else
		r = -ENOENT;
	ibumad_release_port(&up);
	return r;
}

int attr_port_lid(struct ca_port *port)
{
	struct port_snap s;
	int r = port_snapshot(port, &s);

	if (r < 0)
		return r;
	r = (int)s.up.base_lid;
	ibumad_release_port(&s.up);
	return r;
}

/* node_desc: NodeDescription from the node's own SMA (sysfs's node_desc
 * where there is no SMI, as on RoCE). */
static int node_desc_show(struct node *n, char *buf, size_t cap)
{
	struct ca *ca = n->owner;
	uint8_t data[IB_SMP_DATA_SIZE];
	char path[256];
	ssize_t len;
	int fd;

	for (int i = 0; i < UMAD_CA_MAX_PORTS; i++) {
		struct ca_port *port = ca->ports[i];

		int r;

		if (!port || !strcmp(port->link_layer, "Ethernet"))
			continue;
		r = ca_port_smp_get(port, IB_ATTR_NODE_DESC, 0, data);
		if (r == -ENODEV)
			continue; /* no engine: the next port, or sysfs */
		if (r < 0)
			return -EIO;
		return sysfmt_line(buf, cap, "%.*s\n",
				 (int)strnlen((char *)data, IB_SMP_DATA_SIZE),
				 (char *)data);
	}
	snprintf(path, sizeof(path), "%s/%s/node_desc", SYS_INFINIBAND, ca->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, cap);
	close(fd);
	return len < 0 ? -EIO : (int)len;
}

static const struct node_ops ca_attr_ops = { .show = ca_attr_show };

static const struct node_ops node_desc_ops = { .show = node_desc_show };

static const struct node_ops port_attr_ops = { .show = port_attr_show };

static const struct node_ops pkey_ops = { .show = pkey_show };

int attr_add_ca_files(struct node *dir, struct ca *ca)
{
	for (size_t i = 0; i < sizeof(ca_attrs) / sizeof(ca_attrs[0]); i++)
		if (!tree_add(dir, ca_attrs[i].name, S_IFREG | 0444,
			      &ca_attr_ops, ca, (int)i))
			return -ENOMEM;
	if (!tree_add(dir, "node_desc", S_IFREG | 0444, &node_desc_ops, ca, 0))
		return -ENOMEM;
	return 0;
}

int attr_add_port_files(struct node *dir, struct ca_port *port)
{
	struct node *pkeys;
	char name[16];

	for (size_t i = 0; i < sizeof(port_attrs) / sizeof(port_attrs[0]); i++)
		if (!tree_add(dir, port_attrs[i].name, S_IFREG | 0444,
			      &port_attr_ops, port, (int)i))
			return -ENOMEM;
	pkeys = tree_add(dir, "pkeys", S_IFDIR | 0555, NULL, port, 0);
	if (!pkeys)
		return -ENOMEM;
	for (unsigned i = 0; i < port->npkeys; i++) {
		snprintf(name, sizeof(name), "%u", i);
		if (!tree_add(pkeys, name, S_IFREG | 0444, &pkey_ops, port, (int)i))
			return -ENOMEM;
	}
	return 0;
}
