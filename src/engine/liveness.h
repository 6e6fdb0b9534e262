/* Liveness of the transport (liveness.c): the probe that settles a doubt
 * (engine_doubt(), engine_priv.h), down and up. */
#ifndef UMADFS_LIVENESS_H
#define UMADFS_LIVENESS_H

#include <stddef.h>

#include "umadfs/engine/sink.h"

struct mad_engine;

void liveness_init(struct mad_engine *engine, engine_transport_fn on_transport,
		   void *ctx);
/* One step of the probe's life, each turn of the receiver loop. */
void liveness_step(struct mad_engine *engine);
/* engine_transport() (engine.h). */
int liveness_transport(struct mad_engine *engine, char *why, size_t len);

#endif
