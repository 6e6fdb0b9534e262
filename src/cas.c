/* The CAs of the mount (cas.h): the assembly of a CA from the device model
 * and the features, and what a CA's removal or arrival does to the tree.
 * Runs on the main thread at start and on the hotplug thread after. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <fuse_lowlevel.h>

#include "umadfs/base/log.h"
#include "umadfs/ca/cabuild.h"
#include "umadfs/ca/issm.h"
#include "umadfs/cas.h"
#include "umadfs/channel/agents.h"
#include "umadfs/channel/channel.h"
#include "umadfs/channel/madfiles.h"
#include "umadfs/engine/ibumad.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/hotplug.h"
#include "umadfs/rq/rq.h"

struct ca_entry {
	struct ca *ca;
	struct channel *default_ch[UMAD_CA_MAX_PORTS]; /* the port's own files */
	struct ca_entry *next;
};

/* cas_lock guards both lists.  A removed CA stays on `removed` until exit:
 * the kernel may still hold nodes of its tree, and open files its
 * channels, which point at it (its engines are closed at once, and what
 * its channels had queued dropped, so only the small structs stay). */
static pthread_mutex_t cas_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ca_entry *live, *removed;
static struct node *cas_root;
static enum attr_source cas_source;
static struct fuse_session *cas_session;

/* The port's own MAD files are its channel "default"; agents/ and rq/
 * beside them.  Tree write lock held. */
static int port_add_features(struct ca_port *port, struct channel **out)
{
	struct channel *ch = channel_new(port, "default");
	int r;

	*out = ch;
	if (!ch)
		return -ENOMEM;
	r = madfiles_add(port->dir, ch, 0);
	if (r == 0)
		r = agents_add_register_file(port->dir, ch, 0);
	if (r == 0)
		r = agents_add_dir(port->dir, port);
	if (r == 0)
		r = rq_add_dir(port->dir, port->ca->name, port->portnum);
	return r;
}

static void entry_free(struct ca_entry *e)
{
	for (int p = 0; p < UMAD_CA_MAX_PORTS; p++)
		if (e->default_ch[p])
			channel_put(e->default_ch[p]);
	for (int p = 0; e->ca && p < UMAD_CA_MAX_PORTS; p++)
		if (e->ca->ports[p])
			issm_port_free(e->ca->ports[p]);
	if (e->ca)
		ca_free(e->ca);
	free(e);
}

/* A CA with its features, or NULL (skipped, or -errno in *err). */
static struct ca_entry *entry_build(const char *name, int *err)
{
	struct ca_entry *e = calloc(1, sizeof(*e));
	int r = -ENOMEM;

	if (!e)
		goto err;
	tree_wrlock();
	r = cabuild_add(cas_root, name, cas_source, &e->ca);
	for (int p = 0; r == 0 && e->ca && p < UMAD_CA_MAX_PORTS; p++)
		if (e->ca->ports[p])
			r = port_add_features(e->ca->ports[p], &e->default_ch[p]);
	if (r < 0 && e->ca)
		tree_unlink(e->ca->dir);
	tree_unlock();
	if (r == 0 && e->ca)
		return e;
	entry_free(e);
err:
	*err = r;
	return NULL;
}

static void transport_changed(void *ctx, int err)
{
	struct ca_port *port = ctx;

	channel_port_set_transport(port, err);
	/* A umad fd that fails may mean the device went: have the kernel's
	 * view checked now rather than at the next uevent. */
	if (err)
		hotplug_kick(port->ca->name);
}

int cas_build_all(struct node *root, enum attr_source source)
{
	char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
	int n, r, built = 0;

	cas_root = root;
	cas_source = source;
	r = ibumad_init();
	if (r < 0)
		return r;
	n = ibumad_ca_names(names, UMAD_MAX_DEVICES);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct ca_entry *e = entry_build(names[i], &r);

		if (!e && r < 0)
			return r;
		if (e) {
			e->next = live;
			live = e;
			built++;
		}
	}
	return built;
}

/* Its CA is gone: the directory leaves the tree (and the kernel's cache),
 * every channel and queue of its ports fails with EIO, the engines close. */
static void entry_remove(struct ca_entry *e)
{
	struct ca *ca = e->ca;

	log_info("%s: removed by the kernel: its files fail with EIO", ca->name);
	tree_wrlock();
	tree_unlink(ca->dir);
	tree_unlock();
	if (cas_session)
		fuse_lowlevel_notify_inval_entry(cas_session, FUSE_ROOT_ID,
						 ca->name, strlen(ca->name));
	for (int p = 0; p < UMAD_CA_MAX_PORTS; p++) {
		if (!ca->ports[p])
			continue;
		channel_port_gone(ca->ports[p]);
		rq_port_gone(ca->ports[p]->dir);
		issm_port_gone(ca->ports[p]);
	}
	ca_stop(ca);
}

static void remove_by_name(const char *name)
{
	struct ca_entry **pp, *e = NULL;

	pthread_mutex_lock(&cas_lock);
	for (pp = &live; *pp; pp = &(*pp)->next) {
		if (!strcmp((*pp)->ca->name, name)) {
			e = *pp;
			*pp = e->next;
			break;
		}
	}
	pthread_mutex_unlock(&cas_lock);
	if (!e)
		return;
	entry_remove(e);
	pthread_mutex_lock(&cas_lock);
	e->next = removed;
	removed = e;
	pthread_mutex_unlock(&cas_lock);
}

static void add_by_name(const char *name)
{
	struct ca_entry *e;
	int r = 0;

	e = entry_build(name, &r);
	if (!e) {
		if (r < 0)
			log_err("%s: cannot add it: %s", name, strerror(-r));
		return;
	}
	ca_start(e->ca, transport_changed);
	pthread_mutex_lock(&cas_lock);
	e->next = live;
	live = e;
	pthread_mutex_unlock(&cas_lock);
	log_info("%s: added", name);
}

/* The hotplug thread's report: removals first, then arrivals (a CA
 * registered anew under its old name is in both). */
static void on_hotplug(void *ctx, const struct hotplug_change *change)
{
	for (int i = 0; i < change->removed.n; i++)
		remove_by_name(change->removed.ca[i].name);
	for (int i = 0; i < change->added.n; i++)
		add_by_name(change->added.ca[i].name);
}

void cas_start(struct fuse_session *se)
{
	int r;

	cas_session = se;
	pthread_mutex_lock(&cas_lock);
	for (struct ca_entry *e = live; e; e = e->next)
		ca_start(e->ca, transport_changed);
	pthread_mutex_unlock(&cas_lock);
	r = hotplug_start(on_hotplug, NULL);
	if (r < 0)
		log_warn("not following CAs added or removed later: %s",
			 strerror(-r));
}

int cas_ports(struct ca_port **out, int max)
{
	int n = 0;

	pthread_mutex_lock(&cas_lock);
	for (struct ca_entry *e = live; e; e = e->next)
		for (int p = 0; p < UMAD_CA_MAX_PORTS && n < max; p++)
			if (e->ca->ports[p])
				out[n++] = e->ca->ports[p];
	pthread_mutex_unlock(&cas_lock);
	return n;
}

void cas_fail_waits(void)
{
	pthread_mutex_lock(&cas_lock);
	for (struct ca_entry *e = live; e; e = e->next)
		for (int p = 0; p < UMAD_CA_MAX_PORTS; p++)
			if (e->ca->ports[p])
				issm_port_gone(e->ca->ports[p]);
	pthread_mutex_unlock(&cas_lock);
}

void cas_stop_hotplug(void)
{
	hotplug_stop();
}

static void free_list(struct ca_entry *e)
{
	while (e) {
		struct ca_entry *next = e->next;

		ca_stop(e->ca);
		entry_free(e);
		e = next;
	}
}

void cas_free_all(void)
{
	/* The engines first: no delivery may reach a freed channel. */
	free_list(live);
	free_list(removed);
	live = removed = NULL;
}
