/* test_sandbox_env.c - unit tests of env_build (src/sandbox/env.c), the
 * command's environment: the host variables of the allowlist pass, every
 * other (credentials above all) is dropped, the agent's identity and warden's
 * proxy are set whatever the host says, then the profile's `env set`, then
 * --env NAME and NAME=VALUE, each later one winning; a secret's NAME never
 * passes, however it would. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/policy/policy.h"
#include "src/sandbox/sandbox.h"
#include "check.h"
#include "profile.h"

/* The value of NAME in the vector, NULL when absent; a name set twice is a
 * failure of its own. */
static const char *get(const struct strv *env, const char *name)
{
	size_t n = strlen(name);
	const char *found = NULL;
	int times = 0;
	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=') {
			found = env->v[i] + n + 1;
			times++;
		}
	CHECK(times <= 1);
	return found;
}

/* A host environment: clearenv, then the NAME=VALUE strings given. */
static void host_env(const char *const *vars)
{
	clearenv();
	for (size_t i = 0; vars[i]; i++) {
		const char *eq = strchr(vars[i], '=');
		_cleanup_free_ char *name = strndup(vars[i], (size_t)(eq - vars[i]));
		setenv(name, eq + 1, 1);
	}
}

static void build(const char *profile, const char *const *cli, struct strv *out)
{
	struct policy p;
	load_profile(&p, profile);
	_cleanup_strv_ struct strv cli_env = { 0 };
	for (size_t i = 0; cli && cli[i]; i++)
		strv_push(&cli_env, cli[i]);
	memset(out, 0, sizeof *out);
	env_build(&p, cli ? &cli_env : NULL, out);
	policy_free(&p);
	CHECK(out->v && out->v[out->n] == NULL);
}

static const char *const secrets[] = {
	"AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "GITHUB_TOKEN", "ANTHROPIC_API_KEY",
	"SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "LD_PRELOAD",
	"KUBECONFIG", "XLC_ALL", "LCX", "PATHX", "TERMINFO_DIRS",
};

static void test_allowlist(void)
{
	const char *const host[] = {
		"PATH=/opt/tool/bin:/usr/bin", "LANG=fr_FR.UTF-8", "LANGUAGE=fr", "LC_ALL=C.UTF-8",
		"LC_CTYPE=fr_FR.UTF-8", "TERM=xterm-256color", "COLORTERM=truecolor",
		"TZ=Europe/Paris", "NO_COLOR=1",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", "AWS_ACCESS_KEY_ID=AKIA0000",
		"GITHUB_TOKEN=ghp_x", "ANTHROPIC_API_KEY=sk-x", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1",
		"GPG_AGENT_INFO=/run/gpg", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/bus",
		"LD_PRELOAD=/tmp/evil.so", "KUBECONFIG=/home/u/.kube/config", "XLC_ALL=x",
		"LCX=x", "PATHX=x", "TERMINFO_DIRS=/x",
		"HOME=/home/u", "USER=u", "LOGNAME=u", "SHELL=/usr/bin/zsh",
		"HTTP_PROXY=http://corp:8080", "https_proxy=http://corp:8080", "NO_PROXY=*",
		NULL,
	};
	host_env(host);
	_cleanup_strv_ struct strv out;
	build("", NULL, &out);

	CHECK_STR(get(&out, "PATH"), "/opt/tool/bin:/usr/bin");
	CHECK_STR(get(&out, "LANG"), "fr_FR.UTF-8");
	CHECK_STR(get(&out, "LANGUAGE"), "fr");
	CHECK_STR(get(&out, "LC_ALL"), "C.UTF-8");
	CHECK_STR(get(&out, "LC_CTYPE"), "fr_FR.UTF-8");
	CHECK_STR(get(&out, "TERM"), "xterm-256color");
	CHECK_STR(get(&out, "COLORTERM"), "truecolor");
	CHECK_STR(get(&out, "TZ"), "Europe/Paris");
	CHECK_STR(get(&out, "NO_COLOR"), "1");
	for (size_t i = 0; i < ARRAY_LEN(secrets); i++)
		if (get(&out, secrets[i])) {
			fprintf(stderr, "%s passed into the sandbox\n", secrets[i]);
			CHECK(!"a variable outside the allowlist passed");
		}
	/* no value of a dropped variable survives under another name */
	for (size_t i = 0; i < out.n; i++) {
		CHECK(!strstr(out.v[i], "wJalrXUtnFEMI"));
		CHECK(!strstr(out.v[i], "ghp_x"));
		CHECK(!strstr(out.v[i], "/home/u"));
		CHECK(!strstr(out.v[i], "corp:8080"));
	}

	/* the agent's identity, not the user's */
	CHECK_STR(get(&out, "HOME"), AGENT_HOME);
	CHECK_STR(get(&out, "USER"), AGENT_USER);
	CHECK_STR(get(&out, "LOGNAME"), AGENT_USER);
	CHECK_STR(get(&out, "SHELL"), access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh");

	/* the proxy is the way out, in both spellings tools read */
	CHECK_STR(get(&out, "HTTP_PROXY"), "http://127.0.0.1:3128");
	CHECK_STR(get(&out, "HTTPS_PROXY"), "http://127.0.0.1:3128");
	CHECK_STR(get(&out, "http_proxy"), "http://127.0.0.1:3128");
	CHECK_STR(get(&out, "https_proxy"), "http://127.0.0.1:3128");
	CHECK_STR(get(&out, "ALL_PROXY"), "socks5h://127.0.0.1:1080");
	CHECK_STR(get(&out, "all_proxy"), "socks5h://127.0.0.1:1080");
	CHECK_STR(get(&out, "NO_PROXY"), "localhost,127.0.0.1,::1");
	CHECK_STR(get(&out, "no_proxy"), "localhost,127.0.0.1,::1");
	CHECK_STR(get(&out, "NODE_USE_ENV_PROXY"), "1");
	/* no destination allowed: no ssh through the proxy either */
	CHECK(get(&out, "GIT_SSH_COMMAND") == NULL);

	/* the default's switches for tools' own update checks and telemetry */
	CHECK_STR(get(&out, "NPM_CONFIG_UPDATE_NOTIFIER"), "false");
	CHECK_STR(get(&out, "DO_NOT_TRACK"), "1");

	/* nothing else: 9 passed, 4 identity, 9 proxy, 8 set */
	CHECK(out.n == 30);
}

static void test_path_default(void)
{
	static const char *const def = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
	/* no PATH on the host */
	const char *const host[] = { "LANG=C", NULL };
	host_env(host);
	_cleanup_strv_ struct strv a;
	build("", NULL, &a);
	CHECK_STR(get(&a, "PATH"), def);
	/* the profile does not pass PATH: the host's stays out */
	const char *const host2[] = { "PATH=/home/u/bin:/usr/bin", NULL };
	host_env(host2);
	_cleanup_strv_ struct strv b;
	build("env unset PATH\n", NULL, &b);
	CHECK_STR(get(&b, "PATH"), def);
}

static void test_profile_pass(void)
{
	const char *const host[] = {
		"CARGO_HOME=/c", "RUST_LOG=debug", "RUSTFLAGS=-x", "LANG=de_DE.UTF-8",
		"HOME=/home/u", "HTTP_PROXY=http://corp:8080", "AWS_REGION=eu-west-1", NULL,
	};
	host_env(host);
	_cleanup_strv_ struct strv out;
	build("env pass CARGO_HOME\nenv pass RUST*\nenv unset LANG\n"
	      "env pass HOME\nenv pass HTTP_PROXY\n", NULL, &out);
	CHECK_STR(get(&out, "CARGO_HOME"), "/c");
	CHECK_STR(get(&out, "RUST_LOG"), "debug");
	CHECK_STR(get(&out, "RUSTFLAGS"), "-x");
	CHECK(get(&out, "LANG") == NULL);
	CHECK(get(&out, "AWS_REGION") == NULL);
	/* passing them does not let the host's identity or proxy through */
	CHECK_STR(get(&out, "HOME"), AGENT_HOME);
	CHECK_STR(get(&out, "HTTP_PROXY"), "http://127.0.0.1:3128");
}

static void test_git_ssh(void)
{
	const char *const host[] = { NULL };
	host_env(host);
	static const char *const want =
		"ssh -o ProxyCommand='" SANDBOX_SELF_EXE " __connect %h %p'";
	_cleanup_strv_ struct strv allow;
	build("net allow github.com\n", NULL, &allow);
	CHECK_STR(get(&allow, "GIT_SSH_COMMAND"), want);
	_cleanup_strv_ struct strv deny_only;
	build("net deny github.com\n", NULL, &deny_only);
	CHECK(get(&deny_only, "GIT_SSH_COMMAND") == NULL);
	/* the host's own ssh command never passes, even when asked */
	const char *const host2[] = { "GIT_SSH_COMMAND=ssh -i /home/u/.ssh/id", NULL };
	host_env(host2);
	_cleanup_strv_ struct strv passed;
	build("env pass GIT_SSH_COMMAND\nnet allow github.com\n", NULL, &passed);
	CHECK_STR(get(&passed, "GIT_SSH_COMMAND"), want);
}

/* env set, then --env NAME (the host's value), then --env NAME=VALUE; each
 * later assignment of a name replaces the earlier. */
static void test_set_and_cli(void)
{
	const char *const host[] = {
		"LANG=fr_FR.UTF-8", "AWS_PROFILE=dev", "EDITOR=vim", "TERM=xterm", NULL,
	};
	host_env(host);

	_cleanup_strv_ struct strv set;
	build("env set LANG=C.UTF-8\nenv set FOO=a=b\nenv set EMPTY=\n", NULL, &set);
	CHECK_STR(get(&set, "LANG"), "C.UTF-8");  /* replaces the passed value */
	CHECK_STR(get(&set, "FOO"), "a=b");       /* the first '=' splits */
	CHECK_STR(get(&set, "EMPTY"), "");
	CHECK(get(&set, "AWS_PROFILE") == NULL);

	const char *const cli[] = {
		"AWS_PROFILE",      /* the host's value, though not in the allowlist */
		"NOT_ON_HOST",      /* absent on the host: nothing */
		"LANG=de_DE.UTF-8", /* replaces env set */
		"EDITOR",           /* then NAME=VALUE after it wins */
		"EDITOR=nano",
		"TERM=dumb",        /* replaces a passed variable */
		"HOME=/work",       /* the user's explicit choice replaces the identity */
		NULL,
	};
	_cleanup_strv_ struct strv out;
	build("env set LANG=C.UTF-8\nenv set EDITOR=ed\n", cli, &out);
	CHECK_STR(get(&out, "AWS_PROFILE"), "dev");
	CHECK(get(&out, "NOT_ON_HOST") == NULL);
	CHECK_STR(get(&out, "LANG"), "de_DE.UTF-8");
	CHECK_STR(get(&out, "EDITOR"), "nano");
	CHECK_STR(get(&out, "TERM"), "dumb");
	CHECK_STR(get(&out, "HOME"), "/work");

	/* --env NAME after NAME=VALUE: the host's value, the later one */
	const char *const cli2[] = { "EDITOR=nano", "EDITOR", NULL };
	_cleanup_strv_ struct strv out2;
	build("", cli2, &out2);
	CHECK_STR(get(&out2, "EDITOR"), "vim");

	/* env set HOME: the profile's word is also later than the identity */
	_cleanup_strv_ struct strv out3;
	build("env set HOME=/home/agent/work\n", NULL, &out3);
	CHECK_STR(get(&out3, "HOME"), "/home/agent/work");
}

/* A secret's real value never passes as a variable: not through a glob of
 * `env pass`, not through --env NAME or NAME=VALUE. */
static void test_secret_dropped(void)
{
	const char *const vars[] = { "GH_TOKEN=ghp_realrealrealreal", "GH_OTHER=fine",
				     "TERM=dumb", NULL };
	host_env(vars);
	const char *const cli[] = { "GH_TOKEN", "GH_TOKEN=ghp_literal", NULL };
	_cleanup_strv_ struct strv out;
	build("env pass GH_*\nsecret GH_TOKEN host github.com\n", cli, &out);
	CHECK(get(&out, "GH_TOKEN") == NULL);
	CHECK_STR(get(&out, "GH_OTHER"), "fine");
	for (size_t i = 0; i < out.n; i++)
		CHECK(strstr(out.v[i], "realreal") == NULL);
}

/* The host's SSH_AUTH_SOCK never passes (a host socket, unreachable
 * inside), even when asked; with `ssh-agent` it names warden's socket. */
static void test_ssh_auth_sock(void)
{
	const char *const host[] = { "SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.1", NULL };
	host_env(host);
	_cleanup_strv_ struct strv passed;
	build("env pass SSH_AUTH_SOCK\n", NULL, &passed);
	CHECK(get(&passed, "SSH_AUTH_SOCK") == NULL);
	_cleanup_strv_ struct strv on;
	build("env pass SSH_AUTH_SOCK\nssh-agent on\n", NULL, &on);
	CHECK_STR(get(&on, "SSH_AUTH_SOCK"), SANDBOX_SSH_AGENT_SOCK);
}

int main(void)
{
	test_allowlist();
	test_path_default();
	test_profile_pass();
	test_git_ssh();
	test_set_and_cli();
	test_secret_dropped();
	test_ssh_auth_sock();
	return check_status_counted("sandbox_env");
}
