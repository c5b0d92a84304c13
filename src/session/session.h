/* session.h - one sandbox session from policy to exit status, shared by
 * `warden run` and `warden check`. */
#pragma once
#include <stdbool.h>

#include "../common/err.h"
#include "../common/util.h"
#include "../agents/agents.h"
#include "../agents/state.h"
#include "../policy/policy.h"

struct session_opts {
	const char *workspace;       /* NULL: the current directory */
	const char *profile;         /* NULL: the built-in default only */
	const struct strv *cli_env;  /* --env NAME / NAME=VALUE, may be NULL */
	const struct strv *allow_net; /* --allow-net PATTERN, may be NULL */
	const struct strv *secrets;  /* --secret NAME[@HOST,...], may be NULL */
	const struct strv *publish;  /* --publish [HOST_PORT:]PORT, may be NULL */
	/* SHA-256s (hex) refused on top of the profiles' `exec deny`, as a
	 * profile's `exec deny sha256:HEX` would (`warden check`'s exec bait),
	 * may be NULL */
	const struct strv *exec_deny;
	char **argv;                 /* the command */
	bool self_exe;               /* mount warden's own binary at SANDBOX_SELF_EXE */
	bool no_pty;                 /* never give the command a pty */
	bool log_syslog;             /* --log syslog: events to syslog too */
	bool log_journald;           /* --log journald: events to the journal too */
	const char *stream_otlp;     /* --stream otlp=URL: events sent live, or NULL */
	const char *stream_ocsf;     /* --stream ocsf=FILE: OCSF lines appended live, or NULL */
	bool summary;                /* at the end, list what was refused on stderr */
	bool review;                 /* --review: the workspace an overlay inside; the
				        changes kept in the store for `warden apply` */
	bool read_only;              /* --read-only: the workspace read-only inside */
	const char *scratch;         /* --scratch DIR, or NULL (read-only: one made) */
	const struct strv *outputs;  /* --output PATH..., may be NULL */
	const char *task;            /* --task NAME: the session in the task's own
				        workspace (task.h), or NULL */
	const char *agent;           /* --agent NAME|none; NULL: picked by argv[0]'s name */
	const char *state_dir;       /* --state DIR; NULL: the agent's default */
	bool ssh_agent;              /* --ssh-agent: the user's SSH agent inside, filtered */
	const struct strv *ssh_keys; /* --ssh-key KEY...: the keys it may use; may be NULL */
	/* no SSH agent inside whatever the profile says (`warden check`: its
	 * bait stands in SSH_AUTH_SOCK for the user's agent) */
	bool no_ssh_agent;
	/* none of the interpreters version managers' shims on PATH stand for
	 * exposed (`warden check`: its probe runs none by name, and it probes
	 * the walls of a session with nothing exposed for its command) */
	bool no_managed;
	/* the detector records its alerts but never acts (`warden check`: its
	 * probes try every wall on purpose) */
	bool detect_observe;
	/* --ci: no terminal assumed, questions to the reviewer or the webhook
	 * only (policy approve.ci); the session's events to ci_summary */
	bool ci;
	struct cisummary *ci_summary; /* or NULL */
	const char *ci_artifacts;     /* --ci: the artifacts directory, made and
				       * checked at the start, read-only inside
				       * when it lies in the workspace (layout.h) */
};

/* Compile the policy, check the kernel, choose and scan the workspace, open
 * the audit log, run the command and log its end. Returns 0 with the
 * command's status in *status, or -1 with e filled (warden's own failure). */
/* With o->summary, what was refused is listed on stderr at the end (see
 * summary.h). */
int session_run(const struct session_opts *o, int *status, struct werr *e);

/* The agent profile of a session (none: def NULL), the endpoint it was
 * configured for and, once the session opened it, its state. */
struct session_agent {
	const struct agent_def *def;
	struct agent_endpoint ep;
	struct agent_state state;
};

/* The policy of a session or of `policy show`: the agent picked (agent_opt
 * as --agent takes it, else by argv0's name), the built-in default, the
 * agent's profile and the user's profile layered in that order, then the
 * agent's endpoint and CA file. */
int session_load_policy(const char *agent_opt, const char *argv0, const char *profile,
			const char *home, struct policy *pol, struct session_agent *ag,
			struct werr *e);
