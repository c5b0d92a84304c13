/* status_cmd.c - `warden status`: the running sessions of this user (each
 * one's control socket, src/control/control.h, asked for its status), and
 * `warden freeze|resume|kill SESSION`: the kill switch of one of them,
 * named by its id or a unique prefix of it. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/procfacts.h"
#include "../common/shown.h"
#include "../common/util.h"
#include "../control/client.h"
#include "cli.h"
#include "cmdtab.h"

static const char status_usage[] =
	"usage: warden status [--json]\n"
	"\n"
	"The running sessions of this user: id, age, whether frozen (and the time left\n"
	"before its `freeze timeout` kills it) or suspended (Ctrl-Z in its terminal),\n"
	"the detector's risk and alerts when it gives them, the workspace and the\n"
	"command. --json: one JSON object a line, as each session's control socket\n"
	"answers (a suspended session's warden, stopped, answers nothing: its id,\n"
	"\"suspended\": true and its pid).\n";

/* The usage of freeze, resume and kill: the line of the one asked for
 * first (`warden kill` alone says how to kill), then the other two. */
static void action_usage(FILE *f, const char *op)
{
	static const char *const ops[][2] = {
		{ "freeze", "SESSION [--reason TEXT]" },
		{ "resume", "SESSION" },
		{ "kill", "SESSION [--reason TEXT]" },
	};
	for (size_t i = 0; i < ARRAY_LEN(ops); i++)
		if (strcmp(ops[i][0], op) == 0)
			fprintf(f, "usage: warden %s %s\n", ops[i][0], ops[i][1]);
	for (size_t i = 0; i < ARRAY_LEN(ops); i++)
		if (strcmp(ops[i][0], op) != 0)
			fprintf(f, "       warden %s %s\n", ops[i][0], ops[i][1]);
	fputs("\n"
	      "freeze stops every process of the session's sandbox (its cgroup's freezer, or\n"
	      "SIGSTOP to each, sent by the sandbox's init at once, so that none escapes by\n"
	      "forking), resume lets them go on, kill ends the sandbox, frozen or not\n"
	      "(warden then exits 137). SESSION is its id or a unique prefix of it (see\n"
	      "warden status). Each is an `action` event in the session's log. A freeze ends\n"
	      "with a kill after the profile's `freeze timeout` (warden status shows the time\n"
	      "left), or at once on SIGINT, SIGTERM or SIGHUP to the session's warden.\n", f);
}

/* "42s", "3m07s", "2h05m", "3d04h" */
static void age_text(long long s, char *buf, size_t len)
{
	if (s < 60)
		snprintf(buf, len, "%llds", s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%lldh%02lldm", s / 3600, s % 3600 / 60);
	else
		snprintf(buf, len, "%lldd%02lldh", s / 86400, s % 86400 / 3600);
}

/* The command as one line (its words joined, each shown: shown.h, cut at
 * 80 bytes). */
static void command_text(json_t *argv, char *buf, size_t len)
{
	size_t n = 0, i;
	json_t *a;
	buf[0] = '\0';
	json_array_foreach(argv, i, a) {
		const char *w = json_string_value(a);
		_cleanup_free_ char *shown = w ? text_shown(w) : NULL;
		int k = snprintf(buf + n, len - n, "%s%s", i ? " " : "", shown ? shown : "?");
		if (k < 0 || (size_t)k >= len - n)
			break;
		n += (size_t)k;
	}
	if (strlen(buf) > 80)
		memcpy(buf + 77, "...", 4);
}

/* A number or a string of the extension's, as text ("-" when absent). */
static void field_text(json_t *v, char *buf, size_t len)
{
	if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%g", json_real_value(v));
	else if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_array(v))
		snprintf(buf, len, "%zu", json_array_size(v));
	else
		snprintf(buf, len, "-");
}

/* "running", "frozen", "frozen 9m58s left" (its freeze's timeout), or
 * "suspended" (Ctrl-Z in its terminal). */
static void state_text(json_t *r, char *buf, size_t len)
{
	json_t *left = json_object_get(r, "freeze_left_s");
	if (json_is_true(json_object_get(r, "suspended"))) {
		snprintf(buf, len, "suspended");
	} else if (!json_is_true(json_object_get(r, "frozen"))) {
		snprintf(buf, len, "running");
	} else if (json_is_integer(left)) {
		char t[32];
		age_text(json_integer_value(left), t, sizeof t);
		snprintf(buf, len, "frozen %s left", t);
	} else {
		snprintf(buf, len, "frozen");
	}
}

/* A session's status (its reply r) onto the array all, when it gave one. */
static void gather(json_t *r, void *all)
{
	bool stopped = json_is_true(json_object_get(r, "suspended"));
	if (!json_is_true(json_object_get(r, "ok")) && !stopped)
		return;
	json_object_del(r, "ok");
	json_object_del(r, "error"); /* a stopped warden's: said by the state */
	json_array_append(all, r);
}

static int status(bool as_json)
{
	_cleanup_strv_ struct strv dirs = { 0 };
	control_client_dirs(&dirs);
	_cleanup_json_ json_t *all = json_array();
	control_client_each(&dirs, "status", gather, all);
	bool extended = false;
	int sw = 7; /* the state's column: wider with a freeze's time left */
	size_t i;
	json_t *r;
	json_array_foreach(all, i, r) {
		extended = extended || json_object_get(r, "risk") || json_object_get(r, "alerts");
		char st[64];
		state_text(r, st, sizeof st);
		sw = (int)strlen(st) > sw ? (int)strlen(st) : sw;
	}
	if (as_json) {
		json_array_foreach(all, i, r) {
			char *s = json_dumps(r, JSON_COMPACT);
			printf("%s\n", s ? s : "{}");
			free(s);
		}
		return 0;
	}
	if (json_array_size(all) == 0) {
		printf("no running sessions\n");
		return 0;
	}
	printf("%-26s %-7s %-*s ", "SESSION", "AGE", sw, "STATE");
	if (extended)
		printf("%-6s %-6s ", "RISK", "ALERTS");
	printf("%-30s %s\n", "WORKSPACE", "COMMAND");
	json_array_foreach(all, i, r) {
		char age[32] = "-", cmd[128], st[64];
		if (json_object_get(r, "age_s")) /* a stopped warden gives none */
			age_text(json_integer_value(json_object_get(r, "age_s")), age, sizeof age);
		command_text(json_object_get(r, "command"), cmd, sizeof cmd);
		state_text(r, st, sizeof st);
		_cleanup_free_ char *ws = text_shown(json_string_value(json_object_get(r, "workspace")));
		printf("%-26s %-7s %-*s ", json_string_value(json_object_get(r, "session")), age, sw, st);
		if (extended) {
			char risk[32], alerts[32];
			field_text(json_object_get(r, "risk"), risk, sizeof risk);
			field_text(json_object_get(r, "alerts"), alerts, sizeof alerts);
			printf("%-6s %-6s ", risk, alerts);
		}
		printf("%-30s %s\n", ws && *ws ? ws : "-", cmd);
	}
	return 0;
}

int cmd_status(int argc, char **argv)
{
	bool as_json = false;
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "status")) != -1) {
		switch (c) {
		case 'j': as_json = true; break;
		case 'h': fputs(status_usage, stdout); return 0;
		default: fputs(status_usage, stderr); return 2;
		}
	}
	if (optind != argc) {
		fputs(status_usage, stderr);
		return 2;
	}
	return status(as_json);
}

/* A stopped warden continued (SIGCONT), and given a second to run: true
 * when it no longer is stopped. */
static bool continue_stopped(pid_t pid)
{
	if (kill(pid, SIGCONT) < 0)
		return false;
	char state = 'T';
	for (int i = 0; i < 100 && proc_state_start(pid, &state, NULL) && state == 'T'; i++)
		usleep(10000);
	return state != 'T';
}

/* The session id, continued, connected again (for a second at most, while
 * its warden accepts the connections that filled its backlog); -1 when it
 * cannot be. */
static int reconnect(const struct strv *dirs, const char *id, pid_t *marked)
{
	for (int i = 0; i < 100; i++) {
		struct werr e = { 0 };
		int fd = control_client_find(dirs, id, (char[CONTROL_NAME_MAX]){ 0 },
					     CONTROL_NAME_MAX, marked, &e);
		if (fd >= 0)
			return fd;
		usleep(10000);
	}
	return -1;
}

/* warden freeze|resume|kill SESSION [--reason TEXT] (argv[0]: the op). */
int cmd_action(int argc, char **argv)
{
	const char *op = argv[0], *reason = NULL;
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, op)) != -1) {
		switch (c) {
		case 'r': reason = optarg; break;
		case 'h': action_usage(stdout, op); return 0;
		default: action_usage(stderr, op); return 2;
		}
	}
	if (argc - optind != 1 || (reason && strcmp(op, "resume") == 0)) {
		action_usage(stderr, op);
		return 2;
	}
	_cleanup_strv_ struct strv dirs = { 0 };
	control_client_dirs(&dirs);
	char id[CONTROL_NAME_MAX];
	struct werr e = { 0 };
	pid_t marked = 0;
	_cleanup_close_ int fd = control_client_find(&dirs, argv[optind], id, sizeof id, &marked,
						     &e);
	if (fd == -1) {
		fprintf(stderr, "warden %s: %s\n", op, e.msg);
		return 2;
	}
	/* a suspended session's warden, stopped, answers nothing: a kill
	 * continues it first (in the background, where it serves the kill
	 * with the sandbox still stopped: jobctl.c); found by its marker alone
	 * (its socket's backlog full), it is reached once it has accepted
	 * what waited there */
	bool killing = strcmp(op, "kill") == 0;
	pid_t stopped = marked ? marked : fd >= 0 && killing ? control_client_stopped(fd) : 0;
	if (killing && stopped && continue_stopped(stopped) && fd < 0)
		fd = reconnect(&dirs, id, &marked);
	if (fd < 0) {
		_cleanup_json_ json_t *r = control_client_suspended(stopped);
		fprintf(stderr, "warden %s: %s: %s\n", op, id,
			json_string_value(json_object_get(r, "error")));
		return 1;
	}
	json_t *req = json_pack("{s:s}", "op", op);
	if (reason)
		json_object_set_new(req, "reason", json_string(reason));
	_cleanup_json_ json_t *r = control_client_request(fd, req);
	if (!json_is_true(json_object_get(r, "ok"))) {
		const char *err = json_string_value(json_object_get(r, "error"));
		fprintf(stderr, "warden %s: %s: %s\n", op, id, err ? err : "no answer from the session");
		return 1;
	}
	printf("%s: %s\n", id, strcmp(op, "freeze") == 0 ? "frozen" : strcmp(op, "resume") == 0
		? "resumed" : "killed");
	return 0;
}
