/* hints.h - what the session ran that warden does not offer inside (a
 * container engine, a GPU tool) or tried that it refuses for a reason the
 * tool cannot say (Claude Code's worktree under the protected .claude, a
 * global install into a tool's install tree that warden exposed
 * read-only),
 * said once at its end with what to do instead, so the user reads one
 * clear line rather than the tool's own "cannot connect" or EROFS (see
 * hints.c). */
#pragma once
#include <stdbool.h>
#include <stdio.h>

#include "../audit/audit.h"
#include "../common/util.h"

struct hints {
	unsigned seen; /* a bit per entry of hints.c's table, and the worktree's */
	bool ssh_agent;     /* the session has the user's SSH agent (--ssh-agent) */
	bool host_agent;    /* the host has one (SSH_AUTH_SOCK) */
	bool ssh_ran;       /* ssh ran inside */
	bool ssh_decoy;     /* ... and a decoy key of ~/.ssh was opened */
	bool npmrc_masked;  /* the workspace's .npmrc names a registry, and is masked */
	bool npm_ran;       /* npm, npx, pnpm or yarn ran inside */
	/* the tools' trees exposed read-only (session.start's exposed: a
	 * version manager's install prefix, a toolchain), each with why, and
	 * a bit for each a refused write went into */
	struct strv trees, trees_why;
	unsigned trees_written;
};

/* Subscribe h to the session's exec, file and alert events; ssh_agent:
 * the session's policy has the user's SSH agent inside; ws and mask: the
 * workspace and the policy's mask patterns (a masked .npmrc's registry). */
void hints_attach(struct hints *h, struct audit *a, bool ssh_agent, const char *ws,
		  const struct strv *mask);
/* One line per tool seen (nothing when none). */
void hints_print(const struct hints *h, FILE *f);
void hints_free(struct hints *h);
