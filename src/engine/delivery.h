/* Handing frames to sinks (delivery.c): dispatch_lock held, but
 * delivery_release_held(), which takes it. */
#ifndef UMADFS_DELIVERY_H
#define UMADFS_DELIVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mad_engine;
struct mad_sink;

/* Hands a frame to its sink; a sink with a flush op is woken by the next
 * delivery_flush(). */
void delivery_add(struct mad_engine *engine, struct mad_sink *sink, const void *frame,
		  size_t mad_len);
void delivery_flush(struct mad_engine *engine);
/* Keeps a timeout that came early until due_ms. */
void delivery_hold(struct mad_engine *engine, struct mad_sink *sink, const uint8_t *frame,
		   size_t mad_len, int64_t due_ms);
/* Drops the timeouts held for sink (NULL: for every sink) undelivered. */
void delivery_drop_held(struct mad_engine *engine, struct mad_sink *sink);
/* Delivers the held timeouts that are due (all: every one, now); returns
 * ms until the next, at most RECV_POLL_MS. */
int delivery_release_held(struct mad_engine *engine, bool all);

#endif
