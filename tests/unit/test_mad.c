// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for an answer's match to its request (mad_answer_matches(),
 * src/mad/mad.c): the class, and for a LID-routed request to a unicast
 * LID the answer's source - its LID but for the path bits, or its GID
 * when both carry a GRH.  The engine drops an answer that does not match
 * (tests/integration/test_actions.py: a node cut off).
 */
#include "check.h"

#include <endian.h>
#include <stdint.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include "umadfs/mad/mad.h"

static uint8_t req[UMAD_FRAME_MAX], ans[UMAD_FRAME_MAX];

/* A frame of mgmt_class addressed to (request) or from (answer) lid. */
static void frame(uint8_t *f, unsigned mgmt_class, unsigned lid)
{
	struct ib_user_mad *h = (struct ib_user_mad *)f;

	memset(f, 0, UMAD_FRAME_MAX);
	h->addr.lid = htobe16((uint16_t)lid);
	f[UMAD_FRAME_HDR_SIZE + 1] = (uint8_t)mgmt_class;
}

static void gid(uint8_t *f, uint8_t last)
{
	struct ib_user_mad *h = (struct ib_user_mad *)f;

	h->addr.grh_present = 1;
	memset(h->addr.gid, 0xfe, sizeof(h->addr.gid));
	h->addr.gid[15] = last;
}

static bool matches(unsigned req_class, unsigned dlid, unsigned ans_class,
		    unsigned slid, unsigned lmc)
{
	frame(req, req_class, dlid);
	frame(ans, ans_class, slid);
	return mad_answer_matches(req, ans, lmc);
}

static void test_lid_routed(void)
{
	CHECK(matches(IB_PERFORMANCE_CLASS, 8, IB_PERFORMANCE_CLASS, 8, 0));
	/* Another node's answer (the mount's own, LID 3, for LID 8). */
	CHECK(!matches(IB_PERFORMANCE_CLASS, 8, IB_PERFORMANCE_CLASS, 3, 0));
	CHECK(!matches(IB_SMI_CLASS, 8, IB_SMI_CLASS, 7, 0));
	CHECK(!matches(IB_SA_CLASS, 1, IB_SA_CLASS, 0, 0));
	/* Path bits: LIDs 8-11 are one port's at LMC 2, 12 is not. */
	CHECK(!matches(IB_PERFORMANCE_CLASS, 9, IB_PERFORMANCE_CLASS, 8, 0));
	CHECK(matches(IB_PERFORMANCE_CLASS, 9, IB_PERFORMANCE_CLASS, 8, 2));
	CHECK(matches(IB_PERFORMANCE_CLASS, 8, IB_PERFORMANCE_CLASS, 11, 2));
	CHECK(!matches(IB_PERFORMANCE_CLASS, 11, IB_PERFORMANCE_CLASS, 12, 2));
	CHECK(matches(IB_PERFORMANCE_CLASS, 0x80, IB_PERFORMANCE_CLASS, 0xff, 7));
	CHECK(!matches(IB_PERFORMANCE_CLASS, 0x80, IB_PERFORMANCE_CLASS, 0x100, 7));
}

static void test_class(void)
{
	/* The kernel's rcv_has_same_class(): whatever the route. */
	CHECK(!matches(IB_PERFORMANCE_CLASS, 8, IB_SA_CLASS, 8, 0));
	CHECK(!matches(IB_SMI_DIRECT_CLASS, 0xffff, IB_SMI_CLASS, 0xffff, 0));
}

static void test_no_one_source(void)
{
	/* Directed route: by TID alone, whatever the LIDs say. */
	CHECK(matches(IB_SMI_DIRECT_CLASS, 0xffff, IB_SMI_DIRECT_CLASS, 3, 0));
	CHECK(matches(IB_SMI_DIRECT_CLASS, 8, IB_SMI_DIRECT_CLASS, 3, 0));
	/* The permissive LID, multicast LIDs, no LID. */
	CHECK(matches(IB_SMI_CLASS, 0xffff, IB_SMI_CLASS, 4, 0));
	CHECK(matches(IB_SA_CLASS, 0xc000, IB_SA_CLASS, 4, 0));
	CHECK(matches(IB_SA_CLASS, 0xfffe, IB_SA_CLASS, 4, 0));
	CHECK(!matches(IB_SA_CLASS, 0xbfff, IB_SA_CLASS, 4, 0));
	CHECK(matches(IB_SA_CLASS, 0, IB_SA_CLASS, 4, 0));
}

static void test_grh(void)
{
	/* Both with a GRH: the GIDs, whatever the LIDs (a router's). */
	frame(req, IB_SA_CLASS, 5);
	frame(ans, IB_SA_CLASS, 5);
	gid(req, 0x21);
	gid(ans, 0x21);
	CHECK(mad_answer_matches(req, ans, 0));
	gid(ans, 0x22);
	CHECK(!mad_answer_matches(req, ans, 0));
	/* One alone (umad2sim never gives one): the LIDs. */
	frame(ans, IB_SA_CLASS, 5);
	CHECK(mad_answer_matches(req, ans, 0));
	frame(ans, IB_SA_CLASS, 6);
	CHECK(!mad_answer_matches(req, ans, 0));
}

static void test_unaligned(void)
{
	/* Frames at any address: the engine's copies are byte arrays. */
	static uint8_t a[UMAD_FRAME_MAX + 1], b[UMAD_FRAME_MAX + 1];

	frame(req, IB_PERFORMANCE_CLASS, 8);
	frame(ans, IB_PERFORMANCE_CLASS, 3);
	memcpy(a + 1, req, UMAD_FRAME_MAX);
	memcpy(b + 1, ans, UMAD_FRAME_MAX);
	CHECK(!mad_answer_matches(a + 1, b + 1, 0));
	memcpy(b + 1, req, UMAD_FRAME_MAX);
	CHECK(mad_answer_matches(a + 1, b + 1, 0));
}

int main(void)
{
	test_lid_routed();
	test_class();
	test_no_one_source();
	test_grh();
	test_unaligned();
	CHECK_DONE();
}
