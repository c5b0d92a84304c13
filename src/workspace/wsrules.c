/* wsrules.c - the two questions asked of a workspace path (wsrules.h): is it
 * masked by the policy's mask patterns, is it one of warden's placeholders
 * (a running session's or a killed one's). */
#include "wsrules.h"

#include <fnmatch.h>
#include <string.h>
#include <sys/stat.h>

#include "../policy/policy.h"

bool workspace_is_placeholder(const struct stat *st)
{
	mode_t mode = st->st_mode & 07777;
	return (S_ISSOCK(st->st_mode) && mode == PLACEHOLDER_SOCK_MODE) ||
	       (S_ISDIR(st->st_mode) && mode == PLACEHOLDER_DIR_MODE);
}

/* A pattern's match: by the path when it names one, else by the last name. */
static bool matches(const char *pat, const char *rel, const char *name)
{
	return strchr(pat, '/') ? fnmatch(pat, rel, FNM_PATHNAME) == 0 : fnmatch(pat, name, 0) == 0;
}

bool workspace_masked_except(const struct policy *pol, const char *rel, const char *name,
			     const char *except)
{
	/* an exception (`mask !GLOB`) wins over every pattern */
	for (size_t i = 0; i < pol->mask.n; i++)
		if (pol->mask.v[i][0] == '!' && matches(pol->mask.v[i] + 1, rel, name))
			return false;
	for (size_t i = 0; i < pol->mask.n; i++) {
		const char *pat = pol->mask.v[i];
		if (pat[0] != '!' && !(except && strcmp(pat, except) == 0) && matches(pat, rel, name))
			return true;
	}
	return false;
}

bool workspace_masked(const struct policy *pol, const char *rel, const char *name)
{
	return workspace_masked_except(pol, rel, name, NULL);
}
