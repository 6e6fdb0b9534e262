/* The device model (device.h): opening and taking away a CA's port
 * engines, the lock that lets a MAD call and the removal of an engine meet
 * safely, and freeing.  cabuild.c makes a CA's directories and files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/log.h"
#include "umadfs/device/device.h"
#include "umadfs/engine/ibumad.h"
#include "umadfs/engine/query.h"

static bool port_attrs_from_smp(const struct ca_port *port)
{
	switch (port->source) {
	case ATTR_SOURCE_SMP:
		return true;
	case ATTR_SOURCE_SYSFS:
		return false;
	case ATTR_SOURCE_AUTO:
	default:
		/* umad2sim emulates sysfs with a copy written when the
		 * process starts: only the port's SMA knows live values.
		 * RoCE has no QP0, hence no SMA to ask. */
		return ibumad_simulated() && strcmp(port->link_layer, "Ethernet") != 0;
	}
}

static void port_start(struct ca_port *port, engine_transport_fn on_transport)
{
	struct mad_engine *engine = NULL;
	int r = engine_open(&engine, port->ca->name, port->portnum,
			    on_transport, port);

	if (r < 0)
		log_warn("%s port %d: cannot open its umad device (%s); its MAD "
			 "files will fail with EIO", port->ca->name,
			 port->portnum, strerror(-r));
	pthread_rwlock_wrlock(&port->engine_lock);
	port->engine = r < 0 ? NULL : engine;
	port->engine_err = r < 0 ? r : 0;
	pthread_rwlock_unlock(&port->engine_lock);
	port->attrs_from_smp = port_attrs_from_smp(port);
	if (port->attrs_from_smp && r < 0) {
		log_warn("%s port %d: attributes fall back to libibumad",
			 port->ca->name, port->portnum);
		port->attrs_from_smp = false;
	}
}

void ca_start(struct ca *ca, engine_transport_fn on_transport)
{
	for (int p = 0; p < UMAD_CA_MAX_PORTS; p++)
		if (ca->ports[p])
			port_start(ca->ports[p], on_transport);
}

void ca_stop(struct ca *ca)
{
	for (int p = 0; p < UMAD_CA_MAX_PORTS; p++) {
		struct ca_port *port = ca->ports[p];
		struct mad_engine *engine;

		if (!port)
			continue;
		/* No delivery from here on, while files may still cancel
		 * their requests (and free what they were answered into). */
		pthread_rwlock_rdlock(&port->engine_lock);
		engine_stop(port->engine);
		pthread_rwlock_unlock(&port->engine_lock);
		/* Waits for the calls in progress; later ones find no
		 * engine. */
		pthread_rwlock_wrlock(&port->engine_lock);
		engine = port->engine;
		port->engine = NULL;
		port->engine_err = -ENODEV;
		pthread_rwlock_unlock(&port->engine_lock);
		engine_close(engine);
	}
}

void ca_free(struct ca *ca)
{
	for (int p = 0; p < UMAD_CA_MAX_PORTS; p++) {
		if (!ca->ports[p])
			continue;
		pthread_rwlock_destroy(&ca->ports[p]->engine_lock);
		free(ca->ports[p]);
	}
	free(ca);
}

struct mad_engine *ca_port_engine(struct ca_port *port, int *err)
{
	pthread_rwlock_rdlock(&port->engine_lock);
	if (port->engine)
		return port->engine;
	if (err)
		*err = port->engine_err;
	pthread_rwlock_unlock(&port->engine_lock);
	return NULL;
}

void ca_port_engine_done(struct ca_port *port)
{
	pthread_rwlock_unlock(&port->engine_lock);
}

int ca_port_smp_get(struct ca_port *port, unsigned attr_id, unsigned attr_mod,
		    uint8_t data[IB_SMP_DATA_SIZE])
{
	struct mad_engine *engine = ca_port_engine(port, NULL);
	int r;

	if (!engine)
		return -ENODEV;
	r = query_smp_get(engine, attr_id, attr_mod, data);
	ca_port_engine_done(port);
	return r;
}

int ca_port_pma_get(struct ca_port *port, unsigned lid, unsigned attr_id,
		    uint8_t data[IB_PC_DATA_SZ])
{
	struct mad_engine *engine = ca_port_engine(port, NULL);
	int r;

	if (!engine)
		return -ENODEV;
	r = query_pma_get(engine, lid, attr_id, data);
	ca_port_engine_done(port);
	return r;
}
