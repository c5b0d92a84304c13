/* cfgwrite.h - git's rewrite of a repository's protected config
 * (.git/config, read-only inside: src/workspace/gitprotect.c) made by the
 * supervisor on the sandbox's behalf when it changes only settings from
 * which the host's git runs nothing and sends nothing elsewhere: the
 * identity (user.name, user.email) and a branch's upstream and notes
 * (branch.<name>.remote, .pushRemote, .merge, .rebase, .description), as
 * `git config user.email`, `git push -u`, `git checkout -b X origin/X`,
 * `git branch -m/-c/-d` write them. git writes config.lock beside config
 * and renames it over config; that rename, notified (notefile.c), comes
 * here: the lock's text and the host's file are read with git's syntax
 * (gitconfig.h) and compared setting by setting; when every other setting
 * is the same, in the same order, the lock's text is written into the
 * host's file in place (the inode the sandbox's read-only mount shows) and
 * the lock removed, and the rename is answered as done. Anything else is
 * refused: the rename goes on to the read-only mount's refusal. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ws_plan;

enum cfgwrite_result {
	CFGWRITE_NOT_CONFIG, /* not git's rename of a protected repository config */
	CFGWRITE_WRITTEN,    /* written on the host: the rename is answered done */
	CFGWRITE_REFUSED,    /* refused (what says why): the rename goes on, refused */
};

#define CFGWRITE_WHAT_MAX 320

/* The rename of src over dst (absolute inside, as notefile.c makes them;
 * flags: renameat2's) by process pid, in the workspace ws (its path,
 * inside as on the host) whose protected paths and directory fd plan
 * holds. what: on WRITTEN the settings changed ("user.email=a@b,
 * -branch.old.merge"), on REFUSED why. */
enum cfgwrite_result cfgwrite_rename(const struct ws_plan *plan, const char *ws, pid_t pid,
				     const char *src, const char *dst, unsigned long long flags,
				     char what[CFGWRITE_WHAT_MAX]);

/* Does the text new (nlen bytes) change only what git may change for the
 * sandbox in the text old: every other setting the same, in the same
 * order, each new one of them a value warden writes? what: the changes
 * ("unchanged" for none), or why not. */
bool cfgwrite_judge(const char *old, size_t olen, const char *new, size_t nlen,
		    char what[CFGWRITE_WHAT_MAX]);
