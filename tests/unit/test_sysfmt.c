/* The sysfs-style formatters against lines copied from kernel sysfs. */
#include <errno.h>

#include "check.h"
#include "umadfs/device/sysfmt.h"
#include "umadfs/mad/ibcodes.h"

int main(void)
{
	char b[64];

	CHECK_INT(sysfmt_node_type(b, sizeof(b), 1), 6);
	CHECK_STR(b, "1: CA\n");
	sysfmt_node_type(b, sizeof(b), 2);
	CHECK_STR(b, "2: switch\n");
	sysfmt_node_type(b, sizeof(b), 3);
	CHECK_STR(b, "3: router\n");
	sysfmt_node_type(b, sizeof(b), 4);
	CHECK_STR(b, "4: RNIC\n");
	sysfmt_node_type(b, sizeof(b), 99);
	CHECK_STR(b, "99: <unknown>\n");

	sysfmt_guid_colon(b, sizeof(b), 0x0002c90300a1b2c3ULL);
	CHECK_STR(b, "0002:c903:00a1:b2c3\n");
	sysfmt_guid_hex(b, sizeof(b), 0x100007ULL);
	CHECK_STR(b, "0x0000000000100007\n");

	sysfmt_port_state(b, sizeof(b), 4);
	CHECK_STR(b, "4: ACTIVE\n");
	sysfmt_port_state(b, sizeof(b), 2);
	CHECK_STR(b, "2: INIT\n");
	sysfmt_port_state(b, sizeof(b), 1);
	CHECK_STR(b, "1: DOWN\n");
	sysfmt_port_state(b, sizeof(b), 9);
	CHECK_STR(b, "9: UNKNOWN\n");

	sysfmt_phys_state(b, sizeof(b), 5);
	CHECK_STR(b, "5: LinkUp\n");
	sysfmt_phys_state(b, sizeof(b), 2);
	CHECK_STR(b, "2: Polling\n");
	sysfmt_phys_state(b, sizeof(b), 7);
	CHECK_STR(b, "7: Phy Test\n");
	sysfmt_phys_state(b, sizeof(b), 0);
	CHECK_STR(b, "0: <unknown>\n");

	/* width code 2 = 4X; speed 1 = SDR, as ibsim's ports are. */
	sysfmt_rate(b, sizeof(b), 2, 1, 0);
	CHECK_STR(b, "10 Gb/sec (4X SDR)\n");
	sysfmt_rate(b, sizeof(b), 1, 1, 0);
	CHECK_STR(b, "2.5 Gb/sec (1X SDR)\n");
	sysfmt_rate(b, sizeof(b), 2, 4, 0);
	CHECK_STR(b, "40 Gb/sec (4X QDR)\n");
	sysfmt_rate(b, sizeof(b), 8, 2, 0);
	CHECK_STR(b, "60 Gb/sec (12X DDR)\n");
	sysfmt_rate(b, sizeof(b), 2, 4, 1);
	CHECK_STR(b, "56 Gb/sec (4X FDR)\n");
	sysfmt_rate(b, sizeof(b), 2, 4, 2);
	CHECK_STR(b, "100 Gb/sec (4X EDR)\n");
	sysfmt_rate(b, sizeof(b), 16, 1, 4);
	CHECK_STR(b, "100 Gb/sec (2X HDR)\n");
	sysfmt_rate(b, sizeof(b), 2, 1, 8);
	CHECK_STR(b, "400 Gb/sec (4X NDR)\n");
	CHECK_INT(sysfmt_rate(b, sizeof(b), 3, 1, 0), -EINVAL);

	/* Too small a buffer is refused, never truncated. */
	CHECK_INT(sysfmt_port_state(b, 4, 4), -ENOSPC);
	CHECK_INT(ibcodes_width_lanes(8), 12);

	/* The bits of PortInfo's Enabled and Supported fields, as names. */
	CHECK_INT(sysfmt_widths(b, sizeof(b), 1 | 2), 6);
	CHECK_STR(b, "1X 4X\n");
	sysfmt_widths(b, sizeof(b), 0x1f);
	CHECK_STR(b, "1X 2X 4X 8X 12X\n");
	CHECK_INT(sysfmt_widths(b, sizeof(b), 0), 1);
	CHECK_STR(b, "\n");
	sysfmt_speeds(b, sizeof(b), 7, 0);
	CHECK_STR(b, "SDR DDR QDR\n");
	sysfmt_speeds(b, sizeof(b), 1, 2 | 8);
	CHECK_STR(b, "SDR EDR NDR\n");
	sysfmt_speeds(b, sizeof(b), 7, 0x1f);
	CHECK_STR(b, "SDR DDR QDR FDR EDR HDR NDR XDR\n");
	CHECK_INT(sysfmt_speeds(b, 8, 7, 0), -ENOSPC);
	CHECK_STR(sysfmt_speed_name(4, 0), "QDR");
	CHECK_STR(sysfmt_speed_name(4, 2), "EDR");
	CHECK_STR(sysfmt_speed_name(1, 8), "NDR");
	CHECK_STR(sysfmt_speed_name(2, 3), "DDR"); /* no one speed: the basic one */
	CHECK_STR(sysfmt_speed_name(0, 0), "SDR");
	CHECK_DONE();
}
