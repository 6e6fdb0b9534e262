// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the checks of a binary frame written to `umad`
 * (src/mad/umadframe.c).  The reasons are the exact last_error texts that
 * tests/integration/test_madfiles_bad_input.py reads back through a mount.
 */
#include "check.h"

#include <errno.h>
#include <stdint.h>

#include <infiniband/mad.h>

#include "umadfs/mad/umadframe.h"

static uint8_t buf[UMADFRAME_MAX + 64];
static char why[256];

/* A frame of size bytes with the given class and RMPP flags byte. */
static const void *frame(int mgmt_class, uint8_t rmpp_flags)
{
	memset(buf, 0, sizeof(buf));
	buf[64 + 0] = 1;
	buf[64 + 1] = (uint8_t)mgmt_class;
	buf[64 + 2] = 1;
	buf[64 + 3] = IB_MAD_METHOD_GET;
	buf[64 + 26] = rmpp_flags;
	return buf;
}

static int check(size_t size, size_t *mad_len)
{
	memset(why, 'x', sizeof(why));
	return umadframe_check(buf, size, mad_len, why, sizeof(why));
}

static void test_sizes(void)
{
	size_t mad_len;

	frame(IB_PERFORMANCE_CLASS, 0);
	/* Too short: not even the umad header and the common MAD header. */
	mad_len = 12345;
	CHECK_INT(check(0, &mad_len), -EINVAL);
	CHECK_STR(why, "frame of 0 bytes: shorter than the 64-byte umad header "
		  "and a MAD header");
	CHECK_INT(mad_len, 12345);	/* untouched on error */
	CHECK_INT(check(64, &mad_len), -EINVAL);
	CHECK_INT(check(87, &mad_len), -EINVAL);
	CHECK_STR(why, "frame of 87 bytes: shorter than the 64-byte umad header "
		  "and a MAD header");

	/* 88 bytes up to one MAD: accepted, sent as a zero-padded 256. */
	CHECK_INT(check(88, &mad_len), 0);
	CHECK_INT(mad_len, 256);
	CHECK_STR(why, "");
	CHECK_INT(check(64 + 100, &mad_len), 0);
	CHECK_INT(mad_len, 256);
	CHECK_INT(check(64 + 256, &mad_len), 0);
	CHECK_INT(mad_len, 256);

	/* One byte over one MAD, for a class without RMPP. */
	CHECK_INT(check(64 + 257, &mad_len), -EMSGSIZE);
	CHECK_STR(why, "frame of 321 bytes: more than one MAD needs an RMPP "
		  "class and RMPP Active");

	/* Over 64 KiB, whatever the class: checked before the RMPP rule. */
	frame(IB_SA_CLASS, 1);
	CHECK_INT(check(UMADFRAME_MAX, &mad_len), 0);
	CHECK_INT(mad_len, UMADFRAME_MAX - 64);
	CHECK_INT(check(UMADFRAME_MAX + 1, &mad_len), -EMSGSIZE);
	CHECK_STR(why, "frame of 65537 bytes: longer than 65536");
	frame(IB_PERFORMANCE_CLASS, 0);
	CHECK_INT(check(UMADFRAME_MAX + 64, &mad_len), -EMSGSIZE);
	CHECK_STR(why, "frame of 65600 bytes: longer than 65536");
}

static void test_rmpp(void)
{
	static const int rmpp_classes[] = {
		IB_SA_CLASS, IB_DEVICE_MGMT_CLASS, 0x10 /* DevAdm */, 0x12 /* BIS */,
		0x30, 0x32, 0x4f,
	};
	static const int plain_classes[] = {
		IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_PERFORMANCE_CLASS,
		IB_BOARD_MGMT_CLASS, IB_CM_CLASS, IB_CC_CLASS, 0x09, 0x2f, 0x50,
	};
	size_t mad_len, i;

	for (i = 0; i < sizeof(rmpp_classes) / sizeof(rmpp_classes[0]); i++) {
		/* Active (bit 0), with or without other flags. */
		frame(rmpp_classes[i], 0x01);
		CHECK_INT(check(64 + 1000, &mad_len), 0);
		CHECK_INT(mad_len, 1000);
		frame(rmpp_classes[i], 0x07);
		CHECK_INT(check(64 + 257, &mad_len), 0);
		CHECK_INT(mad_len, 257);
		/* Not Active. */
		frame(rmpp_classes[i], 0x06);
		CHECK_INT(check(64 + 1000, &mad_len), -EMSGSIZE);
		CHECK_STR(why, "frame of 1064 bytes: more than one MAD needs an "
			  "RMPP class and RMPP Active");
		/* One MAD needs no RMPP at all. */
		CHECK_INT(check(64 + 256, &mad_len), 0);
	}
	for (i = 0; i < sizeof(plain_classes) / sizeof(plain_classes[0]); i++) {
		frame(plain_classes[i], 0x01);
		CHECK_INT(check(64 + 512, &mad_len), -EMSGSIZE);
		CHECK_STR(why, "frame of 576 bytes: more than one MAD needs an "
			  "RMPP class and RMPP Active");
		CHECK_INT(check(64 + 256, &mad_len), 0);
	}
}

static void test_why_buffer(void)
{
	size_t mad_len;
	char small[10];

	frame(IB_PERFORMANCE_CLASS, 0);
	/* No room for a reason: still the error. */
	CHECK_INT(umadframe_check(buf, 3, &mad_len, NULL, 0), -EINVAL);
	/* A short buffer gets a truncated, terminated reason. */
	CHECK_INT(umadframe_check(buf, 3, &mad_len, small, sizeof(small)), -EINVAL);
	CHECK_STR(small, "frame of ");
	/* The header is not looked at: junk in it is the sender's business. */
	memset(buf, 0xff, 64);
	CHECK_INT(umadframe_check(buf, 64 + 256, &mad_len, NULL, 0), 0);
}

int main(void)
{
	test_sizes();
	test_rmpp();
	test_why_buffer();
	CHECK_DONE();
}
