/* trust.c - the trust store of a session in which warden terminates TLS to
 * put a secret in (trust.h): the CA files the user configured, and the file
 * the sandbox trusts, written once per session in warden's cache directory
 * (never reachable inside but through its read-only bind) and removed at the
 * end. Only certificates go in it: the session CA's key never leaves the
 * supervisor's memory. */
#include "trust.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int trust_bundle_write(const char *dir, const char *session, const char *ca_pem,
		       const struct strv *user_cas, char **path, struct werr *e)
{
	_cleanup_free_ char *d = xasprintf("%s/trust", dir);
	if (mkdir_p(d, 0700, NULL) < 0)
		return werr_errno(e, "trust store: making %s", d);
	_cleanup_free_ char *p = xasprintf("%s/%s.pem", d, session);
	_cleanup_close_ int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return werr_errno(e, "trust store: %s", p);
	if (append(fd, SYSTEM_CA_BUNDLE, e) < 0)
		goto fail;
	for (size_t i = 0; user_cas && i < user_cas->n; i++)
		if (append(fd, user_cas->v[i], e) < 0)
			goto fail;
	static const char head[] = "# warden: this session's CA (its key never leaves warden)\n";
	if (write_all(fd, head, strlen(head)) < 0 || write_all(fd, ca_pem, strlen(ca_pem)) < 0) {
		werr_errno(e, "trust store: writing %s", p);
		goto fail;
	}
	*path = steal_ptr(&p);
	return 0;
fail:
	unlink(p);
	return -1;
}
