/* homeseed.h - files warden writes into the sandbox's home for the
 * session's own tools (~/.ssh/config: sshconfig.h; ~/.gitconfig with the
 * user's git identity: src/workspace/gitident.h), added to the spec's
 * seeds (seed.h) that sandbox init places before anything runs there; and
 * the decoys (src/detect/canary.h) left out where the session binds
 * something else. */
#pragma once

#include "../detect/canary.h"
#include "../sandbox/sandbox.h"

/* Add text (borrowed: it must outlive the launch) as path, relative to the
 * home, unless text is NULL, the home binds something at path, above it or
 * beneath it (s->home_binds: the agent's state, the caches), or the seeds
 * are full. */
void home_seed(struct sandbox_spec *s, const char *path, const char *text);

/* No decoy where the session binds something else into the home: an
 * agent's state (~/.claude), a cache, a path of the profile, an `exec
 * allow-writable` directory made there (s->exec, planned). */
void home_skip_decoys(struct canary_set *cs, const struct sandbox_spec *s,
		      const struct policy *pol);
