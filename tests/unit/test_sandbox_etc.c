/* test_sandbox_etc.c - unit tests of etc_populate (src/sandbox/etc.c), the
 * curated /etc built into a temporary directory from a fake host tree: the
 * listed entries are mirrored (small files copied, symlinks recreated,
 * directories and large files left as empty mount points and named for a
 * live bind), warden writes its own passwd, group, hostname and hosts, and
 * nothing else of the host's /etc (shadow, sudoers, ssh, private keys) gets
 * in. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/sandbox/sandbox.h"
#include "check.h"

static char tmpdir[] = "/tmp/warden-test-etc-XXXXXX";

static char *tmp_path(const char *rel) { return xasprintf("%s/%s", tmpdir, rel); }

static void put(const char *rel, const char *text)
{
	_cleanup_free_ char *p = tmp_path(rel);
	char *slash = strrchr(p, '/');
	*slash = '\0';
	mkdir_p(p, 0755, NULL);
	*slash = '/';
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0) {
		perror(p);
		exit(2);
	}
	close(fd);
}

/* The file's contents (at most 4 KiB), NULL when it cannot be read. */
static char *slurp(const char *rel)
{
	_cleanup_free_ char *p = tmp_path(rel);
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	char *buf = xcalloc(1, 4097);
	ssize_t n = read(fd, buf, 4096);
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool there(const char *rel, struct stat *st)
{
	_cleanup_free_ char *p = tmp_path(rel);
	return lstat(p, st) == 0;
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	/* the host's /etc: what may be mirrored ... */
	put("host/etc/ld.so.cache", "loader cache\n");
	put("host/etc/ssl/openssl.cnf", "[openssl]\n");
	put("host/etc/ssl/certs/ca.pem", "CERT\n");
	put("host/etc/alternatives/editor", "");
	put("host/etc/nsswitch.conf", "hosts: files dns\n");
	_cleanup_free_ char *lt = tmp_path("host/etc/localtime");
	CHECK(symlink("/usr/share/zoneinfo/Europe/Paris", lt) == 0);
	_cleanup_free_ char *big = tmp_path("host/etc/mime.types");
	put("host/etc/mime.types", "");
	CHECK(truncate(big, (2 << 20)) == 0); /* larger than a copy */
	_cleanup_free_ char *fifo = tmp_path("host/etc/profile");
	CHECK(mkfifo(fifo, 0644) == 0);
	/* ... and what must never be: secrets, and the host's own identity */
	put("host/etc/shadow", "root:$6$secret:19000::::::\n");
	put("host/etc/gshadow", "root:*::\n");
	put("host/etc/sudoers", "u ALL=(ALL) NOPASSWD: ALL\n");
	put("host/etc/ssh/ssh_host_ed25519_key", "PRIVATE\n");
	put("host/etc/ssl/private/server.key", "PRIVATE\n");
	put("host/etc/machine-id", "0123456789abcdef\n");
	put("host/etc/passwd", "root:x:0:0::/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/zsh\n");
	put("host/etc/group", "root:x:0:\nalice:x:1000:\nsudo:x:27:alice\n");
	put("host/etc/hostname", "alices-laptop\n");
	put("host/etc/hosts", "10.0.0.5 build-server\n");

	_cleanup_free_ char *host = tmp_path("host");
	_cleanup_free_ char *outp = tmp_path("out");
	CHECK(mkdir(outp, 0755) == 0);
	_cleanup_close_ int out = open(outp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct strv binds = { 0 };
	struct werr e = { 0 };
	alarm(20); /* a copy that opened the FIFO would hang */
	CHECK(etc_populate(host, out, &binds, &e) == 0);
	alarm(0);

	/* small files copied whole; a symlink recreated with its target */
	struct stat st;
	char *s;
	CHECK_STR(s = slurp("out/ld.so.cache"), "loader cache\n");
	free(s);
	CHECK_STR(s = slurp("out/nsswitch.conf"), "hosts: files dns\n");
	free(s);
	CHECK_STR(s = slurp("out/ssl/openssl.cnf"), "[openssl]\n");
	free(s);
	char target[PATH_MAX] = "";
	_cleanup_free_ char *olt = tmp_path("out/localtime");
	ssize_t n = readlink(olt, target, sizeof target - 1);
	CHECK(n > 0);
	CHECK_STR(target, "/usr/share/zoneinfo/Europe/Paris");

	/* directories and large files: empty mount points, bound live */
	CHECK(there("out/ssl/certs", &st) && S_ISDIR(st.st_mode));
	CHECK(!there("out/ssl/certs/ca.pem", &st));
	CHECK(there("out/alternatives", &st) && S_ISDIR(st.st_mode));
	CHECK(there("out/mime.types", &st) && S_ISREG(st.st_mode) && st.st_size == 0);
	CHECK(binds.n == 3);
	CHECK(strv_contains(&binds, "/etc/ssl/certs"));
	CHECK(strv_contains(&binds, "/etc/alternatives"));
	CHECK(strv_contains(&binds, "/etc/mime.types"));
	/* a FIFO is nothing to mirror */
	CHECK(!there("out/profile", &st));

	/* warden's own identity files, not the host's */
	CHECK_STR(s = slurp("out/passwd"),
		  "root:x:0:0:root:/root:/usr/sbin/nologin\n"
		  AGENT_USER ":x:1000:1000:warden agent:" AGENT_HOME ":/bin/sh\n"
		  "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
	free(s);
	CHECK_STR(s = slurp("out/group"), "root:x:0:\n" AGENT_USER ":x:1000:\nnogroup:x:65534:\n");
	free(s);
	CHECK_STR(s = slurp("out/hostname"), SANDBOX_HOSTNAME "\n");
	free(s);
	s = slurp("out/hosts");
	CHECK(s && strstr(s, "127.0.0.1\tlocalhost " SANDBOX_HOSTNAME "\n") && !strstr(s, "build-server"));
	free(s);

	/* nothing else of the host's */
	static const char *const never[] = {
		"out/shadow", "out/gshadow", "out/sudoers", "out/ssh", "out/ssl/private",
		"out/machine-id",
	};
	for (size_t i = 0; i < ARRAY_LEN(never); i++)
		if (there(never[i], &st)) {
			fprintf(stderr, "  %s mirrored\n", never[i]);
			CHECK(!"a host /etc entry outside the list got in");
		}

	/* an empty host tree: only warden's own four */
	strv_free(&binds);
	_cleanup_free_ char *empty = tmp_path("empty");
	_cleanup_free_ char *out2p = tmp_path("out2");
	CHECK(mkdir(empty, 0755) == 0 && mkdir(out2p, 0755) == 0);
	_cleanup_close_ int out2 = open(out2p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(etc_populate(empty, out2, &binds, &e) == 0);
	CHECK(binds.n == 0);
	CHECK(there("out2/passwd", &st) && there("out2/hosts", &st));
	CHECK(!there("out2/ld.so.cache", &st));
	strv_free(&binds);

	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_status_counted("sandbox_etc");
}
