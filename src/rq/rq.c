/* Receive queues: the rq/ directory of a port, whose mkdir makes a UD QP
 * with its files (rqverbs.c, rqfiles.c) and whose rmdir removes it; a
 * queue's life: its verbs objects and thread made and stopped together,
 * its references.
 *
 * Lifetime: the creator and every node of the directory hold a reference
 * (node->on_free drops it).  rmdir shuts the queue down at once (thread,
 * QP, memory); the struct itself lives until the kernel forgot the last
 * node, so a handler that found the node before the rmdir still finds a
 * queue - marked shut - behind it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/log.h"
#include "umadfs/fuse/tree.h"
#include "rq_priv.h"

/* What rq/ keeps of its port: the owner of the rq/ node. */
struct rq_port {
	char ca[64];            /* the verbs device */
	int portnum;
};

static const struct {
	const char *name;
	mode_t mode;
	const struct node_ops *ops;
	enum rq_file kind;
} rq_files[] = {
	{ "qpn", S_IFREG | 0444, &rq_value_ops, RF_QPN },
	{ "qkey", S_IFREG | 0644, &rq_value_ops, RF_QKEY },
	{ "gid", S_IFREG | 0444, &rq_value_ops, RF_GID },
	{ "lid", S_IFREG | 0444, &rq_value_ops, RF_LID },
	{ "depth", S_IFREG | 0644, &rq_value_ops, RF_DEPTH },
	{ "msg_size", S_IFREG | 0644, &rq_value_ops, RF_MSG_SIZE },
	{ "recv", S_IFREG | 0400, &rq_recv_ops, RF_RECV },
	{ "recv_bin", S_IFREG | 0400, &rq_recv_ops, RF_RECV_BIN },
	{ "stats", S_IFREG | 0444, &rq_value_ops, RF_STATS },
};

/* A queue with its verbs objects and its running completion thread. */
static int rq_create(const char *ca, int portnum, const char *name, struct rq **out)
{
	struct rq *rq;
	int r = rq_verbs_create(ca, portnum, name, &rq);

	if (r < 0)
		return r;
	r = rq_thread_start(rq);
	if (r < 0) {
		rq_verbs_destroy(rq);
		rq_free(rq);
		return r;
	}
	log_info("%s/%d rq %s: QPN %u qkey 0x%08x depth %u msg_size %u",
		 rq->ca, rq->portnum, name, rq->qpn, rq->qkey, rq->depth,
		 rq->msg_size);
	*out = rq;
	return 0;
}

/* Marks the queue shut: opens and writes fail from now on.  Returns
 * false if it was already. */
static bool rq_mark_shut(struct rq *rq)
{
	bool was;

	pthread_mutex_lock(&rq->q.lock);
	was = rq->shut;
	rq->shut = true;
	pthread_mutex_unlock(&rq->q.lock);
	return !was;
}

/* Stops the thread, fails reads with err (ENODEV after rmdir, EIO when
 * the device is gone), destroys the QP and frees the buffers of a queue
 * marked shut.  The struct stays for the nodes that still point at it. */
static void rq_teardown(struct rq *rq, int err)
{
	rq_thread_stop(rq);
	readq_kill(&rq->q, err);
	/* No thread and no reader now, but handlers of nodes found before
	 * the rmdir read the fields under the lock. */
	pthread_mutex_lock(&rq->q.lock);
	rq_verbs_destroy(rq);
	pthread_mutex_unlock(&rq->q.lock);
	log_info("%s/%d rq %s: removed (QPN %u)", rq->ca, rq->portnum, rq->name,
		 rq->qpn);
}

static void rq_get(struct rq *rq)
{
	__atomic_add_fetch(&rq->refs, 1, __ATOMIC_RELAXED);
}

static void rq_put(struct rq *rq)
{
	if (__atomic_sub_fetch(&rq->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		/* At exit (tree_destroy) the queue is still up. */
		if (rq_mark_shut(rq))
			rq_teardown(rq, ENODEV);
		rq_free(rq);
	}
}

static void rq_node_get(struct node *n)
{
	rq_get(n->owner);
}

static void rq_node_put(struct node *n)
{
	rq_put(n->owner);
}

/* rq/ is root's (0755, whatever -o mad_group= says): creator is root. */
static int rq_mkdir(struct node *dir, const char *name, uid_t creator,
		    struct node **out)
{
	const struct rq_port *port = dir->owner;
	struct node *qdir;
	struct rq *rq;
	bool exists;
	int r;

	/* Before making a QP for nothing. */
	tree_rdlock();
	exists = tree_child(dir, name) != NULL;
	tree_unlock();
	if (exists)
		return -EEXIST;
	r = rq_create(port->ca, port->portnum, name, &rq);
	if (r < 0)
		return r;

	tree_wrlock();
	if (tree_child(dir, name)) {
		r = -EEXIST;
		goto err_unlock;
	}
	r = -ENOMEM;
	qdir = tree_add(dir, name, S_IFDIR | 0555, NULL, rq, 0);
	if (!qdir)
		goto err_unlock;
	for (size_t i = 0; i < sizeof(rq_files) / sizeof(rq_files[0]); i++) {
		if (!tree_add(qdir, rq_files[i].name, rq_files[i].mode,
			      rq_files[i].ops, rq, (int)rq_files[i].kind)) {
			tree_unlink(qdir); /* no references yet: freed now */
			goto err_unlock;
		}
	}
	/* Each node holds a reference from here: the struct outlives the
	 * last node the kernel knows. */
	tree_hold_owner(qdir, rq_node_get, rq_node_put);
	tree_unlock();
	rq_put(rq); /* the creator's */
	*out = qdir;
	return 0;

err_unlock:
	tree_unlock();
	rq_put(rq);
	return r;
}

static bool rq_in_use(void *ctx)
{
	struct rq *rq = ctx;
	bool used;

	pthread_mutex_lock(&rq->q.lock);
	used = rq->nusers != 0;
	pthread_mutex_unlock(&rq->q.lock);
	return used;
}

static int rq_rmdir(struct node *dir, struct node *child)
{
	struct rq *rq = child->owner;

	/* child is alive (the kernel holds it for the rmdir), so is rq. */
	rq_get(rq);
	/* Files closed just before: their RELEASE may still be coming. */
	readq_wait_released(rq_in_use, rq, READQ_RELEASE_WAIT_MS);
	pthread_mutex_lock(&rq->q.lock);
	if (rq->shut) {
		pthread_mutex_unlock(&rq->q.lock);
		rq_put(rq);
		return -ENOENT;
	}
	if (rq->nusers) {
		pthread_mutex_unlock(&rq->q.lock);
		rq_put(rq);
		return -EBUSY;
	}
	/* New opens now fail: shut is set before the lock is dropped. */
	rq->shut = true;
	pthread_mutex_unlock(&rq->q.lock);
	tree_wrlock();
	tree_unlink(child);
	tree_unlock();
	rq_teardown(rq, ENODEV);
	rq_put(rq);
	return 0;
}

/* A queue of rq_dir still up, now marked shut, with a reference; NULL
 * when none is left. */
static struct rq *shut_next(struct node *rq_dir)
{
	struct rq *found = NULL;

	tree_rdlock();
	for (struct node *c = rq_dir->children; c && !found; c = c->next_sibling) {
		struct rq *rq = c->owner;

		pthread_mutex_lock(&rq->q.lock);
		if (!rq->shut) {
			rq->shut = true;
			rq_get(rq);
			found = rq;
		}
		pthread_mutex_unlock(&rq->q.lock);
	}
	tree_unlock();
	return found;
}

void rq_port_gone(struct node *port_dir)
{
	struct node *dir;
	struct rq *rq;

	tree_rdlock();
	dir = tree_child(port_dir, "rq");
	tree_unlock();
	if (!dir)
		return;
	while ((rq = shut_next(dir)) != NULL) {
		rq_teardown(rq, EIO);
		rq_put(rq);
	}
}

static const struct dir_ops rq_dir_ops = {
	.mkdir = rq_mkdir, .rmdir = rq_rmdir,
};

static void rq_port_free(struct node *n)
{
	free(n->owner);
}

int rq_add_dir(struct node *port_dir, const char *ca, int portnum)
{
	struct rq_port *port;
	struct node *dir;

	/* Under the simulator (or without rdma_rxe/HCA drivers) the CA has no
	 * verbs device: no rq/ at all rather than one that cannot work. */
	if (!rq_have_verbs_device(ca))
		return 0;
	port = calloc(1, sizeof(*port));
	if (!port)
		return -ENOMEM;
	snprintf(port->ca, sizeof(port->ca), "%s", ca);
	port->portnum = portnum;
	dir = tree_add(port_dir, "rq", S_IFDIR | 0755, NULL, port, 0);
	if (!dir) {
		free(port);
		return -ENOMEM;
	}
	dir->dops = &rq_dir_ops;
	dir->on_free = rq_port_free;
	return 0;
}
