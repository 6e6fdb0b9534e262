/* agents/NAME channels and their `register` files. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/number.h"
#include "umadfs/channel/access.h"
#include "umadfs/channel/agents.h"
#include "umadfs/channel/channel.h"
#include "umadfs/channel/madfiles.h"
#include "umadfs/device/device.h"
#include "umadfs/engine/engine.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/mad.h"
#include "umadfs/mad/madtext.h"

#define AGENT_NAME_MAX 63

/* ---- register ---- */

/* val as a number from min to max: 0, or -EINVAL. */
static int number_in_range(const char *val, uint64_t min, uint64_t max,
			   unsigned *out)
{
	uint64_t v;

	if (number_parse(val, strlen(val), &v) < 0 || v < min || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

/* class=: a name (madtext's) or a number from 1 to 0xff. */
static int parse_class(const char *val, unsigned *out)
{
	int c = madtext_class_from_name(val, strlen(val));

	if (c >= 0) {
		*out = (unsigned)c;
		return 0;
	}
	return number_in_range(val, 1, 0xff, out);
}

/* methods=get,set,...: names or numbers of request methods, into bits. */
static int parse_methods(char *val, uint64_t methods[2], char *why, size_t whylen)
{
	char *save = NULL;

	for (char *m = strtok_r(val, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
		int meth = madtext_method_from_name(m, strlen(m));
		unsigned v;

		if (meth < 0) {
			if (number_in_range(m, 0, 0x7f, &v) < 0) {
				snprintf(why, whylen, "unknown method '%s'", m);
				return -EINVAL;
			}
			meth = (int)v;
		}
		if (meth & 0x80) {
			snprintf(why, whylen, "method '%s' is a response: responses "
				 "are matched to requests, not registered", m);
			return -EINVAL;
		}
		methods[meth / 64] |= 1ull << (meth % 64);
	}
	return 0;
}

/* One key=value of a registration line into reg. */
static int parse_key(const char *key, char *val, struct engine_registration *reg,
		     bool *have_class, bool *have_version, char *why, size_t whylen)
{
	unsigned v;

	if (!strcmp(key, "class")) {
		*have_class = parse_class(val, &reg->mgmt_class) == 0;
		if (!*have_class)
			snprintf(why, whylen, "unknown class '%s'", val);
		return *have_class ? 0 : -EINVAL;
	}
	if (!strcmp(key, "version")) {
		*have_version = number_in_range(val, 0, 0xff, &reg->class_version) == 0;
		if (!*have_version)
			snprintf(why, whylen, "bad version '%s'", val);
		return *have_version ? 0 : -EINVAL;
	}
	if (!strcmp(key, "methods"))
		return parse_methods(val, reg->methods, why, whylen);
	if (!strcmp(key, "oui")) {
		if (number_in_range(val, 0, 0xffffff, &v) < 0) {
			snprintf(why, whylen, "bad oui '%s'", val);
			return -EINVAL;
		}
		reg->oui = v;
		return 0;
	}
	if (!strcmp(key, "rmpp")) {
		if (strcmp(val, "0") && strcmp(val, "1")) {
			snprintf(why, whylen, "rmpp= takes 0 or 1");
			return -EINVAL;
		}
		reg->rmpp = val[0] == '1';
		return 0;
	}
	snprintf(why, whylen, "unknown key '%s'", key);
	return -EINVAL;
}

int agents_parse_registration(const char *line, size_t len,
			      struct engine_registration *reg, char *why,
			      size_t whylen)
{
	char buf[512], *save = NULL, *tok;
	bool have_class = false, have_version = false;

	if (len >= sizeof(buf)) {
		snprintf(why, whylen, "line longer than %zu bytes", sizeof(buf) - 1);
		return -EINVAL;
	}
	memcpy(buf, line, len);
	buf[len] = '\0';
	memset(reg, 0, sizeof(*reg));
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		int r;

		if (!eq) {
			snprintf(why, whylen, "'%s' is not key=value", tok);
			return -EINVAL;
		}
		*eq = '\0';
		r = parse_key(tok, eq + 1, reg, &have_class, &have_version, why, whylen);
		if (r < 0)
			return r;
	}
	if (!have_class) {
		snprintf(why, whylen, "class= missing");
		return -EINVAL;
	}
	if (!have_version)
		reg->class_version = reg->mgmt_class == 0x03 || reg->mgmt_class == 0x07 ? 2 : 1;
	return 0;
}

static void register_write(fuse_req_t req, struct node *n, const char *buf,
			   size_t size, off_t off, struct fuse_file_info *fi)
{
	struct channel *ch = n->owner;
	bool privileged = textfile_opener_privileged(fi);
	char why[256];
	size_t start = 0, lineno = 0;
	struct mad_engine *engine = channel_engine(ch, NULL);

	if (!engine) {
		channel_set_error(ch, "register: the port's umad device is not open");
		fuse_reply_err(req, EIO);
		return;
	}
	/* Each line is one registration, made in order; the first failure
	 * stops the write there (earlier lines stay registered). */
	while (start < size) {
		const char *nl = memchr(buf + start, '\n', size - start);
		size_t len = nl ? (size_t)(nl - (buf + start)) : size - start;
		struct engine_registration reg;
		int r;

		lineno++;
		if (!madtext_is_blank(buf + start, len)) {
			r = agents_parse_registration(buf + start, len, &reg, why,
						      sizeof(why));
			/* Answering SMPs is the SMA's: no SMI class for the unprivileged. */
			if (r == 0 && !privileged)
				r = access_check_class(reg.mgmt_class, why, sizeof(why));
			if (r == 0)
				r = engine_register(engine, &ch->unsolicited.sink, &reg, why,
						  sizeof(why));
			if (r < 0) {
				channel_engine_done(ch);
				channel_set_error(ch, "register line %zu: %s", lineno, why);
				if (start)
					fuse_reply_write(req, start);
				else
					fuse_reply_err(req, -r);
				return;
			}
		}
		start += len + (nl ? 1 : 0);
	}
	channel_engine_done(ch);
	fuse_reply_write(req, size);
}

static int register_show(struct node *n, char *buf, size_t cap)
{
	struct channel *ch = n->owner;
	struct engine_registration regs[32];
	int ids[32], count;
	size_t used = 0;
	struct mad_engine *engine = channel_engine(ch, NULL);

	if (!engine)
		return 0;
	count = engine_list_registrations(engine, &ch->unsolicited.sink, regs, ids, 32);
	channel_engine_done(ch);
	for (int i = 0; i < count; i++) {
		int w = snprintf(buf + used, cap - used,
				 "agent=%d class=0x%02x version=%u methods=", ids[i],
				 regs[i].mgmt_class, regs[i].class_version);
		bool first = true;

		if (w < 0 || (size_t)w >= cap - used)
			return -ENOSPC;
		used += (size_t)w;
		for (int m = 0; m < 128; m++) {
			const char *name;

			if (!(regs[i].methods[m / 64] >> (m % 64) & 1))
				continue;
			name = madtext_method_name(m);
			w = name ? snprintf(buf + used, cap - used, "%s%s", first ? "" : ",", name)
				 : snprintf(buf + used, cap - used, "%s0x%02x", first ? "" : ",", m);
			if (w < 0 || (size_t)w >= cap - used)
				return -ENOSPC;
			used += (size_t)w;
			first = false;
		}
		if (regs[i].oui)
			w = snprintf(buf + used, cap - used, " oui=0x%06x rmpp=%d\n",
				     regs[i].oui, regs[i].rmpp);
		else
			w = snprintf(buf + used, cap - used, " rmpp=%d\n", regs[i].rmpp);
		if (w < 0 || (size_t)w >= cap - used)
			return -ENOSPC;
		used += (size_t)w;
	}
	return (int)used;
}

static void register_open(fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	textfile_open_settable(req, n, fi, register_show,
			       access_opener_privileged);
}

static const struct node_ops register_ops = {
	.open = register_open, .read = textfile_read, .write = register_write,
	.release = textfile_release,
};

int agents_add_register_file(struct node *dir, struct channel *ch, uid_t owner)
{
	struct node *n = tree_add(dir, "register", S_IFREG | 0600, &register_ops,
				  ch, 0);

	if (!n)
		return -ENOMEM;
	access_share_file(n, owner);
	return 0;
}

/* ---- agents/ ---- */

static void agents_node_get(struct node *n)
{
	channel_get(n->owner);
}

static void agents_node_put(struct node *n)
{
	channel_put(n->owner);
}

static int agents_mkdir(struct node *dir, const char *name, uid_t creator,
			struct node **out)
{
	struct ca_port *port = dir->owner;
	struct channel *ch;
	struct node *cdir;
	int r = -ENOMEM;

	if (!*name || strlen(name) > AGENT_NAME_MAX || name[0] == '.')
		return -EINVAL;
	ch = channel_new(port, name);
	if (!ch)
		return -ENOMEM;
	tree_wrlock();
	if (tree_child(dir, name)) {
		r = -EEXIST;
		goto err_unlock;
	}
	cdir = tree_add(dir, name, S_IFDIR | 0755, NULL, ch, 0);
	if (!cdir)
		goto err_unlock;
	/* The creator owns it: in the sticky agents/ of a group, other
	 * members cannot rmdir it (the kernel checks). */
	access_share_dir(cdir, creator, false);
	/* From here every node holds a reference on the channel: its memory
	 * lives until the kernel has forgotten the last of them. */
	if (madfiles_add(cdir, ch, creator) < 0 ||
	    agents_add_register_file(cdir, ch, creator) < 0) {
		tree_unlink(cdir); /* nodes without references: freed now */
		goto err_unlock;
	}
	tree_hold_owner(cdir, agents_node_get, agents_node_put);
	tree_unlock();
	channel_put(ch); /* the creator's reference: the nodes hold it now */
	*out = cdir;
	return 0;

err_unlock:
	tree_unlock();
	channel_put(ch);
	return r;
}

static int agents_rmdir(struct node *dir, struct node *child)
{
	struct channel *ch = child->owner;

	int r = channel_wait_unused(ch);

	if (r < 0)
		return r;
	tree_wrlock();
	if (child->unlinked) {
		tree_unlock();
		return -ENOENT;
	}
	tree_unlink(child);
	tree_unlock();
	channel_shut(ch);
	return 0;
}

static const struct dir_ops agents_dir_ops = {
	.mkdir = agents_mkdir, .rmdir = agents_rmdir,
};

int agents_add_dir(struct node *port_dir, struct ca_port *port)
{
	struct node *dir = tree_add(port_dir, "agents", S_IFDIR | 0755, NULL, port, 0);

	if (!dir)
		return -ENOMEM;
	access_share_dir(dir, 0, true);
	dir->dops = &agents_dir_ops;
	return 0;
}
