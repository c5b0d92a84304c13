/* sshconfig.h - the ssh client's configuration in the sandbox's home
 * (~/.ssh/config, a seed file init writes there: seed.h), so that plain
 * `ssh HOST`, `scp` and `git` over SSH work inside with nothing for the
 * user to write: to any host but the loopback, through warden's proxy
 * (`/.warden/warden __connect %h %p` as ProxyCommand, when the policy lets
 * anything out); and the keys from SSH_AUTH_SOCK (`ssh-agent`) or -i
 * only, never the files ssh would look for in ~/.ssh by default, where
 * the decoy SSH key lies (src/detect/canary.h), which ssh would otherwise
 * open on every connection. */
#pragma once
#include <stdbool.h>

#include "../policy/policy.h"
#include "../sandbox/sandbox.h"

/* The configuration's text for this policy (malloc'd), or NULL when the
 * session needs none (nothing goes out, no agent); seeded as .ssh/config
 * (homeseed.h). */
char *sshconfig_text(const struct policy *pol);
