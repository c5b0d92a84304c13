/* supervisor.h - start the sandbox and stay with it until it ends. */
#pragma once
#include <jansson.h>

#include "../audit/audit.h"
#include "../common/lateclose.h"
#include "../sandbox/sandbox.h"
#include "child.h"

/* What the host side of a session holds that init never reads: handles
 * borrowed from the session for the supervisor's run. */
struct canary_set;
struct supervisor_cfg {
	struct limits *limits;      /* the session's limits (limits.h), or NULL */
	/* the detector (src/detect/detect.h), which the supervisor gives the
	 * means to act, or NULL; made by the session while init builds (the
	 * building callback, below), so read only after it */
	struct detect *const *detect;
	const struct proxy_guard *guard; /* secrets by reference, or NULL */
	/* the decoys (src/detect/canary.h) init placed as seed files, watched
	 * here; NULL: `canary off` */
	const struct canary_set *canary;
	/* the published ports (src/supervisor/publish.h), listening already; NULL:
	 * none */
	struct publish *publish;
	/* the user's SSH agent (SSH_AUTH_SOCK), checked, that the sandbox's
	 * agent socket speaks to (`ssh-agent`: sshagent_srv.h); NULL: none */
	const char *ssh_auth_sock;
	/* What the session does that needs nothing of init's and must be
	 * done before the command's first exec (the workspace's checkpoint
	 * and session.start, session.c): called once, as soon as init is
	 * cloned and building the sandbox, which it then does on another CPU
	 * (cpupin.h). -1 with e filled stops the session (init killed).
	 * NULL: nothing. */
	int (*building)(void *ctx, struct werr *e);
	void *building_ctx;
	/* When not NULL, and the run returns 0: init, killed (it has told its
	 * command's status and is on its way out) but not waited for, for the
	 * caller to end with child_end (child.h) once its own end needs it
	 * gone (the session's cgroups, which cannot be removed while it is in
	 * them); its exit, the unmapping of a copy of warden's memory, runs
	 * on another CPU meanwhile. Else (NULL, or a run that failed) init is
	 * ended before supervisor_run returns. */
	struct child *init_left;
};

/* Create the sandbox (clone into new namespaces), map its identity, wait for
 * init to report every layer built, relay the terminal and signals, and
 * return the command's exit status in *status, and what the exec pipeline
 * counted in *exec_stats (execs_stats; may be NULL). -1 with e filled when
 * the sandbox could not be built (status then meaningless). Once the
 * sandbox has ended, the fds whose close waits on the kernel (the decoys'
 * inotify watch) go to late, when not NULL, for the caller to close
 * meanwhile. */
int supervisor_run(struct sandbox_spec *s, const struct supervisor_cfg *cfg, struct audit *log,
		   int *status, json_t **exec_stats, struct late_close *late, struct werr *e);
