/* check.h - the checks of the unit tests: CHECK and CHECK_STR, the counters
 * of checks run and failed, and the exit status a test's main() returns.
 * A failed check prints FILE:LINE and what failed (CHECK_STR also the got
 * and expected strings) and the test goes on. */
#ifndef WARDEN_TESTS_UNIT_CHECK_H
#define WARDEN_TESTS_UNIT_CHECK_H

#include <stdio.h>
#include <string.h>

/* Helpers with checks of their own count them here too. */
static int failures, checks;

#define CHECK(c)                                                                     \
	do {                                                                         \
		checks++;                                                            \
		if (!(c)) {                                                          \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
			failures++;                                                  \
		}                                                                    \
	} while (0)

#define CHECK_STR(a, b)                                                              \
	do {                                                                         \
		const char *a_ = (a), *b_ = (b);                                     \
		checks++;                                                            \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                             \
			fprintf(stderr, "%s:%d: check failed: %s == %s\n  got:      %s\n  expected: %s\n", \
				__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			failures++;                                                  \
		}                                                                    \
	} while (0)

/* The exit status: 1 when a check failed, after saying how many did. */
static inline int check_status(void)
{
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}

/* The same, saying how many checks ran: "NAME: N checks passed" or
 * "NAME: F of N checks failed". */
static inline int check_status_counted(const char *name)
{
	if (failures) {
		fprintf(stderr, "%s: %d of %d checks failed\n", name, failures, checks);
		return 1;
	}
	printf("%s: %d checks passed\n", name, checks);
	return 0;
}

#endif
