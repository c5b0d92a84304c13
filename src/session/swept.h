/* swept.h - the end-of-session sweep, told and recorded (swept.c). */
#pragma once
#include "../audit/audit.h"
#include "../common/err.h"
#include "../workspace/workspace.h"

/* With the sandbox gone: move aside git repositories and redirects the
 * agent created in ws, clear setuid/setgid bits that appeared, remove what
 * is neither a file nor a directory from its git directories (or, with
 * gitdir, from that directory outside the workspace), record each as an
 * alert in log and tell the user. */
int session_sweep(const char *ws, const char *gitdir, const struct ws_plan *plan,
		  struct audit *log, const char *session, struct werr *e);
