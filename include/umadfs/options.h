/* The command line: umadfs's own -o options, checked, beside libfuse's. */
#ifndef UMADFS_OPTIONS_H
#define UMADFS_OPTIONS_H

#include <fuse_lowlevel.h>

#include "umadfs/device/device.h"

struct options {
	struct fuse_args args;        /* what goes on to libfuse */
	struct fuse_cmdline_opts cmd; /* -f, -d, -s, the mount point... */
	enum attr_source source;      /* -o attrs= */
	unsigned queue_len;           /* -o queue_len=, 0 if not given */
};

#define OPTIONS_RUN (-1)

/* Parses and checks argv into o (-o mad_group= is applied to access.c
 * here).  Returns OPTIONS_RUN, or the status to exit with: 0 after
 * --help or --version, 2 for a bad option (with a message on stderr).
 * options_free() is due either way. */
int options_parse(int argc, char *argv[], struct options *o);
void options_free(struct options *o);

#endif
