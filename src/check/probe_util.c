/* probe_util.c - the results and helpers the probe group files share: how a
 * probe sets "allowed"/"denied" with its detail, the host paths of the
 * verify targets (probe_verify_path, which check.c asks too), small file and
 * /proc helpers used by more than one group, and the forked child with a
 * pipe back that the process and exec probes run their attempts in (see
 * probe_util.h). */
#include "probe_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/procfacts.h"
#include "../common/util.h"

/* ---- results ---------------------------------------------------------- */

const char *ename(int err)
{
	const char *n = strerrorname_np(err);
	return n ? n : "E?";
}

void probe_result_set(struct probe_result *r, bool allowed, const char *fmt, ...)
{
	va_list ap;
	r->allowed = allowed;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof r->detail, fmt, ap);
	va_end(ap);
}

void denied_errno(struct probe_result *r, int err)
{
	denied(r, "%s", ename(err));
}

void set_dev(char dev[32], dev_t d)
{
	snprintf(dev, 32, "%u:%u", major(d), minor(d));
}

/* ---- small helpers ---------------------------------------------------- */

char *expand_token(const char *rel, const char *token)
{
	const char *p = strstr(rel, "{t}");
	if (!p)
		return xstrdup(rel);
	return xasprintf("%.*s%s%s", (int)(p - rel), rel, token, p + 3);
}

char *probe_verify_path(const struct probe_verify *v, const struct probe_bases *b,
			const char *token)
{
	const char *base = v->base == VB_WS ? b->ws : v->base == VB_OUT ? b->out :
			   v->base == VB_HOME ? b->home : v->base == VB_AUDIT ? b->audit : b->cache;
	if (!base || v->kind == V_NONE)
		return NULL;
	_cleanup_free_ char *rel = expand_token(v->rel, token);
	return xasprintf("%s/%s", base, rel);
}

char *vpath(const struct probe_ctx *c, const struct probe *self, int i)
{
	struct probe_bases b = { c->ws, c->out, c->home, c->audit_dir, c->cache_dir };
	return probe_verify_path(&self->verify[i], &b, c->token);
}

/* open() and close() only: never read a real user's file. */
int open_only(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

void first_of(struct probe_result *r, char **paths, size_t n, const char *verb,
	      int (*try_one)(const char *path, void *ctx), void *ctx, bool always_name)
{
	int best = ENOENT;
	const char *best_path = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!paths[i])
			continue;
		int err = try_one(paths[i], ctx);
		if (err == 0) {
			allowed(r, "%s %s", verb, paths[i]);
			return;
		}
		if (!best_path || (best == ENOENT && err != ENOENT)) {
			best = err;
			best_path = paths[i];
		}
	}
	if (!best_path)
		denied(r, "nothing to try");
	else if (n == 1 && !always_name)
		denied_errno(r, best);
	else
		denied(r, "%s (%s)", ename(best), best_path);
}

static int try_open(const char *path, void *ctx) { return open_only(path); }

/* The first path that opens makes the probe allowed; otherwise the most
 * telling errno (anything but ENOENT first). */
void open_any(struct probe_result *r, char **paths, size_t n)
{
	first_of(r, paths, n, "opened", try_open, NULL, false);
}

/* One path to open (malloc'ed, freed here): allowed when it opens. */
void one_path(struct probe_result *r, char *path)
{
	char *p[] = { path };
	open_any(r, p, 1);
	free(path);
}

bool proc_starttime(pid_t pid, unsigned long long *out)
{
	return proc_state_start(pid, NULL, out);
}

void lstat_dev(const char *path, char dev[32])
{
	struct stat st;
	if (lstat(path, &st) == 0)
		set_dev(dev, st.st_dev);
}

/* ---- forked children -------------------------------------------------- */

/* Fork with a close-on-exec pipe from child to parent. In the child, *wfd
 * is its end; in the parent, *rfd is the other. -1 with errno. */
pid_t fork_with_pipe(int *rfd, int *wfd)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		int err = errno;
		close(p[0]);
		close(p[1]);
		errno = err;
		return -1;
	}
	close(p[pid == 0 ? 0 : 1]);
	*rfd = pid == 0 ? -1 : p[0];
	*wfd = pid == 0 ? p[1] : -1;
	return pid;
}

/* The parent's side: the one int the child wrote, if it did, and the child
 * reaped (its wait status in *status). Returns the bytes read. */
ssize_t child_report(int rfd, pid_t pid, int *err, int *status)
{
	ssize_t n;
	while ((n = read(rfd, err, sizeof *err)) < 0 && errno == EINTR)
		;
	close(rfd);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*status = st;
	return n;
}
