/* trust.c - the trust store of a session in which warden terminates TLS to
 * put a secret in (trust.h): the CA files the user configured, and the file
 * the sandbox trusts, written once per session in warden's cache directory
 * (never reachable inside but through its read-only bind) and removed at the
 * end; one a killed warden left is removed by a later session. Only certificates go in it: the session CA's key never leaves the
 * supervisor's memory. */
#include "trust.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../sandbox/sandbox.h"

/* The variables through which clients are told of a CA; their files are
 * trusted upstream too, and go into the sandbox's store. */
static const char *const ca_vars[] = {
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "CODEX_CA_CERTIFICATE", "REQUESTS_CA_BUNDLE",
	"CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
};

void trust_user_cas(struct strv *out)
{
	/* the system bundle itself (some machines point every variable at
	 * it) is trusted already: not again */
	struct stat sys;
	bool have_sys = stat(SYSTEM_CA_BUNDLE, &sys) == 0;
	for (size_t i = 0; i < ARRAY_LEN(ca_vars); i++) {
		const char *v = getenv(ca_vars[i]);
		struct stat st;
		if (v && v[0] == '/' && stat(v, &st) == 0 && S_ISREG(st.st_mode) &&
		    !(have_sys && st.st_dev == sys.st_dev && st.st_ino == sys.st_ino) &&
		    !strv_contains(out, v))
			strv_push(out, v);
	}
}

void trust_env(struct strv *envp)
{
	for (size_t i = 0; i < ARRAY_LEN(ca_vars); i++) {
		_cleanup_free_ char *a = xasprintf("%s=%s", ca_vars[i], SANDBOX_CA_BUNDLE);
		env_override(envp, a);
	}
}

/* Append the file at path to fd, with a line end after it. Missing: 0. */
static int append(int fd, const char *path, struct werr *e)
{
	_cleanup_close_ int in = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (in < 0)
		return errno == ENOENT ? 0 : werr_errno(e, "trust store: %s", path);
	struct stat st;
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		return werr_set(e, 0, "trust store: %s is not a regular file", path);
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write_all(fd, buf, (size_t)n) < 0)
			return werr_errno(e, "trust store: writing");
	if (n < 0)
		return werr_errno(e, "trust store: reading %s", path);
	return write_all(fd, "\n", 1) < 0 ? werr_errno(e, "trust store: writing") : 0;
}

/* The stores of sessions that ended without removing theirs (warden was
 * killed): a live session holds a lock on its own (trust_bundle_write),
 * so a store whose lock can be taken is no session's. */
static void stale_remove(const char *d)
{
	_cleanup_close_ int dfd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_dir_ DIR *dir = dfd >= 0 ? fdopendir(dup(dfd)) : NULL;
	if (!dir)
		return;
	for (struct dirent *de; (de = readdir(dir));) {
		size_t n = strlen(de->d_name);
		if (de->d_name[0] == '.' || n < 5 || strcmp(de->d_name + n - 4, ".pem") != 0)
			continue;
		_cleanup_close_ int fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
						O_CLOEXEC);
		struct stat a, b;
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &a) == 0 &&
		    fstatat(dfd, de->d_name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev && S_ISREG(a.st_mode))
			unlinkat(dfd, de->d_name, 0);
	}
}

int trust_bundle_write(const char *dir, const char *session, const char *ca_pem,
		       const struct strv *user_cas, char **path, int *lock, struct werr *e)
{
	_cleanup_free_ char *d = xasprintf("%s/trust", dir);
	if (mkdir_p(d, 0700, NULL) < 0)
		return werr_errno(e, "trust store: making %s", d);
	stale_remove(d);
	/* written under a name no sweep takes, locked, then put in place */
	_cleanup_free_ char *tmp = xasprintf("%s/.%s.pem", d, session);
	_cleanup_free_ char *p = xasprintf("%s/%s.pem", d, session);
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return werr_errno(e, "trust store: %s", tmp);
	if (flock(fd, LOCK_EX) < 0) {
		werr_errno(e, "trust store: locking %s", tmp);
		goto fail;
	}
	if (append(fd, SYSTEM_CA_BUNDLE, e) < 0)
		goto fail;
	for (size_t i = 0; user_cas && i < user_cas->n; i++)
		if (append(fd, user_cas->v[i], e) < 0)
			goto fail;
	static const char head[] = "# warden: this session's CA (its key never leaves warden)\n";
	if (write_all(fd, head, strlen(head)) < 0 || write_all(fd, ca_pem, strlen(ca_pem)) < 0) {
		werr_errno(e, "trust store: writing %s", tmp);
		goto fail;
	}
	if (rename(tmp, p) < 0) {
		werr_errno(e, "trust store: %s", p);
		goto fail;
	}
	*path = steal_ptr(&p);
	*lock = steal_fd(&fd);
	return 0;
fail:
	unlink(tmp);
	return -1;
}
