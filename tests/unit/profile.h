/* profile.h - for unit tests of what consumes a compiled policy: the
 * built-in default profile with a test's own profile text layered on top,
 * as a user profile would be (no home: "~" in the text is an error). */
#ifndef WARDEN_TESTS_UNIT_PROFILE_H
#define WARDEN_TESTS_UNIT_PROFILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/policy/policy.h"

static inline void load_profile(struct policy *p, const char *extra)
{
	struct werr e = { 0 };
	memset(p, 0, sizeof *p);
	if (policy_parse_text(p, "builtin:default", NULL, NULL, policy_builtin_default,
			      strlen(policy_builtin_default), &e) < 0 ||
	    policy_parse_text(p, "t.profile", NULL, NULL, extra, strlen(extra), &e) < 0) {
		fprintf(stderr, "profile: %s\n", e.msg);
		exit(2);
	}
}

#endif
