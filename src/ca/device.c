/* CAs and ports: scanning, their directories, their MAD engines. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/channel/agents.h"
#include "umadfs/ca/attr.h"
#include "umadfs/channel/channel.h"
#include "umadfs/ca/counters.h"
#include "umadfs/channel/madfile.h"
#include "umadfs/ca/device.h"
#include "umadfs/engine/ibumad.h"
#include "umadfs/base/log.h"
#include "umadfs/engine/engine.h"
#include "umadfs/rq/rq.h"
#include "umadfs/fuse/tree.h"

#define MAX_CAS UMAD_MAX_DEVICES

static struct ca *cas[MAX_CAS]; /* written by devices_scan only */
static int ncas;

static int port_setup(struct ca *ca, int portnum, const umad_port_t *up,
		      enum attr_source source)
{
	struct ca_port *pd = calloc(1, sizeof(*pd));
	struct node *ports = tree_child(ca->dir, "ports");
	char name[16];
	int r;

	if (!pd)
		return -ENOMEM;
	pd->ca = ca;
	pd->portnum = portnum;
	pd->npkeys = up->pkeys_size;
	ca->ports[portnum] = pd;

	pd->source = source;
	snprintf(pd->link_layer, sizeof(pd->link_layer), "%s", up->link_layer);

	snprintf(name, sizeof(name), "%d", portnum);
	pd->dir = tree_add(ports, name, S_IFDIR | 0555, NULL, pd, 0);
	if (!pd->dir)
		return -ENOMEM;
	r = attr_add_port_files(pd->dir, pd);
	if (r == 0)
		r = counters_add_files(pd->dir, pd);
	if (r < 0)
		return r;
	/* The port's own MAD files are its channel "default". */
	pd->default_ch = channel_new(pd, "default");
	if (!pd->default_ch)
		return -ENOMEM;
	r = madfiles_add(pd->dir, pd->default_ch, 0);
	if (r == 0)
		r = agents_add_register_file(pd->dir, pd->default_ch, 0);
	if (r == 0)
		r = agents_add_dir(pd->dir, pd);
	if (r == 0)
		r = rq_add_dir(pd->dir, pd->ca->name, pd->portnum);
	return r;
}

static int ca_setup(struct node *root, const char name[UMAD_CA_NAME_LEN],
		    enum attr_source source)
{
	struct ca *ca;
	umad_ca_t info;
	int r = ibumad_get_ca(name, &info);

	if (r < 0) {
		log_warn("%s: libibumad cannot read it (%s); skipped", name,
			 strerror(-r));
		return 0;
	}
	ca = calloc(1, sizeof(*ca));
	if (!ca) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(ca->name, name, sizeof(ca->name));
	cas[ncas++] = ca;
	ca->dir = tree_add(root, name, S_IFDIR | 0555, NULL, ca, 0);
	if (!ca->dir || !tree_add(ca->dir, "ports", S_IFDIR | 0555, NULL, ca, 0)) {
		r = -ENOMEM;
		goto out;
	}
	r = attr_add_ca_files(ca->dir, ca);
	/* A switch has port 0 only; a CA ports 1..numports. */
	for (int i = 0; r == 0 && i < UMAD_CA_MAX_PORTS; i++)
		if (info.ports[i])
			r = port_setup(ca, i, info.ports[i], source);
out:
	ibumad_release_ca(&info);
	return r;
}

int devices_scan(struct node *root, enum attr_source source)
{
	char names[MAX_CAS][UMAD_CA_NAME_LEN];
	int n, r;

	r = ibumad_init();
	if (r < 0)
		return r;
	n = ibumad_ca_names(names, MAX_CAS);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		r = ca_setup(root, names[i], source);
		if (r < 0)
			return r;
	}
	return ncas;
}

static void port_transport_changed(void *ctx, int err)
{
	channels_set_transport(ctx, err);
}

static void port_start(struct ca_port *pd)
{
	int r = engine_open(&pd->engine, pd->ca->name, pd->portnum,
			  port_transport_changed, pd);

	if (r < 0) {
		pd->engine = NULL;
		pd->engine_err = r;
		log_warn("%s port %d: cannot open its umad device (%s); its MAD "
			 "files will fail with EIO", pd->ca->name, pd->portnum,
			 strerror(-r));
	}
	switch (pd->source) {
	case ATTR_SOURCE_SMP:
		pd->attrs_from_smp = true;
		break;
	case ATTR_SOURCE_SYSFS:
		pd->attrs_from_smp = false;
		break;
	case ATTR_SOURCE_AUTO:
		/* RoCE has no QP0, hence no SMA to ask. */
		/* umad2sim emulates sysfs with a copy written when the
		 * process starts: only the port's SMA knows live values. */
		pd->attrs_from_smp = ibumad_simulated() &&
				     strcmp(pd->link_layer, "Ethernet") != 0;
		break;
	}
	if (pd->attrs_from_smp && !pd->engine) {
		log_warn("%s port %d: attributes fall back to libibumad",
			 pd->ca->name, pd->portnum);
		pd->attrs_from_smp = false;
	}
}

void devices_start(void)
{
	for (int i = 0; i < ncas; i++)
		for (int p = 0; p < UMAD_CA_MAX_PORTS; p++)
			if (cas[i]->ports[p])
				port_start(cas[i]->ports[p]);
}

int devices_ports(struct ca_port **out, int max)
{
	int n = 0;

	for (int i = 0; i < ncas; i++)
		for (int p = 0; p < UMAD_CA_MAX_PORTS && n < max; p++)
			if (cas[i]->ports[p])
				out[n++] = cas[i]->ports[p];
	return n;
}

void devices_close(void)
{
	for (int i = 0; i < ncas; i++) {
		for (int p = 0; p < UMAD_CA_MAX_PORTS; p++) {
			struct ca_port *pd = cas[i]->ports[p];

			if (!pd)
				continue;
			/* The engine first: no delivery may reach a freed channel. */
			engine_close(pd->engine);
			pd->engine = NULL;
			if (pd->default_ch)
				channel_put(pd->default_ch);
			free(pd);
		}
		free(cas[i]);
	}
	ncas = 0;
}
