/* vmshim.h - a command that is a version manager's shim (pyenv, rbenv,
 * goenv, nodenv, asdf, mise) resolved on the host to the interpreter the
 * shim would run in the workspace: the version named by the manager's
 * variable, the workspace's version file (.python-version, .ruby-version,
 * .go-version, .node-version, .tool-versions, mise.toml) or the user's
 * global setting, looked up in the manager's own install directory. The
 * shim itself cannot run inside (it calls the manager, which lives in the
 * hidden home), so discovery (discover.c) runs and exposes the
 * interpreter instead: the smallest tree, never the rest of the home.
 *
 * rustup's proxies are resolved the same way (rustup.h).
 *
 * warden only reads the managers' files; it never runs a manager on the
 * host, since the workspace's files steer them and some run code from
 * there (mise's templates, asdf's plugins, pyenv's hooks). */
#pragma once
#include <stdbool.h>

#include "../common/err.h"

struct vm_pick {
	const char *manager; /* "pyenv", "rbenv", "goenv", "nodenv", "asdf", "mise" or
				"rustup" (static) */
	char *shims;         /* the manager's shims directory */
	char *version;       /* the version picked; NULL: "system" (the next on PATH) */
	char *from;          /* where the choice was read: a file, a variable, "default" */
	char *program;       /* the interpreter to run (NULL for "system") */
};

/* Is `found`, the file PATH gives for cmd, a version manager's shim? 0:
 * no; 1: yes, *p filled (free it with vm_pick_free); -1: a manager's shim
 * whose choice does not run here (the version not installed, a version
 * name that is not one), e filled. workspace and home may be NULL. */
int vmshim_resolve(const char *found, const char *cmd, const char *workspace, const char *home,
		   struct vm_pick *p, struct werr *e);

void vm_pick_free(struct vm_pick *p);

/* Shared with rustup.c. A version name that names no path (no '/', not
 * "." or ".."; at most 128 bytes)? */
bool vmshim_name_ok(const char *v);
/* An executable regular file (symlinks followed)? */
bool vmshim_is_exec(const char *path);
/* A version file's text (a regular file, 64 KiB at most), or NULL. */
char *vmshim_read_file(const char *path);
