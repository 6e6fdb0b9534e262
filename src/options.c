/* The command line (options.h): umadfs's -o options, how mount(8)'s
 * "SOURCE MOUNTPOINT" form is read, the help text, and the checks that end
 * with exit status 2. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "umadfs/base/number.h"
#include "umadfs/channel/access.h"
#include "umadfs/channel/channel.h"
#include "umadfs/fabric/fabric.h"
#include "umadfs/options.h"

/* The strings fuse_opt_parse() fills in. */
struct raw_options {
	char *first_arg;    /* the first non-option: source or mount point */
	char *attrs;        /* attrs=auto|sysfs|smp */
	char *queue_len;    /* queue_len=N: items per channel queue */
	char *mad_group;    /* mad_group=GROUP: who else may use the MAD files */
	int mad_group_smi;  /* and send SMPs and Sets too */
	bool allow_other;   /* seen, and passed on to libfuse */
};

enum { KEY_ALLOW_OTHER };

#define RAW_OPT(t, p) { t, offsetof(struct raw_options, p), 1 }

static const struct fuse_opt raw_opts[] = {
	RAW_OPT("attrs=%s", attrs),
	RAW_OPT("queue_len=%s", queue_len),
	RAW_OPT("mad_group=%s", mad_group),
	RAW_OPT("mad_group_smi", mad_group_smi),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_END
};

#define QUEUE_LEN_MAX 1000000

static bool has_nonopt(const struct fuse_args *args)
{
	for (int i = 1; i < args->argc; i++) {
		if (args->argv[i][0] != '-')
			return true;
		if (!strcmp(args->argv[i], "-o"))
			i++; /* its value */
	}
	return false;
}

/* mount(8) and fstab run "umadfs SOURCE MOUNTPOINT -o ...": the first of
 * two non-options is the source (any word; "umadfs" by convention) and is
 * put aside; a lone one is the mount point. */
static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct raw_options *raw = data;

	if (key == KEY_ALLOW_OTHER) {
		raw->allow_other = true;
		return 1;
	}
	if (key != FUSE_OPT_KEY_NONOPT || raw->first_arg)
		return 1;
	raw->first_arg = strdup(arg);
	return raw->first_arg ? 0 : -1;
}

/* The fabric view's options, the longest part of the help. */
static const char fabric_usage[] =
	"    -o fabric_interval=MS  sweep the whole fabric (fabric/) every\n"
	"                           MS ms; 0 (default): only when asked\n"
	"    -o fabric_interval_min=MS\n"
	"                           the least period but 0 that\n"
	"                           fabric_interval= and fabric/interval_ms\n"
	"                           take (default 1000)\n"
	"    -o fabric_port=CA:N    sweep out of this port (default: the\n"
	"                           first ACTIVE one)\n"
	"    -o fabric_expected=PATH\n"
	"                           the expected topology (fabric/expected):\n"
	"                           loaded at mount, each write saved there\n"
	"    -o fabric_routes=off   no forwarding tables (routes/, lft)\n"
	"    -o fabric_routes_settle=MS\n"
	"                           after a change that makes an SM\n"
	"                           reroute, sweeps read every table until\n"
	"                           one starts MS ms after it (default\n"
	"                           120000)\n"
	"    -o fabric_routes_max_age=MS\n"
	"                           a table is read again at most MS ms\n"
	"                           after it was read (default 600000; 0:\n"
	"                           by every sweep)\n"
	"    -o fabric_routes_minimal=off\n"
	"                           the routing engine does not claim\n"
	"                           minimal paths: no route_not_minimal\n"
	"    -o fabric_traps=off    no subscription to the SM's traps (64,\n"
	"                           65, 128, 144) and no refreshes from them\n"
	"    -o fabric_light_sweep=MS\n"
	"                           every port asked again within MS ms\n"
	"                           between sweeps (default 8000; 0: off)\n"
	"    -o fabric_metrics=GROUP+...\n"
	"                           the families of fabric/metrics.prom:\n"
	"                           sweep, problems, nodes, state, links,\n"
	"                           routes, routing, errors, xmit_wait, data,\n"
	"                           all (default), joined by +\n"
	"    -o fabric_admin_group=GROUP\n"
	"                           the group may write fabric/'s admin and\n"
	"                           counters/reset files and the CAs'\n"
	"                           counters/reset (root only otherwise)\n"
	"    -o fabric=off          no fabric/ directory, no sweeps\n\n";

static void usage(const char *prog)
{
	printf("usage: %s [options] [SOURCE] MOUNTPOINT\n\n"
	       "Presents the host's InfiniBand CAs and ports as files.\n\n"
	       "umadfs options:\n"
	       "    -o attrs=auto|sysfs|smp  where port attributes come from:\n"
	       "                           sysfs: libibumad (the kernel's sysfs);\n"
	       "                           smp: live PortInfo from the port's SMA;\n"
	       "                           auto (default): smp under the ibsim\n"
	       "                           simulator (umad2sim), sysfs otherwise\n"
	       "    -o queue_len=N         received MADs a channel queues before it\n"
	       "                           drops (and counts) the newest: 1 to\n"
	       "                           %u (default %u)\n"
	       "    -o mad_group=GROUP     the group (name or GID) may use the MAD\n"
	       "                           files and make channels in agents/\n"
	       "                           (modes 0660, 0220, 0440, 1770); needs\n"
	       "                           allow_other.  SMPs (classes 0x01, 0x81)\n"
	       "                           and Set/Delete methods stay root's\n"
	       "    -o mad_group_smi       the group may send those too\n"
	       "%s"
	       "General options:\n"
	       "    -h   --help            print help\n"
	       "    -V   --version         print version\n"
	       "    -f                     stay in the foreground (needed under umad2sim)\n"
	       "    -d                     debug output (implies -f)\n"
	       "    -s                     single-threaded\n"
	       "    -o OPT[,OPT...]        mount options (see below)\n\n"
	       "See umadfs(8) for the tree, the files and their formats.\n\n",
	       prog, QUEUE_LEN_MAX, CHANNEL_QUEUE_DEFAULT, fabric_usage);
}

static int parse_attr_source(const char *s, enum attr_source *out)
{
	if (!s || !strcmp(s, "auto"))
		*out = ATTR_SOURCE_AUTO;
	else if (!strcmp(s, "sysfs"))
		*out = ATTR_SOURCE_SYSFS;
	else if (!strcmp(s, "smp"))
		*out = ATTR_SOURCE_SMP;
	else
		return -EINVAL;
	return 0;
}

static int check_mad_group(const struct raw_options *raw)
{
	char why[128];
	gid_t admin;

	if (fabric_admin_group(&admin) && !raw->allow_other) {
		fprintf(stderr, "umadfs: fabric_admin_group= needs allow_other: "
			"without it no other user reaches the mount\n");
		return -EINVAL;
	}

	if (raw->mad_group_smi && !raw->mad_group) {
		fprintf(stderr, "umadfs: mad_group_smi needs mad_group=GROUP\n");
		return -EINVAL;
	}
	if (!raw->mad_group)
		return 0;
	/* Without allow_other the kernel lets nobody else in at all. */
	if (!raw->allow_other) {
		fprintf(stderr, "umadfs: mad_group=%s needs allow_other: without "
			"it no other user reaches the mount\n", raw->mad_group);
		return -EINVAL;
	}
	if (access_set_group(raw->mad_group, raw->mad_group_smi, why,
			     sizeof(why)) < 0) {
		fprintf(stderr, "umadfs: mad_group=%s: %s\n", raw->mad_group, why);
		return -EINVAL;
	}
	return 0;
}

/* umadfs's own options, from strings to o: 0 or -EINVAL (said on stderr). */
static int check_raw(const struct raw_options *raw, struct options *o)
{
	uint64_t v;

	if (!o->cmd.mountpoint) {
		fprintf(stderr, "umadfs: no mount point given (see umadfs --help)\n");
		return -EINVAL;
	}
	if (parse_attr_source(raw->attrs, &o->source) < 0) {
		fprintf(stderr, "umadfs: attrs=%s: expected auto, sysfs or smp\n",
			raw->attrs);
		return -EINVAL;
	}
	if (raw->queue_len) {
		if (number_parse_value(raw->queue_len, strlen(raw->queue_len), 1,
				       QUEUE_LEN_MAX, &v) < 0) {
			fprintf(stderr, "umadfs: queue_len=%s: expected a number "
				"from 1 to %u\n", raw->queue_len, QUEUE_LEN_MAX);
			return -EINVAL;
		}
		o->queue_len = (unsigned)v;
	}
	return check_mad_group(raw);
}

static void raw_free(struct raw_options *raw)
{
	free(raw->attrs);
	free(raw->queue_len);
	free(raw->mad_group);
	free(raw->first_arg);
}

int options_parse(int argc, char *argv[], struct options *o)
{
	struct raw_options raw = { 0 };
	int ret = 2;

	memset(o, 0, sizeof(*o));
	o->args = (struct fuse_args)FUSE_ARGS_INIT(argc, argv);
	if (fabric_parse_options(&o->args) < 0 ||
	    fuse_opt_parse(&o->args, &raw, raw_opts, opt_proc) != 0)
		goto out;
	if (raw.first_arg && !has_nonopt(&o->args) &&
	    fuse_opt_add_arg(&o->args, raw.first_arg) != 0)
		goto out;
	if (fuse_parse_cmdline(&o->args, &o->cmd) != 0)
		goto out;
	if (o->cmd.show_help || o->cmd.show_version) {
		if (o->cmd.show_help) {
			usage(argv[0]);
			fuse_cmdline_help();
			fuse_lowlevel_help();
		} else {
			printf("umadfs version %s\n", UMADFS_VERSION);
			fuse_lowlevel_version();
		}
		ret = 0;
		goto out;
	}
	if (check_raw(&raw, o) == 0)
		ret = OPTIONS_RUN;
out:
	raw_free(&raw);
	return ret;
}

void options_free(struct options *o)
{
	free(o->cmd.mountpoint);
	o->cmd.mountpoint = NULL;
	fuse_opt_free_args(&o->args);
}
