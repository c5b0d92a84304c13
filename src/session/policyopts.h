/* policyopts.h - a session's policy: the layered profiles with the
 * agent's (session_load_policy, session.h), and what the command line adds
 * to them. */
#pragma once
#include "../common/err.h"
#include "../policy/policy.h"
#include "session.h"

/* The options' additions to the policy: --allow-net, --publish, --secret,
 * the exec denials, the SSH keys. */
int policy_add_opts(struct policy *pol, const struct session_opts *o, struct werr *e);
