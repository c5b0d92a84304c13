/* task.h - a workspace per task (`warden run --task NAME`, `warden task`):
 * in a git repository, a worktree of it on the branch warden/NAME, beside
 * the repository in REPO.warden-tasks/NAME (next to it, so the worktree is
 * on the same file system, in sight of the user who reviews it, and never
 * inside the repository's own tree, where it would show as untracked);
 * elsewhere a copy of the directory at the same place (reflinked where the
 * file system can). One session at a time per task: a lock in warden's
 * lock directory.
 *
 * Git runs on the host side as for untrusted input: no hooks
 * (core.hooksPath=/dev/null), no fsmonitor, pager, editor, external diff,
 * textconv, credential helper, ssh command or transport, no variable of
 * the caller's GIT_* environment.
 *
 * Inside, the worktree needs the repository's git directory (objects, refs,
 * its own administrative directory). At its path the sandbox sees a view
 * warden makes in REPO.warden-tasks/.warden/NAME/gitdir: copies of config,
 * HEAD, packed-refs and shallow, read-only (copies, so no rename the host's
 * git makes meanwhile can detach a protection); the real hooks, info and
 * refs read-only; objects and logs read-write; refs/heads/warden a private
 * directory holding the task's branch alone, whose commit task_finish moves
 * the real branch to after the session (git update-ref, when it names a
 * commit); of the worktrees only this one's directory, writable but for its
 * commondir, gitdir and config.worktree (made empty when missing). Hooks and info are made when missing. What stays
 * shared: the object store (the agent can add objects, and could remove
 * or rewrite the loose ones and packs it can write; what the session wrote
 * there is checked by its content at the end: objcheck.h). */
#pragma once
#include <stdbool.h>
#include <stdio.h>

#include "../common/err.h"
#include "../common/util.h"
#include "../policy/policy.h"

struct task {
	char *name;
	char *src;       /* the directory --task was given in (resolved) */
	char *repo;      /* git: the main worktree's top (or the git directory of a
			    bare repository); copy: src */
	char *common;    /* git: the repository's common git directory; else NULL */
	char *branch;    /* git: "warden/NAME"; else NULL */
	char *dir;       /* the task's workspace */
	char *admin;     /* git: the worktree's administrative directory */
	char *refs;      /* git, for a session: the private refs/heads/warden inside */
	char *start;     /* and the branch's commit when it started */
	char *seen;      /* named: the branch's commit task_locate's git saw, or NULL */
	bool made;       /* made now (else reused) */
	bool linked;     /* no task: a linked worktree's session (task_linked) */
	char *view;      /* task_linked: the view of the git directory, removed by task_free */
	int lock_fd;     /* held exclusively for the session, or -1 */
};

/* NAME: letters, digits, '.', '_' and '-', 1 to 64 of them, not starting
 * with '.' or '-', not ending in ".lock". Says why not in why. */
bool task_name_valid(const char *name, char *why, size_t wlen);

/* Find the repository (or directory) src lies in and the task's place
 * (name NULL: dir is the directory of all its tasks); nothing is made. */
int task_locate(struct task *t, const char *name, const char *src, struct werr *e);

/* For a session: the task's workspace made or reused (git worktree add, or a
 * copy), its lock taken in lockdir (a task in use by another session is an
 * error), and, with git, the repository's git directory added to pol as
 * task.h says. */
int task_prepare(struct task *t, const char *lockdir, struct policy *pol, struct werr *e);

/* A session in a linked worktree that is no task's (workspace, NULL: the
 * current directory; its .git file names REPO/worktrees/ID outside it,
 * whose commondir is REPO): the repository shown inside as a task's is, but
 * with its real refs read-write, as a repository's own are in a workspace
 * (any branch can move, as there), and the view made in the log directory
 * under home (gitviews/PID, removed by task_free; those of sessions killed
 * before it, by the next such session). 1 when done, 0 with
 * nothing done when the workspace is no such worktree or the policy shows
 * its git directory already, -1 with e. */
int task_linked(struct task *t, const char *workspace, const char *home, struct policy *pol,
		struct werr *e);

/* The lock of t in lockdir, taken exclusively without waiting: 0, or -1
 * with e saying the task is in use. */
int task_lock(struct task *t, const char *lockdir, struct werr *e);

/* Run the safe git (argv after "git" and its -c options) in dir; its
 * standard output to out_fd (-1: captured into *out, may be NULL). 0 when
 * git exited 0; -1 with e naming its stderr's last line otherwise. */
/* The git directories outside the worktree that a session of the task
 * can write (the repository's objects and logs, the worktree's own
 * directory), pushed onto dirs; none for a copy or before task_prepare. */
void task_writable_gitdirs(const struct task *t, struct strv *dirs);

int task_git(const char *dir, const char *const *args, int out_fd, char **out, struct werr *e);

/* After the session: the branch moved to the commit the session left in
 * its private refs directory (a commit of the repository, else an error
 * and the branch stays). */
int task_finish(struct task *t, struct werr *e);

/* `warden task list`: the tasks of the repository (or directory) src lies
 * in, one line each: NAME, branch or "(copy)", commits ahead of HEAD, in
 * use or idle, the workspace. */
int task_list(const char *src, const char *lockdir, FILE *out, struct werr *e);
/* `warden task diff NAME` on stdout: git: what the branch changed since it
 * left HEAD (git diff HEAD...warden/NAME, no external diff or textconv),
 * then what the worktree holds uncommitted (git status --short); a copy:
 * diff -ruN of the directory and the copy. */
int task_diff(struct task *t, struct werr *e);
/* `warden task remove NAME`: the worktree (uncommitted changes in it
 * lost; the branch stays) or the copy removed, unless a session holds it. */
int task_remove(struct task *t, const char *lockdir, struct werr *e);

void task_free(struct task *t);
