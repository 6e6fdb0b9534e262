/* The queue of the SA's Reports between the receiver thread and the traps
 * thread (reportq.h): a ring of REPORTQ_MAX frames. */
#include <string.h>

#include "umadfs/fabric/watch/reportq.h"

bool reportq_push(struct reportq *q, const void *frame)
{
	if (q->len == REPORTQ_MAX) {
		q->dropped++;
		return false;
	}
	memcpy(q->frames[(q->head + q->len++) % REPORTQ_MAX], frame, UMAD_FRAME_MAX);
	return true;
}

bool reportq_pop(struct reportq *q, void *frame)
{
	if (!q->len)
		return false;
	memcpy(frame, q->frames[q->head], UMAD_FRAME_MAX);
	q->head = (q->head + 1) % REPORTQ_MAX;
	q->len--;
	return true;
}
