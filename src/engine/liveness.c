/* Liveness of the transport: what makes the engine doubt it, the probe that
 * decides, and what changes while it is down.
 *
 * The transport (the kernel's umad device, or umad2sim's socket to ibsim)
 * can die under the engine: the device goes away, ibsim is killed (sends
 * fail with ECONNREFUSED), or ibsim drops the client (`X` on its console:
 * MADs then vanish without a word).  Three things make the engine doubt
 * it (engine_doubt(), engine_priv.h: pending.c, receiver.c, query.c): a
 * send refused with an error that is not about the MAD
 * (ibumad_transient()), a receive error of that kind, and a request
 * neither answered nor given back past its deadline (the kernel always
 * gives it back).  The receiver thread then sends a probe, a NodeInfo SMP
 * to the port's own SMA (hop 0, answered link up or down, on a real HCA
 * too); if it is not answered, the transport is down: logged once, every
 * pending request ends at once with its timeout item, the channels fail
 * their reads (parked ones included) with EIO and poll POLLERR, and sends
 * fail with EIO - the kernel's umad device after its port is removed.
 * While down, a probe goes out every second; the first one answered brings
 * the port back. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/base/clock.h"
#include "umadfs/base/log.h"
#include "umadfs/engine/sink.h"
#include "umadfs/mad/getframe.h"
#include "delivery.h"
#include "engine_priv.h"
#include "liveness.h"
#include "pending.h"

/* The port's own SMA answers within microseconds, link up or down. */
#define PROBE_TIMEOUT_MS 500
#define PROBE_RETRIES 2
#define PROBE_DOWN_INTERVAL_MS 1000 /* while down: how often to try again */

static void probe_deliver(struct mad_sink *s, const void *frame, size_t mad_len)
{
	struct mad_engine *engine = (struct mad_engine *)((char *)s -
				offsetof(struct mad_engine, probe_sink));
	const struct ib_user_mad *hdr = frame;
	const uint8_t *mad = (const uint8_t *)frame + UMAD_FRAME_HDR_SIZE;

	engine->probe_result = !hdr->status && mad_len >= MAD_HDR_SIZE &&
			  mad_is_response(mad) ? 1 : -1;
}

static const struct mad_sink_ops probe_sink_ops = { .deliver = probe_deliver };

void liveness_init(struct mad_engine *engine, engine_transport_fn on_transport,
		   void *ctx)
{
	engine->on_transport = on_transport;
	engine->transport_ctx = ctx;
	engine->probe_sink.ops = &probe_sink_ops;
}

/* Receiver thread only.  how: what became of the probe, when down. */
static void set_transport(struct mad_engine *engine, bool up, const char *how)
{
	char why[sizeof(engine->why)];

	pthread_mutex_lock(&engine->lock);
	engine->down = !up;
	if (up)
		engine->trigger[0] = '\0';
	else
		snprintf(engine->why, sizeof(engine->why), "%s; a probe of the port's own "
			 "SMA %s", engine->trigger[0] ? engine->trigger : "no answers", how);
	memcpy(why, engine->why, sizeof(why));
	pthread_mutex_unlock(&engine->lock);
	if (up) {
		log_info("%s/%u: the transport is back (the port's own SMA "
			 "answered a probe)", engine->ca, engine->portnum);
	} else {
		log_warn("%s/%u: the transport is down (%s): MAD files fail with "
			 "EIO until it answers again", engine->ca, engine->portnum, why);
		engine->next_probe_ms = clock_now_ms() + PROBE_DOWN_INTERVAL_MS;
	}
	if (engine->on_transport)
		engine->on_transport(engine->transport_ctx, up ? 0 : EIO);
	if (!up) {
		pending_expire(engine, true);
		delivery_release_held(engine, true);
	}
}

/* The probe sent earlier has its answer: the transport is what it says. */
static void probe_done(struct mad_engine *engine, bool down)
{
	engine->probe_sent = false;
	if ((engine->probe_result > 0) == down)
		set_transport(engine, engine->probe_result > 0, "got no answer");
	else if (down)
		engine->next_probe_ms = clock_now_ms() + PROBE_DOWN_INTERVAL_MS;
}

static void probe_send(struct mad_engine *engine, bool down)
{
	uint8_t frame[UMAD_FRAME_MAX];
	int r;

	getframe_smp(frame, IB_ATTR_NODE_INFO, 0);
	engine->probe_result = 0;
	r = pending_send(engine, &engine->probe_sink, frame, MAD_SIZE,
			 PROBE_TIMEOUT_MS, PROBE_RETRIES, PENDING_PROBE);
	if (r == 0) {
		engine->probe_sent = true;
	} else if (r == -EIO) {
		__atomic_store_n(&engine->probe_wanted, 0, __ATOMIC_RELEASE);
		if (!down)
			set_transport(engine, false, "could not be sent");
		else
			engine->next_probe_ms = clock_now_ms() + PROBE_DOWN_INTERVAL_MS;
	} else {
		/* No room for it now (EBUSY...): next turn. */
		__atomic_store_n(&engine->probe_wanted, 1, __ATOMIC_RELEASE);
	}
}

void liveness_step(struct mad_engine *engine)
{
	bool down = engine->down; /* written by this thread only */

	if (engine->probe_sent) {
		if (engine->probe_result)
			probe_done(engine, down);
		return;
	}
	if (__atomic_exchange_n(&engine->probe_wanted, 0, __ATOMIC_ACQ_REL) ||
	    (down && clock_now_ms() >= engine->next_probe_ms))
		probe_send(engine, down);
}

int liveness_transport(struct mad_engine *engine, char *why, size_t len)
{
	int err;

	pthread_mutex_lock(&engine->lock);
	err = engine->down ? EIO : 0;
	if (why && len)
		snprintf(why, len, "%s", engine->down ? engine->why : engine->trigger);
	pthread_mutex_unlock(&engine->lock);
	return err;
}
