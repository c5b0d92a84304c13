/* safegit.h - the host's git run as for untrusted input (--task's git, the
 * end's check of the objects a session wrote: objcheck.h): no hooks
 * (core.hooksPath=/dev/null), no fsmonitor, pager, editor, external diff,
 * credential helper, ssh command, transport or signing, no git run in a
 * submodule, names quoted, and no variable of the caller's GIT_*
 * environment. */
#pragma once
#include "../common/util.h"

/* "git" and the settings that turn those off, onto argv (the command's own
 * arguments go after). */
void safegit_argv(struct strv *argv);

/* The caller's environment without GIT_* (GIT_DIR, GIT_CONFIG_*, ...),
 * prompts off, onto env. */
void safegit_env(struct strv *env);
