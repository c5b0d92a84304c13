/* hookclient.h - the hook command's work, inside the sandbox: the client's
 * hook input on stdin reported over the hook socket, warden's answer
 * printed the way the client reads it (hookclient.c). Used by `warden hook`
 * and by the small hook client /.warden/warden-hook (src/hookbin). */
#pragma once

/* How long a hook waits at most when not told (--timeout): a day, and a
 * little more than the longest question. */
#define HOOK_TIMEOUT_DEFAULT_S (86400 + 30)

/* Report the tool call on stdin as client ("claude", "codex") to the hook
 * socket sock, waiting at most timeout seconds in all. The exit status:
 * 0 (allowed, denied with the decision on stdout, or not a tool call), 2
 * (refused before the tool ran: the client blocks the call), 1 (after). */
int hook_client_run(const char *client, const char *sock, long timeout);

/* The hook command's options (--client, --timeout, --socket, --help; the
 * option characters c, t, s, h), read with next (getopt's kind: the next
 * option, -1 at the end, '?' for a wrong one), then hook_client_run. name
 * and usage for what is said about a wrong option. The exit status. */
int hook_client_main(int argc, char **argv, int (*next)(int argc, char **argv), const char *name,
		     const char *usage);
