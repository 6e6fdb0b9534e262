/* Minimal checking macros for the C unit tests: each failed check prints
 * where and what, and the test exits non-zero at the end. */
#ifndef UMADFS_TEST_CHECK_H
#define UMADFS_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n",         \
				__FILE__, __LINE__, #cond);                  \
			check_failures++;                                    \
		}                                                            \
	} while (0)

#define CHECK_STR(got, want)                                                 \
	do {                                                                 \
		const char *g_ = (got), *w_ = (want);                        \
		if (strcmp(g_, w_) != 0) {                                   \
			fprintf(stderr, "%s:%d: got \"%s\", want \"%s\"\n",  \
				__FILE__, __LINE__, g_, w_);                 \
			check_failures++;                                    \
		}                                                            \
	} while (0)

#define CHECK_INT(got, want)                                                 \
	do {                                                                 \
		long long g_ = (long long)(got), w_ = (long long)(want);     \
		if (g_ != w_) {                                              \
			fprintf(stderr, "%s:%d: %s = %lld, want %lld\n",     \
				__FILE__, __LINE__, #got, g_, w_);           \
			check_failures++;                                    \
		}                                                            \
	} while (0)

#define CHECK_DONE()                                                         \
	do {                                                                 \
		if (check_failures)                                          \
			fprintf(stderr, "%d check(s) failed\n",              \
				check_failures);                             \
		return check_failures ? 1 : 0;                               \
	} while (0)

#endif
