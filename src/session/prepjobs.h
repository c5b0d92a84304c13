/* prepjobs.h - the parts of a session's setup that run as jobs on a worker
 * thread while the main thread goes on (bgjob.h): each needs only what the
 * policy and the host say, takes milliseconds of waiting on the kernel or
 * of computing, and is taken where its result is first used. Each is
 * started after the last fork of the setup before it (the secrets'
 * commands) and joined before the next one (bgjob.h); each can be ended
 * unjoined on a way out (X_job_end).
 *
 * - hostid_job: as root, the agent's own host identity, never root's
 *   (hostid.h): the identity's name-service lookups take milliseconds (a
 *   module loaded, directories of user records looked through) when they
 *   are not remembered.
 * - limits_job: the limits planned and the session's cgroups made (as
 *   root a cgroup v1 controller's directory takes a millisecond or two to
 *   make, the memory controller's most).
 *
 * Each is taken before sandbox init's clone: init is a clone of the
 * supervisor made without libc's fork (no atfork handlers), so a lock of
 * libc's (malloc's) that the worker held then would stay held in init for
 * ever. (The detection rules, compiled on the worker once, are compiled
 * while init builds the sandbox instead: session.c, log_begin.) */
#pragma once
#include <stdbool.h>

#include "../common/bgjob.h"
#include "../policy/policy.h"
#include "../sandbox/limits.h"
#include "../sandbox/sandbox.h"

struct hostid_job {
	struct hostid ids;
	bool taken;         /* hostid_job_take called: a second call does nothing */
	struct bgjob job;
};

/* h zeroed, with ids HOSTID_NONE, before any of these. */
void hostid_job_start(struct hostid_job *h);
/* The identity into s; -1 with e when none could be had. Taken once:
 * called again, 0 and nothing more. */
int hostid_job_take(struct hostid_job *h, struct sandbox_spec *s, struct werr *e);
/* Joined, an identity not taken released. */
void hostid_job_end(struct hostid_job *h);

struct limits_job {
	struct limits *lim; /* planned (limits_end ends it from here on) */
	const char *session;
	struct bgjob job;
};

/* lim planned from pol and probe at once; its cgroups, named after the
 * session's id (kept by the caller), made on the thread. */
void limits_job_start(struct limits_job *j, struct limits *lim, const struct policy *pol,
		      const struct limits_probe *probe, const char *session);
/* Joined: a note for each limit a profile asked for that cannot be. */
void limits_job_take(struct limits_job *j);
/* Joined (before a fork, or on a way out). */
void limits_job_join(struct limits_job *j);

