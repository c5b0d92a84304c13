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

bool workspace_masked_except(const struct policy *pol, const char *rel, const char *name,
			     const char *except)
{
	for (size_t i = 0; i < pol->mask.n; i++) {
		const char *pat = pol->mask.v[i];
		if (except && strcmp(pat, except) == 0)
			continue;
		if (strchr(pat, '/') ? fnmatch(pat, rel, FNM_PATHNAME) == 0
				     : fnmatch(pat, name, 0) == 0)
			return true;
	}
	return false;
}

bool workspace_masked(const struct policy *pol, const char *rel, const char *name)
{
	return workspace_masked_except(pol, rel, name, NULL);
}
