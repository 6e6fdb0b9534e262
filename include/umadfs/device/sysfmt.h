/* Values formatted exactly as the kernel's /sys/class/infiniband files
 * print them (drivers/infiniband/core/sysfs.c), so that umadfs files read
 * like sysfs.  Each function writes a NUL-terminated line ending in '\n'
 * into buf and returns its length, or -ENOSPC if it does not fit. */
#ifndef UMADFS_SYSFMT_H
#define UMADFS_SYSFMT_H

#include <stddef.h>
#include <stdint.h>

/* printf into buf: the length, or -ENOSPC if it does not fit. */
int sysfmt_line(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "1: CA\n", "2: switch\n", "3: router\n", ... */
int sysfmt_node_type(char *buf, size_t cap, unsigned node_type);
/* "0002:c903:0000:1234\n" from a GUID in host byte order. */
int sysfmt_guid_colon(char *buf, size_t cap, uint64_t guid);
/* "fe80:0000:0000:0000:0002:c903:0000:1234\n", a GID from its prefix
 * and GUID in host byte order, as the kernel's gids/N ("%pI6"). */
int sysfmt_gid(char *buf, size_t cap, uint64_t prefix, uint64_t guid);
/* "0x0002c90300001234\n", as ibstat prints GUIDs. */
int sysfmt_guid_hex(char *buf, size_t cap, uint64_t guid);
/* "4: ACTIVE\n"; PortInfo PortState numbering. */
int sysfmt_port_state(char *buf, size_t cap, unsigned state);
/* "5: LinkUp\n"; PortInfo PortPhysicalState numbering. */
int sysfmt_phys_state(char *buf, size_t cap, unsigned phys_state);
/*
 * "10 Gb/sec (4X SDR)\n" from PortInfo's encodings: LinkWidthActive
 * (1=1X 2=4X 4=8X 8=12X 16=2X), LinkSpeedActive (1=SDR 2=DDR 4=QDR) and
 * LinkSpeedExtActive (0=none 1=FDR 2=EDR 4=HDR 8=NDR 16=XDR), which wins
 * when non-zero, as in the kernel's ib_query_port.
 */
int sysfmt_rate(char *buf, size_t cap, unsigned width, unsigned speed,
		unsigned ext_speed);
/* The rate sysfmt_rate() prints, in Mb/s (10000 for 4X SDR), or -EINVAL
 * for an unknown width. */
int sysfmt_rate_mbps(unsigned width, unsigned speed, unsigned ext_speed);
/* The active speed's name as sysfmt_rate words it: "FDR" ... "XDR" when
 * ext_speed is set, else "SDR", "DDR" or "QDR" ("SDR" for an unknown
 * code, as the kernel). */
const char *sysfmt_speed_name(unsigned speed, unsigned ext_speed);
/* The widths whose bits are set in a LinkWidthEnabled or
 * LinkWidthSupported, fewest lanes first: "1X 4X 12X\n" (an empty line
 * for none). */
int sysfmt_widths(char *buf, size_t cap, unsigned bits);
/* The speeds set in LinkSpeed{Enabled,Supported} (bits) and
 * LinkSpeedExt{Enabled,Supported} (ext_bits), slowest first:
 * "SDR DDR QDR FDR EDR\n" (an empty line for none). */
int sysfmt_speeds(char *buf, size_t cap, unsigned bits, unsigned ext_bits);

#endif
