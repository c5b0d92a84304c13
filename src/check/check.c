/* check.c - the orchestration of `warden check`: plant the bait (bait.c),
 * run the probe runner in one sandbox session (and once outside it for
 * --compare), read its JSON Lines, verify every write probe on the host
 * before the runner cleans up, print the table or the JSON document, and
 * remove all bait again, on every path out. */
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/err.h"
#include "../common/util.h"
#include "../policy/policy.h"
#include "../sandbox/paths.h"
#include "../session/session.h"
#include "bait.h"
#include "probes.h"

#define EXIT_WARDEN 125
#define MAX_LINE 65536

/* ---- results ---------------------------------------------------------- */

struct row {
	bool seen;
	bool allowed; /* after host verification for write probes */
	bool held;
	char detail[512];
};

struct column {
	struct row *rows;
	struct strv sweep; /* host files write probes made, removed after the run */
	bool ended;
	int status;
	char err[4096]; /* what the runner (or the session) said on stderr */
};

static bool expectation_met(const struct probe *p, bool allowed)
{
	return p->expect == EXPECT_RECORD || (p->expect == EXPECT_DENIED) != allowed;
}

static bool read_whole(const char *path, char *buf, size_t len, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = fstat(fd, st) == 0 && S_ISREG(st->st_mode);
	ssize_t n = ok ? read(fd, buf, len - 1) : -1;
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return true;
}

/* Did the host change at this verify target? Fills why; puts bait content
 * back at once (later probes use it) and queues files that appeared for the
 * sweep after the run (the runner's own clean-up may still move them). */
static bool host_changed(const struct probe_verify *v, const char *path, const char *shown,
			 const char *token, struct strv *sweep, char *why, size_t len)
{
	struct stat st;
	char buf[4096];
	switch (v->kind) {
	case V_NOFILE:
	case V_FILE:
		/* only a file or a link a tool would read counts; the session's
		 * own placeholders are unix-socket entries or empty directories */
		if (lstat(path, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
			return false;
		if (v->kind == V_FILE && !(read_whole(path, buf, sizeof buf, &st) && strstr(buf, token)))
			return false;
		snprintf(why, len, "%s appeared", shown);
		strv_push(sweep, path); /* removed once the runner is done */
		return true;
	case V_BAIT: {
		char want[256];
		probe_bait_content(v->rel, want, sizeof want);
		if (lstat(path, &st) < 0) {
			snprintf(why, len, "%s is gone", shown);
			return true; /* the runner moves it back */
		}
		if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode)) {
			snprintf(why, len, "%s was replaced", shown);
			if (S_ISLNK(st.st_mode) && unlink(path) == 0)
				write_file_new(path, want);
			return true;
		}
		if (read_whole(path, buf, sizeof buf, &st) && strcmp(buf, want) == 0)
			return false;
		snprintf(why, len, "%s was modified", shown);
		int fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			write_all(fd, want, strlen(want));
			close(fd);
		}
		return true;
	}
	case V_NONE:
		break;
	}
	return false;
}

/* The device of path, or of its nearest existing ancestor. */
static bool host_dev(const char *path, dev_t *d)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	for (;;) {
		struct stat st;
		if (lstat(buf, &st) == 0) {
			*d = st.st_dev;
			return true;
		}
		char *s = strrchr(buf, '/');
		if (!s || s == buf)
			return false;
		*s = '\0';
	}
}

/* A write probe's verdict comes from the host: "allowed" only when the
 * host changed. A write the probe reports on the host's own file system
 * that the host cannot see, or a change the probe reports as refused, is
 * inconsistent and fails the row. A write that landed on a file system the
 * host paths do not live on (the sandbox's private /tmp) changed nothing. */
static void evaluate_write(const struct bait *b, const struct probe *p, bool says_allowed,
			   const char *detail, const char *dev, struct row *row, struct strv *sweep)
{
	bool changed = false, same_fs = false, resolved = false;
	char host[384] = "";
	unsigned maj = 0, min = 0;
	bool have_dev = dev && sscanf(dev, "%u:%u", &maj, &min) == 2;
	for (int k = 0; k < PROBE_MAX_VERIFY && p->verify[k].kind != V_NONE; k++) {
		struct probe_bases bases = { b->ws, b->base, b->home, b->audit_dir, b->cache_dir };
		_cleanup_free_ char *path = probe_verify_path(&p->verify[k], &bases, b->token);
		if (!path)
			continue;
		resolved = true;
		char why[256];
		/* Shown relative to the bait directory when inside it. */
		size_t bl = strlen(b->base);
		const char *shown = strncmp(path, b->base, bl) == 0 && path[bl] == '/' ? path + bl + 1 : path;
		if (host_changed(&p->verify[k], path, shown, b->token, sweep, why, sizeof why)) {
			size_t l = strlen(host);
			snprintf(host + l, sizeof host - l, "%s%s", l ? "; " : "", why);
			changed = true;
		}
		dev_t d;
		if (!have_dev || (host_dev(path, &d) && major(d) == maj && minor(d) == min))
			same_fs = true;
	}
	row->seen = true;
	bool consistent = true;
	if (changed) {
		row->allowed = true;
		if (says_allowed) {
			snprintf(row->detail, sizeof row->detail, "%s (on the host: %s)", detail, host);
		} else {
			consistent = false;
			snprintf(row->detail, sizeof row->detail,
				 "inconsistent: the probe saw %s but %s", detail, host);
		}
	} else if (says_allowed && !resolved) {
		/* nothing on the host to look at: a write that cannot be shown
		 * to have stayed private is not a refusal */
		consistent = false;
		row->allowed = true;
		snprintf(row->detail, sizeof row->detail, "inconsistent: the probe %s but the check "
			 "knows no host path to verify it at", detail);
	} else if (says_allowed && same_fs) {
		consistent = false;
		row->allowed = true;
		snprintf(row->detail, sizeof row->detail, "inconsistent: the probe %s on the host's "
			 "file system but the host shows no change", detail);
	} else if (says_allowed) {
		row->allowed = false;
		snprintf(row->detail, sizeof row->detail, "host unchanged: the write stayed on a "
			 "file system private to the sandbox (%s, dev %s)", detail, dev);
	} else {
		row->allowed = false;
		snprintf(row->detail, sizeof row->detail, "%s", detail);
	}
	row->held = consistent && expectation_met(p, row->allowed);
}

static int find_probe(const char *name)
{
	for (size_t i = 0; i < probe_count; i++)
		if (strcmp(probe_table[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Read the runner's JSON Lines; verify write probes on the host and give
 * the go-ahead on wfd. Returns -1 on a malformed stream. */
static int collect(const struct bait *b, int rfd, int wfd, struct column *col, struct werr *e)
{
	FILE *f = fdopen(rfd, "r");
	if (!f) {
		close(rfd);
		return werr_errno(e, "check: reading the probe runner");
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int r = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (n > MAX_LINE) {
			r = werr_set(e, 0, "check: the probe runner wrote a line of %zd bytes", n);
			break;
		}
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);
		if (!o || !json_is_object(o)) {
			json_decref(o);
			line[strcspn(line, "\n")] = '\0';
			r = werr_set(e, 0, "check: unexpected output from the probe runner: %.200s", line);
			break;
		}
		const char *runner = json_string_value(json_object_get(o, "runner"));
		const char *name = json_string_value(json_object_get(o, "probe"));
		if (runner && strcmp(runner, "end") == 0)
			col->ended = true;
		int i = name ? find_probe(name) : -1;
		if (i >= 0) {
			const struct probe *p = &probe_table[i];
			struct row *row = &col->rows[i];
			const char *obs = json_string_value(json_object_get(o, "observed"));
			const char *detail = json_string_value(json_object_get(o, "detail"));
			const char *dev = json_string_value(json_object_get(o, "dev"));
			bool says = obs && strcmp(obs, "allowed") == 0;
			if (!detail)
				detail = "";
			if (row->seen) {
				/* reported twice: keep the first */
			} else if (probe_has_verify(p)) {
				evaluate_write(b, p, says, detail, dev, row, &col->sweep);
			} else {
				row->seen = true;
				row->allowed = says;
				row->held = expectation_met(p, says);
				snprintf(row->detail, sizeof row->detail, "%s", detail);
			}
			if (probe_has_verify(p) && write(wfd, "g", 1) != 1) { /* runner gone: EOF follows */ }
		}
		json_decref(o);
	}
	free(line);
	fclose(f);
	return r;
}

/* ---- running the runner ------------------------------------------------ */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) { interrupted = sig; }

static void child_setup(const struct bait *b, int in, int out, int err)
{
	for (int s = 1; s < NSIG; s++)
		signal(s, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(EXIT_WARDEN);
	/* Only stdio and the fd leaked on purpose go on. */
	if (b->leak_fd > 2) {
		if (b->leak_fd > 3)
			close_range(3, (unsigned)b->leak_fd - 1, 0);
		close_range((unsigned)b->leak_fd + 1, ~0U, 0);
	} else {
		close_range(3, ~0U, 0);
	}
	bait_env(b);
}

static void read_capture(int fd, char *buf, size_t len)
{
	buf[0] = '\0';
	if (lseek(fd, 0, SEEK_SET) < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
}

/* The forked child of run_column: the runner, in a sandbox session
 * (inside) or re-executed plainly; never returns. */
__attribute__((noreturn))
static void runner_child(const struct check_opts *o, const struct bait *b, bool inside)
{
	struct strv argv = { 0 };
	if (inside) {
		bait_runner_argv(b, SANDBOX_SELF_EXE, &argv);
		struct strv deny = { 0 };
		bait_exec_deny(b, &deny);
		struct session_opts so = {
			.workspace = b->ws, .profile = o->profile, .argv = argv.v,
			.self_exe = true, .no_pty = true, .exec_deny = &deny, .detect_observe = true,
			.no_ssh_agent = true, .no_managed = true,
		};
		struct werr se = { 0 };
		int status = EXIT_WARDEN;
		if (session_run(&so, &status, &se) < 0) {
			werr_print(&se);
			_exit(EXIT_WARDEN);
		}
		_exit(status & 0xff);
	}
	bait_runner_argv(b, "warden", &argv);
	if (chdir(b->ws) < 0) {
		wnote("%s: %s", b->ws, strerror(errno));
		_exit(EXIT_WARDEN);
	}
	execv("/proc/self/exe", argv.v);
	wnote("re-executing itself: %s", strerror(errno));
	_exit(EXIT_WARDEN);
}

/* What a finished runner's column says: its status, its stderr, every
 * probe reported. */
static int column_verdict(const struct column *col, bool inside, struct werr *e)
{
	size_t l = strlen(col->err);
	if (col->status != 0 || !col->ended)
		return werr_set(e, 0, "check: the probe runner %s ended with status %d%s%.3000s",
				inside ? "in the sandbox" : "outside the sandbox", col->status,
				l ? ":\n" : " before reporting every probe", col->err);
	if (l) /* warnings of the session or the runner */
		fprintf(stderr, "%s\n", col->err);
	for (size_t i = 0; i < probe_count; i++)
		if (!col->rows[i].seen)
			return werr_set(e, 0, "check: the probe runner did not report %s",
					probe_table[i].name);
	return 0;
}

/* One run of the runner: in the sandbox (inside) or as a plain child. */
static int run_column(const struct check_opts *o, const struct bait *b, bool inside,
		      struct column *col, struct werr *e)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0)
		return werr_errno(e, "check: pipe");
	_cleanup_close_ int in_r = in[0], in_w = in[1];
	if (pipe2(out, O_CLOEXEC) < 0)
		return werr_errno(e, "check: pipe");
	_cleanup_close_ int out_r = out[0], out_w = out[1];
	_cleanup_close_ int errfd = memfd_create("warden-check-stderr", MFD_CLOEXEC);
	if (errfd < 0)
		return werr_errno(e, "check: memfd_create");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return werr_fork(e, errno, "check: fork");
	if (pid == 0) {
		child_setup(b, in_r, out_w, errfd);
		runner_child(o, b, inside);
	}
	close(steal_fd(&in_r));
	close(steal_fd(&out_w));
	int r = collect(b, out_r, in_w, col, e);
	close(steal_fd(&in_w));
	if (r < 0 || interrupted)
		kill(pid, SIGTERM);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			st = EXIT_WARDEN << 8;
			break;
		}
	col->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	read_capture(errfd, col->err, sizeof col->err);
	size_t l = strlen(col->err);
	while (l && col->err[l - 1] == '\n')
		col->err[--l] = '\0';
	for (size_t i = 0; i < col->sweep.n; i++) {
		struct stat sb;
		if (lstat(col->sweep.v[i], &sb) == 0 && !S_ISDIR(sb.st_mode))
			unlink(col->sweep.v[i]);
	}
	if (r < 0)
		return -1;
	if (interrupted)
		return werr_set(e, EINTR, "check: interrupted");
	return column_verdict(col, inside, e);
}

/* ---- output ----------------------------------------------------------- */

static void cell(char *out, size_t len, const struct row *r, size_t width)
{
	char full[600];
	snprintf(full, sizeof full, "%s%s%s", r->allowed ? "allowed" : "denied",
		 r->detail[0] ? ": " : "", r->detail);
	if (strlen(full) > width && width > 3)
		snprintf(out, len, "%.*s...", (int)(width - 3), full);
	else
		snprintf(out, len, "%s", full);
}

/* A held row that got the very answer outside that it got inside (the
 * same refusal, the same detail): on this host it shows nothing of the
 * sandbox's (nothing there to reach, no terminal, the host's own refusal). */
static bool same_answer(const struct column *in, const struct column *outc, size_t i)
{
	return probe_table[i].expect == EXPECT_DENIED && in->rows[i].held && !in->rows[i].allowed &&
	       !outc->rows[i].allowed &&
	       strcmp(in->rows[i].detail, outc->rows[i].detail) == 0;
}

/* The probes allowed outside and denied inside: what the sandbox took away. */
static size_t taken_away(const struct column *in, const struct column *outc)
{
	size_t taken = 0;
	for (size_t i = 0; i < probe_count; i++)
		taken += outc->rows[i].allowed && !in->rows[i].allowed;
	return taken;
}

static void print_same_answer(const struct column *in, const struct column *outc)
{
	size_t n = 0;
	for (size_t i = 0; i < probe_count; i++)
		n += same_answer(in, outc, i);
	if (!n)
		return;
	printf("compare: %zu held probes got the same answer outside, so they show no wall here:", n);
	for (size_t i = 0; i < probe_count; i++)
		if (same_answer(in, outc, i))
			printf(" %s", probe_table[i].name);
	printf("\n");
}

static void print_table(const struct check_opts *o, const struct bait *b, const struct column *in,
			const struct column *outc, size_t held, size_t failed)
{
	printf("warden check: profile %s, workspace %s\n", o->profile ? o->profile : "builtin:default",
	       b->ws);
	const size_t w = outc ? 44 : 72;
	for (int g = 0; g < G__COUNT; g++) {
		printf("\n%s\n", probe_group_name((enum probe_group)g));
		if (outc)
			printf("  %-24s %-8s  %-*s  %-*s  %s\n", "PROBE", "EXPECTED", (int)w, "OUTSIDE",
			       (int)w, "INSIDE", "HELD");
		else
			printf("  %-24s %-8s  %-*s  %s\n", "PROBE", "EXPECTED", (int)w, "OBSERVED", "HELD");
		for (size_t i = 0; i < probe_count; i++) {
			const struct probe *p = &probe_table[i];
			if ((int)p->group != g)
				continue;
			char ci[600], co[600];
			cell(ci, sizeof ci, &in->rows[i], w);
			if (outc) {
				cell(co, sizeof co, &outc->rows[i], w);
				printf("  %-24s %-8s  %-*s  %-*s  %s\n", p->name, probe_expect_name(p->expect),
				       (int)w, co, (int)w, ci, in->rows[i].held ? "yes" : "NO");
			} else {
				printf("  %-24s %-8s  %-*s  %s\n", p->name, probe_expect_name(p->expect),
				       (int)w, ci, in->rows[i].held ? "yes" : "NO");
			}
		}
	}
	printf("\n%zu probes: %zu held, %zu failed\n", probe_count, held, failed);
	if (outc) {
		printf("compare: %zu probes allowed outside the sandbox are denied inside it\n",
		       taken_away(in, outc));
		print_same_answer(in, outc);
	}
	if (failed) {
		printf("did not hold:");
		for (size_t i = 0; i < probe_count; i++)
			if (!in->rows[i].held)
				printf(" %s", probe_table[i].name);
		printf("\n");
		for (size_t i = 0; i < probe_count; i++)
			if (!in->rows[i].held)
				printf("  %s (%s): %s: %s\n", probe_table[i].name, probe_table[i].what,
				       in->rows[i].allowed ? "allowed" : "denied", in->rows[i].detail);
	}
}

static json_t *row_json(const struct row *r)
{
	return json_pack("{s:s, s:s, s:b}", "observed", r->allowed ? "allowed" : "denied",
			 "detail", r->detail, "held", r->held);
}

static void print_json(const struct check_opts *o, const struct bait *b, const struct column *in,
		       const struct column *outc, size_t held, size_t failed)
{
	json_t *probes = json_array();
	for (size_t i = 0; i < probe_count; i++) {
		const struct probe *p = &probe_table[i];
		json_t *r = json_pack("{s:s, s:s, s:s, s:s}", "name", p->name, "group",
				      probe_group_name(p->group), "expected", probe_expect_name(p->expect),
				      "what", p->what);
		json_object_update_new(r, row_json(&in->rows[i]));
		if (outc) {
			json_t *oj = row_json(&outc->rows[i]);
			json_object_del(oj, "held");
			json_object_set_new(r, "outside", oj);
		}
		json_array_append_new(probes, r);
	}
	json_t *doc = json_pack("{s:b, s:s, s:s, s:{s:s?, s:s, s:s?, s:s}, s:{s:i, s:i, s:i}, s:o}",
				"held", failed == 0, "profile",
				o->profile ? o->profile : "builtin:default", "workspace", b->ws,
				"exec_bait", "program", b->exec_bait, "sha256", b->exec_sha256,
				"script", b->exec_script, "script_sha256", b->script_sha256,
				"summary", "probes", (int)probe_count, "held", (int)held, "failed",
				(int)failed, "probes", probes);
	if (doc && outc) { /* the table's two compare lines */
		json_t *same = json_array();
		for (size_t i = 0; i < probe_count; i++)
			if (same_answer(in, outc, i))
				json_array_append_new(same, json_string(probe_table[i].name));
		json_object_set_new(doc, "compare", json_pack("{s:i, s:o}", "taken_away",
							      (int)taken_away(in, outc), "same_answer", same));
	}
	char *s = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
	if (s) {
		puts(s);
		free(s);
	}
	json_decref(doc);
}

/* ---- the check -------------------------------------------------------- */

int check_run(const struct check_opts *o)
{
	struct werr e = { 0 };
	/* A broken profile is reported before any bait exists. */
	struct policy pol;
	if (policy_load(&pol, o->profile, user_home(), &e) < 0) {
		werr_print(&e);
		return EXIT_WARDEN;
	}
	policy_free(&pol);

	struct sigaction sa = { .sa_handler = on_signal }, old[3];
	const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	struct sigaction ign = { .sa_handler = SIG_IGN }, oldpipe;
	sigaction(SIGPIPE, &ign, &oldpipe);

	struct bait b;
	bait_init(&b);
	struct column in = { .rows = xcalloc(probe_count, sizeof(struct row)) };
	struct column outc = { .rows = xcalloc(probe_count, sizeof(struct row)) };
	int ret = EXIT_WARDEN;
	if (bait_create(&b, &e) < 0 || run_column(o, &b, true, &in, &e) < 0 ||
	    (o->compare && run_column(o, &b, false, &outc, &e) < 0)) {
		werr_print(&e);
	} else {
		size_t held = 0;
		for (size_t i = 0; i < probe_count; i++)
			held += in.rows[i].held;
		size_t failed = probe_count - held;
		if (o->json)
			print_json(o, &b, &in, o->compare ? &outc : NULL, held, failed);
		else
			print_table(o, &b, &in, o->compare ? &outc : NULL, held, failed);
		fflush(stdout);
		ret = failed ? 1 : 0;
	}
	bait_remove(&b);
	free(in.rows);
	free(outc.rows);
	strv_free(&in.sweep);
	strv_free(&outc.sweep);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	sigaction(SIGPIPE, &oldpipe, NULL);
	if (interrupted) {
		signal(interrupted, SIG_DFL);
		raise(interrupted);
	}
	return ret;
}
