/* The fabric subsystem's face to the process (fabric.h): its options, and
 * starting and stopping the files and the sweeps. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "umadfs/base/clock.h"
#include "umadfs/base/log.h"
#include "umadfs/base/group.h"
#include "umadfs/base/number.h"
#include "umadfs/device/device.h"
#include "umadfs/fabric/fabric.h"
#include "umadfs/fabric/files/actions.h"
#include "umadfs/fabric/files/expectedfile.h"
#include "umadfs/fabric/files/fabevents.h"
#include "umadfs/fabric/files/fabfiles.h"
#include "umadfs/fabric/files/fabmetrics.h"
#include "umadfs/fabric/files/fabtext.h"
#include "umadfs/fabric/files/mcastfiles.h"
#include "umadfs/fabric/files/partfiles.h"
#include "umadfs/fabric/files/routefiles.h"
#include "umadfs/fabric/problems/expected.h"
#include "umadfs/fabric/problems/problem.h"
#include "umadfs/fabric/problems/problems.h"
#include "umadfs/fabric/snapshot/discover.h"
#include "umadfs/fabric/snapshot/lightsweep.h"
#include "umadfs/fabric/snapshot/pathsl.h"
#include "umadfs/fabric/watch/sweeper.h"
#include "umadfs/fabric/watch/traps.h"

#define INTERVAL_MAX_MS SWEEPER_INTERVAL_MAX_MS
#define PORT_CA_MAX 64

static bool off; /* fabric=off: set once by fabric_parse_options */
static bool routes_off; /* fabric_routes=off: likewise */

struct fabric_opts {
	char *interval, *interval_min, *port, *off, *expected, *thresholds;
	char *routes, *traps, *admin_group, *light, *metrics;
	char *routes_settle, *routes_max_age, *routes_minimal;
};

#define FABRIC_OPT(t, p) { t, offsetof(struct fabric_opts, p), 1 }

static const struct fuse_opt fabric_opts[] = {
	FABRIC_OPT("fabric_interval=%s", interval),
	FABRIC_OPT("fabric_interval_min=%s", interval_min),
	FABRIC_OPT("fabric_port=%s", port),
	FABRIC_OPT("fabric=%s", off),
	FABRIC_OPT("fabric_expected=%s", expected),
	FABRIC_OPT("fabric_thresholds=%s", thresholds),
	FABRIC_OPT("fabric_routes=%s", routes),
	FABRIC_OPT("fabric_routes_settle=%s", routes_settle),
	FABRIC_OPT("fabric_routes_max_age=%s", routes_max_age),
	FABRIC_OPT("fabric_routes_minimal=%s", routes_minimal),
	FABRIC_OPT("fabric_traps=%s", traps),
	FABRIC_OPT("fabric_admin_group=%s", admin_group),
	FABRIC_OPT("fabric_light_sweep=%s", light),
	FABRIC_OPT("fabric_metrics=%s", metrics),
	FUSE_OPT_END
};

/* "CA:N" into ca (PORT_CA_MAX bytes) and *portnum. */
static int parse_port(const char *s, char *ca, int *portnum)
{
	const char *colon = strrchr(s, ':');
	uint64_t n;

	if (!colon || colon == s || colon - s >= PORT_CA_MAX ||
	    number_parse(colon + 1, strlen(colon + 1), &n) < 0 || n > 254)
		return -EINVAL;
	memcpy(ca, s, (size_t)(colon - s));
	ca[colon - s] = '\0';
	*portnum = (int)n;
	return 0;
}

/* An option's milliseconds, 0 to INTERVAL_MAX_MS, into *ms (left as it
 * is when the option is absent). */
static int parse_ms(const char *name, const char *s, uint64_t *ms)
{
	if (s && number_parse_value(s, strlen(s), 0, INTERVAL_MAX_MS, ms) < 0) {
		fprintf(stderr, "umadfs: %s=%s: expected milliseconds from 0 to %u\n",
			name, s, INTERVAL_MAX_MS);
		return -EINVAL;
	}
	return 0;
}

/* An option that is off or on, into *on (left as it is when absent). */
static int parse_on_off(const char *name, const char *s, bool *on)
{
	if (s && strcmp(s, "off") && strcmp(s, "on")) {
		fprintf(stderr, "umadfs: %s=%s: expected off or on\n", name, s);
		return -EINVAL;
	}
	if (s)
		*on = !strcmp(s, "on");
	return 0;
}

/* The sweeps' options: their interval and its floor, the light sweeps'
 * cycle, the port they go out of. */
static int check_sweeps(const struct fabric_opts *o)
{
	char ca[PORT_CA_MAX] = "";
	int portnum = 0;
	uint64_t v = 0, min = SWEEPER_INTERVAL_MIN_MS, light = LIGHTSWEEP_CYCLE_MS;

	if (parse_ms("fabric_interval", o->interval, &v) < 0 ||
	    parse_ms("fabric_interval_min", o->interval_min, &min) < 0 ||
	    parse_ms("fabric_light_sweep", o->light, &light) < 0)
		return -EINVAL;
	if (light && light < LIGHTSWEEP_PERIOD_MS) {
		fprintf(stderr, "umadfs: fabric_light_sweep=%s: below %u ms (a light "
			"sweep runs every %u ms); 0 turns light sweeps off\n", o->light,
			LIGHTSWEEP_PERIOD_MS, LIGHTSWEEP_PERIOD_MS);
		return -EINVAL;
	}
	if (v && v < min) {
		fprintf(stderr, "umadfs: fabric_interval=%s: below the floor of %"
			PRIu64 " ms (fabric_interval_min=); 0 sweeps only when "
			"asked\n", o->interval, min);
		return -EINVAL;
	}
	if ((o->port && parse_port(o->port, ca, &portnum) < 0) ||
	    sweeper_configure((unsigned)v, (unsigned)min, (unsigned)light, ca,
			      portnum) < 0) {
		fprintf(stderr, "umadfs: fabric_port=%s: expected CA:PORT\n", o->port);
		return -EINVAL;
	}
	return 0;
}

/* The forwarding tables' options: whether sweeps read them, how long
 * after a change they are read again, how long one is kept at most,
 * whether the routing engine claims minimal paths. */
static int check_routes(const struct fabric_opts *o)
{
	uint64_t settle = DISCOVER_ROUTES_SETTLE_MS, max_age = DISCOVER_ROUTES_MAX_AGE_MS;
	bool routes = true, minimal = true;

	if (parse_on_off("fabric_routes", o->routes, &routes) < 0 ||
	    parse_on_off("fabric_routes_minimal", o->routes_minimal, &minimal) < 0 ||
	    parse_ms("fabric_routes_settle", o->routes_settle, &settle) < 0 ||
	    parse_ms("fabric_routes_max_age", o->routes_max_age, &max_age) < 0)
		return -EINVAL;
	routes_off = !routes;
	discover_set_routes(routes, (unsigned)settle, (unsigned)max_age);
	problems_routes_minimal(minimal);
	return 0;
}

static int check_options(const struct fabric_opts *o)
{
	bool on = true, traps = true;

	if (parse_on_off("fabric", o->off, &on) < 0)
		return -EINVAL;
	off = !on;
	if (check_routes(o) < 0)
		return -EINVAL;
	if (parse_on_off("fabric_traps", o->traps, &traps) < 0)
		return -EINVAL;
	traps_configure(traps);
	if (o->admin_group) {
		char why[128];
		gid_t gid;

		if (group_parse(o->admin_group, &gid, why, sizeof(why)) < 0) {
			fprintf(stderr, "umadfs: fabric_admin_group=%s: %s\n",
				o->admin_group, why);
			return -EINVAL;
		}
		actions_configure(&gid);
	}
	if (check_sweeps(o) < 0 || problems_configure(o->thresholds) < 0 ||
	    expected_configure(o->expected) < 0 || fabmetrics_configure(o->metrics) < 0)
		return -EINVAL;
	return 0;
}

/* A mount option that is a group of fabric_metrics= on its own: the
 * comma of fabric_metrics=state,errors began another option.  Any other
 * is kept for the options after these. */
static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	if (key != FUSE_OPT_KEY_OPT || !fabmetrics_is_group(arg))
		return 1;
	fprintf(stderr, "umadfs: -o %s: a group of fabric_metrics=?  Join the "
		"groups with + (fabric_metrics=state+%s): a comma begins another "
		"mount option\n", arg, arg);
	return -1;
}

int fabric_parse_options(struct fuse_args *args)
{
	struct fabric_opts o = { 0 };
	int r = -EINVAL;

	if (fuse_opt_parse(args, &o, fabric_opts, opt_proc) == 0)
		r = check_options(&o);
	free(o.interval);
	free(o.interval_min);
	free(o.port);
	free(o.off);
	free(o.expected);
	free(o.thresholds);
	free(o.routes);
	free(o.routes_settle);
	free(o.routes_max_age);
	free(o.routes_minimal);
	free(o.traps);
	free(o.admin_group);
	free(o.light);
	free(o.metrics);
	return r;
}


/* The pairs' SLs of a small fabric whose routing has a credit loop when
 * every route is taken to be on SL 0 (pathsl.h): a loop of SL 0's, or of
 * a routing engine (lash, dfsssp) that puts pairs on other SLs, which
 * the SA alone knows.  prev's when the routing is prev's.  Asked before
 * the judgement, so that none is ever made on SLs it takes for others. */
static void path_sls(const struct fab_snap *old, struct fab_snap *snap)
{
	struct ca_port *port;
	struct mad_engine *e;
	int err;

	if (snap->refreshes || pathsl_carry(old, snap) || !pathsl_small(snap) ||
	    problems_credit_loops(snap) <= 0)
		return;
	port = sweeper_port(snap);
	e = port ? ca_port_engine(port, &err) : NULL;
	if (!e)
		return;
	if (pathsl_ask(snap, e, sweeper_stopping) < 0)
		log_dbg("fabric: the pairs' SLs were not all answered: routes taken on SL 0");
	ca_port_engine_done(port);
}

/* A new snapshot, before it is current: the expectation it may be, and
 * what is wrong. */
static void on_judge(const struct fab_snap *old, struct fab_snap *snap)
{
	int64_t t0;
	struct fab_snap *expected;

	path_sls(old, snap);
	t0 = clock_now_us();
	expected_offer(snap);
	expected = expected_get();
	problems_judge(old, snap, expected);
	fabsnap_put(expected);
	snap->problems_us = (unsigned)(clock_now_us() - t0);
	/* A sweep's texts made before it is current, those the snapshot
	 * before had read: its readers never wait for them (a refresh's
	 * after, not to hold back its events). */
	if (!snap->refreshes)
		fabtext_make_ahead(snap, old);
}

/* A new snapshot is current: events from the change, then the tree. */
static void on_swap(struct fab_snap *old, struct fab_snap *snap)
{
	fabevents_diff(old, snap);
	fabfiles_update(snap);
	partfiles_update(snap);
	mcastfiles_update(snap);
}

/* The writers waiting for it answered: metrics.prom's index made ahead
 * when the snapshot before was read (a regular scrape finds it made), and
 * a refresh's texts. */
static void on_settled(struct fab_snap *old, struct fab_snap *snap)
{
	if (snap->refreshes)
		fabtext_make_ahead(snap, old);
	if (old)
		fabmetrics_make_ahead(snap, old);
}

static const struct sweeper_hooks hooks = {
	.judge = on_judge, .swap = on_swap, .settled = on_settled,
};

/* A line from the traps thread into fabric/events. */
static void note_line(const char *line)
{
	fabevents_note("%s", line);
}

int fabric_add_dir(struct node *root, const gid_t *group, sweeper_ports_fn ports)
{
	struct node *dir;
	int r;

	if (off)
		return 0;
	r = fabfiles_add(root, group, &dir);
	if (r == 0)
		r = fabevents_add(dir);
	if (r == 0)
		r = expectedfile_add(dir, group);
	if (r == 0)
		r = routefiles_add(dir, !routes_off);
	if (r == 0)
		r = partfiles_add(dir);
	if (r == 0)
		r = mcastfiles_add(dir);
	if (r == 0)
		r = sweeper_start(&hooks, ports);
	if (r == 0)
		r = traps_start(note_line);
	return r;
}

bool fabric_admin_group(gid_t *out)
{
	return actions_group(out);
}

void fabric_note(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fabevents_note("%s", line);
}

void fabric_shutdown(void)
{
	traps_shutdown();
	sweeper_shutdown();
}

void fabric_stop(void)
{
	traps_stop();
	sweeper_stop();
	fabfiles_close();
	fabevents_close();
	expectedfile_close();
	expected_close();
	problems_forget();
}
