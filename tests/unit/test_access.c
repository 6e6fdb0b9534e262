// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the access policy (src/access.c): which MADs and
 * registrations an unprivileged opener is refused, and how -o mad_group=
 * is read.  tests/integration/test_security.py checks the same through
 * a mount, as a real unprivileged user.
 */
#include "check.h"

#include <errno.h>
#include <stdint.h>

#include "umadfs/channel/access.h"

static void test_every_class_and_method(void)
{
	uint8_t mad[256] = { 1 };
	char why[256];

	for (unsigned c = 0; c < 256; c++) {
		for (unsigned m = 0; m < 256; m++) {
			bool smi = c == 0x01 || c == 0x81;
			bool changes = m == 0x02 || m == 0x15;

			mad[1] = (uint8_t)c;
			mad[3] = (uint8_t)m;
			CHECK_INT(access_check_mad(mad, why, sizeof(why)),
				  smi || changes ? -EPERM : 0);
		}
		CHECK_INT(access_check_class(c, why, sizeof(why)),
			  c == 0x01 || c == 0x81 ? -EPERM : 0);
	}
}

static void test_reasons(void)
{
	uint8_t mad[256] = { 1, 0x81, 1, 0x81 };
	char why[256];

	/* SMI responses too: answering SMPs is the SMA's. */
	CHECK_INT(access_check_mad(mad, why, sizeof(why)), -EPERM);
	CHECK_STR(why, "class smi-dr (0x81) is subnet management: root only "
		  "(mount option mad_group_smi gives it to the group)");
	mad[1] = 0x04;
	mad[3] = 0x02;
	CHECK_INT(access_check_mad(mad, why, sizeof(why)), -EPERM);
	CHECK_STR(why, "method set (0x02) changes state: root only "
		  "(mount option mad_group_smi gives it to the group)");
	mad[1] = 0x03;
	mad[3] = 0x15;
	CHECK_INT(access_check_mad(mad, why, sizeof(why)), -EPERM);
	CHECK_STR(why, "method delete (0x15) changes state: root only "
		  "(mount option mad_group_smi gives it to the group)");
	/* The answer to a Set or Delete is a response: serving is allowed. */
	mad[3] = 0x95;
	CHECK_INT(access_check_mad(mad, why, sizeof(why)), 0);
	mad[1] = 0x01;
	CHECK_INT(access_check_class(0x01, why, sizeof(why)), -EPERM);
	CHECK_STR(why, "class smi (0x01) is subnet management: root only "
		  "(mount option mad_group_smi gives it to the group)");
}

static void test_group_names(void)
{
	char why[128];

	CHECK_INT(access_set_group("root", false, why, sizeof(why)), 0);
	CHECK_INT(access_set_group("0", false, why, sizeof(why)), 0);
	/* A GID need not have a name, as with chown. */
	CHECK_INT(access_set_group("4242", true, why, sizeof(why)), 0);
	CHECK_INT(access_set_group("no-such-group-umadfs", false, why, sizeof(why)),
		  -ENOENT);
	CHECK_STR(why, "no such group");
	CHECK_INT(access_set_group("", false, why, sizeof(why)), -ENOENT);
	CHECK_INT(access_set_group("12x", false, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "expected a group name or a GID below 4294967295");
	CHECK_INT(access_set_group("4294967295", false, why, sizeof(why)), -EINVAL);
	CHECK_INT(access_set_group("99999999999999999999", false, why, sizeof(why)),
		  -EINVAL);
}

int main(void)
{
	test_every_class_and_method();
	test_reasons();
	test_group_names();
	CHECK_DONE();
}
