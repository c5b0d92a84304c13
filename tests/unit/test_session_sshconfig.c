/* test_session_sshconfig.c - the user's ~/.ssh/config hosts carried into
 * the sandbox's (src/session/sshconfig.c): a Host block's HostName, Port
 * and User, in either spelling (`Key value`, `Key=value`, any case), and
 * nothing else of it (ProxyCommand, IdentityFile, LocalForward, Include);
 * a Match block and the lines before the first Host left out; a value
 * with a quote or a blank, a port that is no number, a user starting with
 * '-' left out; a loopback HostName reached directly (ProxyCommand none);
 * a line holding a NUL ignored. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "src/session/sshconfig.h"

static char *aliases(const char *s)
{
	return sshconfig_aliases(s, strlen(s));
}

int main(void)
{
	char *out = aliases("User toplevel\n"
			    "Host gitbox work-*\n"
			    "  HostName 10.99.0.2   # the lab\n"
			    "  Port 2222\n"
			    "  User wardenci\n"
			    "  User second\n"
			    "  ProxyCommand sh -c 'evil'\n"
			    "  IdentityFile ~/.ssh/id_work\n"
			    "  LocalForward 5432 db:5432\n"
			    "Include ~/.ssh/other\n"
			    "host=local\n"
			    "\thostname=127.0.0.1\n"
			    "Match exec \"true\"\n"
			    "  HostName evil.example\n"
			    "Host bad\n"
			    "  HostName \"quoted\"\n"
			    "  Port 99999\n"
			    "  User -oProxyCommand=x\n"
			    "Host only-proxy\n"
			    "  ProxyJump jump\n");
	CHECK_STR(out, "Host gitbox work-*\n\tHostName 10.99.0.2\n\tPort 2222\n\tUser wardenci\n"
		       "Host local\n\tHostName 127.0.0.1\n\tProxyCommand none\n");
	free(out);
	/* patterns warden does not carry: the block left out */
	out = aliases("Host \"a b\"\n  HostName x.example\nHost ok\n  Port 22\n");
	CHECK_STR(out, "Host ok\n\tPort 22\n");
	free(out);
	/* a NUL in a line: that line ignored, the rest read */
	static const char nul[] = "Host a\n  HostName x\0y\n  Port 23\n";
	out = sshconfig_aliases(nul, sizeof nul - 1);
	CHECK_STR(out, "Host a\n\tPort 23\n");
	free(out);
	CHECK(aliases("") == NULL);
	CHECK(aliases("# nothing\nUser x\n") == NULL);
	return check_status();
}
