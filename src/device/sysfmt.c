/* sysfs-style formatting of CA and port attributes. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "umadfs/device/sysfmt.h"

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

int sysfmt_guid_hex(char *buf, size_t cap, uint64_t guid)
{
	return sysfmt_line(buf, cap, "0x%016" PRIx64 "\n", guid);
}

int sysfmt_port_state(char *buf, size_t cap, unsigned state)
{
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};

	return sysfmt_line(buf, cap, "%u: %s\n", state,
		    state < sizeof(names) / sizeof(names[0]) ? names[state] : "UNKNOWN");
}

int sysfmt_phys_state(char *buf, size_t cap, unsigned phys_state)
{
	static const char *const names[] = {
		"<unknown>", "Sleep", "Polling", "Disabled",
		"PortConfigurationTraining", "LinkUp", "LinkErrorRecovery",
		"Phy Test",
	};

	return sysfmt_line(buf, cap, "%u: %s\n", phys_state,
		    phys_state < sizeof(names) / sizeof(names[0]) ?
			    names[phys_state] : "<unknown>");
}

int sysfmt_width_lanes(unsigned width)
{
	switch (width) {
	case 1: return 1;
	case 16: return 2;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	default: return -1;
	}
}

int sysfmt_rate(char *buf, size_t cap, unsigned width, unsigned speed,
		unsigned ext_speed)
{
	const char *name;
	int rate; /* deci-Gb/s per lane, as the kernel's rate_show() counts */
	int lanes = sysfmt_width_lanes(width);

	switch (ext_speed) {
	case 1: name = " FDR"; rate = 140; break;
	case 2: name = " EDR"; rate = 250; break;
	case 4: name = " HDR"; rate = 500; break;
	case 8: name = " NDR"; rate = 1000; break;
	case 16: name = " XDR"; rate = 2000; break;
	default:
		switch (speed) {
		case 2: name = " DDR"; rate = 50; break;
		case 4: name = " QDR"; rate = 100; break;
		default: name = " SDR"; rate = 25; break; /* as the kernel */
		}
	}
	if (lanes < 0)
		return -EINVAL;
	rate *= lanes;
	return sysfmt_line(buf, cap, "%d%s Gb/sec (%dX%s)\n", rate / 10,
		    rate % 10 ? ".5" : "", lanes, name);
}
