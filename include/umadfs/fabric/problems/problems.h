/* fabric/problems: what is wrong with the fabric, judged from each new
 * snapshot (no MADs of its own) against the one before, the expected
 * topology and the error thresholds (problems.c); each problem is
 * problem.h's. */
#ifndef UMADFS_PROBLEMS_H
#define UMADFS_PROBLEMS_H

#include <stdbool.h>

struct fab_snap;

/* Loads -o fabric_thresholds=PATH (NULL: ibqueryerrors' default file when
 * it exists); -EINVAL with the reason on stderr. */
int problems_configure(const char *thresholds_path);
/* -o fabric_routes_minimal=: whether the routing engine claims minimal
 * paths (route_not_minimal is judged); before the sweep thread starts. */
void problems_routes_minimal(bool on);
/* How many credit loops snap's routing has, every route followed on its
 * pair's SL when snap knows it (pathsl.h), else on SL 0, as the judgement
 * finds them; no problem made.  -ENOMEM.  The sweep thread, before
 * problems_judge(): whether the pairs' SLs are worth asking. */
int problems_credit_loops(const struct fab_snap *snap);
/* Judges snap (not yet swapped in) against prev (the snapshot before, or
 * NULL) and expected (or NULL): sets snap->problems.  The sweep thread. */
void problems_judge(const struct fab_snap *prev, struct fab_snap *snap,
		    const struct fab_snap *expected);
/* Forgets what the judgements remember across snapshots (the flaps of
 * link_flapping): at stop, once the sweep thread is gone; between the
 * unit tests' fabrics. */
void problems_forget(void);

#endif
