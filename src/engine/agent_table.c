/* The port's umad agents: the send-only agent of each class a MAD goes out
 * in, the agents channels register for unsolicited MADs, and what it takes
 * to keep them working under the simulator (umad2sim, ibsim). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/mad.h>

#include "umadfs/base/log.h"
#include "umadfs/engine/ibumad.h"
#include "umadfs/engine/sink.h"
#include "umadfs/mad/getframe.h"
#include "umadfs/mad/mad.h"
#include "agent_table.h"
#include "engine_priv.h"

void agent_table_init(struct mad_engine *engine)
{
	engine->issm_fd = -1;
}

void agent_table_close(struct mad_engine *engine)
{
	if (engine->issm_fd >= 0)
		close(engine->issm_fd);
	engine->issm_fd = -1;
	engine->issm_holds = 0;
	engine->agents_issm = false;
}

static bool agent_is(const struct agent *a, unsigned mgmt_class,
		     unsigned version, uint32_t oui)
{
	return a->mgmt_class == mgmt_class && a->class_version == version &&
	       a->oui == oui;
}

/* Adds an entry for agent id.  engine->lock held, a free entry left. */
static void agent_add(struct mad_engine *engine, int id, struct mad_sink *sink,
		      unsigned mgmt_class, unsigned version, uint32_t oui)
{
	struct agent *a = &engine->agents[engine->nagents++];

	memset(a, 0, sizeof(*a));
	a->mgmt_class = (uint8_t)mgmt_class;
	a->class_version = (uint8_t)version;
	a->oui = oui;
	a->id = id;
	a->sink = sink;
}

/* The shared send-only agent of a class, version (and OUI), registered
 * when first needed.  engine->lock held. */
static int send_agent(struct mad_engine *engine, unsigned mgmt_class,
		      unsigned version, uint32_t oui)
{
	int id;

	for (unsigned i = 0; i < engine->nagents; i++) {
		if (!engine->agents[i].sink && agent_is(&engine->agents[i], mgmt_class, version, oui))
			return engine->agents[i].id;
	}
	if (engine->nagents == AGENTS_MAX)
		return -ENOSPC;
	id = ibumad_register(engine->fd, (int)mgmt_class, (int)version,
			     mad_class_uses_rmpp(mgmt_class) ? 1 : 0, oui, NULL);
	if (id < 0) {
		log_warn("%s/%u: registering a send agent for class 0x%02x "
			 "version %u failed: %s", engine->ca, engine->portnum, mgmt_class,
			 version, strerror(-id));
		return id;
	}
	agent_add(engine, id, NULL, mgmt_class, version, oui);
	return id;
}

/* The agent a MAD goes out through.  A response from a channel that
 * registered its class goes through that registered agent, as a C program
 * answers with the agent that received the request: the kernel routes an
 * RMPP response's ACKs (sent back as requests) to the registered agent,
 * which must be the one sending.  Anything else goes through the shared
 * send-only agent of its class and version (and OUI, for vendor classes
 * 0x30-0x4F).  engine->lock held. */
int agent_table_pick(struct mad_engine *engine, struct mad_sink *sink, const uint8_t *mad)
{
	unsigned mgmt_class = mad[1], version = mad[2];
	uint32_t oui = mad_vendor_oui(mad);

	if (sink && mad_is_response(mad)) {
		for (unsigned i = 0; i < engine->nagents; i++) {
			struct agent *a = &engine->agents[i];

			if (a->sink == sink && agent_is(a, mgmt_class, version, oui))
				return a->id;
		}
	}
	return send_agent(engine, mgmt_class, version, oui);
}

/* The sink registered for an unsolicited MAD, as the kernel matches it:
 * class, version, method (and OUI in vendor range 2).  engine->lock held. */
struct mad_sink *agent_table_sink(struct mad_engine *engine, const uint8_t *mad)
{
	unsigned method = mad[3] & 0x7f;

	for (unsigned i = 0; i < engine->nagents; i++) {
		struct agent *a = &engine->agents[i];

		if (a->sink && agent_is(a, mad[1], mad[2], mad_vendor_oui(mad)) &&
		    (a->methods[method / 64] >> (method % 64) & 1))
			return a->sink;
	}
	return NULL;
}

/* What the kernel refuses of a registration before looking at the other
 * agents. */
static int check_registration(const struct engine_registration *reg,
			      char *why, size_t whylen)
{
	if (mad_class_is_vendor_range2(reg->mgmt_class) && !reg->oui) {
		snprintf(why, whylen, "vendor class 0x%02x needs an oui=",
			 reg->mgmt_class);
		return -EINVAL;
	}
	if (reg->rmpp && !mad_class_uses_rmpp(reg->mgmt_class)) {
		snprintf(why, whylen, "class 0x%02x has no RMPP", reg->mgmt_class);
		return -EINVAL;
	}
	if (!reg->methods[0] && !reg->methods[1]) {
		snprintf(why, whylen, "no method to register");
		return -EINVAL;
	}
	return 0;
}

/* -EINVAL, the kernel's answer, when a method of reg is already
 * registered on the port; -ENOSPC when no agent is left.  engine->lock held. */
static int check_room(struct mad_engine *engine, struct mad_sink *sink,
		      const struct engine_registration *reg, char *why, size_t whylen)
{
	for (unsigned i = 0; i < engine->nagents; i++) {
		struct agent *a = &engine->agents[i];

		if (a->sink && a->mgmt_class == reg->mgmt_class &&
		    a->class_version == reg->class_version &&
		    (!mad_class_is_vendor_range2(a->mgmt_class) || a->oui == reg->oui) &&
		    ((a->methods[0] & reg->methods[0]) ||
		     (a->methods[1] & reg->methods[1]))) {
			snprintf(why, whylen, "class 0x%02x version %u: a method is "
				 "already registered (agent %d%s)", reg->mgmt_class,
				 reg->class_version, a->id,
				 a->sink == sink ? ", this channel" : ", another channel");
			return -EINVAL;
		}
	}
	if (engine->nagents == AGENTS_MAX) {
		snprintf(why, whylen, "the port's %d agents are all in use", AGENTS_MAX);
		return -ENOSPC;
	}
	return 0;
}

/* One hold of the port's IsSM: the issm device opened by the first (the
 * kernel sets the port's IsSM while it is open; umad2sim has ibsim set
 * it).  Never waits: -EAGAIN when a process outside holds the device.
 * Under the simulator, holding issm makes ibsim send this client the SM's
 * SMPs (opensm probes SMInfo at once), and umad2sim's receiver crashes on
 * a class the process has no agent for: the SMI classes get their agents
 * first.  engine->lock held. */
static int issm_hold(struct mad_engine *engine)
{
	int fd;

	if (engine->issm_holds) {
		engine->issm_holds++;
		return 0;
	}
	if (ibumad_simulated()) {
		send_agent(engine, IB_SMI_CLASS, 1, 0);
		send_agent(engine, IB_SMI_DIRECT_CLASS, 1, 0);
	}
	fd = ibumad_open_issm(engine->ca, engine->portnum);
	if (fd < 0)
		return fd;
	engine->issm_fd = fd;
	engine->issm_holds = 1;
	return 0;
}

/* The last hold gone, the device is closed: the port's IsSM cleared.
 * engine->lock held. */
static void issm_release(struct mad_engine *engine)
{
	if (!engine->issm_holds || --engine->issm_holds)
		return;
	if (engine->issm_fd >= 0)
		close(engine->issm_fd);
	engine->issm_fd = -1;
}

/* ibsim hands unsolicited GSI requests only to a client holding the port's
 * issm device.  Under the simulator only (on a real port this would
 * announce an SM), the engine holds it while anything is registered: a
 * hold as the issm file's holder takes (issm_hold).  engine->lock held. */
static void sim_hold_issm(struct mad_engine *engine)
{
	int r;

	if (engine->agents_issm || !ibumad_simulated())
		return;
	r = issm_hold(engine);
	if (r < 0)
		log_warn("%s/%u: cannot open the issm device under the "
			 "simulator: %s", engine->ca, engine->portnum, strerror(-r));
	else
		engine->agents_issm = true;
}

int agent_table_issm_hold(struct mad_engine *engine)
{
	int r;

	pthread_mutex_lock(&engine->lock);
	r = issm_hold(engine);
	pthread_mutex_unlock(&engine->lock);
	return r;
}

void agent_table_issm_release(struct mad_engine *engine)
{
	pthread_mutex_lock(&engine->lock);
	issm_release(engine);
	pthread_mutex_unlock(&engine->lock);
}

bool agent_table_issm_agents(struct mad_engine *engine)
{
	bool held;

	pthread_mutex_lock(&engine->lock);
	held = engine->agents_issm;
	pthread_mutex_unlock(&engine->lock);
	return held;
}

int agent_table_register(struct mad_engine *engine, struct mad_sink *sink,
			 const struct engine_registration *reg, char *why, size_t whylen)
{
	uint32_t oui = mad_class_is_vendor_range2(reg->mgmt_class) ? reg->oui : 0;
	struct agent *a;
	int id;

	id = check_registration(reg, why, whylen);
	if (id < 0)
		return id;
	pthread_mutex_lock(&engine->lock);
	id = check_room(engine, sink, reg, why, whylen);
	if (id < 0)
		goto out;
	id = ibumad_register(engine->fd, reg->mgmt_class, reg->class_version,
			     reg->rmpp ? 1 : 0, oui, reg->methods);
	if (id < 0) {
		snprintf(why, whylen, "the kernel refused the registration: %s",
			 strerror(-id));
		id = id == -ENOMEM ? -ENOSPC : id;
		goto out;
	}
	sim_hold_issm(engine);
	if (engine->nagents == AGENTS_MAX) {
		/* The simulator's SMI agents took the last entries. */
		ibumad_unregister(engine->fd, id);
		id = check_room(engine, sink, reg, why, whylen);
		goto out;
	}
	a = &engine->agents[engine->nagents];
	agent_add(engine, id, sink, reg->mgmt_class, reg->class_version, oui);
	a->methods[0] = reg->methods[0];
	a->methods[1] = reg->methods[1];
	a->rmpp = reg->rmpp;
out:
	pthread_mutex_unlock(&engine->lock);
	return id;
}

/* umad2sim forgets a whole class when one of its agents goes: register
 * the class's other agents again (new ids).  engine->lock held. */
static void sim_reregister_class(struct mad_engine *engine, struct mad_sink *leaving,
				 unsigned mgmt_class)
{
	for (unsigned j = 0; j < engine->nagents; j++) {
		struct agent *o = &engine->agents[j];
		int id;

		if (o->mgmt_class != mgmt_class || (leaving && o->sink == leaving))
			continue;
		ibumad_unregister(engine->fd, o->id);
		id = ibumad_register(engine->fd, o->mgmt_class, o->class_version,
				     o->sink ? o->rmpp : mad_class_uses_rmpp(o->mgmt_class),
				     o->oui, o->sink ? o->methods : NULL);
		if (id < 0)
			log_warn("%s/%u: registering agent of class 0x%02x again: %s",
				 engine->ca, engine->portnum, mgmt_class, strerror(-id));
		else
			o->id = id;
	}
}

void agent_table_unregister(struct mad_engine *engine, struct mad_sink *sink)
{
	bool registered = false;

	pthread_mutex_lock(&engine->lock);
	for (unsigned i = 0; i < engine->nagents;) {
		if (engine->agents[i].sink == sink) {
			unsigned mgmt_class = engine->agents[i].mgmt_class;

			ibumad_unregister(engine->fd, engine->agents[i].id);
			engine->agents[i] = engine->agents[--engine->nagents];
			if (ibumad_simulated())
				sim_reregister_class(engine, sink, mgmt_class);
		} else {
			registered |= engine->agents[i].sink != NULL;
			i++;
		}
	}
	if (!registered && engine->agents_issm) {
		engine->agents_issm = false;
		issm_release(engine);
	}
	pthread_mutex_unlock(&engine->lock);
}

int agent_table_list(struct mad_engine *engine, struct mad_sink *sink,
		     struct engine_registration *out, int *ids, int max)
{
	int n = 0;

	pthread_mutex_lock(&engine->lock);
	for (unsigned i = 0; i < engine->nagents && n < max; i++) {
		struct agent *a = &engine->agents[i];

		if (a->sink != sink)
			continue;
		out[n].mgmt_class = a->mgmt_class;
		out[n].class_version = a->class_version;
		out[n].oui = a->oui;
		out[n].rmpp = a->rmpp;
		out[n].methods[0] = a->methods[0];
		out[n].methods[1] = a->methods[1];
		ids[n++] = a->id;
	}
	pthread_mutex_unlock(&engine->lock);
	return n;
}

bool agent_table_holds_issm(struct mad_engine *engine)
{
	bool held;

	pthread_mutex_lock(&engine->lock);
	held = engine->issm_fd >= 0;
	pthread_mutex_unlock(&engine->lock);
	return held;
}

/* An SMInfo Get that ibsim hands the issm holder (an SM polling the port
 * whose IsSM the engine's issm set), answered as a port with no SM behind
 * it: a GetResp with status 0x000C (attribute not supported, IBA 13.4.7),
 * so that an SM does not wait for this port (a starting opensm stayed in
 * DISCOVERING without an answer) nor take it for one (with a NOTACTIVE
 * SMInfo, an opensm taking over under load stayed master of nothing).
 * Under the simulator only; true when frame was such a Get (and is
 * answered).  Receiver thread. */
bool agent_table_sim_answer(struct mad_engine *engine, uint8_t *frame)
{
	uint8_t *mad = frame + UMAD_FRAME_HDR_SIZE;
	bool dr = mad[1] == IB_SMI_DIRECT_CLASS;
	int agent;

	if (!mad_class_is_smi(mad[1]) || mad[3] != IB_MAD_METHOD_GET ||
	    mad_get_field(mad, 0, IB_MAD_ATTRID_F) != IB_ATTR_SMINFO ||
	    !agent_table_holds_issm(engine))
		return false;
	getframe_response(frame, IB_MAD_METHOD_GET_RESPONSE);
	mad_set_field(mad, 0, dr ? IB_DRSMP_STATUS_F : IB_MAD_STATUS_F, 0x000c);
	if (dr)
		mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, 1);
	pthread_mutex_lock(&engine->lock);
	agent = send_agent(engine, mad[1], mad[2], 0);
	pthread_mutex_unlock(&engine->lock);
	if (agent >= 0)
		ibumad_send(engine->fd, agent, frame, MAD_SIZE, 0, 0);
	return true;
}
