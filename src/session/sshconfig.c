/* sshconfig.c - the ssh client's ~/.ssh/config inside (sshconfig.h). */
#include "sshconfig.h"

#include <string.h>

#include "../common/sbuf.h"
#include "../common/util.h"

/* A file that is never there: naming it stops ssh from trying its default
 * identities (~/.ssh/id_*), and says why to whoever reads the file. */
#define NO_KEY_FILE "~/.ssh/no-key-files-here-keys-come-from-the-agent"

char *sshconfig_text(const struct policy *pol)
{
	bool out = policy_net_allows_any(pol);
	if (!out && !pol->ssh_agent.on)
		return NULL;
	struct sbuf b = { 0 };
	sb_printf(&b, "# written by warden for this session (doc/network.md#ssh)\n");
	if (out)
		sb_printf(&b, "# every host but the loopback through warden's proxy\n"
			      "Host * !127.0.0.1 !localhost !::1\n"
			      "\tProxyCommand " SANDBOX_SELF_EXE " __connect %%h %%p\n");
	sb_printf(&b, "Host *\n"
		      "\t# keys from $SSH_AUTH_SOCK (warden run --ssh-agent) or -i FILE\n"
		      "\tIdentityFile " NO_KEY_FILE "\n");
	return b.p;
}
