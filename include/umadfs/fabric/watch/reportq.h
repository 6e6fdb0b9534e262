/* The SA's Reports received and not yet handled: a bounded queue of their
 * frames, the newest dropped (and counted) when it is full.  No lock of its
 * own: its owner's (traps.c's). */
#ifndef UMADFS_REPORTQ_H
#define UMADFS_REPORTQ_H

#include <stdbool.h>
#include <stdint.h>

#include "umadfs/mad/mad.h"

#define REPORTQ_MAX 256 /* Reports not yet handled */

struct reportq {
	uint8_t frames[REPORTQ_MAX][UMAD_FRAME_MAX];
	unsigned head, len;
	uint64_t dropped; /* Reports that found it full */
};

/* Queues a copy of frame (UMAD_FRAME_MAX bytes): true, or false when the
 * queue is full (the frame dropped and counted). */
bool reportq_push(struct reportq *q, const void *frame);
/* Takes the oldest into frame (UMAD_FRAME_MAX bytes): true, or false when
 * the queue is empty. */
bool reportq_pop(struct reportq *q, void *frame);

#endif
