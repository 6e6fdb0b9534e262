/* The FUSE low-level operations (fs.h): lookup, attributes and directories
 * from the node table; file operations handed to each node's ops. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "umadfs/fuse/fs.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"

/* The CA tree is fixed while mounted: names may be cached.  So may a
 * directory's attributes: with default_permissions the kernel checks every
 * directory of a path, and an expired one costs a GETATTR each (8 for a
 * fabric counter, where the file itself costs 1).  A file's may not: the
 * size of a live value. */
#define ENTRY_TIMEOUT 1.0
#define DIR_ATTR_TIMEOUT 1.0

static double attr_timeout(const struct stat *st)
{
	return S_ISDIR(st->st_mode) ? DIR_ATTR_TIMEOUT : 0.0;
}

static time_t mount_time;

static void fill_stat(struct node *n, struct stat *st, bool with_size)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_mode = n->mode;
	st->st_uid = n->uid;
	st->st_gid = n->gid;
	st->st_nlink = 1;
	if (S_ISDIR(n->mode)) {
		st->st_nlink = 2;
		for (struct node *c = n->children; c; c = c->next_sibling)
			if (S_ISDIR(c->mode))
				st->st_nlink++;
	}
	st->st_blksize = 4096;
	st->st_atime = st->st_mtime = st->st_ctime = mount_time;
	if (n->ops && n->ops->mtime)
		st->st_atime = st->st_mtime = st->st_ctime = n->ops->mtime(n);
	if (n->link)
		st->st_size = (off_t)strlen(n->link);
	if (with_size && n->ops && n->ops->size)
		st->st_size = n->ops->size(n);
	else if (with_size && n->ops && n->ops->show)
		st->st_size = textfile_size(n, n->ops->show);
}

/* n's entry for the kernel (lookup, readdirplus), its timeouts. */
static void fill_entry(struct node *n, struct fuse_entry_param *e,
		       bool with_size)
{
	memset(e, 0, sizeof(*e));
	fill_stat(n, &e->attr, with_size);
	e->ino = n->ino;
	e->attr_timeout = attr_timeout(&e->attr);
	e->entry_timeout = n->transient ? 0 : ENTRY_TIMEOUT;
}

/* Replies with n's entry and counts the kernel's new reference.  Called
 * with the tree read lock held; releases it. */
static void reply_entry(fuse_req_t req, struct node *n)
{
	struct fuse_entry_param e;

	fill_entry(n, &e, true);
	tree_ref(n);
	tree_unlock();
	if (fuse_reply_entry(req, &e))
		tree_forget(e.ino, 1); /* the kernel never got it */
}

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	mount_time = time(NULL);
	/* A symlink's target never changes (a new one is a new node): the
	 * kernel may keep it, as it keeps those of class/infiniband/ that
	 * every path of a node_exporter scrape goes through. */
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
}

/* The node of ino with the tree read lock held, a lazy directory's
 * children made first. */
static struct node *get_populated(fuse_ino_t ino)
{
	struct node *n;

	tree_rdlock();
	n = tree_get(ino);
	if (!n || !n->lazy)
		return n;
	tree_unlock();
	tree_wrlock();
	n = tree_get(ino);
	if (n && n->lazy) {
		/* On failure the directory stays as it is, and lazy. */
		if (n->dops->populate(n) == 0)
			n->lazy = false;
	}
	tree_unlock();
	tree_rdlock();
	return tree_get(ino);
}

/* A child that the directory makes per lookup (dir_ops.lookup), called
 * with the read lock held, which it releases: 0 with *out and the read
 * lock held again, or -errno without it. */
static int lookup_made(fuse_ino_t parent, const char *name, struct node **out)
{
	struct node *dir;
	int r;

	tree_unlock();
	tree_wrlock();
	dir = tree_get(parent);
	r = dir ? dir->dops->lookup(dir, name, out) : -ENOENT;
	tree_unlock();
	if (r == 0)
		tree_rdlock(); /* *out has no other user: nobody knows its ino */
	return r;
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct node *dir, *n;

	dir = get_populated(parent);
	if (!dir || !S_ISDIR(dir->mode)) {
		tree_unlock();
		fuse_reply_err(req, dir ? ENOTDIR : ENOENT);
		return;
	}
	n = tree_child(dir, name);
	if (!n && dir->dops && dir->dops->lookup) {
		int r = lookup_made(parent, name, &n);

		if (r < 0) {
			fuse_reply_err(req, -r);
			return;
		}
	}
	if (!n) {
		tree_unlock();
		fuse_reply_err(req, ENOENT);
		return;
	}
	reply_entry(req, n);
}

static void fs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	tree_forget(ino, nlookup);
	fuse_reply_none(req);
}

static void fs_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	for (size_t i = 0; i < count; i++)
		tree_forget(forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

/* Fills st for ino; false with ENOENT sent if there is no such node. */
static bool stat_of(fuse_req_t req, fuse_ino_t ino, struct stat *st)
{
	struct node *n;

	tree_rdlock();
	n = tree_get(ino);
	if (n)
		fill_stat(n, st, true);
	tree_unlock();
	if (!n)
		fuse_reply_err(req, ENOENT);
	return n != NULL;
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	if (!stat_of(req, ino, &st))
		return;
	fuse_reply_attr(req, &st, attr_timeout(&st));
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct stat st;

	if (!stat_of(req, ino, &st))
		return;
	/* Truncating a writable file (truncate -s 0; an O_TRUNC open comes
	 * with the open, FUSE_CAP_ATOMIC_O_TRUNC) has nothing to cut: it is
	 * accepted and changes nothing, as an open that writes nothing.
	 * Nothing else about a node can be changed. */
	if (to_set & ~(FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_ATIME |
		       FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
		       FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_CTIME)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if ((to_set & FUSE_SET_ATTR_SIZE) && !(st.st_mode & 0222)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	fuse_reply_attr(req, &st, attr_timeout(&st));
}

/* The name and stat of readdir's entry i: ".", "..", then the children in
 * order (*c walks them, i rising by one).  NULL after the last. */
static const char *dir_entry(struct node *dir, off_t i, struct node **c,
			     struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFDIR;
	if (i == 0) {
		st->st_ino = dir->ino;
		return ".";
	}
	if (i == 1) {
		st->st_ino = dir->parent ? dir->parent->ino : dir->ino;
		*c = dir->children;
		return "..";
	}
	if (i > 2)
		*c = (*c)->next_sibling;
	if (!*c)
		return NULL;
	st->st_ino = (*c)->ino;
	st->st_mode = (*c)->mode;
	return (*c)->name;
}

/* An entry of readdirplus is at least a fuse_entry_out (128 bytes) and a
 * dirent: a bound on the entries of a reply of size bytes. */
#define MAX_ENTRIES_PLUS(size) ((size) / 128 + 1)

/* Adds readdirplus's entry for name (a child c, or "." and ".." without
 * one): its size in buf, more than cap if it did not fit.  A child's
 * entry is a lookup the kernel will forget: counted, and its ino kept in
 * *refs, once it fits. */
static size_t add_entry_plus(fuse_req_t req, char *buf, size_t cap,
			     const char *name, struct node *c,
			     const struct stat *st, off_t next, fuse_ino_t **refs)
{
	struct fuse_entry_param e;
	size_t need;

	/* No size: a file's attributes expire at once anyway, and its
	 * size would cost a show() per entry. */
	if (c) {
		fill_entry(c, &e, false);
	} else {
		memset(&e, 0, sizeof(e));
		e.attr = *st;
	}
	need = fuse_add_direntry_plus(req, buf, cap, name, &e, next);
	if (c && need <= cap) {
		tree_ref(c);
		*(*refs)++ = c->ino;
	}
	return need;
}

/* Entries of dir from off into buf (of size bytes): the bytes used.  With
 * refs (readdirplus), the children's inos go there, counted as lookups. */
static size_t fill_entries(fuse_req_t req, struct node *dir, char *buf,
			   size_t size, off_t off, fuse_ino_t **refs)
{
	struct node *c = NULL;
	const char *name;
	size_t used = 0;
	struct stat st;

	/* Offsets: 1 after ".", 2 after "..", then one per child in order. */
	for (off_t i = 0; (name = dir_entry(dir, i, &c, &st)); i++) {
		size_t need;

		if (i < off)
			continue;
		need = refs ? add_entry_plus(req, buf + used, size - used, name,
					     i >= 2 ? c : NULL, &st, i + 1, refs) :
			fuse_add_direntry(req, buf + used, size - used, name, &st,
					  i + 1);
		if (need > size - used)
			break;
		used += need;
	}
	return used;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       bool plus)
{
	fuse_ino_t *refs = NULL, *end = NULL;
	char *buf = malloc(size);
	struct node *dir;
	size_t used;

	if (plus)
		end = refs = malloc(MAX_ENTRIES_PLUS(size) * sizeof(*refs));
	if (!buf || (plus && !refs)) {
		fuse_reply_err(req, ENOMEM);
		goto out;
	}
	dir = get_populated(ino);
	if (!dir || !S_ISDIR(dir->mode)) {
		tree_unlock();
		fuse_reply_err(req, dir ? ENOTDIR : ENOENT);
		goto out;
	}
	used = fill_entries(req, dir, buf, size, off, plus ? &end : NULL);
	tree_unlock();
	if (fuse_reply_buf(req, buf, used)) /* the kernel got none of them */
		for (fuse_ino_t *r = refs; r && r < end; r++)
			tree_forget(*r, 1);
out:
	free(refs);
	free(buf);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, false);
}

static void fs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, true);
}

/* The node of ino, or NULL with ENOENT sent. */
static struct node *node_of(fuse_req_t req, fuse_ino_t ino)
{
	struct node *n;

	tree_rdlock();
	n = tree_get(ino);
	tree_unlock();
	if (!n)
		fuse_reply_err(req, ENOENT);
	return n;
}

/* The node behind an open file, or a reply already sent. */
static struct node *file_node(fuse_req_t req, fuse_ino_t ino)
{
	struct node *n = node_of(req, ino);

	if (n && !n->ops) {
		fuse_reply_err(req, EISDIR);
		return NULL;
	}
	return n;
}

/* The mode bits say what a file is for, root's opens included (root
 * passes the kernel's checks): one without a read bit is not opened for
 * reading (send, counters/reset), one without a write bit not for writing
 * (attributes, recv), as sysfs refuses a write-only attribute's reader. */
static bool open_allowed(const struct node *n, int flags)
{
	int acc = flags & O_ACCMODE;

	if (acc != O_WRONLY && !(n->mode & 0444))
		return false;
	return acc == O_RDONLY || (n->mode & 0222);
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = file_node(req, ino);

	if (!n)
		return;
	if (!open_allowed(n, fi->flags)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	fi->noflush = !n->ops->flush;
	if (n->ops->open)
		n->ops->open(req, n, fi);
	else if (n->ops->show)
		textfile_open(req, n, fi, n->ops->show);
	else
		fuse_reply_err(req, EACCES);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct node *n = file_node(req, ino);

	if (!n)
		return;
	if (n->ops->read)
		n->ops->read(req, n, size, off, fi);
	else if (n->ops->show)
		textfile_read(req, n, size, off, fi);
	else
		fuse_reply_err(req, EBADF);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct node *n = file_node(req, ino);

	if (!n)
		return;
	if (!n->ops->write) {
		fuse_reply_err(req, EBADF);
		return;
	}
	n->ops->write(req, n, buf, size, off, fi);
}

static void fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = file_node(req, ino);

	if (!n)
		return;
	if (n->ops->flush)
		n->ops->flush(req, n, fi);
	else
		fuse_reply_err(req, 0);
}

static void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct node *n = file_node(req, ino);

	if (!n)
		return;
	if (n->ops->release)
		n->ops->release(req, n, fi);
	else if (n->ops->show)
		textfile_release(req, n, fi);
	else
		fuse_reply_err(req, 0);
}

static void fs_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct node *n = file_node(req, ino);

	if (!n) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		return;
	}
	if (!n->ops->poll) {
		/* Plain files are always ready, as on any filesystem. */
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM);
		return;
	}
	n->ops->poll(req, n, fi, ph);
}

static void fs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct node *n;
	char *link = NULL;

	tree_rdlock();
	n = tree_get(ino);
	if (n && n->link)
		link = strdup(n->link);
	tree_unlock();
	if (!n || !S_ISLNK(n->mode)) {
		fuse_reply_err(req, n ? EINVAL : ENOENT);
		return;
	}
	if (!link) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fuse_reply_readlink(req, link);
	free(link);
}

/* Nothing can be created, removed or renamed in the CA tree itself. */
static void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	fuse_reply_err(req, EACCES);
}

static void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	fuse_reply_err(req, EACCES);
}

static void fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EACCES);
}

/* The directory behind parent if it takes mkdir/rmdir, or a reply sent. */
static struct node *mkdir_dir(fuse_req_t req, fuse_ino_t parent)
{
	struct node *dir = node_of(req, parent);

	if (dir && (!dir->dops || !dir->dops->mkdir)) {
		fuse_reply_err(req, EACCES);
		return NULL;
	}
	return dir;
}

static void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	struct node *dir = mkdir_dir(req, parent), *n;
	int r;

	if (!dir)
		return;
	if (!tree_user_name_ok(name)) {
		fuse_reply_err(req, EINVAL); /* docs/files.md, "Channel names" */
		return;
	}
	r = dir->dops->mkdir(dir, name, fuse_req_ctx(req)->uid, &n);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	tree_rdlock();
	reply_entry(req, n);
}

static void fs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct node *dir = mkdir_dir(req, parent), *n;

	if (!dir)
		return;
	tree_rdlock();
	n = tree_child(dir, name);
	tree_unlock();
	if (!n) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (!S_ISDIR(n->mode)) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	fuse_reply_err(req, -dir->dops->rmdir(dir, n));
}

static void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	fuse_reply_err(req, EACCES);
}

static void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	fuse_reply_err(req, EACCES);
}

static void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	fuse_reply_err(req, EACCES);
}

const struct fuse_lowlevel_ops fs_ops = {
	.init = fs_init,
	.lookup = fs_lookup,
	.forget = fs_forget,
	.forget_multi = fs_forget_multi,
	.getattr = fs_getattr,
	.readlink = fs_readlink,
	.setattr = fs_setattr,
	.readdir = fs_readdir,
	.readdirplus = fs_readdirplus,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.flush = fs_flush,
	.release = fs_release,
	.poll = fs_poll,
	.mknod = fs_mknod,
	.create = fs_create,
	.mkdir = fs_mkdir,
	.rmdir = fs_rmdir,
	.unlink = fs_unlink,
	.rename = fs_rename,
	.symlink = fs_symlink,
	.link = fs_link,
};
