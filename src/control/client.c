/* client.c - the client side of the control sockets (client.h). */
#include "client.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../common/procfacts.h"
#include "../common/util.h"
#include "control.h"
#include "ctldir.h"

size_t control_client_dirs(struct strv *dirs)
{
	return control_dirs_existing(NULL, dirs);
}

size_t control_client_sockets(const struct strv *dirs, struct strv *paths, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < dirs->n; i++) {
		_cleanup_dir_ DIR *d = opendir(dirs->v[i]);
		struct dirent *de;
		while (d && n < max && (de = readdir(d))) {
			size_t l = strlen(de->d_name);
			if (l > 5 && l < CONTROL_NAME_MAX && strcmp(de->d_name + l - 5, ".sock") == 0) {
				strv_push_owned(paths, xasprintf("%s/%s", dirs->v[i], de->d_name));
				n++;
			}
		}
	}
	return n;
}

const char *control_client_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int control_client_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path) >= (int)sizeof sa.sun_path)
		return -1;
	/* not blocking: a unix socket's connect then succeeds or fails at
	 * once, EAGAIN when the listener's backlog is full (its warden accepts
	 * nothing: stopped, a suspended session's, or stuck), where a blocking
	 * one would wait for ever */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int err = errno;
		char m[sizeof sa.sun_path + 8];
		if (err == ECONNREFUSED) { /* its warden gone: its socket, and a marker it left */
			unlink(sa.sun_path);
			if (ctldir_marker(sa.sun_path, m, sizeof m))
				unlink(m);
		}
		close(fd);
		errno = err;
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

void control_client_each(const struct strv *dirs, const char *op,
			 void (*fn)(json_t *reply, void *ctx), void *ctx)
{
	_cleanup_strv_ struct strv paths = { 0 };
	control_client_sockets(dirs, &paths, CONTROL_SOCKETS_MAX);
	for (size_t i = 0; i < paths.n; i++) {
		int fd = control_client_connect(paths.v[i]);
		pid_t marked = fd < 0 && errno == EAGAIN ? ctldir_marked_stopped(paths.v[i]) : 0;
		if (fd < 0 && !marked)
			continue; /* ended (a stale socket was removed), or not answering */
		json_t *r = marked ? control_client_suspended(marked)
				   : control_client_request(fd, json_pack("{s:s}", "op", op));
		if (fd >= 0)
			close(fd);
		if (json_is_true(json_object_get(r, "suspended"))) { /* its id from its name */
			const char *name = control_client_name(paths.v[i]);
			json_object_set_new(r, "session", json_stringn(name, strlen(name) - 5));
		}
		fn(r, ctx);
		json_decref(r);
	}
}

int control_client_find(const struct strv *dirs, const char *session, char *id, size_t len,
			pid_t *stopped, struct werr *e)
{
	*stopped = 0;
	_cleanup_strv_ struct strv paths = { 0 };
	size_t n = control_client_sockets(dirs, &paths, CONTROL_SOCKETS_MAX);
	size_t sl = strlen(session);
	int fd = -1, found = 0;
	char first[CONTROL_NAME_MAX] = "", second[CONTROL_NAME_MAX] = "";
	if (sl == 0) /* a prefix of every id: never one of them */
		return werr_set(e, 0, "an empty session id (a command substitution that printed "
				"nothing?): name a running session (warden status lists them)");
	for (size_t i = 0; i < n; i++) {
		const char *name = control_client_name(paths.v[i]);
		size_t l = strlen(name) - 5; /* without ".sock" */
		if (sl == 0 || sl > l || strncmp(name, session, sl) != 0)
			continue;
		int c = control_client_connect(paths.v[i]);
		pid_t marked = c < 0 && errno == EAGAIN ? ctldir_marked_stopped(paths.v[i]) : 0;
		if (c < 0 && !marked)
			continue; /* not running */
		if (l == sl) { /* the whole id: that one, whatever else it prefixes */
			if (fd >= 0)
				close(fd);
			snprintf(first, sizeof first, "%.*s", (int)l, name);
			fd = c;
			*stopped = marked;
			found = 1;
			break;
		}
		if (++found == 1) {
			fd = c;
			*stopped = marked;
			snprintf(first, sizeof first, "%.*s", (int)l, name);
		} else {
			if (c >= 0)
				close(c);
			snprintf(second, sizeof second, "%.*s", (int)l, name);
		}
	}
	if (found == 0)
		return werr_set(e, 0, "no running session %s (warden status lists them)", session);
	if (found > 1) {
		if (fd >= 0)
			close(fd);
		*stopped = 0;
		return werr_set(e, 0, "%s names several running sessions (%s, %s%s); give more of "
				"its id", session, first, second, found > 2 ? ", ..." : "");
	}
	snprintf(id, len, "%s", first);
	return fd >= 0 ? fd : CONTROL_FIND_MARKED;
}

int control_client_send(int fd, json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!s)
		return -1;
	size_t n = strlen(s);
	s[n] = '\n'; /* json_dumps' NUL replaced: write n + 1 bytes */
	int r = write_all(fd, s, n + 1);
	free(s);
	return r;
}

json_t *control_client_read(int fd, char *buf, size_t cap, size_t *have, int timeout_ms)
{
	for (;;) {
		char *nl = memchr(buf, '\n', *have);
		if (nl) {
			json_t *j = json_loadb(buf, (size_t)(nl - buf), 0, NULL);
			size_t used = (size_t)(nl - buf) + 1;
			memmove(buf, nl + 1, *have - used);
			*have -= used;
			return j;
		}
		if (*have == cap)
			return NULL;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, timeout_ms) <= 0)
			return NULL;
		ssize_t r = read(fd, buf + *have, cap - *have);
		if (r <= 0)
			return NULL;
		*have += (size_t)r;
	}
}

pid_t control_client_stopped(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.pid <= 0)
		return 0;
	char state = 0;
	return proc_state_start(cr.pid, &state, NULL) && state == 'T' ? cr.pid : 0;
}

json_t *control_client_suspended(pid_t pid)
{
	_cleanup_free_ char *msg = xasprintf("the session is suspended (Ctrl-Z in its "
		"terminal: its warden, pid %d, is stopped): `fg` there continues it, "
		"`warden kill` ends it", (int)pid);
	return json_pack("{s:b,s:b,s:I,s:s}", "ok", 0, "suspended", 1, "pid", (json_int_t)pid,
			 "error", msg);
}

json_t *control_client_request(int fd, json_t *req)
{
	enum { REPLY_MAX = 1 << 20 };
	size_t have = 0;
	pid_t stopped = control_client_stopped(fd);
	if (stopped) {
		json_decref(req);
		return control_client_suspended(stopped);
	}
	if (control_client_send(fd, req) < 0)
		return NULL;
	_cleanup_free_ char *buf = xmalloc(REPLY_MAX);
	return control_client_read(fd, buf, REPLY_MAX, &have, 5000);
}
