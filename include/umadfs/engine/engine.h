/* One port's MAD engine: the port's single umad fd, its agents, the table
 * of requests waiting for an answer, and the receiver thread that hands
 * every answer to whoever sent the request.
 *
 * Every request that expects a response (timeout > 0) ends in exactly one
 * delivery to its sink: the response, or the request itself returned with a
 * umad status (ETIMEDOUT) - both through the same code path.
 *
 * These are the engine's public face, engine.c, each handing the call to
 * the module of src/engine/ that owns the mechanism; the daemon's own
 * requests (engine_query(), engine_request()) are query.h's. */
#ifndef UMADFS_ENGINE_H
#define UMADFS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "umadfs/engine/sink.h"

struct mad_engine;

/* Opens ca/portnum's umad device and starts its receiver thread.  The caller
 * must have blocked the signals the daemon handles (umad2sim's own thread
 * inherits the mask). */
int engine_open(struct mad_engine **out, const char *ca, int portnum,
	      engine_transport_fn on_transport, void *ctx);
/* Stops the receiver thread: when it returns, no delivery runs or will
 * run, and waiting queries end with -ENODEV.  Calls may still come in
 * (and fail or go nowhere) until engine_close(). */
void engine_stop(struct mad_engine *engine);
/* Stops the receiver, drops pending requests, closes the fd, frees. */
void engine_close(struct mad_engine *engine);

/* Sends one request frame (header + mad_len bytes of MAD).  A request that
 * expects an answer (timeout_ms > 0 and not a response method) is answered
 * exactly once through sink.  The MAD's TID is replaced on the wire by a
 * daemon-unique one and restored on delivery.  Returns 0 or -errno:
 * -EBUSY when the in-flight table is full, -ENOSPC when no agent slot is
 * left, -EIO while the transport is down or when the device refused the
 * send for a reason not about this MAD (engine_transport() says which),
 * -errno from the device otherwise.  While the transport is down, pending
 * requests have ended with their timeout items. */
int engine_send(struct mad_engine *engine, struct mad_sink *sink, void *frame,
	      size_t mad_len, int timeout_ms, int retries);
/* Forgets every pending request of sink; when it returns, no delivery to
 * sink runs or will run.  Must not be called from a deliver callback. */
void engine_cancel_sink(struct mad_engine *engine, struct mad_sink *sink);

/* Registers an agent whose unsolicited MADs go to sink.  Returns its
 * agent id, or -EINVAL (a method already held on the port, a vendor class
 * without OUI, RMPP on a class without it: the kernel's errors) or
 * -ENOSPC (the fd's 32 agents are used up), with a reason in why. */
int engine_register(struct mad_engine *engine, struct mad_sink *sink,
		  const struct engine_registration *reg, char *why, size_t whylen);
/* Unregisters sink's agents and forgets its pending requests. */
void engine_unregister_sink(struct mad_engine *engine, struct mad_sink *sink);
/* Copies up to max of sink's registrations and agent ids; returns how many. */
int engine_list_registrations(struct mad_engine *engine, struct mad_sink *sink,
			    struct engine_registration *out, int *ids, int max);

/* Whether the engine holds the port's issm device (under the simulator,
 * while an agent is registered: agent_table.c; for the issm file's
 * holder): the port's IsSM is then its own, with no SM behind it to
 * answer SMInfo. */
bool engine_holds_issm(struct mad_engine *engine);
/* One hold of the port's IsSM (the issm device, umad_get_issm_path(),
 * open while any is held; the registered agents' under the simulator is
 * one): 0, or -errno from its open without waiting (EAGAIN: a process
 * outside the daemon holds it, as an SM does).  Each 0 is released once. */
int engine_issm_hold(struct mad_engine *engine);
void engine_issm_release(struct mad_engine *engine);
/* Whether the registered agents hold it (under the simulator). */
bool engine_issm_agents(struct mad_engine *engine);

/* EIO while the engine holds the transport for dead, else 0; why gets the
 * reason (or what last made it probe, "" if nothing). */
int engine_transport(struct mad_engine *engine, char *why, size_t len);

#endif
