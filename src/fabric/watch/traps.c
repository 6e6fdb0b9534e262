/* The SM's traps as events (traps.h): a subscription (SA InformInfo Set)
 * to traps 64, 65, 66, 67, 128 and 144 from the fabric view's port, an
 * agent registered there for the SA's Reports, and a thread that answers
 * each Report (ReportResponse), notes it in fabric/events and asks the
 * sweep thread to refresh what it names (a multicast group created or
 * deleted, 66 and 67: a sweep, whose groups against the snapshot
 * before's make the mcast_join and mcast_leave events).
 *
 * The same thread checks every TRAPS_CHECK_MS that the subscription
 * stands: the port's master SM (its PortInfo MasterSMLID, that SM's
 * SMInfo) is the one subscribed to and has not restarted (its ActCount
 * went back), and the agent is still registered on the port's engine (a
 * CA that went and came back has a new one).  Otherwise, and every
 * TRAPS_RENEW_MS (the SA takes a subscription it has as a renewal), it
 * subscribes again.  A master found silent is asked again every
 * TRAPS_RETRY_MS only, once (no retries), or at once when a sweep found it
 * answering: where its link is down, each SMInfo is a packet the switch
 * port before it discards, which the view would count as the fabric's.
 *
 * The receiver thread only copies a Report into a bounded queue
 * (reportq.c: drops counted).  The thread's own requests
 * (engine_request()) are waited for on tr.wake, a wait that stopping ends
 * at once (the request then abandoned: its answer is dropped when it
 * comes), so that an unmount does not wait out an SA that does not
 * answer. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>

#include "umadfs/base/clock.h"
#include "umadfs/base/log.h"
#include "umadfs/device/device.h"
#include "umadfs/device/sysfmt.h"
#include "umadfs/engine/engine.h"
#include "umadfs/engine/query.h"
#include "umadfs/fabric/snapshot/fabsnap.h"
#include "umadfs/fabric/snapshot/mcast.h"
#include "umadfs/fabric/snapshot/refresh.h"
#include "umadfs/fabric/watch/reportq.h"
#include "umadfs/fabric/watch/sweeper.h"
#include "umadfs/fabric/watch/traps.h"
#include "umadfs/mad/getframe.h"
#include "umadfs/mad/mad.h"

#define TRAPS_CHECK_MS 1000   /* how often the subscription is checked */
#define TRAPS_FIRST_MS 250    /* and before the first sweep, for its port */
#define TRAPS_RENEW_MS 60000  /* and made again regardless */
#define TRAPS_RETRY_MS 10000  /* a subscription that failed, tried again after
			       * (or at once for another SM) */
#define SA_VERSION 2

static const unsigned trap_numbers[] = { 64, 65, 66, 67, 128, 144 };

/* CHECKING: not yet checked since the first sweep. */
enum traps_state { TRAPS_OFF, TRAPS_NONE, TRAPS_SUBSCRIBED, TRAPS_REFUSED,
		   TRAPS_CHECKING };

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct mad_sink sink;        /* the Reports' agent's */
	bool on;                     /* fabric_traps= (set before start) */
	traps_note_fn note;          /* where events go (set at start) */
	bool stopping;               /* (lock) */
	struct reportq queue;        /* received, not yet handled (lock) */
	uint64_t reports;            /* handled (lock) */
	uint64_t check_mads;         /* the checks' requests (lock) */
	enum traps_state state;      /* (lock) */
	char why[160];               /* none or refused: the reason (lock) */
	/* The traps thread's own: */
	pthread_t thread;
	bool started;
	struct ca_port *port;        /* where the agent was registered */
	uint16_t sm_lid;             /* the SM subscribed to */
	uint64_t sm_guid;
	uint32_t sm_act;             /* its ActCount at the last check */
	int64_t subscribed_ms;       /* the last subscription made */
	int64_t tried_ms;            /* the last that failed */
	bool sm_answered;            /* the master answered the last check */
	uint16_t silent_lid;         /* the master's LID when it did not answer */
	int64_t silent_ms;           /* when it was last asked then */
} tr = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.on = true,
};

/* The receiver thread: a Report is queued for the thread. */
static void on_report(struct mad_sink *sink, const void *frame, size_t mad_len)
{
	const uint8_t *mad = (const uint8_t *)frame + UMAD_FRAME_HDR_SIZE;

	if (mad_len < MAD_SIZE || mad[3] != IB_MAD_METHOD_REPORT)
		return;
	pthread_mutex_lock(&tr.lock);
	if (reportq_push(&tr.queue, frame))
		pthread_cond_signal(&tr.wake);
	pthread_mutex_unlock(&tr.lock);
}

static const struct mad_sink_ops report_ops = { .deliver = on_report };

static void set_state(enum traps_state state, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_state(enum traps_state state, const char *fmt, ...)
{
	char why[sizeof(tr.why)];
	bool changed;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&tr.lock);
	changed = tr.state != state || strcmp(tr.why, why);
	tr.state = state;
	memcpy(tr.why, why, sizeof(why));
	pthread_mutex_unlock(&tr.lock);
	if (changed && state == TRAPS_SUBSCRIBED)
		log_info("fabric: subscribed to the SM's traps (%s)", why);
	else if (changed)
		log_info("fabric: traps %s: %s", state == TRAPS_NONE ? "none" : "refused",
			 why);
}

int traps_text(char *buf, size_t cap, bool *subscribed)
{
	static const char *const names[] = { "off", "none", "subscribed", "refused",
					      "checking" };
	int n;

	pthread_mutex_lock(&tr.lock);
	*subscribed = tr.state == TRAPS_SUBSCRIBED;
	n = snprintf(buf, cap, "traps %s%s%s\ntrap_reports %" PRIu64
		     "\ntrap_reports_dropped %" PRIu64 "\ntrap_check_mads %" PRIu64 "\n",
		     names[tr.state],
		     tr.state == TRAPS_NONE || tr.state == TRAPS_REFUSED ? ": " : "",
		     tr.state == TRAPS_NONE || tr.state == TRAPS_REFUSED ? tr.why : "",
		     tr.reports, tr.queue.dropped, tr.check_mads);
	pthread_mutex_unlock(&tr.lock);
	return n;
}

/* -- the thread's requests ---------------------------------------------------- */

/* One request of the thread's: its answer, or abandoned (then the
 * callback frees it). */
struct request {
	uint8_t frame[UMAD_FRAME_MAX];
	size_t len;
	bool done, abandoned; /* (tr.lock) */
};

static void on_answer(void *ctx, const uint8_t *frame, size_t mad_len)
{
	struct request *q = ctx;

	pthread_mutex_lock(&tr.lock);
	if (q->abandoned) {
		pthread_mutex_unlock(&tr.lock);
		free(q);
		return;
	}
	q->len = mad_len < MAD_SIZE ? mad_len : MAD_SIZE;
	memcpy(q->frame, frame, UMAD_FRAME_HDR_SIZE + q->len);
	q->done = true;
	pthread_cond_broadcast(&tr.wake);
	pthread_mutex_unlock(&tr.lock);
}

/* Sends the request in frame (UMAD_FRAME_MAX bytes) and waits for its
 * answer there: 0 (a MAD status is the caller's to read), -ETIMEDOUT,
 * -ECANCELED when stopping (unless at_stop: the unsubscription), or
 * -errno. */
static int send_and_wait(struct mad_engine *e, uint8_t *frame, int retries,
			 bool at_stop)
{
	struct request *q = calloc(1, sizeof(*q));
	const struct ib_user_mad *hdr;
	int r;

	if (!q)
		return -ENOMEM;
	r = engine_request(e, frame, MAD_SIZE, QUERY_TIMEOUT_MS, retries, on_answer, q);
	if (r < 0) {
		free(q);
		return r;
	}
	pthread_mutex_lock(&tr.lock);
	while (!q->done && (at_stop || !tr.stopping))
		pthread_cond_wait(&tr.wake, &tr.lock);
	if (!q->done) {
		q->abandoned = true;
		pthread_mutex_unlock(&tr.lock);
		return -ECANCELED;
	}
	pthread_mutex_unlock(&tr.lock);
	/* The whole frame: zeros past a short answer (an SA's is its RMPP
	 * payload long). */
	memcpy(frame, q->frame, UMAD_FRAME_MAX);
	hdr = (const struct ib_user_mad *)q->frame;
	r = hdr->status ? -ETIMEDOUT : 0;
	free(q);
	return r;
}

/* -- the subscription ------------------------------------------------------ */

/* One InformInfo Set to the SA at lid; 0 or -errno with the reason. */
static int inform(struct mad_engine *e, unsigned lid, unsigned trap, bool subscribe,
		  int retries, char *why, size_t cap)
{
	uint8_t frame[UMAD_FRAME_MAX], data[GETFRAME_INFORMINFO_LEN];
	unsigned status;
	int r;

	getframe_informinfo(data, trap, subscribe);
	getframe_sa(frame, lid, IB_MAD_METHOD_SET, IB_SA_ATTR_INFORMINFO, data,
		    sizeof(data));
	/* (Leaving, at unmount, is the one request stopping does not end.) */
	r = send_and_wait(e, frame, retries, !subscribe);
	if (r < 0) {
		snprintf(why, cap, "the SA at LID %u did not answer the InformInfo "
			 "Set for trap %u: %s", lid, trap, strerror(-r));
		return r;
	}
	status = mad_get_field(frame + UMAD_FRAME_HDR_SIZE, 0, IB_MAD_STATUS_F);
	if (status) {
		snprintf(why, cap, "the SA at LID %u answered the InformInfo Set for "
			 "trap %u with status 0x%04x", lid, trap, status);
		return -EPROTO;
	}
	return 0;
}

static int subscribe(struct mad_engine *e, unsigned lid)
{
	char why[sizeof(tr.why)];

	for (size_t i = 0; i < sizeof(trap_numbers) / sizeof(trap_numbers[0]); i++) {
		int r = inform(e, lid, trap_numbers[i], true, QUERY_RETRIES, why,
			       sizeof(why));

		if (r < 0) {
			/* Refused is the SA's word; silence is no SA. */
			set_state(r == -EPROTO ? TRAPS_REFUSED : TRAPS_NONE, "%s", why);
			return -1;
		}
	}
	tr.subscribed_ms = clock_now_ms();
	set_state(TRAPS_SUBSCRIBED, "SM LID %u", lid);
	return 0;
}

/* The agent for the SA's Reports on the engine of port (the engine may be
 * new since the last check); false with the state set when refused. */
static bool registered(struct ca_port *port, struct mad_engine *e)
{
	struct engine_registration reg = {
		.mgmt_class = IB_SA_CLASS, .class_version = SA_VERSION,
		.methods = { 1u << IB_MAD_METHOD_REPORT },
	};
	struct engine_registration have;
	char why[128];
	int id;

	if (tr.port == port && engine_list_registrations(e, &tr.sink, &have, &id, 1) == 1)
		return true;
	if (tr.port && tr.port != port) {
		int err;
		struct mad_engine *old = ca_port_engine(tr.port, &err);

		if (old)
			engine_unregister_sink(old, &tr.sink);
		if (old)
			ca_port_engine_done(tr.port);
	}
	tr.port = port;
	tr.sm_lid = 0; /* a new agent: subscribe again */
	if (engine_register(e, &tr.sink, &reg, why, sizeof(why)) < 0) {
		set_state(TRAPS_REFUSED, "no agent for the SA's Reports on %s/%d: %s",
			  port->ca->name, port->portnum, why);
		return false;
	}
	return true;
}

/* n more requests of the checks'. */
static void counted(unsigned n)
{
	pthread_mutex_lock(&tr.lock);
	tr.check_mads += n;
	pthread_mutex_unlock(&tr.lock);
}

/* Whether the current snapshot has the master at lid answering. */
static bool master_in_view(unsigned lid)
{
	struct fab_snap *s = sweeper_snapshot();
	const struct fab_sm *m = s ? fabsnap_master(s) : NULL;
	bool yes = m && m->lid == lid;

	fabsnap_put(s);
	return yes;
}

/* Whether the master at lid, silent when last asked, is asked now: every
 * TRAPS_RETRY_MS, or when a sweep since found it answering. */
static bool ask_silent(unsigned lid)
{
	return master_in_view(lid) || clock_now_ms() - tr.silent_ms >= TRAPS_RETRY_MS;
}

/* The master's SMInfo: 0 (its GUID and ActCount set), -EAGAIN when a
 * silent master is not asked this time, or -errno.  A master silent when
 * last asked is asked once. */
static int ask_master(struct mad_engine *e, unsigned lid, uint64_t *guid,
		      uint32_t *act)
{
	uint8_t frame[UMAD_FRAME_MAX];
	bool silent = lid == tr.silent_lid;
	int r;

	if (silent && !ask_silent(lid))
		return -EAGAIN;
	getframe_smp_lid(frame, IB_ATTR_SMINFO, 0, lid);
	counted(1);
	r = send_and_wait(e, frame, silent ? 0 : QUERY_RETRIES, false);
	if (r == 0 && mad_get_field(frame + UMAD_FRAME_HDR_SIZE, 0, IB_MAD_STATUS_F))
		r = -EPROTO;
	if (r < 0) {
		if (r != -ECANCELED) { /* (stopping: not the SM's doing) */
			tr.silent_lid = (uint16_t)lid;
			tr.silent_ms = clock_now_ms();
		}
		return r;
	}
	tr.silent_lid = 0;
	*guid = mad_get_field64(frame + UMAD_FRAME_HDR_SIZE + IB_SMP_DATA_OFFS, 0,
				IB_SMINFO_GUID_F);
	*act = mad_get_field(frame + UMAD_FRAME_HDR_SIZE + IB_SMP_DATA_OFFS, 0,
			     IB_SMINFO_ACT_F);
	return 0;
}

/* The master SM as the port names it: its LID, GUID and ActCount; false
 * with the state set when there is none (a silent master's state stands
 * while it is not asked again). */
static bool master_sm(struct ca_port *port, struct mad_engine *e, unsigned *lid,
		      uint64_t *guid, uint32_t *act)
{
	uint8_t data[IB_SMP_DATA_SIZE];
	int r = query_smp_get(e, IB_ATTR_PORT_INFO, (unsigned)port->portnum, data);

	counted(1);
	if (r < 0) {
		set_state(TRAPS_NONE, "the port's PortInfo: %s", strerror(-r));
		return false;
	}
	*lid = mad_get_field(data, 0, IB_PORT_SMLID_F);
	if (!*lid) {
		set_state(TRAPS_NONE, "no master SM (the port's MasterSMLID is 0)");
		return false;
	}
	r = ask_master(e, *lid, guid, act);
	if (r < 0 && r != -EAGAIN)
		set_state(TRAPS_NONE, "the SM at LID %u does not answer SMInfo: %s",
			  *lid, strerror(-r));
	return r == 0;
}

/* Whether the subscription must be made (again). */
static bool due(unsigned lid, uint64_t guid, uint32_t act)
{
	enum traps_state state;

	pthread_mutex_lock(&tr.lock);
	state = tr.state;
	pthread_mutex_unlock(&tr.lock);
	if (lid != tr.sm_lid || guid != tr.sm_guid)
		return true;
	if (state != TRAPS_SUBSCRIBED) /* a silent SA is not asked every check */
		return clock_now_ms() - tr.tried_ms >= TRAPS_RETRY_MS;
	return act < tr.sm_act || clock_now_ms() - tr.subscribed_ms >= TRAPS_RENEW_MS;
}

static bool subscribed(void)
{
	bool yes;

	pthread_mutex_lock(&tr.lock);
	yes = tr.state == TRAPS_SUBSCRIBED;
	pthread_mutex_unlock(&tr.lock);
	return yes;
}

/* Checks the subscription (*lost: the master is another SM, or the same
 * restarted); false when there is no snapshot yet. */
static bool check_sm(bool *lost)
{
	struct fab_snap *s = sweeper_snapshot();
	struct ca_port *port = s ? sweeper_port(s) : NULL;
	struct mad_engine *e;
	uint64_t guid = 0;
	uint32_t act = 0;
	unsigned lid = 0;
	int err = -ENODEV;

	fabsnap_put(s);
	if (!s)
		return false; /* still checking: there is no view yet */
	if (!port) {
		set_state(TRAPS_NONE, "the fabric view's port is gone");
		return true;
	}
	e = ca_port_engine(port, &err);
	if (!e) {
		set_state(TRAPS_NONE, "%s/%d: %s", port->ca->name, port->portnum,
			  strerror(-err));
		return true;
	}
	tr.sm_answered = false;
	if (registered(port, e) && master_sm(port, e, &lid, &guid, &act)) {
		tr.sm_answered = true;
		if (tr.sm_lid && (lid != tr.sm_lid || guid != tr.sm_guid ||
				  act < tr.sm_act))
			*lost = true; /* another SM, or the same restarted */
		if (due(lid, guid, act) && subscribe(e, lid) < 0)
			tr.tried_ms = clock_now_ms();
		tr.sm_lid = (uint16_t)lid;
		tr.sm_guid = guid;
		tr.sm_act = act;
	}
	ca_port_engine_done(port);
	return true;
}

static bool stopping(void)
{
	bool stop;

	pthread_mutex_lock(&tr.lock);
	stop = tr.stopping;
	pthread_mutex_unlock(&tr.lock);
	return stop;
}

/* Checks the subscription.  When the master that answered the last check
 * is silent, the view says so at once (sweeper_sm_silent()); when a
 * silent master answers again, or the SM the traps came from is lost or
 * replaced (its Reports, and what it did meanwhile, may be lost with it),
 * a sweep is asked.  False when there is no snapshot yet. */
static bool check(void)
{
	bool was = subscribed(), answered = tr.sm_answered, lost = false;
	bool was_silent = tr.silent_lid != 0;

	if (!check_sm(&lost))
		return false;
	if (stopping())
		return true;
	if (answered && !tr.sm_answered) {
		log_info("fabric: the master SM does not answer: sweeping");
		sweeper_sm_silent();
	} else if (was_silent && tr.sm_answered && !master_in_view(tr.sm_lid)) {
		log_info("fabric: the master SM answers again: sweeping");
		sweeper_sweep();
	} else if (lost || (was && !subscribed())) {
		log_info("fabric: the SM the traps came from is %s: sweeping",
			 lost ? "replaced or restarted" : "lost");
		sweeper_sweep();
	}
	return true;
}

/* -- Reports ----------------------------------------------------------------- */

/* The Report's ReportResponse, through the port it came to. */
static void answer(uint8_t *frame)
{
	struct mad_engine *e;
	size_t len;
	int err;

	if (!tr.port || !(e = ca_port_engine(tr.port, &err)))
		return;
	len = getframe_response(frame, IB_MAD_METHOD_REPORT_RESPONSE);
	err = engine_send(e, NULL, frame, len, 0, 0);
	ca_port_engine_done(tr.port);
	if (err < 0)
		log_warn("fabric: answering a Report: %s", strerror(-err));
}

/* " guid=0x... node_desc=..." of the node with lid (or port GUID). */
static void who(char *buf, size_t cap, const struct refresh_ask *a)
{
	struct fab_snap *s = sweeper_snapshot();
	const struct fab_node *n = s ? refresh_find(s, a) : NULL;
	char desc[FAB_DESC_LEN * 4 + 3];

	buf[0] = '\0';
	if (n) {
		fabsnap_quote(desc, sizeof(desc), n->desc);
		snprintf(buf, cap, " guid=0x%016" PRIx64 " node_desc=%s node_type=%s",
			 n->guid, desc, fabsnap_type_name(n->type));
	}
	fabsnap_put(s);
}

/* Trap 66 (a multicast group created) or 67 (deleted), its MGID at
 * DataDetails 6..21: noted, and a sweep asked (its groups against the
 * snapshot before's make the mcast_join and mcast_leave events). */
static void group_trap(unsigned trap, unsigned issuer, const uint8_t *notice)
{
	char mgid[FAB_GID_TEXT], line[160];

	fabmcast_gid_text(mgid, notice + 16);
	snprintf(line, sizeof(line), "event=trap trap=%u issuer_lid=%u mgid=%s", trap,
		 issuer, mgid);
	tr.note(line);
	sweeper_sweep();
}

static void handle(uint8_t *frame)
{
	uint8_t *notice = frame + UMAD_FRAME_HDR_SIZE + IB_SA_DATA_OFFS;
	unsigned trap = mad_get_field(notice, 0, IB_NOTICE_TRAP_NUMBER_F);
	unsigned issuer = mad_get_field(notice, 0, IB_NOTICE_ISSUER_LID_F);
	struct refresh_ask a = { 0 };
	char whom[400], extra[96] = "", lid[16] = "", line[640];
	uint8_t copy[UMAD_FRAME_MAX];

	memcpy(copy, frame, sizeof(copy));
	answer(copy);
	if (!mad_get_field(notice, 0, IB_NOTICE_IS_GENERIC_F))
		return;
	if (trap == 66 || trap == 67) {
		group_trap(trap, issuer, notice);
		return;
	}
	switch (trap) {
	case 64: /* GID in service, 65: out of service: DataDetails 6..21 */
	case 65: {
		const uint8_t *gid = notice + 16;
		uint64_t guid = 0;

		for (int i = 8; i < 16; i++)
			guid = guid << 8 | gid[i];
		a.guid = guid;
		a.gone = trap == 65;
		snprintf(extra, sizeof(extra), " port_guid=0x%016" PRIx64, guid);
		break;
	}
	case 128: /* link state change: the switch's LIDAddr */
		a.lid = (uint16_t)mad_get_field(notice, 0, IB_NOTICE_DATA_LID_F);
		break;
	case 144: /* capability mask or node description changed */
		a.lid = (uint16_t)mad_get_field(notice, 0, IB_NOTICE_DATA_144_LID_F);
		a.desc = true;
		snprintf(extra, sizeof(extra), " capmask=0x%08x",
			 mad_get_field(notice, 0, IB_NOTICE_DATA_144_CAPMASK_F));
		break;
	default:
		a.lid = (uint16_t)issuer;
		break;
	}
	if (!a.guid && !a.lid)
		a.lid = (uint16_t)issuer;
	who(whom, sizeof(whom), &a);
	if (a.lid)
		snprintf(lid, sizeof(lid), " lid=%u", a.lid);
	snprintf(line, sizeof(line), "event=trap trap=%u issuer_lid=%u%s%s%s", trap,
		 issuer, lid, extra, whom);
	tr.note(line);
	if (a.guid || a.lid)
		sweeper_refresh(&a);
}

static void *traps_thread(void *arg)
{
	int64_t next = 0;

	pthread_mutex_lock(&tr.lock);
	while (!tr.stopping) {
		uint8_t frame[UMAD_FRAME_MAX];

		if (reportq_pop(&tr.queue, frame)) {
			tr.reports++;
			pthread_mutex_unlock(&tr.lock);
			handle(frame);
			pthread_mutex_lock(&tr.lock);
			continue;
		}
		if (clock_now_ms() >= next) {
			pthread_mutex_unlock(&tr.lock);
			next = clock_now_ms() + (check() ? TRAPS_CHECK_MS : TRAPS_FIRST_MS);
			pthread_mutex_lock(&tr.lock);
			continue;
		}
		clock_wait_until(&tr.wake, &tr.lock, next);
	}
	pthread_mutex_unlock(&tr.lock);
	return NULL;
}

void traps_configure(bool on)
{
	tr.on = on;
}

int traps_start(traps_note_fn note)
{
	int r;

	tr.note = note;
	tr.sink.ops = &report_ops;
	if (!tr.on) {
		tr.state = TRAPS_OFF;
		return 0;
	}
	tr.state = TRAPS_CHECKING;
	r = -pthread_create(&tr.thread, NULL, traps_thread, NULL);
	if (r == 0)
		tr.started = true;
	return r;
}

void traps_shutdown(void)
{
	pthread_mutex_lock(&tr.lock);
	tr.stopping = true;
	pthread_cond_broadcast(&tr.wake);
	pthread_mutex_unlock(&tr.lock);
}

/* Leaves the SA's list (one try per trap: the SM may be gone) and
 * unregisters the agent. */
static void unsubscribe(void)
{
	struct mad_engine *e;
	char why[160];
	int err;

	if (!tr.port || !(e = ca_port_engine(tr.port, &err)))
		return;
	if (tr.state == TRAPS_SUBSCRIBED)
		for (size_t i = 0; i < sizeof(trap_numbers) / sizeof(trap_numbers[0]); i++)
			if (inform(e, tr.sm_lid, trap_numbers[i], false, 0, why,
				   sizeof(why)) < 0)
				break;
	engine_unregister_sink(e, &tr.sink);
	ca_port_engine_done(tr.port);
}

void traps_stop(void)
{
	traps_shutdown();
	if (!tr.started)
		return;
	pthread_join(tr.thread, NULL);
	tr.started = false;
	unsubscribe();
}
