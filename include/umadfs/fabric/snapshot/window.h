/* A window of the fabric view's requests in flight through a port's MAD
 * engine: the caller's thread sends and takes the answers one by one; the
 * engine's receiver thread only copies each answer (or request given back)
 * into a ring.  The sweep's and the light sweep's. */
#ifndef UMADFS_WINDOW_H
#define UMADFS_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mad_engine;
struct mad_window;

#define WINDOW_MAX 512 /* requests in flight */

struct mad_window *window_new(void);
void window_free(struct mad_window *w);
/* Before the first send of a run: its engine and each request's timeout
 * and retries. */
void window_start(struct mad_window *w, struct mad_engine *engine, int timeout_ms,
		  int retries);
/* Whether another request may be sent now. */
bool window_has_room(const struct mad_window *w);
/* Sends frame (a MAD_SIZE MAD behind its umad header, its TID the
 * caller's tag), sent again on timeout as the run's retries say, or not
 * (once: a probe whose loss is an answer): 0 (it is in flight), -EBUSY
 * when the engine's table is full while others are in flight (try again
 * after an answer), or -errno (not sent: the caller takes it as ended
 * without an answer). */
int window_send(struct mad_window *w, void *frame, bool once);
unsigned window_inflight(const struct mad_window *w);
/* Whether an answer is waiting for window_next(). */
bool window_answered(struct mad_window *w);
/* Waits for the next answer and copies it (UMAD_FRAME_MAX bytes) into
 * frame, its MAD length into *len (0 for a request given back: the umad
 * header's status says why): 0, -ECANCELED after window_abort(), or
 * -ETIMEDOUT when none came for far longer than any request may take (an
 * engine closed under the run ends its requests without a word). */
int window_next(struct mad_window *w, uint8_t *frame, size_t *len);
/* After a run: forgets what is still in flight (engine_cancel_sink) and
 * any answer not taken. */
void window_end(struct mad_window *w);
/* Makes a waiting (or the next) window_next() return -ECANCELED, for good;
 * any thread. */
void window_abort(struct mad_window *w);

#endif
