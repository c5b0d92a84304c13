/* builtin.c - the built-in default profile text, the base every policy is
 * layered on. System directories and /etc are bound by the sandbox code, not
 * here: this profile only names workspace files and environment variables.
 *
 * It has no `net` rules on purpose: an empty allowlist means no network at
 * all. Every destination a session may reach comes from the user's profile
 * (`net allow PATTERN`) or the command line (`--allow-net PATTERN`). */
#include "policy.h"

#define GRACE_TEXT_(n) #n
#define GRACE_TEXT(n) GRACE_TEXT_(n)

const char policy_builtin_default[] =
	"# warden built-in default profile (builtin:default).\n"
	"# A user profile is layered on top of it: it can add directives, or\n"
	"# remove these with unprotect, unmask and env unset.\n"
	"\n"
	"# Workspace files that configure code run outside the sandbox (git hooks,\n"
	"# shell start-up files, editor and agent settings): read-only inside.\n"
	"protect .git/hooks\n"
	"protect .git/config\n"
	"protect .gitmodules\n"
	"protect .warden\n"
	"protect .bashrc\n"
	"protect .bash_profile\n"
	"protect .bash_login\n"
	"protect .bash_logout\n"
	"protect .profile\n"
	"protect .zshrc\n"
	"protect .zshenv\n"
	"protect .zprofile\n"
	"protect .zlogin\n"
	"protect .vscode\n"
	"protect .idea\n"
	"protect .claude\n"
	"protect .codex\n"
	"protect .mcp.json\n"
	"protect .envrc\n"
	"\n"
	"# Secrets: masked (unreadable) at any depth of the workspace.\n"
	"mask .env\n"
	"mask .env.*\n"
	"mask *.pem\n"
	"mask *.key\n"
	"mask *.p12\n"
	"mask *.pfx\n"
	"mask id_rsa*\n"
	"mask id_ed25519*\n"
	"mask id_ecdsa*\n"
	"mask id_dsa*\n"
	"mask .npmrc\n"
	"mask .pypirc\n"
	"mask .netrc\n"
	"mask .git-credentials\n"
	"\n"
	"# Environment: only these variables pass through; everything else is dropped.\n"
	"env pass PATH\n"
	"env pass LANG\n"
	"env pass LANGUAGE\n"
	"env pass LC_*\n"
	"env pass TERM\n"
	"env pass COLORTERM\n"
	"env pass TZ\n"
	"env pass NO_COLOR\n"
	"\n"
	"# SIGINT, SIGTERM or SIGHUP to warden reaches every process in the sandbox;\n"
	"# what still runs this many seconds later is killed.\n"
	"signal grace " GRACE_TEXT(POLICY_SIGNAL_GRACE_DEFAULT) "\n";
