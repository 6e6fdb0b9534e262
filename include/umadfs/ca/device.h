/* The CAs and ports of the host, as libibumad reports them, each with its
 * directory in the tree and (for ports) its MAD engine. */
#ifndef UMADFS_DEVICE_H
#define UMADFS_DEVICE_H

#include <stdbool.h>

#include <infiniband/umad.h>

struct node;
struct mad_engine;
struct channel;

/* Where port attribute values come from. */
enum attr_source {
	ATTR_SOURCE_AUTO,  /* smp under the simulator, sysfs otherwise */
	ATTR_SOURCE_SYSFS, /* libibumad (the kernel's sysfs) only */
	ATTR_SOURCE_SMP,   /* live PortInfo from the port's own SMA */
};

struct ca {
	char name[UMAD_CA_NAME_LEN];
	struct ca_port *ports[UMAD_CA_MAX_PORTS]; /* by port number */
	struct node *dir;
};

struct ca_port {
	struct ca *ca;
	int portnum;
	unsigned npkeys;     /* pkeys/ files made at mount */
	enum attr_source source;
	char link_layer[UMAD_CA_NAME_LEN];
	bool attrs_from_smp; /* overlay PortInfo from an SMP on each read */
	struct mad_engine *engine; /* NULL when the umad device could not be opened */
	struct channel *default_ch; /* the port's own send/recv/umad */
	int engine_err;      /* why not, as -errno */
	struct node *dir;
};

/* Scans the CAs and builds their directories under root.  Starts no
 * thread, so it may run before fuse_daemonize().  Returns the number of CAs
 * or -errno. */
int devices_scan(struct node *root, enum attr_source source);
/* Opens each port's MAD engine (threads: after fuse_daemonize()). */
void devices_start(void);
void devices_close(void);
/* Copies up to max of the host's ports, CA by CA in port order, into out;
 * returns how many.  Valid from devices_scan() to devices_close(). */
int devices_ports(struct ca_port **out, int max);

#endif
