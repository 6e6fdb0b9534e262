/* The port's umad agents (agent_table.c).  engine->lock held by the caller
 * for agent_table_pick() and agent_table_sink(); the others take it. */
#ifndef UMADFS_AGENT_TABLE_H
#define UMADFS_AGENT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct engine_registration;
struct mad_engine;
struct mad_sink;

void agent_table_init(struct mad_engine *engine);
/* Closes what the table holds beside the fd (the simulator's issm). */
void agent_table_close(struct mad_engine *engine);
/* The agent a MAD of sink goes out through, or -errno if none can be had. */
int agent_table_pick(struct mad_engine *engine, struct mad_sink *sink,
		     const uint8_t *mad);
/* The sink registered for an unsolicited MAD, or NULL. */
struct mad_sink *agent_table_sink(struct mad_engine *engine, const uint8_t *mad);
/* Answers an SMInfo Get the simulator hands the engine's issm (true), as
 * a port with no SM behind it.  Receiver thread. */
bool agent_table_sim_answer(struct mad_engine *engine, uint8_t *frame);

/* engine_register(), engine_list_registrations() and engine_holds_issm()
 * (engine.h); agent_table_unregister() unregisters sink's agents, the
 * first half of engine_unregister_sink(). */
int agent_table_register(struct mad_engine *engine, struct mad_sink *sink,
			 const struct engine_registration *reg, char *why, size_t whylen);
void agent_table_unregister(struct mad_engine *engine, struct mad_sink *sink);
int agent_table_list(struct mad_engine *engine, struct mad_sink *sink,
		     struct engine_registration *out, int *ids, int max);
bool agent_table_holds_issm(struct mad_engine *engine);
/* engine_issm_hold(), engine_issm_release(), engine_issm_agents(). */
int agent_table_issm_hold(struct mad_engine *engine);
void agent_table_issm_release(struct mad_engine *engine);
bool agent_table_issm_agents(struct mad_engine *engine);

#endif
