/* fabric/metrics.prom made as it is read (fabmetrics.h): the families the
 * mount selects, cut in chunks; the index of a snapshot's chunks, made by
 * one sizing pass; the cursors that make a chunk again for each read. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "umadfs/base/array.h"
#include "umadfs/base/log.h"
#include "umadfs/fabric/files/fabmetrics.h"
#include "umadfs/fabric/files/promlines.h"
#include "umadfs/fabric/snapshot/fabsnap.h"

/* A chunk ends with the unit that takes it to CHUNK_MIN bytes or more, or
 * with the text: it fits in CHUNK_BUF. */
#define CHUNK_MIN (32u << 10)
#define CHUNK_BUF (CHUNK_MIN + PROMLINES_UNIT_MAX)

/* "all": every group but details, partitions and mcast, named on their
 * own. */
#define ALL_GROUPS (((1u << PROM_GROUPS) - 1) & ~(1u << PROM_DETAILS) & \
		    ~(1u << PROM_PARTITIONS) & ~(1u << PROM_MCAST))

/* The groups shown, a bit each (enum prom_group): set once by
 * fabmetrics_configure(), before any thread. */
static unsigned selected = ALL_GROUPS;

/* Where a chunk starts: its offset in the text, its first unit. */
struct chunk {
	uint64_t off;
	struct prom_pos pos;
};

/* A snapshot's index (snap->metrics, text_lock): one malloc'd block,
 * freed with the snapshot; never changed once made. */
struct fab_metrics_index {
	uint64_t len;      /* the text's */
	size_t nchunks;
	struct chunk chunks[]; /* by offset */
};

/* An open's reader of its snapshot's text. */
struct fabmetrics_cursor {
	pthread_mutex_t lock;  /* one read at a time: guards what follows */
	struct fab_snap *snap; /* held */
	const struct fab_metrics_index *index; /* snap's */
	size_t chunk;          /* the chunk buf holds, or SIZE_MAX */
	struct prom_cache cache;
	char buf[CHUNK_BUF];
};

/* The names the option takes, for its refusal. */
static void names_list(char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned g = 0; g < PROM_GROUPS && len < cap; g++)
		len += (size_t)snprintf(buf + len, cap - len, "%s, ",
					promlines_group_name(g));
	if (len < cap)
		snprintf(buf + len, cap - len, "all");
}

/* One name of the list, s[0..len): its groups' bits, or 0. */
static unsigned group_bits(const char *s, size_t len)
{
	if (len == 3 && !memcmp(s, "all", 3))
		return ALL_GROUPS;
	for (unsigned g = 0; g < PROM_GROUPS; g++)
		if (strlen(promlines_group_name(g)) == len &&
		    !memcmp(promlines_group_name(g), s, len))
			return 1u << g;
	return 0;
}

int fabmetrics_configure(const char *groups)
{
	unsigned bits = 0;
	char names[160];

	if (!groups)
		return 0;
	for (const char *s = groups;; s++) {
		size_t len = strcspn(s, "+");
		unsigned b = group_bits(s, len);

		if (!b) {
			names_list(names, sizeof(names));
			fprintf(stderr, "umadfs: fabric_metrics=%s: '%.*s' is not one of "
				"%s (joined by +)\n", groups, (int)len, s, names);
			return -EINVAL;
		}
		bits |= b;
		s += len;
		if (!*s)
			break;
	}
	selected = bits;
	return 0;
}

bool fabmetrics_is_group(const char *word)
{
	return group_bits(word, strlen(word)) != 0;
}

/* *pos at a unit of a family shown, or past the last family: false then. */
static bool shown_family(struct prom_pos *pos)
{
	while (pos->family < promlines_families() &&
	       !(selected & 1u << promlines_group(pos->family))) {
		pos->family++;
		pos->started = false;
	}
	return pos->family < promlines_families();
}

/* The chunk from *pos into buf (CHUNK_BUF bytes), *pos moved to the next
 * one's start: its length, 0 past the text's end. */
static size_t format_chunk(const struct fab_snap *s, struct prom_pos *pos,
			   char *buf, struct prom_cache *cache)
{
	size_t len = 0;

	while (len < CHUNK_MIN && shown_family(pos)) {
		int n = promlines_unit(s, pos, buf + len, cache);

		if (n < 0) {
			pos->family++;
			pos->started = false;
		} else {
			len += (size_t)n;
		}
	}
	return len;
}

/* The chunks of snap's text, in one block; NULL on ENOMEM.  The sizing
 * pass: every chunk made in a scratch cursor's buffer, its length kept. */
static struct fab_metrics_index *index_make(const struct fab_snap *s)
{
	struct fabmetrics_cursor *scratch = calloc(1, sizeof(*scratch));
	struct fab_metrics_index *x = NULL;
	struct chunk *chunks = NULL;
	struct prom_pos pos = { 0 };
	size_t n = 0, cap = 0, len;
	uint64_t off = 0;

	if (!scratch)
		return NULL;
	for (struct prom_pos at = pos;
	     (len = format_chunk(s, &pos, scratch->buf, &scratch->cache)); at = pos) {
		if (ARRAY_GROW(chunks, cap, n + 1, 256) < 0)
			goto out;
		chunks[n++] = (struct chunk){ .off = off, .pos = at };
		off += len;
	}
	x = malloc(sizeof(*x) + n * sizeof(*chunks));
	if (x) {
		x->len = off;
		x->nchunks = n;
		if (n)
			memcpy(x->chunks, chunks, n * sizeof(*chunks));
	}
out:
	free(chunks);
	free(scratch);
	return x;
}

/* snap's index, made now if it was not; NULL on ENOMEM. */
static const struct fab_metrics_index *index_get(struct fab_snap *s)
{
	const struct fab_metrics_index *x;

	/* Held across the sizing pass: a reader that comes meanwhile waits
	 * for it rather than making its own. */
	pthread_mutex_lock(&s->text_lock);
	if (!s->metrics)
		s->metrics = index_make(s);
	x = s->metrics;
	pthread_mutex_unlock(&s->text_lock);
	return x;
}

int fabmetrics_size(struct fab_snap *snap, uint64_t *len)
{
	const struct fab_metrics_index *x = index_get(snap);

	if (!x)
		return -ENOMEM;
	*len = x->len;
	return 0;
}

void fabmetrics_make_ahead(struct fab_snap *snap, struct fab_snap *old)
{
	bool made;

	pthread_mutex_lock(&old->text_lock);
	made = old->metrics != NULL;
	pthread_mutex_unlock(&old->text_lock);
	if (made)
		index_get(snap);
}

struct fabmetrics_cursor *fabmetrics_open(struct fab_snap *snap)
{
	struct fabmetrics_cursor *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->index = index_get(snap);
	if (!c->index) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	fabsnap_get(snap);
	c->snap = snap;
	c->chunk = SIZE_MAX;
	return c;
}

void fabmetrics_close(struct fabmetrics_cursor *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	fabsnap_put(c->snap);
	free(c);
}

static uint64_t chunk_end(const struct fab_metrics_index *x, size_t k)
{
	return k + 1 < x->nchunks ? x->chunks[k + 1].off : x->len;
}

/* The chunk that holds off (< x->len): the cursor's, the next, or found. */
static size_t chunk_at(const struct fabmetrics_cursor *c, uint64_t off)
{
	const struct fab_metrics_index *x = c->index;
	size_t lo = 0, hi = x->nchunks;

	for (size_t k = c->chunk; k != SIZE_MAX && k < c->chunk + 2 && k < x->nchunks; k++)
		if (x->chunks[k].off <= off && off < chunk_end(x, k))
			return k;
	while (hi - lo > 1) { /* the last chunk starting at or before off */
		size_t mid = lo + (hi - lo) / 2;

		if (x->chunks[mid].off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Chunk k into the cursor's buffer: 0, or -EIO when it is not the chunk
 * the index says. */
static int chunk_load(struct fabmetrics_cursor *c, size_t k)
{
	const struct fab_metrics_index *x = c->index;
	struct prom_pos pos = x->chunks[k].pos;
	size_t len;

	if (c->chunk == k)
		return 0;
	c->chunk = SIZE_MAX;
	len = format_chunk(c->snap, &pos, c->buf, &c->cache);
	if (len != chunk_end(x, k) - x->chunks[k].off) {
		log_err("fabric: metrics.prom: chunk %zu made again is %zu bytes, "
			"not %llu", k, len,
			(unsigned long long)(chunk_end(x, k) - x->chunks[k].off));
		return -EIO;
	}
	c->chunk = k;
	return 0;
}

ssize_t fabmetrics_read(struct fabmetrics_cursor *c, char *buf, size_t size,
			uint64_t off)
{
	const struct fab_metrics_index *x = c->index;
	size_t done = 0;
	int r = 0;

	pthread_mutex_lock(&c->lock);
	for (size_t k = off < x->len ? chunk_at(c, off) : 0;
	     done < size && off < x->len; k++) {
		uint64_t start = x->chunks[k].off, end = chunk_end(x, k);
		size_t n = end - off < size - done ? (size_t)(end - off) : size - done;

		r = chunk_load(c, k);
		if (r < 0)
			break;
		memcpy(buf + done, c->buf + (off - start), n);
		done += n;
		off += n;
	}
	pthread_mutex_unlock(&c->lock);
	return r < 0 ? r : (ssize_t)done;
}
