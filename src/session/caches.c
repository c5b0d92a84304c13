/* caches.c - the sandbox's home directories kept for the workspace's next
 * sessions (caches.h): where they are on the host, the checks that refuse
 * a place another user or the agent could have arranged, and the home
 * binds they add beside the agent's state. */
#include "caches.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../audit/escape.h"
#include "../common/hash.h"
#include "../common/sbuf.h"

/* The PATH as one name: '%' and '/' written %25 and %2F. */
static char *encode(const char *rel)
{
	struct sbuf b = { 0 };
	for (const char *c = rel; *c; c++)
		if (*c == '%' || *c == '/')
			sb_printf(&b, "%%%02X", (unsigned)(unsigned char)*c);
		else
			sb_putc(&b, *c);
	return sb_take(&b);
}

char *caches_base(const char *home)
{
	_cleanup_free_ char *base = xdg_warden_dir("XDG_DATA_HOME", home, ".local/share");
	return base ? xasprintf("%s/caches", base) : NULL;
}

void caches_key(const char *ws, char out[CACHES_KEY_LEN + 1])
{
	char sum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), sum);
	memcpy(out, sum, CACHES_KEY_LEN);
	out[CACHES_KEY_LEN] = '\0';
}

char *caches_decode(const char *name)
{
	struct sbuf b = { 0 };
	for (const char *c = name; *c; c++) {
		if (*c != '%') {
			sb_putc(&b, *c);
			continue;
		}
		if (strncmp(c, "%25", 3) != 0 && strncmp(c, "%2F", 3) != 0) {
			free(b.p);
			return NULL;
		}
		sb_putc(&b, c[2] == 'F' ? '/' : '%');
		c += 2;
	}
	char *r = sb_take(&b);
	_cleanup_free_ char *again = encode(r);
	if (!*r || r[0] == '/' || path_has_dot_components(r) || strcmp(again, name) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

/* *fd: name opened beneath dirfd (AT_FDCWD: a path) with no symlink
 * followed at its last component, a directory of the user's that others
 * cannot write. */
static int own_dir(int dirfd, const char *name, const char *shown, int *fd, struct werr *e)
{
	*fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (*fd < 0 || fstat(*fd, &st) < 0)
		return werr_errno(e, "cache directory %s (a symlink or not a directory is refused)",
				  shown);
	if (st.st_uid != getuid())
		return werr_set(e, 0, "cache directory %s is owned by uid %u, not by you (uid %u): "
				"whoever owns it could plant what later sessions read; remove it",
				shown, (unsigned)st.st_uid, (unsigned)getuid());
	if (st.st_mode & 022)
		return werr_set(e, 0, "cache directory %s is writable by other users (mode %04o): "
				"`chmod go-w %s`", shown, (unsigned)(st.st_mode & 07777), shown);
	return 0;
}

/* The workspace's directory of caches (*real), made when missing, opened,
 * and kept apart from the workspace and warden's own directories. */
static int open_root(const char *home, const struct sandbox_spec *s, char **real, int *fd,
		     struct werr *e)
{
	_cleanup_free_ char *top = caches_base(home);
	if (!top)
		return werr_set(e, 0, "cache: no place for the caches (HOME and XDG_DATA_HOME are "
				"not absolute paths): set XDG_DATA_HOME, or leave the `cache` lines out");
	char sum[CACHES_KEY_LEN + 1];
	caches_key(s->workspace, sum);
	_cleanup_free_ char *dir = xasprintf("%s/%s", top, sum);
	/* apart before anything is made (the path as it resolves so far) */
	_cleanup_free_ char *pre = path_resolve_existing(dir);
	const char *apart[][2] = { { s->workspace, "the workspace" },
				   { s->logdir, "the audit log directory" },
				   { s->cachedir, "warden's cache directory" },
				   { s->storedir, "warden's checkpoint store" } };
	for (size_t i = 0; i < ARRAY_LEN(apart); i++) {
		_cleanup_free_ char *r = apart[i][0] ? path_resolve_existing(apart[i][0]) : NULL;
		const char *o = r ? r : apart[i][0];
		if (o && pre && path_overlaps(pre, o))
			return werr_set(e, 0, "refusing cache directory %s: it overlaps %s %s "
					"(set XDG_DATA_HOME elsewhere)", pre, apart[i][1], o);
	}
	if (!pre || mkdir_p(dir, 0700, NULL) < 0)
		return werr_errno(e, "cache: making %s", dir);
	_cleanup_close_ int tfd = -1;
	if (own_dir(AT_FDCWD, top, top, &tfd, e) < 0 || own_dir(tfd, sum, dir, fd, e) < 0)
		return -1;
	if (!(*real = path_resolve_existing(dir)))
		return werr_errno(e, "cache directory %s", dir);
	/* which workspace this is, for `warden cache list` */
	_cleanup_close_ int wfd = openat(*fd, CACHES_WORKSPACE_FILE,
					 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (wfd >= 0) {
		_cleanup_free_ char *line = xasprintf("%s\n", s->workspace);
		(void)write_all(wfd, line, strlen(line));
	}
	return 0;
}

/* The bind of cache rel: its directory in dfd (real) made when missing. */
static int one(int dfd, const char *real, const char *rel, struct home_bind *b, struct werr *e)
{
	_cleanup_free_ char *name = encode(rel);
	_cleanup_free_ char *shown = xasprintf("%s/%s", real, name);
	if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "cache ~/%s: making %s", rel, shown);
	_cleanup_close_ int fd = -1;
	if (own_dir(dfd, name, shown, &fd, e) < 0)
		return werr_wrap(e, "cache ~/%s", rel);
	*b = (struct home_bind){ .src = steal_ptr(&shown), .name = xstrdup(rel), .dir = true };
	return 0;
}

int caches_prepare(const struct policy *pol, const char *home, const struct agent_state *st,
		   const char *not_kept, struct sandbox_spec *s, struct home_caches *c,
		   struct werr *e)
{
	const struct strv *v = &pol->caches;
	c->all = xcalloc(st->n + v->n + 1, sizeof *c->all);
	if (st->n)
		memcpy(c->all, st->v, st->n * sizeof *st->v);
	c->n = c->nstate = st->n;
	s->home_binds = c->all;
	s->nhome_binds = c->n;
	for (size_t i = 0; i < v->n; i++)
		for (size_t k = 0; k < st->n; k++)
			if (path_overlaps(v->v[i], st->v[k].name))
				return werr_set(e, 0, "cache ~/%s: ~/%s is the agent's state, which warden "
						"binds there: name another directory", v->v[i],
						st->v[k].name);
	if (!v->n)
		return 0;
	if (not_kept) {
		wnote("cache: not kept %s (what the agent left there would reach later sessions "
		      "unreviewed): ~/%s%s start%s afresh in the home", not_kept, v->v[0],
		      v->n > 1 ? " and the others" : "", v->n > 1 ? "" : "s");
		return 0;
	}
	if (open_root(home, s, &c->dir, &c->lock_fd, e) < 0)
		return -1;
	if (flock(c->lock_fd, LOCK_SH | LOCK_NB) < 0)
		return werr_errno(e, "cache directory %s is being cleared (warden cache clear)",
				  c->dir);
	for (size_t i = 0; i < v->n; i++, c->n++)
		if (one(c->lock_fd, c->dir, v->v[i], &c->all[c->n], e) < 0)
			return -1;
	s->nhome_binds = c->n;
	return 0;
}

json_t *caches_to_json(const struct home_caches *c, const struct policy *pol, json_t *layout)
{
	if (!pol->caches.n)
		return layout;
	json_t *o = json_object(), *paths = json_array(), *esc = NULL;
	for (size_t i = 0; i < pol->caches.n; i++)
		json_array_append_new(paths, json_sprintf("~/%s", pol->caches.v[i]));
	json_object_set_new(o, "paths", paths);
	json_set_bytes(o, "dir", c->n > c->nstate ? c->dir : NULL, &esc);
	if (esc)
		json_object_set_new(o, "escaped", esc);
	json_object_set_new(layout, "caches", o);
	return layout;
}

void caches_free(struct home_caches *c)
{
	for (size_t i = c->nstate; i < c->n; i++) {
		free(c->all[i].src);
		free(c->all[i].name);
	}
	free(c->all);
	free(c->dir);
	if (c->lock_fd >= 0)
		close(c->lock_fd);
	*c = (struct home_caches){ .lock_fd = -1 };
}
