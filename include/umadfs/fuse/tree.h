/* The node table: every directory and file of the mount, by inode number.
 *
 * A node is a directory (children, no ops) or a file whose behaviour is a
 * node_ops table of its kind (attribute, MAD file, ...).  Inode numbers are
 * indexes into the table plus one, so the root is FUSE_ROOT_ID.  Nodes of
 * the CA tree live as long as the mount; nodes added later (channels,
 * receive queues) are unlinked with tree_unlink and freed once the kernel
 * has forgotten them, as are those a directory makes per lookup
 * (detached), and their inode numbers then serve new nodes. */
#ifndef UMADFS_TREE_H
#define UMADFS_TREE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include <fuse_lowlevel.h>

struct node;

/* File behaviour.  Every handler replies to req exactly once. */
struct node_ops {
	void (*open)(fuse_req_t req, struct node *n, struct fuse_file_info *fi);
	void (*read)(fuse_req_t req, struct node *n, size_t size, off_t off,
		     struct fuse_file_info *fi);
	void (*write)(fuse_req_t req, struct node *n, const char *buf,
		      size_t size, off_t off, struct fuse_file_info *fi);
	/* Optional: each close(2) of a descriptor of the open file, before
	 * close returns (RELEASE comes after, for the last one).  Files
	 * without it are opened with noflush: no FLUSH round trip per close. */
	void (*flush)(fuse_req_t req, struct node *n, struct fuse_file_info *fi);
	void (*release)(fuse_req_t req, struct node *n, struct fuse_file_info *fi);
	void (*poll)(fuse_req_t req, struct node *n, struct fuse_file_info *fi,
		     struct fuse_pollhandle *ph);
	/* st_size for getattr: what a read from offset 0 returns now, or 0. */
	off_t (*size)(struct node *n);
	/* Optional: st_mtime (when the content was made), else the mount's. */
	time_t (*mtime)(struct node *n);
	/* A text file's value (textfile.h): its length, or -errno.  With it,
	 * open, read, release and size left NULL are textfile's. */
	int (*show)(struct node *n, char *buf, size_t cap);
};

/* Directories whose children users create and remove (agents/, rq/), or
 * that make their children when first used. */
struct dir_ops {
	/* Makes the child directory name under dir for the user creator
	 * (tree lock not held); returns it in *out, or -errno (EEXIST,
	 * EINVAL, ENOSPC...). */
	int (*mkdir)(struct node *dir, const char *name, uid_t creator,
		     struct node **out);
	/* Removes child, a directory mkdir made; -EBUSY while in use. */
	int (*rmdir)(struct node *dir, struct node *child);
	/* Makes the children of a directory added with lazy set, at its
	 * first lookup or readdir (tree write lock held): a large tree costs
	 * memory only where it is read.  0 or -errno. */
	int (*populate)(struct node *dir);
	/* Makes the child name of a directory whose children are made per
	 * lookup and never listed (fabric/routes/): a node of
	 * tree_add_detached() in *out, or -errno (ENOENT: no such name).
	 * Called for a name that is not among its children, with the tree
	 * write lock held. */
	int (*lookup)(struct node *dir, const char *name, struct node **out);
};

struct node {
	fuse_ino_t ino;
	/* Distinct for every node made: an ino serves new nodes once the
	 * kernel has forgotten the old one, and what was kept for the old one
	 * (a stat's value, textfile.c) must not go to the new. */
	uint64_t gen;
	struct node *parent;
	/* Guarded by the tree lock: */
	struct node *children, *last_child;   /* in creation order */
	struct node *next_sibling, *prev_sibling;
	struct node *next_named; /* the chain of its name's bucket (tree.c) */
	char *name;
	mode_t mode; /* S_IFDIR | 0555, S_IFREG | 0444, ... */
	uid_t uid;   /* owner and group as stat shows them (and the kernel */
	gid_t gid;   /* checks them): root's unless access.c says otherwise */
	const struct node_ops *ops; /* NULL for directories */
	const struct dir_ops *dops; /* directories with mkdir/rmdir, or NULL */
	char *link; /* a symbolic link's target (S_IFLNK), else NULL */
	bool transient; /* may go without an rmdir: the kernel caches no name */
	bool lazy;      /* children not made yet: dops->populate (tree lock) */
	/* The feature's object the node shows (a CA, port, channel, receive
	 * queue...: the type its ops expect), and which part of it. */
	void *owner;
	union {
		int attr; /* an attribute or counter: its index in the table */
		int pkey; /* a P_Key table entry */
		int file; /* one of the owner's files: the feature's enum */
	};
	void (*on_free)(struct node *n); /* drops n's hold on owner, or NULL */
	uint64_t nlookup;           /* guarded by the tree lock */
	bool unlinked;              /* guarded by the tree lock */
};

int tree_init(void);
void tree_destroy(void);
struct node *tree_root(void);
/* A name users may give a directory they make (agents/NAME, rq/NAME):
 * ASCII letters, digits, '-', '_' and '.', not '.' first, 1 to 63 bytes,
 * so that logs, `ls` and line-oriented scripts show it as it is. */
#define TREE_USER_NAME_MAX 63
bool tree_user_name_ok(const char *name);
/* Adds a child of owner's; which sets its attr, pkey or file (0 for a
 * directory).  NULL on ENOMEM or a duplicate name. */
struct node *tree_add(struct node *dir, const char *name, mode_t mode,
		      const struct node_ops *ops, void *owner, int which);
/* A node for dir_ops.lookup: in no directory's children (readdir lists
 * it nowhere, and no parent points to it), freed once the kernel forgets
 * it.  NULL on ENOMEM.  Caller holds the write lock. */
struct node *tree_add_detached(const char *name, mode_t mode,
			       const struct node_ops *ops, void *owner, int which);
/* tree_add() of a node that owns owner, a malloc()ed block freed with it
 * (tree_free_owner as its on_free); owner is freed at once when the node
 * cannot be made (NULL). */
struct node *tree_add_owned(struct node *dir, const char *name, mode_t mode,
			    const struct node_ops *ops, void *owner, int which);
/* An on_free that frees n->owner. */
void tree_free_owner(struct node *n);
/* Adds a symbolic link name -> target (S_IFLNK | 0777).  NULL on ENOMEM
 * or a duplicate name. */
struct node *tree_add_symlink(struct node *dir, const char *name,
			      const char *target);
void tree_rdlock(void);
void tree_wrlock(void);
void tree_unlock(void);
/* The node of an inode, or NULL.  Caller holds the tree lock. */
struct node *tree_get(fuse_ino_t ino);
/* The child of dir called name, or NULL.  Caller holds the tree lock. */
struct node *tree_child(struct node *dir, const char *name);
/* Counts a lookup reply (the kernel now holds a reference). */
void tree_ref(struct node *n);
/* The kernel dropped nlookup references. */
void tree_forget(fuse_ino_t ino, uint64_t nlookup);
/* Removes a node (and its subtree) from its directory; it is freed once
 * forgotten.  Caller holds the write lock. */
void tree_unlink(struct node *n);
/* For a directory mkdir made: from now on every node of its subtree holds
 * a reference on its owner, so the owner outlives the last node the kernel
 * knows.  Calls get(n) on each node and makes put its on_free.  Caller
 * holds the write lock. */
void tree_hold_owner(struct node *dir, void (*get)(struct node *n),
		     void (*put)(struct node *n));

#endif
