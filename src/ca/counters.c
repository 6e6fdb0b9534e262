/* Port counters through the MAD engine. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/mad.h>

#include "umadfs/ca/attr.h"
#include "umadfs/ca/counters.h"
#include "umadfs/device/device.h"
#include "umadfs/fuse/textfile.h"
#include "umadfs/fuse/tree.h"
#include "umadfs/mad/getframe.h"
#include "umadfs/mad/pmacounters.h"

static int counter_show(struct node *n, char *buf, size_t cap)
{
	struct ca_port *port = n->owner;
	uint8_t data[IB_PC_DATA_SZ];
	unsigned capmask, attr_id;
	uint64_t v;
	int lid, r;
	bool ext;

	lid = attr_port_lid(port);
	if (lid < 0)
		return lid;
	memset(data, 0, sizeof(data));
	r = ca_port_pma_get(port, (unsigned)lid, CLASS_PORT_INFO, data);
	if (r < 0)
		return r == -ENODEV || r == -ENETDOWN ? r : -EIO;
	capmask = mad_get_field(data, 0, IB_CPI_CAPMASK_F);
	attr_id = pmacounters_attr((unsigned)n->attr, capmask);
	if (!attr_id)
		return -EOPNOTSUPP;

	memset(data, 0, sizeof(data));
	getframe_counters_select(data, attr_id, (unsigned)port->portnum);
	r = ca_port_pma_get(port, (unsigned)lid, attr_id, data);
	if (r < 0)
		return -EIO;
	ext = attr_id == IB_GSI_PORT_COUNTERS_EXT;
	if (!pmacounters_value((unsigned)n->attr, ext ? NULL : data, ext ? data : NULL,
			       capmask, &v))
		return -EOPNOTSUPP;
	return snprintf(buf, cap, "%" PRIu64 "\n", v);
}

/* A text file: a stat shows the true size (textfile_size(): two MADs per
 * stat), so that copies get the value. */
static const struct node_ops counter_ops = { .show = counter_show };

int counters_add_files(struct node *port_dir, struct ca_port *port)
{
	struct node *dir = tree_add(port_dir, "counters", S_IFDIR | 0555, NULL, port, 0);

	if (!dir)
		return -ENOMEM;
	for (unsigned i = 0; i < pmacounters_count(); i++)
		if (!tree_add(dir, pmacounters_name(i), S_IFREG | 0444, &counter_ops,
			      port, (int)i))
			return -ENOMEM;
	return 0;
}
