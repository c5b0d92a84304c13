/* state.h - agent state that persists across sessions: the names an agent
 * keeps in its home (~/.claude, ~/.claude.json, ~/.codex) backed by a
 * directory warden keeps per agent, by default
 * ${XDG_DATA_HOME:-~/.local/share}/warden/agents/NAME, bound read-write
 * into the sandbox's otherwise empty home. The user's real ~/.claude and
 * ~/.codex are never mounted (hooks planted there would run unsandboxed
 * later). Host-side only. */
#pragma once
#include <stdbool.h>

#include "../common/err.h"
#include "../sandbox/sandbox.h"
#include "agents.h"

/* What the agent changed in that file during the session: its path on the
 * host, what changed ("hooks, disableAllHooks changed"; "deleted", "replaced by a
 * symlink", "no longer a JSON object", ...), and where the agent's file was
 * set aside (NULL: it was not). */
struct state_guard_change {
	char *path, *what, *moved_to;
};

struct agent_state {
	char *dir;              /* the state directory (resolved) */
	int lock_fd;            /* a shared flock held while the session runs, or -1 */
	struct home_bind *v;     /* what the sandbox binds into its home */
	size_t n;
	/* each of the agent's guarded files (a.guards) as checked at the
	 * start (guard.c): its guarded keys, and the file's text */
	struct state_guarded {
		json_t *keys;
		char *text;
	} guard[AGENT_GUARDS_MAX];
	/* this session's marker among the sessions of the state (guardrec.h),
	 * held until its check; whether the start found a session that ended
	 * without its check; and, per file, what the start restored, left
	 * changed by such a session (what NULL: nothing) */
	int guard_marker;
	char *guard_marker_name;
	bool guard_dead;
	struct state_guard_change recovered[AGENT_GUARDS_MAX];
};

/* The default state directory of agent `name`; NULL when neither
 * XDG_DATA_HOME nor home is an absolute path. */
char *state_default_dir(const char *name, const char *home);

/* Open (making it, mode 0700, when missing) the state directory `dir` (NULL:
 * the default) of agent a for a session: refused, before anything starts,
 * when it is a symlink, not a directory, not owned by the user or writable by
 * others, when it is or holds the home directory, or lies in the user's own
 * configuration of a client or in a credential store; each entry the agent
 * keeps is made when missing (a directory, or a file with its seed), and
 * must be of its kind, not a symlink and owned by the user. The files of
 * a.seeds that are missing are written (the client's inner sandbox off) and
 * said once on stderr; `import` (may be NULL) goes into a new Codex
 * config (agent_codex_merge). Holds a shared lock so that `warden state
 * reset` waits for no session. */
/* A host directory the state directory must stay apart from (the
 * workspace, the audit log, warden's cache): checked before anything is
 * made or written, in either direction. path NULL: none; a list ends with
 * what NULL. */
struct state_apart {
	const char *path, *what;
};

int state_open(const struct agent_def *a, const char *dir, const char *home,
	       const struct codex_conf *import, const struct state_apart *apart,
	       struct agent_state *st, struct werr *e);

void agent_state_free(struct agent_state *st);

/* guard.c: the agent's files whose keys decide which hooks run and what is
 * allowed (a.guards), read once warden has put its hook in (state_open
 * calls it): their guarded keys kept in st. Those are the state's
 * record's (guardrec.h) when another session runs, or one ended without
 * its check; in the second case a change to a file is undone now and said
 * in st->recovered. -1 with e filled when one is not a regular file
 * holding a JSON object. */
int state_guard_snapshot(const struct agent_def *a, int dfd, struct agent_state *st, struct werr *e);
/* Before warden puts its hook in: when a session that ended without its
 * check (killed) left a guarded file as something other than a regular file (a
 * FIFO, a symlink, a directory), it is set aside and the settings that
 * session's start checked are written back, said in st->recovered; with a
 * session still running, or no record, it is left for the reads to refuse.
 * 0, or -1 with e filled. */
int state_guard_mend(const struct agent_def *a, int dfd, struct agent_state *st, struct werr *e);


/* Once the sandbox is gone: guarded file i (of a.guards) compared with
 * the snapshot; when a guarded key differs, or the file is no longer a
 * JSON object, the keys warden checked are written back (the agent's
 * other keys and changes kept; its file set aside, named after session,
 * when it was not JSON) and c says what changed: 1. 0 when nothing
 * changed; -1 with e filled when the file could not be restored (c may be
 * filled). The caller removes the session's marker once every file is
 * checked (state_guard_leave). */
int state_guard_check(const struct agent_def *a, struct agent_state *st, size_t i,
		      const char *session, struct state_guard_change *c, struct werr *e);
void state_guard_change_free(struct state_guard_change *c);

/* The session's marker removed (once its check is done, or when it ends
 * in this process without its agent having run). */
void state_guard_leave(struct agent_state *st);

/* `warden state reset`: empty agent a's state directory (dir NULL: the
 * default), never following a symlink in it; refused while a session holds
 * it. *removed: whether there was anything. */
int state_reset(const struct agent_def *a, const char *dir, const char *home, bool *removed,
		struct werr *e);
