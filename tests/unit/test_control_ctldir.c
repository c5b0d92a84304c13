/* test_control_ctldir.c - where the control sockets live
 * (src/control/ctldir.c): $XDG_RUNTIME_DIR/warden/control made mode 0700
 * (a level of ours open to others closed), one that is a symbolic link or
 * (as root) another's refused with the reason and the state directory's
 * fallback used instead; an XDG_RUNTIME_DIR that is relative or open to
 * others is no runtime directory; the clients' directories are the
 * runtime one then the fallback, without repeats, and a session is found
 * by its id in either (client.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "files.h"
#include "src/audit/audit.h"
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
	int fd = control_client_find(&dirs, "20261126T000000Z-a", id, sizeof id, &e);
	CHECK(fd >= 0);
	CHECK_STR(id, "20261126T000000Z-aaaa1111");
	close(fd);
	fd = control_client_find(&dirs, "20261126T000000Z-b", id, sizeof id, &e);
	CHECK(fd >= 0);
	CHECK_STR(id, "20261126T000000Z-bbbb2222");
	close(fd);
	CHECK(control_client_find(&dirs, "20261126T000000Z", id, sizeof id, &e) < 0);
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

int main(void)
{
	tmpdir_make("warden-ctldir");
	made_private();
	refused_symlink();
	refused_other_owner();
	not_runtime();
	clients_find_both();
	tmpdir_remove();
	return check_status();
}
