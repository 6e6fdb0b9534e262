/* The expected topology (expected.h): fabric/expected, and the first
 * complete sweep as the default (its snapshots: topofile.c). */
#include <errno.h>
#include <stddef.h>

#include "umadfs/fabric/expected.h"
#include "umadfs/fabric/fabsnap.h"

int expected_configure(const char *path)
{
	return path ? -EINVAL : 0;
}

int expected_add(struct node *fabric_dir, const gid_t *group)
{
	(void)fabric_dir;
	(void)group;
	return 0;
}

void expected_offer(struct fab_snap *snap)
{
	(void)snap;
}

struct fab_snap *expected_get(void)
{
	return NULL;
}

void expected_close(void)
{
}
