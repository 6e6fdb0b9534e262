/* sysfs-style formatting of CA and port attributes. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
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

/* PortInfo's width bits by lanes, and its speeds slowest first: the
 * LinkSpeed bits (SDR, DDR, QDR) then the LinkSpeedExt ones (FDR ...
 * XDR), each with the rate of a lane in deci-Gb/s as the kernel's
 * rate_show() counts it. */
static const struct { unsigned bit; int lanes; } widths[] = {
	{ 1, 1 }, { 16, 2 }, { 2, 4 }, { 4, 8 }, { 8, 12 },
};

static const struct speed {
	unsigned bit;
	bool ext;
	const char *name;
	int rate;
} speeds[] = {
	{ 1, false, "SDR", 25 }, { 2, false, "DDR", 50 }, { 4, false, "QDR", 100 },
	{ 1, true, "FDR", 140 }, { 2, true, "EDR", 250 }, { 4, true, "HDR", 500 },
	{ 8, true, "NDR", 1000 }, { 16, true, "XDR", 2000 },
};

#define NWIDTHS (sizeof(widths) / sizeof(widths[0]))
#define NSPEEDS (sizeof(speeds) / sizeof(speeds[0]))

int sysfmt_width_lanes(unsigned width)
{
	for (size_t i = 0; i < NWIDTHS; i++)
		if (widths[i].bit == width)
			return widths[i].lanes;
	return -1;
}

/* The active speed: the extended one when it names one, else the basic
 * one, SDR for a code it does not know (as the kernel). */
static const struct speed *active_speed(unsigned speed, unsigned ext_speed)
{
	for (size_t i = 0; i < NSPEEDS; i++)
		if (speeds[i].ext && speeds[i].bit == ext_speed)
			return &speeds[i];
	for (size_t i = 0; i < NSPEEDS; i++)
		if (!speeds[i].ext && speeds[i].bit == speed)
			return &speeds[i];
	return &speeds[0];
}

const char *sysfmt_speed_name(unsigned speed, unsigned ext_speed)
{
	return active_speed(speed, ext_speed)->name;
}

int sysfmt_rate(char *buf, size_t cap, unsigned width, unsigned speed,
		unsigned ext_speed)
{
	const struct speed *s = active_speed(speed, ext_speed);
	int lanes = sysfmt_width_lanes(width);
	int rate; /* deci-Gb/s */

	if (lanes < 0)
		return -EINVAL;
	rate = s->rate * lanes;
	return sysfmt_line(buf, cap, "%d%s Gb/sec (%dX %s)\n", rate / 10,
		    rate % 10 ? ".5" : "", lanes, s->name);
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
	for (size_t i = 0; i < NWIDTHS; i++) {
		if (!(bits & widths[i].bit))
			continue;
		snprintf(word, sizeof(word), "%dX", widths[i].lanes);
		if (put_word(buf, cap, &len, word) < 0)
			return -ENOSPC;
	}
	return end_line(buf, cap, len);
}

int sysfmt_speeds(char *buf, size_t cap, unsigned bits, unsigned ext_bits)
{
	int len = 0;

	if (!cap)
		return -ENOSPC;
	buf[0] = '\0';
	for (size_t i = 0; i < NSPEEDS; i++)
		if ((speeds[i].ext ? ext_bits : bits) & speeds[i].bit &&
		    put_word(buf, cap, &len, speeds[i].name) < 0)
			return -ENOSPC;
	return end_line(buf, cap, len);
}
