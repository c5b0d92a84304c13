/* hook.h - the hook socket: one per session, a unix socket at
 * SANDBOX_HOOK_SOCK inside the sandbox, bound by sandbox init in the
 * sandbox's own network namespace (so the sandbox may connect to it,
 * unixconn.h) and served here by the supervisor. `warden hook` (the agent
 * client's hook command) reports each tool call on it, before it runs
 * (pre) and after (post), one JSON line each (hookmsg.h), and waits for
 * the answer to a pre.
 *
 * Through it the sandbox can only report: any other line (an answer to a
 * question, a rule, junk) is refused, an `alert` (rule hook.refused), and
 * the connection closed. A pre is decided by the policy's `tool` rules
 * (hookmsg_decide): allow, deny with the rule as the reason, or ask, which
 * puts a question to a human (approval.h, kind tool, subject "TOOL: what")
 * and holds the hook's connection until it is answered. Each report is a
 * `tool` event ("reported": true) with an id of warden's, which the execs
 * and connections that follow the call carry (toollink.h).
 *
 * Bounded: 64 clients at once, a line of HOOKMSG_LINE_MAX, 64 KiB of
 * answers queued for a client that does not read; nothing here blocks.
 * Who sent a line is what the kernel says (SCM_CREDENTIALS: `warden hook`
 * turns SO_PASSCRED on), never what the line says. */
#pragma once
#include <stddef.h>
#include <sys/types.h>

#include "../audit/audit.h"
#include "../common/loop.h"
#include "../policy/policy.h"
#include "approval.h"

struct hook;

/* Serve listener (taken). ap: who answers `tool ask` (NULL: such a call is
 * refused); diag: the sandbox's sock_diag socket (borrowed, for linking
 * connections; -1: none); init: sandbox init's host pid. */
struct hook *hook_new(int listener, const struct policy *p, struct audit *log,
		      struct approvals *ap, int diag, pid_t init);
/* Close the clients (their open questions withdrawn) and the listener. */
void hook_free(struct hook *h);
/* The listener and every client (one epoll fd) watched by l; -1 with e
 * naming it when l cannot take it. */
int hook_watch(struct loop *l, struct hook *h, struct werr *e);

/* The tool call an exec (execs.h's linker) or a proxied connection
 * (proxy.h's tagger) belongs to: toollink_exec and toollink_conn with the
 * hook's calls; ctx is the hook. */
const char *hook_link_exec(void *ctx, pid_t pid, pid_t ppid, const char *path,
			   const char *resolved, char *const *argv, size_t argc, const char *deny);
const char *hook_link_conn(void *ctx, int fd);
