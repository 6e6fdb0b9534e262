/* sysfs-style formatting of CA and port attributes: the kernel's words
 * for the codes ibcodes.h names (its port states' spelling, its SDR for a
 * speed it does not know). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "umadfs/device/sysfmt.h"
#include "umadfs/mad/ibcodes.h"

int sysfmt_line(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	return n;
}

int sysfmt_node_type(char *buf, size_t cap, unsigned node_type)
{
	/* The kernel's RDMA_NODE_* numbering and node_type_show() words. */
	static const char *const names[] = {
		[1] = "CA", [2] = "switch", [3] = "router", [4] = "RNIC",
		[5] = "usNIC", [6] = "usNIC UDP", [7] = "unspecified",
	};
	const char *name = node_type < sizeof(names) / sizeof(names[0]) &&
				   names[node_type] ? names[node_type] : "<unknown>";

	return sysfmt_line(buf, cap, "%u: %s\n", node_type, name);
}

int sysfmt_guid_colon(char *buf, size_t cap, uint64_t guid)
{
	return sysfmt_line(buf, cap, "%04x:%04x:%04x:%04x\n",
		    (unsigned)(guid >> 48) & 0xffff, (unsigned)(guid >> 32) & 0xffff,
		    (unsigned)(guid >> 16) & 0xffff, (unsigned)guid & 0xffff);
}

int sysfmt_gid(char *buf, size_t cap, uint64_t prefix, uint64_t guid)
{
	/* The kernel's "%pI6": eight groups of four hex digits. */
	return sysfmt_line(buf, cap, "%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x\n",
		    (unsigned)(prefix >> 48) & 0xffff, (unsigned)(prefix >> 32) & 0xffff,
		    (unsigned)(prefix >> 16) & 0xffff, (unsigned)prefix & 0xffff,
		    (unsigned)(guid >> 48) & 0xffff, (unsigned)(guid >> 32) & 0xffff,
		    (unsigned)(guid >> 16) & 0xffff, (unsigned)guid & 0xffff);
}

int sysfmt_guid_hex(char *buf, size_t cap, uint64_t guid)
{
	return sysfmt_line(buf, cap, "0x%016" PRIx64 "\n", guid);
}

int sysfmt_port_state(char *buf, size_t cap, unsigned state)
{
	/* The kernel's state_show() words. */
	static const char *const names[] = {
		[IB_LINK_NO_CHANGE] = "NOP", [IB_LINK_DOWN] = "DOWN",
		[IB_LINK_INIT] = "INIT", [IB_LINK_ARMED] = "ARMED",
		[IB_LINK_ACTIVE] = "ACTIVE", [IB_LINK_ACT_DEFER] = "ACTIVE_DEFER",
	};

	return sysfmt_line(buf, cap, "%u: %s\n", state,
		    state < sizeof(names) / sizeof(names[0]) ? names[state] : "UNKNOWN");
}

int sysfmt_phys_state(char *buf, size_t cap, unsigned phys_state)
{
	const char *name = ibcodes_phys_state_name(phys_state);

	return sysfmt_line(buf, cap, "%u: %s\n", phys_state, name ? name : "<unknown>");
}

/* The active speed: the extended one when it names one, else the basic
 * one, SDR for a code it does not know (as the kernel). */
static const struct ib_speed *active_speed(unsigned speed, unsigned ext_speed)
{
	const struct ib_speed *s = ibcodes_speed(speed, ext_speed);

	return s ? s : ibcodes_speed_at(0);
}

const char *sysfmt_speed_name(unsigned speed, unsigned ext_speed)
{
	return active_speed(speed, ext_speed)->name;
}

int sysfmt_rate_mbps(unsigned width, unsigned speed, unsigned ext_speed)
{
	int lanes = ibcodes_width_lanes(width);

	if (lanes < 0)
		return -EINVAL;
	return lanes * (int)active_speed(speed, ext_speed)->lane_mbps;
}

int sysfmt_rate(char *buf, size_t cap, unsigned width, unsigned speed,
		unsigned ext_speed)
{
	int mbps = sysfmt_rate_mbps(width, speed, ext_speed);
	int rate = mbps / 100; /* deci-Gb/s */

	if (mbps < 0)
		return -EINVAL;
	return sysfmt_line(buf, cap, "%d%s Gb/sec (%dX %s)\n", rate / 10,
		    rate % 10 ? ".5" : "", ibcodes_width_lanes(width),
		    sysfmt_speed_name(speed, ext_speed));
}

/* Appends word to buf (at *len), a space before it but the first. */
static int put_word(char *buf, size_t cap, int *len, const char *word)
{
	int n = snprintf(buf + *len, cap - (size_t)*len, "%s%s", *len ? " " : "", word);

	if (n < 0 || (size_t)n >= cap - (size_t)*len)
		return -ENOSPC;
	*len += n;
	return 0;
}

static int end_line(char *buf, size_t cap, int len)
{
	if ((size_t)len + 1 >= cap)
		return -ENOSPC;
	buf[len++] = '\n';
	buf[len] = '\0';
	return len;
}

int sysfmt_widths(char *buf, size_t cap, unsigned bits)
{
	char word[8];
	int len = 0;

	if (!cap)
		return -ENOSPC;
	buf[0] = '\0';
	for (unsigned i = 0, w; (w = ibcodes_width_at(i)); i++) {
		if (!(bits & w))
			continue;
		snprintf(word, sizeof(word), "%dX", ibcodes_width_lanes(w));
		if (put_word(buf, cap, &len, word) < 0)
			return -ENOSPC;
	}
	return end_line(buf, cap, len);
}

int sysfmt_speeds(char *buf, size_t cap, unsigned bits, unsigned ext_bits)
{
	const struct ib_speed *s;
	int len = 0;

	if (!cap)
		return -ENOSPC;
	buf[0] = '\0';
	for (unsigned i = 0; (s = ibcodes_speed_at(i)); i++)
		if ((s->ext ? ext_bits : bits) & s->bit && put_word(buf, cap, &len, s->name) < 0)
			return -ENOSPC;
	return end_line(buf, cap, len);
}
