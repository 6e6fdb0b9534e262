/* The node table (tree.h): nodes by inode number, by their directory and
 * name (a hash, so that a directory of 16,000 nodes is made and looked up
 * in linear time), their lookup counts, and freeing the unlinked ones once
 * the kernel has forgotten them. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/array.h"
#include "umadfs/fuse/tree.h"

static pthread_rwlock_t tree_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct node **nodes; /* nodes[ino - 1]; guarded by tree_lock */
static size_t nodes_len, nodes_cap;
/* Slots of freed nodes, for new ones: the kernel names an inode no more
 * once it has forgotten it.  Guarded by tree_lock. */
static size_t *free_slots;
static size_t free_len, free_cap;
static uint64_t nodes_made; /* the last node's gen; guarded by tree_lock */
/* Linked nodes by (directory, name): chains of next_named; guarded by
 * tree_lock.  Twice as many buckets as names at most. */
static struct node **named;
static size_t named_cap, named_len;

void tree_rdlock(void)
{
	pthread_rwlock_rdlock(&tree_lock);
}

void tree_wrlock(void)
{
	pthread_rwlock_wrlock(&tree_lock);
}

void tree_unlock(void)
{
	pthread_rwlock_unlock(&tree_lock);
}

static struct node *node_new(struct node *parent, const char *name,
			     mode_t mode, const struct node_ops *ops,
			     void *owner, int which)
{
	struct node *n;

	if (!free_len && ARRAY_GROW(nodes, nodes_cap, nodes_len + 1, 256) < 0)
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->name = strdup(name);
	if (!n->name) {
		free(n);
		return NULL;
	}
	n->parent = parent;
	n->mode = mode;
	n->ops = ops;
	n->owner = owner;
	n->file = which; /* one int: attr and pkey too */
	n->gen = ++nodes_made;
	if (free_len) {
		n->ino = free_slots[--free_len] + 1;
	} else {
		nodes_len++;
		n->ino = nodes_len;
	}
	nodes[n->ino - 1] = n;
	return n;
}

static void node_free(struct node *n)
{
	free(n->link);
	free(n->name);
	free(n);
}

int tree_init(void)
{
	struct node *root = node_new(NULL, "", S_IFDIR | 0555, NULL, NULL, 0);

	if (!root)
		return -ENOMEM;
	root->nlookup = 1; /* the kernel never forgets the root */
	return 0;
}

void tree_destroy(void)
{
	for (size_t i = 0; i < nodes_len; i++) {
		if (nodes[i]) {
			if (nodes[i]->on_free)
				nodes[i]->on_free(nodes[i]);
			node_free(nodes[i]);
		}
	}
	free(nodes);
	nodes = NULL;
	nodes_len = nodes_cap = 0;
	free(free_slots);
	free_slots = NULL;
	free_len = free_cap = 0;
	free(named);
	named = NULL;
	named_cap = named_len = 0;
}

struct node *tree_root(void)
{
	return nodes ? nodes[0] : NULL;
}

/* The bucket of dir's child name (FNV-1a, the directory mixed in). */
static size_t bucket(const struct node *dir, const char *name, size_t cap)
{
	uint64_t h = 14695981039346656037ull ^ (uint64_t)(uintptr_t)dir;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* Room for one more name: the buckets doubled and the chains made again
 * when as many names as buckets; 0 or -ENOMEM. */
static int named_grow(void)
{
	size_t cap = named_cap ? named_cap * 2 : 1024;
	struct node **bigger;

	if (named_len < named_cap)
		return 0;
	bigger = calloc(cap, sizeof(*bigger));
	if (!bigger)
		return -ENOMEM;
	for (size_t i = 0; i < named_cap; i++) {
		while (named[i]) {
			struct node *n = named[i];
			size_t b = bucket(n->parent, n->name, cap);

			named[i] = n->next_named;
			n->next_named = bigger[b];
			bigger[b] = n;
		}
	}
	free(named);
	named = bigger;
	named_cap = cap;
	return 0;
}

static void named_remove(struct node *n)
{
	struct node **pp = &named[bucket(n->parent, n->name, named_cap)];

	for (; *pp; pp = &(*pp)->next_named) {
		if (*pp == n) {
			*pp = n->next_named;
			n->next_named = NULL;
			named_len--;
			return;
		}
	}
}

struct node *tree_child(struct node *dir, const char *name)
{
	if (!named_cap)
		return NULL;
	for (struct node *c = named[bucket(dir, name, named_cap)]; c; c = c->next_named)
		if (c->parent == dir && strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

bool tree_user_name_ok(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > TREE_USER_NAME_MAX || name[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

struct node *tree_add(struct node *dir, const char *name, mode_t mode,
		      const struct node_ops *ops, void *owner, int which)
{
	struct node *n;
	size_t b;

	if (tree_child(dir, name) || named_grow() < 0)
		return NULL;
	n = node_new(dir, name, mode, ops, owner, which);
	if (!n)
		return NULL;
	/* Keep creation order: readdir lists files as the tables define them. */
	n->prev_sibling = dir->last_child;
	if (dir->last_child)
		dir->last_child->next_sibling = n;
	else
		dir->children = n;
	dir->last_child = n;
	b = bucket(dir, name, named_cap);
	n->next_named = named[b];
	named[b] = n;
	named_len++;
	return n;
}

struct node *tree_add_detached(const char *name, mode_t mode,
			       const struct node_ops *ops, void *owner, int which)
{
	struct node *n = node_new(NULL, name, mode, ops, owner, which);

	if (n)
		n->unlinked = true;
	return n;
}

void tree_free_owner(struct node *n)
{
	free(n->owner);
}

struct node *tree_add_owned(struct node *dir, const char *name, mode_t mode,
			    const struct node_ops *ops, void *owner, int which)
{
	struct node *n = tree_add(dir, name, mode, ops, owner, which);

	if (n)
		n->on_free = tree_free_owner;
	else
		free(owner);
	return n;
}

struct node *tree_add_symlink(struct node *dir, const char *name,
			      const char *target)
{
	char *link = strdup(target);
	struct node *n;

	if (!link)
		return NULL;
	n = tree_add(dir, name, S_IFLNK | 0777, NULL, NULL, 0);
	if (!n) {
		free(link);
		return NULL;
	}
	n->link = link;
	return n;
}

struct node *tree_get(fuse_ino_t ino)
{
	if (ino < 1 || ino > nodes_len)
		return NULL;
	return nodes[ino - 1];
}

void tree_ref(struct node *n)
{
	__atomic_add_fetch(&n->nlookup, 1, __ATOMIC_RELAXED);
}

/* Keeps slot i for a new node (when there is no room, it stays unused). */
static void slot_free(size_t i)
{
	if (ARRAY_GROW(free_slots, free_cap, free_len + 1, 64) == 0)
		free_slots[free_len++] = i;
}

static void node_free_if_forgotten(struct node *n)
{
	if (!n->unlinked || __atomic_load_n(&n->nlookup, __ATOMIC_RELAXED) ||
	    n->children)
		return;
	nodes[n->ino - 1] = NULL;
	slot_free(n->ino - 1);
	if (n->on_free)
		n->on_free(n);
	node_free(n);
}

void tree_forget(fuse_ino_t ino, uint64_t nlookup)
{
	struct node *n;

	tree_wrlock();
	n = tree_get(ino);
	if (n) {
		__atomic_sub_fetch(&n->nlookup, nlookup, __ATOMIC_RELAXED);
		node_free_if_forgotten(n);
	}
	tree_unlock();
}

void tree_hold_owner(struct node *dir, void (*get)(struct node *n),
		     void (*put)(struct node *n))
{
	get(dir);
	dir->on_free = put;
	for (struct node *c = dir->children; c; c = c->next_sibling)
		tree_hold_owner(c, get, put);
}

void tree_unlink(struct node *n)
{
	while (n->children)
		tree_unlink(n->children); /* frees it too if the kernel never knew it */
	if (n->parent) {
		named_remove(n);
		if (n->prev_sibling)
			n->prev_sibling->next_sibling = n->next_sibling;
		else
			n->parent->children = n->next_sibling;
		if (n->next_sibling)
			n->next_sibling->prev_sibling = n->prev_sibling;
		else
			n->parent->last_child = n->prev_sibling;
	}
	n->parent = NULL;
	n->next_sibling = n->prev_sibling = NULL;
	n->unlinked = true;
	node_free_if_forgotten(n);
}
