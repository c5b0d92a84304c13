/* run.c - `warden run [OPTIONS] [--] COMMAND [ARG...]`: compile the policy,
 * check the kernel can build every layer, choose and scan the workspace,
 * open the audit log, run the command in the sandbox and return its status. */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../policy/policy.h"
#include "../sandbox/sandbox.h"
#include "../supervisor/supervisor.h"
#include "cli.h"
#include "config.h"

static const char run_usage[] =
	"usage: warden run [OPTIONS] [--] COMMAND [ARG...]\n"
	"\n"
	"Run COMMAND in a sandbox: only the workspace is writable, system directories\n"
	"are read-only, the home directory and credentials are not there, there is no\n"
	"network, and the session is recorded in the audit log.\n"
	"\n"
	"  -w, --workspace DIR   the workspace (default: the current directory)\n"
	"  -p, --profile FILE    a profile layered on the built-in default\n"
	"  -e, --env NAME        pass the variable NAME from this environment\n"
	"  -e, --env NAME=VALUE  set NAME inside\n"
	"  -h, --help            this text\n"
	"\n"
	"Exit status: COMMAND's; 128+N if it died of signal N; 125 if warden failed;\n"
	"126 if COMMAND cannot be executed; 127 if it was not found.\n";

/* Layers the kernel must offer; checked before anything is built so the
 * error names the missing piece. */
static int check_kernel(int *landlock_abi, struct werr *e)
{
	int abi = landlock_abi_version();
	if (abi < 2)
		return werr_set(e, abi < 0 ? -abi : 0,
			"Landlock is not available (ABI %d; warden needs 2 or later): the kernel "
			"must be 5.19+ with CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= "
			"boot parameter", abi < 0 ? 0 : abi);
	*landlock_abi = abi;
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL)
		return werr_set(e, 0, "seccomp is not available: the kernel needs CONFIG_SECCOMP_FILTER");
	return 0;
}

static json_t *strv_json(char *const *v)
{
	json_t *a = json_array();
	for (; v && *v; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "workspace", required_argument, NULL, 'w' },
		{ "profile", required_argument, NULL, 'p' },
		{ "env", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *workspace = NULL, *profile = NULL;
	struct strv cli_env = { 0 };
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+w:p:e:h", opts, NULL)) != -1) {
		switch (c) {
		case 'w': workspace = optarg; break;
		case 'p': profile = optarg; break;
		case 'e': strv_push(&cli_env, optarg); break;
		case 'h': fputs(run_usage, stdout); return 0;
		default: fputs(run_usage, stderr); return 2;
		}
	}
	static char *default_cmd[] = { "/bin/sh", NULL };
	char **cmd = optind < argc ? argv + optind : default_cmd;

	struct werr e = { 0 };
	struct policy pol;
	struct sandbox_spec s = { .uid = getuid(), .gid = getgid(), .sync_fd = -1 };
	struct audit *log = NULL;
	int status = EXIT_WARDEN;
	const char *home = cli_home();
	_cleanup_free_ char *logdir = NULL;

	policy_set_home(home);
	if (policy_load(&pol, profile, &e) < 0) {
		werr_print(&e);
		strv_free(&cli_env);
		return EXIT_WARDEN;
	}
	if (check_kernel(&s.landlock_abi, &e) < 0)
		goto fail;
	if (workspace_resolve(workspace, home, &s.workspace, &e) < 0)
		goto fail;
	struct passwd *pw = getpwuid(s.uid);
	if (pw && pw->pw_dir && (!home || strcmp(pw->pw_dir, home) != 0)) {
		_cleanup_free_ char *again = NULL;
		if (workspace_resolve(s.workspace, pw->pw_dir, &again, &e) < 0)
			goto fail;
	}
	if (!home) {
		werr_set(&e, 0, "no home directory (set HOME): the audit log has nowhere to go");
		goto fail;
	}
	logdir = audit_dir(home);
	if (path_is_within(s.workspace, logdir) || path_is_within(logdir, s.workspace)) {
		werr_set(&e, 0, "refusing workspace %s: it overlaps the audit log directory %s",
			 s.workspace, logdir);
		goto fail;
	}
	s.home = xstrdup(home);
	s.policy = &pol;
	s.argv = cmd;
	s.use_pty = isatty(STDIN_FILENO);
	env_build(&pol, &cli_env, &s.envp);

	char session[40];
	audit_new_session_id(session, sizeof session);
	if (audit_open(&log, logdir, session, &e) < 0)
		goto fail;
	if (workspace_plan(s.workspace, &pol, &s.plan, &e) < 0)
		goto fail;

	char digest[65];
	policy_digest(&pol, digest);
	struct utsname un;
	uname(&un);
	json_t *start = json_pack("{s:s, s:o, s:s, s:s, s:o, s:i, s:{s:s, s:i, s:b, s:b}}",
		"version", WARDEN_VERSION, "argv", strv_json(cmd), "workspace", s.workspace,
		"policy_digest", digest, "profiles", strv_json(pol.sources.v), "uid", (int)s.uid,
		"kernel", "release", un.release, "landlock_abi", s.landlock_abi,
		"seccomp", 1, "pty", s.use_pty);
	if (audit_emit(log, "session.start", start, &e) < 0)
		goto fail;

	double t0 = now_ms();
	if (supervisor_run(&s, &status, &e) < 0) {
		status = EXIT_WARDEN;
		json_t *end = json_pack("{s:i, s:s, s:o}", "exit", status, "error", e.msg,
					"counts", audit_counts(log));
		struct werr e2 = { 0 };
		audit_emit(log, "session.end", end, &e2);
		goto fail;
	}
	json_t *end = json_pack("{s:i, s:f, s:o}", "exit", status, "duration_ms", now_ms() - t0,
				"counts", audit_counts(log));
	if (audit_emit(log, "session.end", end, &e) < 0)
		goto fail;
	goto out;
fail:
	werr_print(&e);
	status = EXIT_WARDEN;
out:
	/* Close (fsync) the log before removing placeholders: on a file system
	 * that discards freed blocks, a sync after the removal waits for it. */
	audit_close(log);
	workspace_cleanup(&s.plan);
	strv_free(&s.envp);
	strv_free(&cli_env);
	free(s.workspace);
	free(s.home);
	policy_free(&pol);
	return status;
}
