/* sshconfig.h - the ssh client's configuration in the sandbox's home
 * (~/.ssh/config, a seed file init writes there: seed.h), so that plain
 * `ssh HOST`, `scp` and `git` over SSH work inside with nothing for the
 * user to write (with the user's host aliases: sshconfig_aliases): to any
 * host but the loopback, through warden's proxy
 * (`/.warden/warden __connect %h %p` as ProxyCommand, when the policy lets
 * anything out); and the keys from SSH_AUTH_SOCK (`ssh-agent`) or -i
 * only, never the files ssh would look for in ~/.ssh by default, where
 * the decoy SSH key lies (src/detect/canary.h), which ssh would otherwise
 * open on every connection. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "../policy/policy.h"
#include "../sandbox/sandbox.h"

/* The configuration's text for this policy (malloc'd), or NULL when the
 * session needs none (nothing goes out, no agent); seeded as .ssh/config
 * (homeseed.h). The host aliases of HOME/.ssh/config (home may be NULL)
 * come first (sshconfig_aliases), and the user's name as ssh's default
 * remote user, as outside. */
char *sshconfig_text(const struct policy *pol, const char *home);

/* The Host blocks of an ssh_config text (len bytes, any bytes) as the
 * sandbox may have them (malloc'd; NULL: none): each block's patterns and
 * its first HostName, Port and User, when they are plain (no quotes, no
 * blanks, a port a number), and nothing else of it (no ProxyCommand,
 * IdentityFile, forwarding or Include: what ssh would run or read on the
 * user's side is not the sandbox's); a block whose HostName is the
 * loopback gets `ProxyCommand none`. Match blocks and what precedes the
 * first Host are left out. */
char *sshconfig_aliases(const char *text, size_t len);
