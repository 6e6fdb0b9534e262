/* Building a CA (cabuild.h): its directory, ports/, and the attribute and
 * counter files of the CA and of each port. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/log.h"
#include "umadfs/ca/attr.h"
#include "umadfs/ca/cabuild.h"
#include "umadfs/ca/counters.h"
#include "umadfs/ca/gids.h"
#include "umadfs/ca/issm.h"
#include "umadfs/engine/ibumad.h"
#include "umadfs/fuse/tree.h"

static int port_build(struct ca *ca, int portnum, const umad_port_t *up,
		      enum attr_source source)
{
	struct ca_port *port = calloc(1, sizeof(*port));
	struct node *ports = tree_child(ca->dir, "ports");
	char name[16];
	int r;

	if (!port)
		return -ENOMEM;
	port->ca = ca;
	port->portnum = portnum;
	port->npkeys = up->pkeys_size;
	port->source = source;
	pthread_rwlock_init(&port->engine_lock, NULL);
	snprintf(port->link_layer, sizeof(port->link_layer), "%s", up->link_layer);
	ca->ports[portnum] = port;

	snprintf(name, sizeof(name), "%d", portnum);
	port->dir = tree_add(ports, name, S_IFDIR | 0555, NULL, port, 0);
	if (!port->dir)
		return -ENOMEM;
	r = attr_add_port_files(port->dir, port);
	if (r == 0)
		r = gids_add_dir(port->dir, port);
	if (r == 0)
		r = issm_add_file(port->dir, port);
	if (r == 0)
		r = counters_add_files(port->dir, port);
	return r;
}

static int build_dirs(struct ca *ca, struct node *root, const umad_ca_t *info,
		      enum attr_source source)
{
	int r;

	ca->dir = tree_add(root, ca->name, S_IFDIR | 0555, NULL, ca, 0);
	if (!ca->dir || !tree_add(ca->dir, "ports", S_IFDIR | 0555, NULL, ca, 0))
		return -ENOMEM;
	r = attr_add_ca_files(ca->dir, ca);
	/* A switch has port 0 only; a CA ports 1..numports. */
	for (int i = 0; r == 0 && i < UMAD_CA_MAX_PORTS; i++)
		if (info->ports[i])
			r = port_build(ca, i, info->ports[i], source);
	return r;
}

int cabuild_add(struct node *root, const char *name, enum attr_source source,
		struct ca **out)
{
	struct ca *ca;
	umad_ca_t info;
	int r = ibumad_get_ca(name, &info);

	*out = NULL;
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
	snprintf(ca->name, sizeof(ca->name), "%s", name);
	r = build_dirs(ca, root, &info, source);
	if (r < 0 && ca->dir)
		tree_unlink(ca->dir);
	if (r < 0) {
		ca_free(ca);
		goto out;
	}
	*out = ca;
out:
	ibumad_release_ca(&info);
	return r;
}

