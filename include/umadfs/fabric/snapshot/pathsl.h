/* The SL of each CA-to-CA path as the SA gives it (PathRecord), for the
 * routing check of a fabric whose routing engine puts pairs on several
 * SLs (lash and dfsssp give a pair its SL only there; pathsl.c): which
 * fabrics are asked, and the asking (the table: fabsnap.h's
 * fab_pathsl). */
#ifndef UMADFS_PATHSL_H
#define UMADFS_PATHSL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fab_snap;
struct mad_engine;

#define PATHSL_CAS_MAX 64 /* CA ports of a fabric whose pairs are asked */

/* prev's pairs' SLs taken by snap when its routing is prev's: true when
 * snap has them (so, none to ask). */
bool pathsl_carry(const struct fab_snap *prev, struct fab_snap *snap);
/* Whether snap is small enough to have its pairs asked: at most
 * PATHSL_CAS_MAX Active CA ports with a LID, and an SM LID to ask. */
bool pathsl_small(const struct fab_snap *snap);
/* Asks the SA at snap's SM LID each pair's PathRecord (SLID, DLID: every
 * DLID of a port with an LMC), into snap->pathsl; when some pair is on an
 * SL but 0, then every switch's SL-to-VL tables the routing check needs
 * (as sweepsl2vl.c's full read, each SL's VL kept: fab_sl2vl.maps), in
 * new tables of snap's.  Each waits for its answer; the first that gets
 * none ends the asking, and so does stop() returning true before a Get
 * (snap->pathsl left NULL).  0, -E2BIG (not a small fabric), -ECANCELED,
 * or -errno. */
int pathsl_ask(struct fab_snap *snap, struct mad_engine *engine, bool (*stop)(void));

#endif
