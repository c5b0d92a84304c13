/* safegit.c - the host's git run as for untrusted input: its settings and
 * environment (safegit.h). */
#include "safegit.h"

#include <string.h>

extern char **environ;

static const char *const git_safe[] = {
	"--no-pager",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=cat",
	"-c", "core.editor=false",
	"-c", "core.sshCommand=false",
	"-c", "core.askPass=false",
	"-c", "credential.helper=",
	"-c", "protocol.allow=never",
	"-c", "diff.external=",
	"-c", "commit.gpgSign=false",
	/* a submodule's git is another repository's: its config, filters and
	 * hooks are the agent's to write (status and diff would run git in
	 * it); its gitlink is still shown, as a commit id */
	"-c", "diff.submodule=short",
	"-c", "status.submoduleSummary=false",
	"-c", "submodule.recurse=false",
	"-c", "core.quotePath=true",
};

void safegit_argv(struct strv *argv)
{
	strv_push(argv, "git");
	for (size_t i = 0; i < ARRAY_LEN(git_safe); i++)
		strv_push(argv, git_safe[i]);
}

void safegit_env(struct strv *env)
{
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "GIT_", 4) != 0)
			strv_push(env, *e);
	strv_push(env, "GIT_TERMINAL_PROMPT=0");
}
