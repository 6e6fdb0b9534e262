// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the engine's wire TIDs (src/engine/pending_table.c): the
 * lower 32 bits of a request's TID are a 12-bit slot of the 4096-entry
 * pending table and a 20-bit generation (docs/architecture.md, "The two
 * paths of a MAD").  A late answer for a slot since taken by another
 * request is not that request's answer, the generation wraps without
 * touching the slot, a full table is -EBUSY; and the same through
 * pending_answer() (src/engine/pending.c) on an engine the test sets up,
 * with no port under it.
 */
#include "check.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/base/clock.h"
#include "umadfs/mad/mad.h"
#include "engine_priv.h"
#include "pending.h"
#include "pending_table.h"

#define GENERATIONS (1u << PENDING_GENERATION_BITS)
#define SLOT(wire) ((wire) & (PENDING_MAX - 1))
#define GENERATION(wire) ((wire) >> PENDING_BITS)

/* A sink that keeps the last frame's TID and status. */
struct rec_sink {
	struct mad_sink sink;
	unsigned n, status;
	uint64_t tid;
};

static void rec_deliver(struct mad_sink *s, const void *frame, size_t mad_len)
{
	struct rec_sink *r = (struct rec_sink *)s;

	r->n++;
	r->status = ((const struct ib_user_mad *)frame)->status;
	r->tid = mad_tid((const uint8_t *)frame + UMAD_FRAME_HDR_SIZE);
}

static const struct mad_sink_ops rec_ops = { .deliver = rec_deliver };

/* A directed-route SMP Get (matched by TID alone) with TID tid. */
static void request(uint8_t *f, uint64_t tid)
{
	memset(f, 0, UMAD_FRAME_HDR_SIZE + MAD_SIZE);
	f[UMAD_FRAME_HDR_SIZE + 1] = IB_SMI_DIRECT_CLASS;
	f[UMAD_FRAME_HDR_SIZE + 2] = 1;
	f[UMAD_FRAME_HDR_SIZE + 3] = IB_MAD_METHOD_GET;
	mad_set_tid(f + UMAD_FRAME_HDR_SIZE, tid);
}

/* The answer to a request that went out with TID tid: a GetResp, or the
 * request given back with status. */
static void answer(uint8_t *f, uint64_t tid, unsigned status)
{
	request(f, tid);
	if (status)
		((struct ib_user_mad *)f)->status = status;
	else
		f[UMAD_FRAME_HDR_SIZE + 3] = IB_MAD_METHOD_GET_RESPONSE;
}

static struct pending_table *table_new(void)
{
	struct pending_table *t = malloc(sizeof(*t));

	if (!t)
		abort();
	pending_table_init(t);
	return t;
}

/* Takes a slot for a request of sink with TID tid: its wire TID. */
static uint32_t take(struct pending_table *t, struct mad_sink *sink, uint64_t tid)
{
	uint8_t f[UMAD_FRAME_HDR_SIZE + MAD_SIZE];
	struct pending *e = NULL;

	request(f, tid);
	CHECK_INT(pending_table_take(t, sink, f + UMAD_FRAME_HDR_SIZE, &e), 0);
	if (!e)
		abort();
	CHECK_INT(mad_tid(f + UMAD_FRAME_HDR_SIZE), pending_table_tid(e));
	return e->wire_tid;
}

static void end(struct pending_table *t, uint32_t wire)
{
	struct pending *e = pending_table_find(t, wire);

	CHECK(e != NULL);
	if (e)
		pending_table_end(t, e, NULL);
}

/* The wire TID: the caller's upper 32 bits, then generation and slot; the
 * caller's TID put back at the end. */
static void test_wire_tid(void)
{
	struct pending_table *t = table_new();
	uint8_t f[UMAD_FRAME_HDR_SIZE + MAD_SIZE], *mad = f + UMAD_FRAME_HDR_SIZE;
	struct rec_sink a = { .sink.ops = &rec_ops };
	struct pending *e = NULL;

	request(f, 0x0123456789abcdefull);
	CHECK_INT(pending_table_take(t, &a.sink, mad, &e), 0);
	CHECK_INT(mad_tid(mad) >> 32, 0x01234567);
	CHECK_INT(GENERATION(e->wire_tid), 1);
	CHECK_INT((uint32_t)mad_tid(mad), e->wire_tid);
	CHECK(pending_table_find(t, e->wire_tid) == e);
	CHECK(pending_table_end(t, e, mad) == &a.sink);
	CHECK_INT(mad_tid(mad), 0x0123456789abcdefull);
	CHECK(pending_table_find(t, e->wire_tid) == NULL); /* answered: no more */
	free(t);
}

/* A slot freed and taken again: the late answer's TID finds nothing, the
 * new request's finds it. */
static void test_reused_slot(void)
{
	struct pending_table *t = table_new();
	struct rec_sink a = { .sink.ops = &rec_ops }, b = { .sink.ops = &rec_ops };
	uint32_t wa = take(t, &a.sink, 0xa), wb;

	end(t, wa);
	wb = take(t, &b.sink, 0xb);
	CHECK_INT(SLOT(wb), SLOT(wa));
	CHECK(wb != wa);
	CHECK(pending_table_find(t, wa) == NULL);
	CHECK(pending_table_find(t, wb) != NULL &&
	      pending_table_find(t, wb)->sink == &b.sink);
	free(t);
}

/* The generation wraps from 2^20 - 1 to 0 (and the counter itself past
 * 2^32) without touching the slot, and a slot's wire TID comes again only
 * after 2^20 takes. */
static void test_generation_wraps(void)
{
	struct pending_table *t = table_new();
	struct rec_sink a = { .sink.ops = &rec_ops };
	uint8_t *seen = calloc(GENERATIONS / 8, 1);
	uint32_t wa, wb, first;

	if (!seen)
		abort();
	t->generation = GENERATIONS - 2;
	wa = take(t, &a.sink, 0);
	CHECK_INT(GENERATION(wa), GENERATIONS - 1);
	end(t, wa);
	wb = take(t, &a.sink, 0);
	CHECK_INT(GENERATION(wb), 0);
	CHECK_INT(SLOT(wb), SLOT(wa));
	CHECK(pending_table_find(t, wa) == NULL);
	CHECK(pending_table_find(t, wb) != NULL);
	end(t, wb);

	t->generation = UINT32_MAX;
	first = take(t, &a.sink, 0);
	CHECK_INT(GENERATION(first), 0);
	end(t, first);
	for (unsigned i = 1; i < GENERATIONS; i++) {
		uint32_t w = take(t, &a.sink, 0);

		CHECK_INT(SLOT(w), SLOT(first));
		if (w == first || (seen[GENERATION(w) / 8] >> (GENERATION(w) % 8) & 1)) {
			CHECK(!"a wire TID came again within 2^20 takes");
			break;
		}
		seen[GENERATION(w) / 8] |= (uint8_t)(1u << (GENERATION(w) % 8));
		end(t, w);
	}
	CHECK_INT(take(t, &a.sink, 0), first);
	free(seen);
	free(t);
}

/* 4096 requests take 4096 slots; the next is -EBUSY, its TID untouched;
 * a slot freed is taken again. */
static void test_full_table(void)
{
	struct pending_table *t = table_new();
	uint8_t f[UMAD_FRAME_HDR_SIZE + MAD_SIZE], *mad = f + UMAD_FRAME_HDR_SIZE;
	struct rec_sink a = { .sink.ops = &rec_ops };
	uint8_t taken[PENDING_MAX] = { 0 };
	struct pending *e = NULL;
	uint32_t w = 0;

	for (unsigned i = 0; i < PENDING_MAX; i++) {
		w = take(t, &a.sink, i);
		CHECK(!taken[SLOT(w)]);
		taken[SLOT(w)] = 1;
	}
	request(f, 0x5555);
	CHECK_INT(pending_table_take(t, &a.sink, mad, &e), -EBUSY);
	CHECK_INT(mad_tid(mad), 0x5555);
	end(t, w);
	CHECK_INT(pending_table_take(t, &a.sink, mad, &e), 0);
	CHECK_INT(SLOT(e->wire_tid), SLOT(w));
	free(t);
}

static struct mad_engine *engine_new(void)
{
	struct mad_engine *engine = calloc(1, sizeof(*engine));

	if (!engine)
		abort();
	snprintf(engine->ca, sizeof(engine->ca), "test");
	engine->fd = -1;
	engine->issm_fd = -1;
	pthread_mutex_init(&engine->lock, NULL);
	pthread_mutex_init(&engine->dispatch_lock, NULL);
	pthread_cond_init(&engine->idle, NULL);
	pending_table_init(&engine->pending);
	return engine;
}

static void engine_free(struct mad_engine *engine)
{
	pthread_cond_destroy(&engine->idle);
	pthread_mutex_destroy(&engine->dispatch_lock);
	pthread_mutex_destroy(&engine->lock);
	free(engine);
}

/* A request of sink with TID tid, as pending_send() leaves it in the table
 * (its headers kept); its TID on the wire. */
static uint64_t start(struct mad_engine *engine, struct mad_sink *sink, uint64_t tid)
{
	uint8_t f[UMAD_FRAME_HDR_SIZE + MAD_SIZE];
	struct pending *e = NULL;

	request(f, tid);
	CHECK_INT(pending_table_take(&engine->pending, sink, f + UMAD_FRAME_HDR_SIZE, &e), 0);
	if (!e)
		abort();
	memcpy(e->head, f, sizeof(e->head));
	e->timeout_ms = 100;
	e->deadline_ms = INT64_MAX / 2;
	return mad_tid(f + UMAD_FRAME_HDR_SIZE);
}

/* What pending_answer() makes of an answer with TID tid (upper 32 bits:
 * the kernel's hi_tid, not the daemon's). */
static bool answered(struct mad_engine *engine, uint64_t tid, unsigned status)
{
	uint8_t f[UMAD_FRAME_HDR_SIZE + MAD_SIZE];
	bool taken;

	answer(f, (tid & 0xffffffffull) | 0x0000000700000000ull, status);
	pthread_mutex_lock(&engine->dispatch_lock);
	taken = pending_answer(engine, f, MAD_SIZE);
	pthread_mutex_unlock(&engine->dispatch_lock);
	return taken;
}

/* Request A answered, B in A's slot: A's answer again (late, duplicated)
 * or A given back is not B's; B's own is, with B's TID.  The same when A
 * was cancelled rather than answered: its slot is B's only once A's
 * answer came, which goes to nobody. */
static void test_late_answer(void)
{
	struct mad_engine *engine = engine_new();
	struct rec_sink a = { .sink.ops = &rec_ops }, b = { .sink.ops = &rec_ops };
	uint64_t wa = start(engine, &a.sink, 0x1111aaaa0000000aull), wb;

	CHECK(answered(engine, wa, 0));
	CHECK_INT(a.n, 1);
	CHECK_INT(a.tid, 0x1111aaaa0000000aull);
	wb = start(engine, &b.sink, 0x2222bbbb0000000bull);
	CHECK_INT(SLOT((uint32_t)wb), SLOT((uint32_t)wa));
	CHECK(!answered(engine, wa, 0));
	CHECK(!answered(engine, wa, ETIMEDOUT));
	CHECK_INT(a.n + b.n, 1);
	CHECK(answered(engine, wb, 0));
	CHECK_INT(b.n, 1);
	CHECK_INT(b.status, 0);
	CHECK_INT(b.tid, 0x2222bbbb0000000bull);
	CHECK(!answered(engine, wb, 0)); /* once */

	wa = start(engine, &a.sink, 0xc);
	pending_cancel(engine, &a.sink);
	CHECK(pending_awaited(engine)); /* still on the wire */
	CHECK(answered(engine, wa, 0));
	CHECK_INT(a.n + b.n, 2);
	CHECK(!pending_awaited(engine));
	wb = start(engine, &b.sink, 0xd);
	CHECK_INT(SLOT((uint32_t)wb), SLOT((uint32_t)wa));
	CHECK(!answered(engine, wa, 0));
	CHECK_INT(a.n + b.n, 2);
	CHECK(answered(engine, wb, 0));
	CHECK_INT(b.tid, 0xd);
	engine_free(engine);
}

struct late {
	struct mad_engine *engine;
	uint64_t tid;
};

static void *answer_late(void *arg)
{
	struct late *l = arg;
	const struct timespec pause = { 0, 50 * 1000 * 1000 };

	nanosleep(&pause, NULL);
	answered(l->engine, l->tid, 0);
	return NULL;
}

/* A request whose sink was cancelled (orphaned): given back early, it is
 * not sent again; expired, it is nobody's timeout and not counted;
 * pending_quiesce() waits for its answer, or gives up at its limit. */
static void test_orphaned(void)
{
	struct mad_engine *engine = engine_new();
	struct rec_sink a = { .sink.ops = &rec_ops };
	struct late l = { engine, 0 };
	pthread_t thread;
	int64_t t0;
	uint64_t w;

	w = start(engine, &a.sink, 0x1);
	engine->pending.entries[SLOT((uint32_t)w)].retries_left = 3;
	pending_cancel(engine, &a.sink);
	CHECK(answered(engine, w, ETIMEDOUT)); /* fd -1: a resend would fail, delivered */
	CHECK_INT(a.n, 0);
	CHECK(!pending_awaited(engine));

	start(engine, &a.sink, 0x2);
	pending_cancel(engine, &a.sink);
	CHECK_INT(pending_expire(engine, true), 0);
	CHECK_INT(a.n, 0);
	CHECK(!pending_awaited(engine));

	t0 = clock_now_ms();
	pending_quiesce(engine, 5000); /* nothing on the wire: at once */
	CHECK(clock_now_ms() - t0 < 1000);
	l.tid = start(engine, &a.sink, 0x3);
	pending_cancel(engine, &a.sink);
	CHECK_INT(pthread_create(&thread, NULL, answer_late, &l), 0);
	t0 = clock_now_ms();
	pending_quiesce(engine, 20000);
	CHECK(clock_now_ms() - t0 < 10000);
	CHECK(!pending_awaited(engine));
	pthread_join(thread, NULL);

	start(engine, &a.sink, 0x4); /* never answered: the limit */
	t0 = clock_now_ms();
	pending_quiesce(engine, 100);
	CHECK(clock_now_ms() - t0 >= 100);
	CHECK(pending_awaited(engine));
	CHECK_INT(a.n, 0);
	engine_free(engine);
}

int main(void)
{
	test_wire_tid();
	test_reused_slot();
	test_generation_wraps();
	test_full_table();
	test_late_answer();
	test_orphaned();
	CHECK_DONE();
}
