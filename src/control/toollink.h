/* toollink.h - which tool call an exec or a proxied connection belongs to,
 * and when a tool call's processes do what its command does not say.
 * Supervisor side; everything runs on its event loop.
 *
 * A tool call reported before it runs (pre) and allowed is open until its
 * post report. Its anchor is the agent's process that made it: the parent
 * of the hook's process, past a shell that only runs the hook. An exec
 * belongs to an open call when the process that execs descends from the
 * call's anchor (its parents walked in /proc); it also belongs to the call
 * of a process linked earlier that it descends from, after the call's post
 * too (what a tool call left running in the background stays its). The
 * hook's own plumbing (`/.warden/warden hook` and a shell running it) is
 * never linked. Several calls open at once from one anchor: the one whose
 * command the exec's arguments hold, else the latest.
 *
 * A connection through warden's proxy carries no pid: its client socket is
 * found by its addresses (sock_diag in the sandbox's network namespace,
 * the socket's inode), then among the open descriptors of the processes
 * linked so far (/proc/PID/fd). So a connection is linked when a process
 * that exec'd under a call holds it; one made by a process that forked
 * without exec'ing, or after its linked ancestors' exec records were
 * evicted (4096 processes), is not.
 *
 * Intent against action (`tool.intent-mismatch`), narrowly: under a Bash
 * call, a program is "named" when its name (the file's, argv[0]'s, or the
 * resolved file's last component) appears in the command as a word, or
 * when a process between it and the call's shell was named; the call's
 * shell itself (the anchor's child) is the carrier, named by definition.
 * A program that is not named and then connects through warden's proxy,
 * or whose exec the exec rules refuse, raises the alert (once per
 * process). `ls` that runs curl which connects: an alert; `npm test`
 * whose node connects: none (node descends from npm, which is named). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../audit/audit.h"

struct toollink;

/* Log to log; diag: the sandbox's sock_diag socket (borrowed; -1: no
 * connection is linked); init: sandbox init's host pid (where a walk up
 * the parents stops). */
struct toollink *toollink_new(struct audit *log, int diag, pid_t init);
void toollink_free(struct toollink *t);

/* A pre report of tool (what: the command...) from the process host_pid
 * was allowed: the call id is open. */
void toollink_open(struct toollink *t, const char *id, const char *tool, const char *what,
		   pid_t host_pid, const char *tool_use_id);
/* The open call a post report ends: by tool_use_id, else the latest open
 * call of the same anchor, tool and what; NULL: none. The call is closed
 * (its linked processes keep their link). */
const char *toollink_close(struct toollink *t, pid_t host_pid, const char *tool_use_id,
			   const char *tool, const char *what);

/* An exec by process pid (host numbering; ppid its parent), decided:
 * deny is why it was refused (NULL: allowed). The call it belongs to (its
 * id), or NULL. */
const char *toollink_exec(struct toollink *t, pid_t pid, pid_t ppid, const char *path,
			  const char *resolved, char *const *argv, size_t argc, const char *deny);

/* A connection the proxy accepted (fd: its end): the call whose process
 * holds the client's end, or NULL. */
const char *toollink_conn(struct toollink *t, int fd);
