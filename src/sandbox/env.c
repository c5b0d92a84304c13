/* env.c - the command's environment: an allowlist of the host's variables
 * (the policy's `env pass` names and globs), the agent identity, the proxy
 * settings, the policy's `env set` values and --env from the command line.
 * Everything else, credentials above all, is dropped, and so is the real
 * value of every secret the policy binds (its NAME, however it came in). */
#include "sandbox.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Remove NAME=... from the vector. */
static void env_del(struct strv *out, const char *name, size_t nlen)
{
	size_t j = 0;
	for (size_t i = 0; i < out->n; i++) {
		if (strncmp(out->v[i], name, nlen) == 0 && out->v[i][nlen] == '=')
			free(out->v[i]);
		else
			out->v[j++] = out->v[i];
	}
	out->n = j;
	if (out->v)
		out->v[j] = NULL;
}

static void env_put(struct strv *out, const char *assignment)
{
	const char *eq = strchr(assignment, '=');
	if (!eq)
		return;
	env_del(out, assignment, (size_t)(eq - assignment));
	strv_push(out, assignment);
}

void env_override(struct strv *out, const char *assignment)
{
	env_put(out, assignment);
}

static bool passes(const struct strv *pass, const char *name)
{
	for (size_t i = 0; i < pass->n; i++)
		if (fnmatch(pass->v[i], name, 0) == 0)
			return true;
	return false;
}

void env_build(const struct policy *p, const struct strv *cli_env, struct strv *out)
{
	for (char **ep = environ; ep && *ep; ep++) {
		const char *eq = strchr(*ep, '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = strndup(*ep, (size_t)(eq - *ep));
		if (name && passes(&p->env_pass, name))
			env_put(out, *ep);
	}
	if (!getenv("PATH") || !passes(&p->env_pass, "PATH"))
		env_put(out, "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin");
	env_put(out, "HOME=" AGENT_HOME);
	env_put(out, "USER=" AGENT_USER);
	env_put(out, "LOGNAME=" AGENT_USER);
	env_put(out, access("/bin/bash", X_OK) == 0 ? "SHELL=/bin/bash" : "SHELL=/bin/sh");
	/* warden's proxy is the one way out: point tools at it. */
	static const char *const proxy_env[] = {
		"HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128",
		"ALL_PROXY=socks5h://127.0.0.1:1080", "NO_PROXY=localhost,127.0.0.1,::1",
		"http_proxy=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
		"all_proxy=socks5h://127.0.0.1:1080", "no_proxy=localhost,127.0.0.1,::1",
		/* Node's fetch and http follow the variables above only when told
		 * (Node 24 and later; an earlier one ignores this, and them) */
		"NODE_USE_ENV_PROXY=1",
	};
	for (size_t i = 0; i < ARRAY_LEN(proxy_env); i++)
		env_put(out, proxy_env[i]);
	if (policy_net_allows_any(p))
		env_put(out, "GIT_SSH_COMMAND=ssh -o ProxyCommand='" SANDBOX_SELF_EXE " __connect %h %p'");
	/* the host's agent socket is never reachable inside; warden's is,
	 * when the policy has `ssh-agent` */
	if (p->ssh_agent.on)
		env_put(out, "SSH_AUTH_SOCK=" SANDBOX_SSH_AGENT_SOCK);
	else
		env_del(out, "SSH_AUTH_SOCK", strlen("SSH_AUTH_SOCK"));
	for (size_t i = 0; i < p->env_set.n; i++)
		env_put(out, p->env_set.v[i]);
	for (size_t i = 0; cli_env && i < cli_env->n; i++) {
		const char *a = cli_env->v[i];
		if (strchr(a, '=')) {
			env_put(out, a);
		} else {
			const char *v = getenv(a);
			if (v) {
				_cleanup_free_ char *kv = xasprintf("%s=%s", a, v);
				env_put(out, kv);
			}
		}
	}
	for (size_t i = 0; i < p->nsecrets; i++)
		env_del(out, p->secrets[i].name, strlen(p->secrets[i].name));
}
