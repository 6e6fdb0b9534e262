/* The device model: a CA and its ports as libibumad reports them, each
 * with its directory in the tree, its attribute and counter files, and
 * (for ports) its MAD engine.  A CA is built, started and stopped on its
 * own, so CAs can come and go while the mount is up (src/cas.c). */
#ifndef UMADFS_DEVICE_H
#define UMADFS_DEVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/engine/engine.h"

struct node;
struct issm;

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
	struct node *dir;
	/* The issm file's holder and waiters (ca/issm.c's, under its own
	 * lock); set once when the port is built. */
	struct issm *issm;
	/* Held for reading by every user of engine for the length of a
	 * call, for writing by ca_stop() while it takes the engine away. */
	pthread_rwlock_t engine_lock;
	struct mad_engine *engine; /* engine_lock; NULL: none (engine_err) */
	/* Why not (engine_lock): 0 before ca_start(), -errno if the engine
	 * could not be opened, -ENODEV once ca_stop() took it away. */
	int engine_err;
};

/* Opens each port's MAD engine; on_transport gets the port as its ctx. */
void ca_start(struct ca *ca, engine_transport_fn on_transport);
/* Takes the engines away (closed once no call is using them): from now
 * on every port's MAD calls fail with -ENODEV. */
void ca_stop(struct ca *ca);
/* Frees the CA and its ports: after ca_stop(), and once nothing can reach
 * them (their nodes forgotten, their channels freed). */
void ca_free(struct ca *ca);

/* The port's engine for one call, with engine_lock held for reading
 * (NULL, and nothing held, when it has none: then *err says why). */
struct mad_engine *ca_port_engine(struct ca_port *port, int *err);
void ca_port_engine_done(struct ca_port *port);

/* The daemon's own Gets of the port's SMA and PMA (query.h), through the
 * port's engine: -ENODEV when it has none. */
int ca_port_smp_get(struct ca_port *port, unsigned attr_id, unsigned attr_mod,
		    uint8_t data[IB_SMP_DATA_SIZE]);
int ca_port_pma_get(struct ca_port *port, unsigned lid, unsigned attr_id,
		    uint8_t data[IB_PC_DATA_SZ]);

#endif
