/* names.c - what a variable name may be in a profile (`env`, `secret`) and
 * on the command line (`warden run --env`, `--secret`): a leaf that the
 * parser, the secrets' bindings (secret.c) and the agents' profiles ask,
 * so that none of them has to include another for it. */
#include "names.h"

#include <string.h>

static bool name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

bool policy_env_name_ok(const char *s, size_t n, bool glob)
{
	if (glob && n > 1 && s[n - 1] == '*')
		n--;
	if (n == 0 || !name_start(s[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!name_start(s[i]) && !(s[i] >= '0' && s[i] <= '9'))
			return false;
	return true;
}

bool policy_env_name_valid(const char *name)
{
	return policy_env_name_ok(name, strlen(name), false);
}
