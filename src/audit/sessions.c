/* sessions.c - the audit log directory (see sessions.h): its session logs,
 * their first and last lines, and which session an argument names. */
#include "sessions.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/util.h"
#include "chain.h"
#include "events.h"
#include "format.h"
#include "../common/sbuf.h"

int audit_dir_open(const char *dir, struct werr *e)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	int err = errno;
	struct stat st;
	if (err == ENOENT)
		return werr_set(e, ENOENT, "no sessions: cannot open the audit log directory %s", dir);
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
		return werr_set(e, 0, "audit log directory %s is a symbolic link, refusing to read it", dir);
	return werr_set(e, err, "cannot open audit log directory %s", dir);
}

int audit_log_open(int dfd, const char *dir, const char *id, struct werr *e)
{
	if (!audit_session_id_valid(id))
		return werr_set(e, 0, "invalid session id");
	_cleanup_free_ char *name = xasprintf("%s.jsonl", id);
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			return werr_set(e, 0, "%s/%s is a symbolic link, refusing to read it", dir, name);
		if (errno == ENOENT)
			return werr_set(e, 0, "no session %s in %s", id, dir);
		return werr_errno(e, "cannot open %s/%s", dir, name);
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int err = errno;
		close(fd);
		return werr_set(e, err, "cannot stat %s/%s", dir, name);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return werr_set(e, 0, "%s/%s is not a regular file, refusing to read it", dir, name);
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

/* The id of a directory entry that names a session log, or NULL. */
static char *entry_id(int dfd, const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	if (n <= 6 || strcmp(d->d_name + n - 6, ".jsonl") != 0)
		return NULL;
	if (d->d_type == DT_LNK)
		return NULL;
	if (d->d_type == DT_UNKNOWN) {
		struct stat st;
		if (fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			return NULL;
	} else if (d->d_type != DT_REG) {
		return NULL;
	}
	char *id = xasprintf("%.*s", (int)(n - 6), d->d_name);
	if (!audit_session_id_valid(id)) {
		free(id);
		return NULL;
	}
	return id;
}

/* Every session id in the directory (unsorted). */
static int scan_ids(int dfd, const char *dir, struct strv *ids, struct werr *e)
{
	_cleanup_dir_ DIR *d = dir_open_at(dfd, ".", 0);
	if (!d)
		return werr_errno(e, "cannot read audit log directory %s", dir);
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d))) {
		char *id = entry_id(dfd, de);
		if (id)
			strv_push_owned(ids, id);
		errno = 0;
	}
	int err = errno;
	if (err)
		return werr_set(e, err, "cannot read audit log directory %s", dir);
	return 0;
}

/* The last complete line of the file, parsed (NULL if none parses). */
static json_t *last_event(int fd, off_t size)
{
	size_t window = 65536;
	for (;;) {
		off_t off = size > (off_t)window ? size - (off_t)window : 0;
		size_t n = (size_t)(size - off);
		char *buf = xmalloc(n + 1);
		ssize_t got = pread(fd, buf, n, off);
		if (got <= 0) {
			free(buf);
			return NULL;
		}
		n = (size_t)got;
		/* the end of the last complete line */
		size_t end = n;
		while (end > 0 && buf[end - 1] != '\n')
			end--;
		if (end == 0) {
			free(buf);
			if (off == 0 || window >= 2 * (size_t)AUDIT_LINE_MAX)
				return NULL;
			window *= 2;
			continue;
		}
		end--; /* on the newline */
		size_t start = end;
		while (start > 0 && buf[start - 1] != '\n')
			start--;
		if (start == 0 && off > 0 && window < 2 * (size_t)AUDIT_LINE_MAX) {
			free(buf);
			window *= 2;
			continue;
		}
		char why[8];
		json_t *ev = audit_parse_line(buf + start, end - start, why, sizeof why);
		free(buf);
		return ev;
	}
}

static unsigned long count_lines(int fd)
{
	char buf[65536];
	unsigned long n = 0;
	off_t off = 0;
	ssize_t got;
	while ((got = pread(fd, buf, sizeof buf, off)) > 0) {
		for (ssize_t i = 0; i < got; i++)
			n += buf[i] == '\n';
		off += got;
	}
	return n;
}

static void session_info(int dfd, const char *dir, struct audit_session_info *si)
{
	struct werr e;
	_cleanup_close_ int fd = audit_log_open(dfd, dir, si->id, &e);
	if (fd >= 0) {
		struct audit_reader r;
		struct audit_line l;
		audit_reader_init(&r, fd);
		if (audit_reader_next(&r, &l, false, &e) == 1 && l.complete) {
			char why[8];
			json_t *ev = audit_parse_line(l.text, l.len, why, sizeof why);
			if (ev && audit_parse_ts(json_string_value(json_object_get(ev, "ts")), &si->t) == 0)
				si->has_time = true;
			if (ev && strcmp(json_string_value(json_object_get(ev, "event")), "session.start") == 0)
				si->start = ev;
			else
				json_decref(ev);
		}
		audit_reader_free(&r);
		struct stat st;
		json_t *last = fstat(fd, &st) == 0 ? last_event(fd, st.st_size) : NULL;
		if (last) {
			si->events = (unsigned long)json_integer_value(json_object_get(last, "seq"));
			if (strcmp(json_string_value(json_object_get(last, "event")), "session.end") == 0)
				si->end = json_incref(last);
			json_decref(last);
		} else {
			si->events = count_lines(fd);
		}
	}
	if (!si->has_time && audit_session_id_time(si->id, &si->t))
		si->has_time = true;
}

static int by_time(const void *pa, const void *pb)
{
	const struct audit_session_info *a = pa, *b = pb;
	int c = audit_time_cmp(&a->t, &b->t);
	return c ? c : strcmp(a->id, b->id);
}

int audit_list_sessions(int dfd, const char *dir, struct audit_session_info **out, size_t *n,
			struct werr *e)
{
	struct strv ids = { 0 };
	*out = NULL;
	*n = 0;
	if (scan_ids(dfd, dir, &ids, e) < 0) {
		strv_free(&ids);
		return -1;
	}
	struct audit_session_info *s = xcalloc(ids.n + 1, sizeof *s);
	for (size_t i = 0; i < ids.n; i++) {
		s[i].id = ids.v[i];
		ids.v[i] = NULL;
		session_info(dfd, dir, &s[i]);
	}
	qsort(s, ids.n, sizeof *s, by_time);
	*out = s;
	*n = ids.n;
	strv_free(&ids);
	return 0;
}

void audit_sessions_free(struct audit_session_info *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		free(s[i].id);
		json_decref(s[i].start);
		json_decref(s[i].end);
	}
	free(s);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int audit_resolve_session(int dfd, const char *dir, const char *arg, char **id, struct werr *e)
{
	*id = NULL;
	if (!arg) {
		struct audit_session_info *s;
		size_t n;
		if (audit_list_sessions(dfd, dir, &s, &n, e) < 0)
			return -1;
		if (n == 0) {
			audit_sessions_free(s, n);
			return werr_set(e, 0, "no sessions in %s", dir);
		}
		*id = s[n - 1].id;
		s[n - 1].id = NULL;
		audit_sessions_free(s, n);
		return 0;
	}
	if (!*arg) /* "$(...)" quoted, and what it ran failed: never the latest */
		return werr_set(e, 0, "an empty session id (a command substitution that printed "
				"nothing?): name a session (warden log list shows them), or leave "
				"SESSION out");
	if (!audit_session_id_valid(arg)) {
		char *d = audit_display_string(arg, 80);
		werr_set(e, 0, "invalid session id %s: a session id is letters, digits, '.', '_' and '-' (not starting with '.'), never a path", d);
		free(d);
		return -1;
	}
	_cleanup_free_ char *name = xasprintf("%s.jsonl", arg);
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		*id = xstrdup(arg);
		return 0;
	}
	struct strv ids = { 0 }, hits = { 0 };
	if (scan_ids(dfd, dir, &ids, e) < 0) {
		strv_free(&ids);
		return -1;
	}
	size_t al = strlen(arg);
	for (size_t i = 0; i < ids.n; i++)
		if (strncmp(ids.v[i], arg, al) == 0)
			strv_push(&hits, ids.v[i]);
	strv_free(&ids);
	int r = 0;
	if (hits.n == 1) {
		*id = xstrdup(hits.v[0]);
	} else if (hits.n == 0) {
		r = werr_set(e, 0, "no session %s in %s", arg, dir);
	} else {
		qsort(hits.v, hits.n, sizeof *hits.v, by_name);
		struct sbuf b = { 0 };
		for (size_t i = 0; i < hits.n && i < 5; i++) {
			sb_puts(&b, i ? ", " : "");
			sb_puts(&b, hits.v[i]);
		}
		if (hits.n > 5)
			sb_printf(&b, " and %zu more", hits.n - 5);
		r = werr_set(e, 0, "session prefix %s is ambiguous: it matches %s", arg, b.p);
		free(b.p);
	}
	strv_free(&hits);
	return r;
}

