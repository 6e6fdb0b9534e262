/* InfiniBand's codes (ibcodes.h): the one table of widths and their
 * lanes, the one of speeds with their names and lane rates, and the
 * names of port, physical and SM states. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "umadfs/mad/ibcodes.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Fewest lanes first. */
static const struct { uint8_t code, lanes; } widths[] = {
	{ IB_LINK_WIDTH_ACTIVE_1X, 1 }, { IB_LINK_WIDTH_ACTIVE_2X, 2 },
	{ IB_LINK_WIDTH_ACTIVE_4X, 4 }, { IB_LINK_WIDTH_ACTIVE_8X, 8 },
	{ IB_LINK_WIDTH_ACTIVE_12X, 12 },
};

/* Slowest first: the LinkSpeed ones, then the LinkSpeedExt ones. */
static const struct ib_speed speeds[] = {
	{ IB_LINK_SPEED_ACTIVE_2_5, false, "SDR", 2500 },
	{ IB_LINK_SPEED_ACTIVE_5, false, "DDR", 5000 },
	{ IB_LINK_SPEED_ACTIVE_10, false, "QDR", 10000 },
	{ IB_LINK_SPEED_EXT_ACTIVE_14, true, "FDR", 14000 },
	{ IB_LINK_SPEED_EXT_ACTIVE_25, true, "EDR", 25000 },
	{ IB_LINK_SPEED_EXT_ACTIVE_50, true, "HDR", 50000 },
	{ IB_LINK_SPEED_EXT_ACTIVE_100, true, "NDR", 100000 },
	{ IB_LINK_SPEED_EXT_ACTIVE_200, true, "XDR", 200000 },
};

/* The vendor's speed ibnetdiscover names, and the speed it is read as
 * (the sweep reads no vendor speeds): listed after that speed. */
#define FDR10_NAME "FDR10"
#define FDR10_AS 2 /* speeds[2], QDR */

int ibcodes_width_lanes(unsigned width)
{
	for (size_t i = 0; i < COUNT(widths); i++)
		if (widths[i].code == width)
			return widths[i].lanes;
	return -1;
}

unsigned ibcodes_width_of_lanes(unsigned lanes)
{
	for (size_t i = 0; i < COUNT(widths); i++)
		if (widths[i].lanes == lanes)
			return widths[i].code;
	return 0;
}

unsigned ibcodes_width_at(unsigned i)
{
	return i < COUNT(widths) ? widths[i].code : 0;
}

const struct ib_speed *ibcodes_speed_at(unsigned i)
{
	return i < COUNT(speeds) ? &speeds[i] : NULL;
}

const struct ib_speed *ibcodes_speed(unsigned speed, unsigned ext)
{
	for (size_t i = 0; ext && i < COUNT(speeds); i++)
		if (speeds[i].ext && speeds[i].bit == ext)
			return &speeds[i];
	for (size_t i = 0; i < COUNT(speeds); i++)
		if (!speeds[i].ext && speeds[i].bit == speed)
			return &speeds[i];
	return NULL;
}

static bool named(const char *s, size_t len, const char *name)
{
	return len == strlen(name) && !strncasecmp(s, name, len);
}

int ibcodes_speed_parse(const char *s, size_t len, uint8_t *speed, uint8_t *ext)
{
	const struct ib_speed *found = named(s, len, FDR10_NAME) ? &speeds[FDR10_AS] : NULL;

	for (size_t i = 0; !found && i < COUNT(speeds); i++)
		if (named(s, len, speeds[i].name))
			found = &speeds[i];
	if (!found)
		return -EINVAL;
	*speed = found->ext ? 0 : found->bit;
	*ext = found->ext ? found->bit : 0;
	return 0;
}

/* Appends word to the list in buf (at *at): "a", "a, b", then " or "
 * before the last (last true). */
static void list_word(char *buf, size_t cap, size_t *at, const char *word, bool last)
{
	int n = snprintf(buf + *at, cap - *at, "%s%s", !*at ? "" : last ? " or " : ", ",
			 word);

	if (n > 0)
		*at += (size_t)n < cap - *at ? (size_t)n : cap - *at - 1;
}

void ibcodes_width_list(char *buf, size_t cap)
{
	size_t at = 0;
	char word[8];

	if (!cap)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < COUNT(widths); i++) {
		snprintf(word, sizeof(word), "%ux", (unsigned)widths[i].lanes);
		list_word(buf, cap, &at, word, i + 1 == COUNT(widths));
	}
}

void ibcodes_speed_list(char *buf, size_t cap)
{
	size_t at = 0;

	if (!cap)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < COUNT(speeds); i++) {
		list_word(buf, cap, &at, speeds[i].name, i + 1 == COUNT(speeds));
		if (i == FDR10_AS)
			list_word(buf, cap, &at, FDR10_NAME, false);
	}
}

const char *ibcodes_state_name(unsigned state)
{
	static const char *const names[] = {
		[IB_LINK_NO_CHANGE] = "NOP", [IB_LINK_DOWN] = "Down",
		[IB_LINK_INIT] = "Init", [IB_LINK_ARMED] = "Armed",
		[IB_LINK_ACTIVE] = "Active", [IB_LINK_ACT_DEFER] = "ActDefer",
	};

	return state < COUNT(names) ? names[state] : NULL;
}

const char *ibcodes_phys_state_name(unsigned phys_state)
{
	static const char *const names[] = {
		[IB_PORT_PHYS_STATE_SLEEP] = "Sleep",
		[IB_PORT_PHYS_STATE_POLLING] = "Polling",
		[IB_PORT_PHYS_STATE_DISABLED] = "Disabled",
		[IB_PORT_PHYS_STATE_PORTCONFTRAIN] = "PortConfigurationTraining",
		[IB_PORT_PHYS_STATE_LINKUP] = "LinkUp",
		[IB_PORT_PHYS_STATE_LINKERRRECOVER] = "LinkErrorRecovery",
		[IB_PORT_PHYS_STATE_PHYTEST] = "Phy Test",
	};

	return phys_state < COUNT(names) ? names[phys_state] : NULL;
}

const char *ibcodes_sm_state_name(unsigned state)
{
	static const char *const names[] = {
		[IB_SMINFO_STATE_NOTACTIVE] = "notactive",
		[IB_SMINFO_STATE_DISCOVERING] = "discovering",
		[IB_SMINFO_STATE_STANDBY] = "standby",
		[IB_SMINFO_STATE_MASTER] = "master",
	};

	return state < COUNT(names) ? names[state] : NULL;
}
