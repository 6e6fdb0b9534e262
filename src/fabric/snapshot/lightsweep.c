/* The light sweep (lightsweep.h): the ports it watches, one end of each
 * link (the one nearer the view's port, whose directed route is shorter)
 * and every port without a link (a cable may come), each with the state
 * the snapshot gives it (and an Active link's width and speed) and when
 * it was last found so; a cursor that goes round them a slice at a time;
 * the slice's PortInfo Gets through a window (window.c).
 *
 * The figures (stats) are read by the sweep file's readers: under lock.
 * The rest is the sweep thread's own. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/base/array.h"
#include "umadfs/base/clock.h"
#include "umadfs/engine/query.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/lightsweep.h"
#include "umadfs/fabric/snapshot/refresh.h"
#include "umadfs/fabric/snapshot/window.h"
#include "umadfs/mad/getframe.h"
#include "umadfs/mad/ibcodes.h"
#include "umadfs/mad/mad.h"

struct watched {
	uint32_t node;        /* in snap */
	uint8_t port;
	uint8_t state, phys_state; /* as the snapshot has them, and an */
	uint8_t width, speed;      /* Active link's LinkWidth and LinkSpeed */
	int64_t seen_ms;      /* last found so (CLOCK_MONOTONIC) */
};

struct lightsweep {
	struct mad_window *window;
	struct fab_snap *snap;  /* the snapshot watched (a reference) */
	struct watched *ports;
	size_t nports, cap, cursor;
	pthread_mutex_t lock;
	struct lightsweep_stats stats; /* lock */
};

struct lightsweep *lightsweep_new(void)
{
	struct lightsweep *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->window = window_new();
	if (!l->window) {
		free(l);
		return NULL;
	}
	pthread_mutex_init(&l->lock, NULL);
	return l;
}

void lightsweep_free(struct lightsweep *l)
{
	if (!l)
		return;
	window_free(l->window);
	fabsnap_put(l->snap);
	free(l->ports);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

void lightsweep_abort(struct lightsweep *l)
{
	window_abort(l->window);
}

/* The oldest confirmation of the ports watched (0: none), into stats. */
static void update_stats(struct lightsweep *l)
{
	int64_t oldest = l->nports ? INT64_MAX : 0;

	for (size_t i = 0; i < l->nports; i++)
		if (l->ports[i].seen_ms < oldest)
			oldest = l->ports[i].seen_ms;
	pthread_mutex_lock(&l->lock);
	l->stats.confirmed_ms = oldest;
	l->stats.ports = (unsigned)l->nports;
	pthread_mutex_unlock(&l->lock);
}

void lightsweep_stats(const struct lightsweep *l, struct lightsweep_stats *out)
{
	pthread_mutex_lock((pthread_mutex_t *)&l->lock);
	*out = l->stats;
	pthread_mutex_unlock((pthread_mutex_t *)&l->lock);
}

/* Whether port p of n is the end of its link the light sweep asks: the
 * nearer one (fewer hops; on a tie, the node found first). */
static bool nearer_end(const struct fab_snap *s, const struct fab_node *n, unsigned p)
{
	const struct fab_node *m = fabsnap_find(s, n->ports[p].peer_guid);

	if (!m)
		return true;
	if (n->hops != m->hops)
		return n->hops < m->hops;
	return n < m || (n == m && p < n->ports[p].peer_port);
}

static int add_port(struct lightsweep *l, uint32_t ni, const struct fab_port *fp,
		    unsigned p, int64_t seen_ms)
{
	if (ARRAY_GROW(l->ports, l->cap, l->nports + 1, 256) < 0)
		return -ENOMEM;
	l->ports[l->nports++] = (struct watched){
		.node = ni, .port = (uint8_t)p, .state = fp->state,
		.phys_state = fp->phys_state, .width = fp->width, .speed = fp->speed,
		.seen_ms = seen_ms,
	};
	return 0;
}

int lightsweep_watch(struct lightsweep *l, struct fab_snap *snap, int64_t seen_ms)
{
	size_t was = l->nports, cursor = l->cursor;

	if (!seen_ms) {
		update_stats(l);
		seen_ms = l->stats.confirmed_ms;
	}
	l->nports = 0;
	for (size_t i = 0; snap && i < snap->nnodes; i++) {
		const struct fab_node *n = &snap->nodes[i];

		for (unsigned p = 1; p <= n->nports; p++) {
			const struct fab_port *fp = &n->ports[p];

			if (!fp->has_info || (fp->peer_guid && !nearer_end(snap, n, p)))
				continue;
			if (add_port(l, (uint32_t)i, fp, p, seen_ms) < 0)
				return -ENOMEM;
		}
	}
	/* Go on from about where it was in the round. */
	l->cursor = was && l->nports ? (size_t)((uint64_t)cursor * l->nports / was) : 0;
	if (snap)
		fabsnap_get(snap);
	fabsnap_put(l->snap);
	l->snap = snap;
	update_stats(l);
	return 0;
}

/* How many ports the next slice asks: all of them within cycle_ms. */
static size_t slice_size(const struct lightsweep *l, unsigned cycle_ms)
{
	uint64_t n = ((uint64_t)l->nports * LIGHTSWEEP_PERIOD_MS + cycle_ms - 1) / cycle_ms;

	if (n < LIGHTSWEEP_SLICE_MIN)
		n = LIGHTSWEEP_SLICE_MIN;
	return n < l->nports ? (size_t)n : l->nports;
}

/* Names port w's node in asks (once), unless full. */
static size_t ask_node(const struct lightsweep *l, const struct watched *w,
		       struct refresh_ask *asks, size_t n, size_t max)
{
	uint64_t guid = l->snap->nodes[w->node].guid;

	for (size_t i = 0; i < n; i++)
		if (asks[i].guid == guid)
			return n;
	if (n < max)
		asks[n++] = (struct refresh_ask){ .guid = guid };
	return n;
}

/* Port w answered (mad) or not (NULL): whether it is as the view has it. */
static bool as_seen(const struct watched *w, const uint8_t *mad)
{
	const uint8_t *data;

	if (!mad || mad_get_field((void *)mad, 0, IB_DRSMP_STATUS_F))
		return false;
	data = mad + IB_SMP_DATA_OFFS;
	if (mad_get_field((void *)data, 0, IB_PORT_STATE_F) != w->state ||
	    mad_get_field((void *)data, 0, IB_PORT_PHYS_STATE_F) != w->phys_state)
		return false;
	/* (An Active link may train down to fewer lanes or a lower speed
	 * without going down: its CA's kept then would be another's.) */
	return w->state != IB_LINK_ACTIVE ||
	       (mad_get_field((void *)data, 0, IB_PORT_LINK_WIDTH_ACTIVE_F) == w->width &&
		mad_get_field((void *)data, 0, IB_PORT_LINK_SPEED_ACTIVE_F) == w->speed);
}

/* The MAD of an answer, NULL for a request given back or too short. */
static const uint8_t *answer_of(const uint8_t *frame, size_t len)
{
	if (((const struct ib_user_mad *)frame)->status ||
	    len < IB_SMP_DATA_OFFS + IB_SMP_DATA_SIZE)
		return NULL;
	return frame + UMAD_FRAME_HDR_SIZE;
}

static void send_one(struct lightsweep *l, size_t wi, uint8_t *frame)
{
	const struct watched *w = &l->ports[wi];
	const struct fab_node *n = &l->snap->nodes[w->node];

	getframe_smp_route(frame, IB_ATTR_PORT_INFO, w->port, n->hops, n->path);
	mad_set_tid(frame + UMAD_FRAME_HDR_SIZE, wi);
}

int lightsweep_run(struct lightsweep *l, struct mad_engine *engine, unsigned cycle_ms,
		   struct refresh_ask *asks, size_t max)
{
	size_t todo = slice_size(l, cycle_ms), sent = 0, nasks = 0;
	uint8_t frame[UMAD_FRAME_MAX];
	int64_t now = clock_now_ms();
	uint64_t changes = 0;
	int r = 0;

	window_start(l->window, engine, QUERY_TIMEOUT_MS, QUERY_RETRIES);
	while (r == 0 && (sent < todo || window_inflight(l->window))) {
		while (sent < todo && window_has_room(l->window)) {
			size_t wi = (l->cursor + sent) % l->nports;

			send_one(l, wi, frame);
			r = window_send(l->window, frame, false);
			if (r == -EBUSY)
				break;
			sent++;
			if (r < 0) { /* not sent: as silent */
				nasks = ask_node(l, &l->ports[wi], asks, nasks, max);
				changes++;
			}
			r = 0;
		}
		if (window_inflight(l->window)) {
			size_t len = 0, wi;

			r = window_next(l->window, frame, &len);
			if (r < 0)
				break;
			wi = (size_t)mad_tid(frame + UMAD_FRAME_HDR_SIZE);
			if (wi >= l->nports)
				continue;
			if (as_seen(&l->ports[wi], answer_of(frame, len))) {
				l->ports[wi].seen_ms = now;
			} else {
				nasks = ask_node(l, &l->ports[wi], asks, nasks, max);
				changes++;
			}
		}
	}
	if (r == -ETIMEDOUT)
		r = 0; /* the engine went: what is missing is left unconfirmed */
	window_end(l->window);
	l->cursor = l->nports ? (l->cursor + sent) % l->nports : 0;
	pthread_mutex_lock(&l->lock);
	l->stats.slices++;
	l->stats.mads += sent;
	l->stats.changes += changes;
	pthread_mutex_unlock(&l->lock);
	update_stats(l);
	return r < 0 ? r : (int)nasks;
}
