/* test_control_ctldir.c - where the control sockets live
 * (src/control/ctldir.c): $XDG_RUNTIME_DIR/warden/control made mode 0700
 * (a level of ours open to others closed), one that is a symbolic link or
 * (as root) another's refused with the reason and the state directory's
 * fallback used instead; an XDG_RUNTIME_DIR that is relative or open to
 * others is no runtime directory; the clients' directories are the
 * runtime one then the fallback, without repeats, and a session is found
 * by its id in either (client.c); a stopped warden's marker beside its
 * socket finds it once the socket's backlog is full, and only while the
 * process it names, of that start, is stopped. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "files.h"
#include "src/audit/audit.h"
#include "src/common/procfacts.h"
#include "src/common/util.h"
#include "src/control/client.h"
#include "src/control/control.h"
#include "src/control/ctldir.h"

static unsigned mode_of(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0;
}

/* XDG_RUNTIME_DIR=tmpdir/NAME (made with mode, unless 0); its path. */
static char *runtime_at(const char *name, mode_t mode)
{
	char *p = xasprintf("%s/%s", tmpdir, name);
	if (mode) {
		CHECK(mkdir(p, mode) == 0);
		CHECK(chmod(p, mode) == 0);
	}
	setenv("XDG_RUNTIME_DIR", p, 1);
	return p;
}

static void made_private(void)
{
	_cleanup_free_ char *rt = runtime_at("run", 0700);
	_cleanup_free_ char *want = xasprintf("%s/warden/control", rt);
	_cleanup_free_ char *top = xasprintf("%s/warden", rt);
	_cleanup_free_ char *logdir = xasprintf("%s/state", tmpdir);
	_cleanup_free_ char *got = control_runtime_dir();
	CHECK_STR(got, want);
	CHECK(access(top, F_OK) < 0); /* nothing made by asking */
	char *why = (char *)"unset";
	_cleanup_free_ char *dir = control_dir_make(logdir, &why);
	CHECK_STR(dir, want);
	CHECK(why == NULL);
	CHECK(mode_of(top) == 0700 && mode_of(dir) == 0700);
	/* a level of ours open to others: closed again */
	CHECK(chmod(top, 0755) == 0);
	free(control_dir_make(logdir, &why));
	CHECK(why == NULL && mode_of(top) == 0700);
	/* with a trailing slash, the same */
	_cleanup_free_ char *slash = xasprintf("%s/", rt);
	setenv("XDG_RUNTIME_DIR", slash, 1);
	free(got);
	got = control_runtime_dir();
	CHECK_STR(got, want);
}

static void refused_symlink(void)
{
	_cleanup_free_ char *rt = runtime_at("run2", 0700);
	_cleanup_free_ char *elsewhere = xasprintf("%s/elsewhere", tmpdir);
	_cleanup_free_ char *link = xasprintf("%s/warden", rt);
	_cleanup_free_ char *logdir = xasprintf("%s/state", tmpdir);
	_cleanup_free_ char *fallback = xasprintf("%s/control", logdir);
	_cleanup_free_ char *inside = xasprintf("%s/control", elsewhere);
	CHECK(mkdir(elsewhere, 0700) == 0);
	CHECK(symlink(elsewhere, link) == 0);
	char *why = NULL;
	_cleanup_free_ char *dir = control_dir_make(logdir, &why);
	CHECK_STR(dir, fallback);
	CHECK(why && strstr(why, link) && strstr(why, "symbolic link"));
	CHECK(access(inside, F_OK) < 0); /* nothing made through the link */
	free(why);
}

/* as root: a level owned by someone else refused */
static void refused_other_owner(void)
{
	if (geteuid() != 0)
		return;
	_cleanup_free_ char *rt = runtime_at("run3", 0700);
	_cleanup_free_ char *top = xasprintf("%s/warden", rt);
	_cleanup_free_ char *logdir = xasprintf("%s/state", tmpdir);
	CHECK(mkdir(top, 0700) == 0 && chown(top, 65534, 65534) == 0);
	char *why = NULL;
	_cleanup_free_ char *dir = control_dir_make(logdir, &why);
	CHECK(strncmp(dir, logdir, strlen(logdir)) == 0);
	CHECK(why && strstr(why, "owned by uid 65534"));
	free(why);
}

/* no runtime directory there: relative, open to others, missing */
static void not_runtime(void)
{
	const char *bad[] = { "relative/dir", NULL, NULL };
	_cleanup_free_ char *open_dir = xasprintf("%s/open", tmpdir);
	_cleanup_free_ char *missing = xasprintf("%s/missing", tmpdir);
	CHECK(mkdir(open_dir, 0777) == 0 && chmod(open_dir, 0777) == 0);
	bad[1] = open_dir;
	bad[2] = missing;
	for (size_t i = 0; i < 3; i++) {
		setenv("XDG_RUNTIME_DIR", bad[i], 1);
		_cleanup_free_ char *got = control_runtime_dir();
		/* the default instead (/run as root, /run/user/UID when it is
		 * there), never the one given */
		CHECK(!got || strncmp(got, "/run/", 5) == 0);
	}
}

static void clients_find_both(void)
{
	free(runtime_at("run4", 0700));
	_cleanup_free_ char *home = xasprintf("%s/home", tmpdir);
	_cleanup_free_ char *logdir = xasprintf("%s/home/.local/state/warden", tmpdir);
	setenv("HOME", home, 1);
	unsetenv("XDG_STATE_HOME");
	char *why = NULL;
	_cleanup_free_ char *rdir = control_dir_make(logdir, &why);
	_cleanup_free_ char *fdir = control_dir_of(logdir);
	struct werr e = { 0 };
	struct audit *log = NULL;
	CHECK(audit_open(&log, logdir, "20261126T000000Z-aaaa1111", &e) == 0);
	struct control *a = control_new(&(struct control_cfg){ .dir = rdir,
		.session = "20261126T000000Z-aaaa1111", .log = log }, &e);
	struct control *b = control_new(&(struct control_cfg){ .dir = fdir,
		.session = "20261126T000000Z-bbbb2222", .log = log }, &e);
	CHECK(a && b);
	struct strv dirs = { 0 };
	CHECK(control_client_dirs(&dirs) == 2);
	CHECK(dirs.n == 2 && strcmp(dirs.v[0], rdir) == 0 && strcmp(dirs.v[1], fdir) == 0);
	char id[CONTROL_NAME_MAX];
	pid_t stopped = 0;
	int fd = control_client_find(&dirs, "20261126T000000Z-a", id, sizeof id, &stopped, &e);
	CHECK(fd >= 0);
	CHECK_STR(id, "20261126T000000Z-aaaa1111");
	close(fd);
	fd = control_client_find(&dirs, "20261126T000000Z-b", id, sizeof id, &stopped, &e);
	CHECK(fd >= 0);
	CHECK_STR(id, "20261126T000000Z-bbbb2222");
	close(fd);
	CHECK(control_client_find(&dirs, "20261126T000000Z", id, sizeof id, &stopped, &e) < 0);
	CHECK(strstr(e.msg, "several running sessions"));
	strv_free(&dirs);
	/* the same directory by two names: once */
	_cleanup_free_ char *same = xasprintf("%s/home/.local/state", tmpdir);
	setenv("XDG_RUNTIME_DIR", same, 1);
	CHECK(chmod(same, 0700) == 0);
	CHECK(control_client_dirs(&dirs) == 1);
	strv_free(&dirs);
	control_free(a);
	control_free(b);
	audit_close(log);
}

#define HELD_MAX 256

/* Connections to sock until its listener's backlog is full (EAGAIN):
 * their fds in fds, how many. */
static size_t fill_backlog(const char *sock, int fds[HELD_MAX])
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
	for (size_t i = 0; i < HELD_MAX; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		CHECK(fd >= 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
			CHECK(errno == EAGAIN);
			close(fd);
			return i;
		}
		fds[i] = fd;
	}
	CHECK(!"the backlog never filled");
	return HELD_MAX;
}

static void write_marker(const char *sock, pid_t pid, unsigned long long start)
{
	char m[4096];
	CHECK(ctldir_marker(sock, m, sizeof m));
	_cleanup_free_ char *text = xasprintf("%d %llu\n", (int)pid, start);
	spit(m, text, strlen(text));
}

static void gather(json_t *r, void *ctx)
{
	if (json_is_true(json_object_get(r, "suspended")))
		json_array_append(ctx, r);
}

static void stopped_marker(void)
{
	char m[64];
	CHECK(ctldir_marker("d/20261126T000000Z-a.sock", m, sizeof m));
	CHECK_STR(m, "d/20261126T000000Z-a.stopped");
	CHECK(!ctldir_marker("d/x.socket", m, sizeof m));
	CHECK(!ctldir_marker("d/20261126T000000Z-a.sock", m, 10));

	_cleanup_free_ char *dir = xasprintf("%s/marked", tmpdir);
	_cleanup_free_ char *logdir = xasprintf("%s/marked-log", tmpdir);
	struct werr e = { 0 };
	struct audit *log = NULL;
	CHECK(audit_open(&log, logdir, "20261126T000000Z-dddd4444", &e) == 0);
	struct control *c = control_new(&(struct control_cfg){ .dir = dir,
		.session = "20261126T000000Z-dddd4444", .log = log }, &e);
	CHECK(c != NULL);
	const char *sock = control_path(c);
	_cleanup_free_ char *marker = xasprintf("%s/20261126T000000Z-dddd4444.stopped", dir);
	/* the warden's own marker: made and removed; itself running, no stop */
	control_mark_stopped(c, true);
	CHECK(access(marker, F_OK) == 0);
	CHECK(mode_of(marker) == 0600);
	CHECK(ctldir_marked_stopped(sock) == 0);
	CHECK(access(marker, F_OK) == 0); /* running: kept */
	control_mark_stopped(c, false);
	CHECK(access(marker, F_OK) != 0);

	/* a stopped process named, the backlog full: found by its marker */
	pid_t child = fork();
	CHECK(child >= 0);
	if (child == 0) {
		raise(SIGSTOP);
		_exit(0);
	}
	siginfo_t si;
	CHECK(waitid(P_PID, (id_t)child, &si, WSTOPPED | WNOWAIT) == 0);
	unsigned long long start = 0;
	CHECK(proc_state_start(child, NULL, &start));
	write_marker(sock, child, start);
	int held[HELD_MAX];
	size_t nheld = fill_backlog(sock, held);
	struct strv dirs = { 0 };
	strv_push(&dirs, dir);
	char id[CONTROL_NAME_MAX];
	pid_t stopped = 0;
	CHECK(control_client_find(&dirs, "20261126T000000Z-d", id, sizeof id, &stopped, &e) ==
	      CONTROL_FIND_MARKED);
	CHECK(stopped == child);
	CHECK_STR(id, "20261126T000000Z-dddd4444");
	json_t *seen = json_array();
	control_client_each(&dirs, "status", gather, seen);
	CHECK(json_array_size(seen) == 1);
	json_t *r = json_array_get(seen, 0);
	CHECK_STR(json_string_value(json_object_get(r, "session")), "20261126T000000Z-dddd4444");
	CHECK(json_integer_value(json_object_get(r, "pid")) == child);
	json_decref(seen);
	/* of another start (its pid given to a later process): not it, and
	 * the marker, stale, removed */
	write_marker(sock, child, start + 1);
	CHECK(ctldir_marked_stopped(sock) == 0);
	CHECK(access(marker, F_OK) != 0);
	CHECK(control_client_find(&dirs, "20261126T000000Z-d", id, sizeof id, &stopped, &e) == -1);
	/* its process gone (killed while stopped): the marker removed */
	write_marker(sock, child, start);
	kill(child, SIGCONT);
	CHECK(waitpid(child, NULL, 0) == child);
	CHECK(ctldir_marked_stopped(sock) == 0);
	CHECK(access(marker, F_OK) != 0);
	/* a warden killed while stopped: its socket refuses, and goes with
	 * the marker it left */
	for (size_t i = 0; i < nheld; i++)
		close(held[i]);
	_cleanup_free_ char *dead = xasprintf("%s/20261126T000000Z-eeee5555.sock", dir);
	int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", dead);
	CHECK(bind(sfd, (struct sockaddr *)&sa, sizeof sa) == 0);
	close(sfd); /* bound, nobody listening: refused */
	write_marker(dead, getpid(), 1);
	_cleanup_free_ char *dead_marker = xasprintf("%s/20261126T000000Z-eeee5555.stopped", dir);
	CHECK(access(dead_marker, F_OK) == 0);
	CHECK(control_client_connect(dead) < 0 && errno == ECONNREFUSED);
	CHECK(access(dead, F_OK) != 0);
	CHECK(access(dead_marker, F_OK) != 0);
	strv_free(&dirs);
	control_free(c);
	audit_close(log);
}

int main(void)
{
	tmpdir_make("warden-ctldir");
	made_private();
	refused_symlink();
	refused_other_owner();
	not_runtime();
	clients_find_both();
	stopped_marker();
	tmpdir_remove();
	return check_status();
}
