/* The Set log (setlog.h): a ring of the last SETLOG_MAX Subnet Management
 * Sets sent by any engine of the process, noted as each leaves, and a
 * sequence number readers keep their place by. */
#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/engine/setlog.h"
#include "umadfs/mad/mad.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct setlog_entry ring[SETLOG_MAX]; /* lock */
static uint64_t noted;                       /* lock: Sets noted since start */

static bool is_smp_set(uint8_t *mad)
{
	unsigned cls = mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F);

	return (cls == IB_SMI_CLASS || cls == IB_SMI_DIRECT_CLASS) &&
	       mad_get_field(mad, 0, IB_MAD_METHOD_F) == IB_MAD_METHOD_SET;
}

void setlog_note(const struct mad_engine *engine, void *frame)
{
	const struct ib_user_mad *hdr = frame;
	uint8_t *mad = (uint8_t *)frame + UMAD_FRAME_HDR_SIZE;
	struct setlog_entry e = { .engine = engine };

	if (!is_smp_set(mad))
		return;
	e.attr = (uint16_t)mad_get_field(mad, 0, IB_MAD_ATTRID_F);
	e.mod = mad_get_field(mad, 0, IB_MAD_ATTRMOD_F);
	if (mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F) == IB_SMI_CLASS) {
		e.dlid = ntohs(hdr->addr.lid);
	} else {
		e.hops = (uint8_t)mad_get_field(mad, 0, IB_DRSMP_HOPCNT_F);
		e.dr_lids = mad_get_field(mad, 0, IB_DRSMP_DRDLID_F) != 0xffff;
		mad_get_array(mad, 0, IB_DRSMP_PATH_F, e.path);
	}
	pthread_mutex_lock(&lock);
	ring[noted++ % SETLOG_MAX] = e;
	pthread_mutex_unlock(&lock);
}

unsigned setlog_since(uint64_t *cursor, struct setlog_entry *out, bool *lost)
{
	unsigned n = 0;

	pthread_mutex_lock(&lock);
	*lost = noted - *cursor > SETLOG_MAX;
	if (*lost)
		*cursor = noted - SETLOG_MAX;
	for (; *cursor < noted; (*cursor)++)
		out[n++] = ring[*cursor % SETLOG_MAX];
	pthread_mutex_unlock(&lock);
	return n;
}
