/* hookrule.c - which of the policy's `tool` rules decides a tool call
 * (hookmsg.h): the supervisor's half of hookmsg, kept apart so that the
 * hook client (src/hookbin) links none of the policy. */
#include "hookmsg.h"

#include <fnmatch.h>

enum rules_verdict hookmsg_decide(const struct policy *p, const char *tool, const char *what,
				  const struct policy_tool_rule **rule)
{
	*rule = NULL;
	for (size_t i = 0; i < p->ntools; i++) {
		const struct policy_tool_rule *r = &p->tools[i];
		if (fnmatch(r->name, tool, 0) != 0)
			continue;
		if (r->pattern && fnmatch(r->pattern, what, 0) != 0)
			continue;
		*rule = r;
		return r->action;
	}
	return p->tool_default == RULES_UNKNOWN ? RULES_ALLOW : p->tool_default;
}

bool hookmsg_pattern_rules(const struct policy *p, const char *tool)
{
	for (size_t i = 0; i < p->ntools; i++)
		if (p->tools[i].pattern && fnmatch(p->tools[i].name, tool, 0) == 0)
			return true;
	return false;
}
