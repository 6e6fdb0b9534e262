/* InfiniBand's codes as the SMA and the PMA give them, each named once:
 * the unicast and multicast LIDs, PortInfo's PortState, PortPhysicalState, LinkWidth and LinkSpeed (Ext)
 * codes and CapabilityMask bits, SMInfo's SMState, the PMA ClassPortInfo's
 * CapabilityMask bits; the widths' lanes, the speeds' names and lane
 * rates; the states' names as the diagnostics print them.  The numbers
 * are the IBA's (vol. 1, 14.2.5.6, 14.2.5.13, 16.1.3.1), host order as
 * mad_get_field() gives them, under the names of libibmad's own
 * iba_types.h (which it does not install); the NDR and XDR speeds, which
 * it lacks, named as its others. */
#ifndef UMADFS_IBCODES_H
#define UMADFS_IBCODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* LIDs: 1 to IB_LID_UCAST_END_HO unicast, multicast from
 * IB_LID_MCAST_START_HO. */
#define IB_LID_UCAST_END_HO 0xbfff
#define IB_LID_MCAST_START_HO 0xc000

/* PortInfo PortState. */
#define IB_LINK_NO_CHANGE 0
#define IB_LINK_DOWN 1
#define IB_LINK_INIT 2
#define IB_LINK_ARMED 3
#define IB_LINK_ACTIVE 4
#define IB_LINK_ACT_DEFER 5

/* PortInfo PortPhysicalState. */
#define IB_PORT_PHYS_STATE_NO_CHANGE 0
#define IB_PORT_PHYS_STATE_SLEEP 1
#define IB_PORT_PHYS_STATE_POLLING 2
#define IB_PORT_PHYS_STATE_DISABLED 3
#define IB_PORT_PHYS_STATE_PORTCONFTRAIN 4
#define IB_PORT_PHYS_STATE_LINKUP 5
#define IB_PORT_PHYS_STATE_LINKERRRECOVER 6
#define IB_PORT_PHYS_STATE_PHYTEST 7

/* PortInfo LinkWidth bits (Active: one of them), and LinkWidthEnabled's
 * "as LinkWidthSupported". */
#define IB_LINK_WIDTH_ACTIVE_1X 1
#define IB_LINK_WIDTH_ACTIVE_4X 2
#define IB_LINK_WIDTH_ACTIVE_8X 4
#define IB_LINK_WIDTH_ACTIVE_12X 8
#define IB_LINK_WIDTH_ACTIVE_2X 16
#define IB_LINK_WIDTH_SET_LWS 255

/* PortInfo LinkSpeed bits (SDR, DDR, QDR), LinkSpeedEnabled's "as
 * LinkSpeedSupported"; LinkSpeedExt bits (FDR ... XDR), LinkSpeedExtEnabled's
 * "extended speeds off" and "as LinkSpeedExtSupported". */
#define IB_LINK_SPEED_ACTIVE_2_5 1
#define IB_LINK_SPEED_ACTIVE_5 2
#define IB_LINK_SPEED_ACTIVE_10 4
#define IB_LINK_SPEED_SET_LSS 15
#define IB_LINK_SPEED_EXT_ACTIVE_14 1
#define IB_LINK_SPEED_EXT_ACTIVE_25 2
#define IB_LINK_SPEED_EXT_ACTIVE_50 4
#define IB_LINK_SPEED_EXT_ACTIVE_100 8
#define IB_LINK_SPEED_EXT_ACTIVE_200 16
#define IB_LINK_SPEED_EXT_DISABLE 30
#define IB_LINK_SPEED_EXT_SET_LSES 31

/* PortInfo CapabilityMask bits. */
#define IB_PORT_CAP_IS_SM (1u << 1)
#define IB_PORT_CAP_HAS_EXT_SPEEDS (1u << 14) /* LinkSpeedExt* mean something */

/* SMInfo SMState. */
#define IB_SMINFO_STATE_NOTACTIVE 0
#define IB_SMINFO_STATE_DISCOVERING 1
#define IB_SMINFO_STATE_STANDBY 2
#define IB_SMINFO_STATE_MASTER 3

/* The PMA's ClassPortInfo CapabilityMask bits. */
#define IB_PM_ALL_PORT_SELECT (1u << 8)      /* PortSelect 255: a switch's sum */
#define IB_PM_EXT_WIDTH_SUPPORTED (1u << 9)  /* every PortCountersExtended counter */
#define IB_PM_EXT_WIDTH_NOIETF_SUP (1u << 10) /* its data and packet counters */
#define IB_PM_PC_XMIT_WAIT_SUP (1u << 12)    /* PortCounters PortXmitWait */
#define IB_PM_IS_QP1_DROP_SUP (1u << 15)     /* PortCounters QP1Dropped */

/* A LinkWidth code's lanes (1, 2, 4, 8, 12), or -1 for a code that is
 * not one width. */
int ibcodes_width_lanes(unsigned width);
/* The width of so many lanes, 0 for none. */
unsigned ibcodes_width_of_lanes(unsigned lanes);
/* The widths fewest lanes first: the i-th's code, 0 past the last. */
unsigned ibcodes_width_at(unsigned i);
/* "1x, 2x, 4x, 8x or 12x": the widths as ibnetdiscover words them. */
void ibcodes_width_list(char *buf, size_t cap);

/* A speed: its LinkSpeed bit (ext false) or LinkSpeedExt bit, its name
 * (SDR ... XDR) and the rate of one lane (Mb/s, as the kernel's
 * rate_show() counts it: FDR's 14062.5 is 14000). */
struct ib_speed {
	uint8_t bit;
	bool ext;
	const char *name;
	unsigned lane_mbps;
};

/* The speeds slowest first: the i-th, NULL past the last. */
const struct ib_speed *ibcodes_speed_at(unsigned i);
/* The speed a port runs at: LinkSpeedExtActive's when it is the code of
 * one, else LinkSpeedActive's; NULL when neither is (the kernel takes
 * that as SDR, ibnetdiscover prints "?"). */
const struct ib_speed *ibcodes_speed(unsigned speed, unsigned ext);
/* A speed's name as ibnetdiscover writes it, any case (s[0..len)): 0 with
 * its LinkSpeed and LinkSpeedExt codes (one of them 0), or -EINVAL.
 * "FDR10", a vendor's speed ibnetdiscover names, is taken as QDR. */
int ibcodes_speed_parse(const char *s, size_t len, uint8_t *speed, uint8_t *ext);
/* "SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR or XDR": the names
 * ibcodes_speed_parse() takes. */
void ibcodes_speed_list(char *buf, size_t cap);

/* PortState as the diagnostics print it ("NOP", "Down", "Init", "Armed",
 * "Active", "ActDefer"), NULL for a code without a name. */
const char *ibcodes_state_name(unsigned state);
/* PortPhysicalState as the IBA (and the kernel's sysfs) words it
 * ("Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
 * "LinkErrorRecovery", "Phy Test"), NULL for 0 and codes without one. */
const char *ibcodes_phys_state_name(unsigned phys_state);
/* SMState as sminfo prints it ("notactive", "discovering", "standby",
 * "master"), NULL past them. */
const char *ibcodes_sm_state_name(unsigned state);

#endif
