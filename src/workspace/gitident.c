/* gitident.c - the user's git identity (and init.defaultBranch) for the
 * sandbox's ~/.gitconfig (gitident.h): the global configuration files read
 * as git reads them (gitconfig.c), includes followed in place, conditions
 * judged as git's include_by_gitdir, include_by_branch and
 * include_by_remote_url judge them (wildmatch.h). */
#include "gitident.h"

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/sbuf.h"
#include "../common/util.h"
#include "../common/wildmatch.h"
#include "gitconfig.h"
#include "gitsign.h"
#include "plan.h"

#define CONFIG_SIZE_MAX (1 << 20)
#define INCLUDE_DEPTH_MAX 10 /* git's: deeper is an error there */

struct ident {
	char *gitdir;      /* the repository's git directory, real path (repo_of) */
	char *gitdir_lex;  /* ... as the workspace spells it */
	char *branch;      /* its HEAD's branch, or NULL */
	char *name, *email;
	char *init_branch; /* init.defaultBranch */
	struct gitsign_host sign; /* gpg.format, user.signingKey, *.gpgSign */
	struct strv *urls; /* the remote URLs git's configuration names, once read */
	unsigned depth;
	unsigned in_cond;  /* within a file an includeIf brought in */
	bool scan;         /* reading for remote URLs only, as git does for hasconfig: */
	bool broken;       /* a file git refuses: no identity from any of them */
};

struct found {
	enum gitcfg_kind kind;
	char *cond, *value;
};

struct found_list {
	struct found *v;
	size_t n, cap;
};

static void found(void *ctx, enum gitcfg_kind kind, const char *cond, const char *value)
{
	struct found_list *l = ctx;
	if (kind == GITCFG_HOOKS_PATH)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = (struct found){ kind, cond ? xstrdup(cond) : NULL, xstrdup(value) };
}

static void found_free(struct found_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].cond);
		free(l->v[i].value);
	}
	free(l->v);
}

/* A file's text (NULL: missing, not a regular file, too large; a FIFO
 * is refused, not waited on). */
static char *read_small(const char *path, size_t *len)
{
	return read_regular_at(AT_FDCWD, path, 0, CONFIG_SIZE_MAX, len, NULL);
}

/* A path as an include or a condition names it: "~/" and "~user/" from
 * that home (NULL when there is none), relative to the including file's
 * directory (dir) where rel allows. */
static char *expand(const char *v, const char *dir, bool rel)
{
	if (v[0] == '~')
		return ws_expand_user(v);
	if (v[0] == '/' || !rel)
		return xstrdup(v);
	return xasprintf("%s/%s", dir, v);
}

/* includeIf's gitdir[/i]:PATTERN, as git's include_by_gitdir. */
static bool gitdir_matches(const struct ident *id, const char *pat, const char *dir, bool icase)
{
	/* "./" from the including file's directory; else relative stays so */
	_cleanup_free_ char *p = strncmp(pat, "./", 2) == 0 ? xasprintf("%s/%s", dir, pat + 2)
							     : expand(pat, dir, false);
	if (!p || !*p)
		return false;
	_cleanup_free_ char *full = xasprintf("%s%s%s", p[0] == '/' ? "" : "**/", p,
					      p[strlen(p) - 1] == '/' ? "**" : "");
	return wildmatch(full, id->gitdir, icase) ||
	       wildmatch(full, id->gitdir_lex, icase);
}

static void read_urls(struct ident *id);

/* includeIf's hasconfig:remote.*.url:PATTERN, as git's include_by_remote_url:
 * true while the URLs are being read (each such file is read then), else
 * when one of them matches. */
static bool url_matches(struct ident *id, const char *pat)
{
	if (id->scan)
		return true;
	if (!id->urls)
		read_urls(id);
	for (size_t i = 0; i < id->urls->n; i++)
		if (wildmatch(pat, id->urls->v[i], false))
			return true;
	return false;
}

static bool cond_holds(struct ident *id, const char *cond, const char *dir)
{
	if (strncmp(cond, "gitdir:", 7) == 0)
		return gitdir_matches(id, cond + 7, dir, false);
	if (strncmp(cond, "gitdir/i:", 9) == 0)
		return gitdir_matches(id, cond + 9, dir, true);
	if (strncmp(cond, "onbranch:", 9) == 0 && id->branch && cond[9]) {
		_cleanup_free_ char *full = xasprintf("%s%s", cond + 9,
						      cond[strlen(cond) - 1] == '/' ? "**" : "");
		return wildmatch(full, id->branch, false);
	}
	if (strncmp(cond, "hasconfig:remote.*.url:", 23) == 0)
		return url_matches(id, cond + 23);
	return false; /* one git does not know: false there too */
}

static void read_file(struct ident *id, const char *path);

/* Where a setting of kind is kept, or NULL for the others. */
static char **setting_of(struct ident *id, enum gitcfg_kind kind)
{
	switch (kind) {
	case GITCFG_USER_NAME: return &id->name;
	case GITCFG_USER_EMAIL: return &id->email;
	case GITCFG_INIT_BRANCH: return &id->init_branch;
	case GITCFG_GPG_FORMAT: return &id->sign.format;
	case GITCFG_SIGNING_KEY: return &id->sign.key;
	case GITCFG_COMMIT_SIGN: return &id->sign.commit;
	case GITCFG_TAG_SIGN: return &id->sign.tag;
	default: return NULL;
	}
}

/* One file's settings, in order: an include is read where it stands. */
static void apply(struct ident *id, const struct found_list *l, const char *path)
{
	_cleanup_free_ char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	for (size_t i = 0; i < l->n && !id->broken; i++) {
		const struct found *f = &l->v[i];
		char **to = setting_of(id, f->kind);
		if (to) {
			if (!id->scan) {
				free(*to);
				*to = xstrdup(f->value);
			}
			continue;
		}
		if (f->kind == GITCFG_REMOTE_URL) {
			/* git, reading for hasconfig:, dies at a URL a conditional
			 * include brought in: "remote URLs cannot be configured in
			 * file directly or indirectly included by
			 * includeIf.hasconfig:remote.*.url" */
			if (id->scan && id->in_cond)
				id->broken = true;
			else if (id->scan)
				strv_push(id->urls, f->value);
			continue;
		}
		bool cond = f->kind == GITCFG_INCLUDE_IF;
		if (!*f->value || (cond && !cond_holds(id, f->cond, dir)))
			continue;
		_cleanup_free_ char *inc = expand(f->value, dir, true);
		if (!inc)
			continue;
		id->in_cond += cond;
		read_file(id, inc);
		id->in_cond -= cond;
	}
}

/* The settings of the file at path in *l, in order; false when there is
 * no such file to read. A line git refuses marks the identity broken. */
static bool scan_file(struct ident *id, const char *path, struct found_list *l)
{
	size_t len = 0;
	_cleanup_free_ char *text = read_small(path, &len);
	if (!text)
		return false;
	if (gitcfg_scan(text, len, found, l) < 0)
		id->broken = true;
	return true;
}

static void read_file(struct ident *id, const char *path)
{
	if (id->depth > INCLUDE_DEPTH_MAX) {
		id->broken = true; /* git: "exceeded maximum include depth" */
		return;
	}
	struct found_list l = { 0 };
	if (!scan_file(id, path, &l))
		return;
	id->depth++;
	apply(id, &l, path);
	id->depth--;
	found_free(&l);
}

/* The workspace's git directory (ws/.git, or where a .git file points),
 * real and as spelt; ws/.git when there is none yet, for a repository the
 * session may make there; and the branch its HEAD names. */
static void repo_of(struct ident *id, const char *ws)
{
	_cleanup_free_ char *dotgit = xasprintf("%s/.git", ws);
	id->gitdir_lex = xstrdup(dotgit);
	struct stat st;
	if (lstat(dotgit, &st) == 0 && S_ISREG(st.st_mode)) {
		size_t len = 0;
		_cleanup_free_ char *t = read_small(dotgit, &len);
		if (t && strncmp(t, "gitdir: ", 8) == 0) {
			t[strcspn(t, "\r\n")] = '\0';
			free(id->gitdir_lex);
			id->gitdir_lex = t[8] == '/' ? xstrdup(t + 8) : xasprintf("%s/%s", ws, t + 8);
		}
	}
	char real[PATH_MAX];
	if (realpath(id->gitdir_lex, real))
		id->gitdir = xstrdup(real);
	else if (realpath(ws, real))
		id->gitdir = xasprintf("%s/.git", real);
	else
		id->gitdir = xstrdup(id->gitdir_lex);
	_cleanup_free_ char *head_path = xasprintf("%s/HEAD", id->gitdir);
	size_t len = 0;
	_cleanup_free_ char *head = read_small(head_path, &len);
	if (head && strncmp(head, "ref: refs/heads/", 16) == 0) {
		head[strcspn(head, "\r\n")] = '\0';
		id->branch = xstrdup(head + 16);
	}
}

/* The repository's own configuration (its common directory's, for a
 * worktree), for its remotes only: its includes are not followed, since
 * the sandbox may have written it. */
static void local_urls(struct ident *id)
{
	_cleanup_free_ char *cd_path = xasprintf("%s/commondir", id->gitdir);
	size_t len = 0;
	_cleanup_free_ char *cd = read_small(cd_path, &len);
	_cleanup_free_ char *common = NULL;
	if (cd) {
		cd[strcspn(cd, "\r\n")] = '\0';
		common = cd[0] == '/' ? xstrdup(cd) : xasprintf("%s/%s", id->gitdir, cd);
	}
	_cleanup_free_ char *path = xasprintf("%s/config", common ? common : id->gitdir);
	struct found_list l = { 0 };
	if (!scan_file(id, path, &l))
		return;
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].kind == GITCFG_REMOTE_URL)
			strv_push(id->urls, l.v[i].value);
	found_free(&l);
}

/* Every remote URL git's configuration names for the repository, read as
 * git reads them the first time a hasconfig: condition is asked: the
 * system's, the global files', the repository's; conditions other than
 * hasconfig: judged, hasconfig:'s files read whatever they say. */
static void read_urls(struct ident *id)
{
	id->urls = xcalloc(1, sizeof *id->urls);
	struct ident scan = { .gitdir = id->gitdir, .gitdir_lex = id->gitdir_lex,
			      .branch = id->branch, .urls = id->urls, .scan = true };
	_cleanup_strv_ struct strv files = gitcfg_host_files(true);
	for (size_t i = 0; i < files.n && !scan.broken; i++)
		read_file(&scan, files.v[i]);
	if (!scan.broken)
		local_urls(&scan);
	id->broken |= scan.broken;
}

/* v as a quoted value of git's syntax */
static void quoted(struct sbuf *b, const char *v)
{
	sb_printf(b, "\"");
	for (; *v; v++) {
		char c = *v;
		if (c == '\n' || c == '\t' || c == '\b' || c == '"' || c == '\\')
			sb_printf(b, "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : c == '\b' ? 'b' : c);
		else
			sb_printf(b, "%c", c);
	}
	sb_printf(b, "\"\n");
}

/* The file's text: the values found, under their sections, and the
 * signing settings carried (gitsign.h); NULL when there are none. */
static char *ident_text(const struct ident *id, struct gitsign *sign)
{
	struct sbuf b = { 0 };
	gitsign_text(&id->sign, sign, &b);
	if (!b.n && !id->name && !id->email && !id->init_branch)
		return NULL;
	_cleanup_free_ char *signing = b.p;
	b = (struct sbuf){ 0 };
	if (signing)
		sb_printf(&b, "# written by warden for this session: your git identity, default "
			      "branch\n# and SSH signing with your agent's key, as your global git "
			      "configuration\n# gives them for this workspace, and nothing else of "
			      "it\n# (doc/security-model.md#git-identity)\n");
	else
		sb_printf(&b, "# written by warden for this session: your git identity and default "
			      "branch,\n# as your global git configuration gives them for this "
			      "workspace, and nothing\n# else of it (doc/security-model.md#git-identity)\n");
	if (id->name || id->email)
		sb_printf(&b, "[user]\n");
	if (id->name) {
		sb_printf(&b, "\tname = ");
		quoted(&b, id->name);
	}
	if (id->email) {
		sb_printf(&b, "\temail = ");
		quoted(&b, id->email);
	}
	if (id->init_branch) {
		sb_printf(&b, "[init]\n\tdefaultBranch = ");
		quoted(&b, id->init_branch);
	}
	if (signing)
		sb_printf(&b, "%s", signing);
	return b.p;
}

char *gitident_text(const char *ws, struct gitsign *sign)
{
	struct gitsign none = { 0 };
	struct ident id = { 0 };
	repo_of(&id, ws);
	_cleanup_strv_ struct strv files = gitcfg_host_files(false);
	for (size_t i = 0; i < files.n && !id.broken; i++)
		read_file(&id, files.v[i]);
	char *text = !id.broken ? ident_text(&id, sign ? sign : &none) : NULL;
	gitsign_free(&none);
	gitsign_host_free(&id.sign);
	free(id.gitdir);
	free(id.gitdir_lex);
	free(id.branch);
	free(id.name);
	free(id.email);
	free(id.init_branch);
	if (id.urls) {
		strv_free(id.urls);
		free(id.urls);
	}
	return text;
}
