/* emit.c - the import model (import.h) as a commented warden profile, at
 * least as strict as the source for every rule.
 *
 * Paths: "~/x" stays "~/x"; an absolute path inside the current directory
 * (the workspace the profile is made for) and a relative one become
 * workspace-relative; Claude Code's settings-relative "/x" is taken
 * relative to the project, the workspace. A denied path in the workspace is
 * masked (reads) or protected (writes; masked when it is a glob), anywhere
 * else it is one warden never shows, and no path warden binds may hold it;
 * a denied path warden cannot hide (in the system directories, or the
 * workspace itself) is listed as less strict. Network: each pattern goes
 * through the proxy's own parser; a deny warden cannot write takes out the
 * allows it covers. Tool rules: Claude Code's deny, then ask, then allow
 * (its own order), Bash patterns for deny and ask matched anywhere in the
 * command. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/sbuf.h"
#include "../net/rules.h"
#include "../policy/directives.h"
#include "../sandbox/sandbox.h"
#include "import.h"

/* A path as the profile writes it, and its absolute form (NULL inside the
 * workspace). */
struct ipath {
	char *out;   /* "~/x", "/x", or workspace-relative ("" the workspace) */
	char *abs;   /* home expanded; NULL for workspace-relative */
	bool glob;
};

static void ipath_free(struct ipath *p)
{
	free(p->out);
	free(p->abs);
}

static bool has_glob(const char *s) { return strpbrk(s, "*?[{") != NULL; }

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* s with "." components, repeated and trailing slashes gone; NULL when it
 * has a ".." component. */
static char *norm(const char *s)
{
	struct sbuf b = { 0 };
	bool abs = s[0] == '/';
	if (abs)
		sb_puts(&b, "/");
	const char *p = s;
	while (*p) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 0)
			break;
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			free(b.p);
			return NULL;
		}
		if (!(n == 1 && p[0] == '.')) {
			if (b.n && b.p[b.n - 1] != '/')
				sb_puts(&b, "/");
			sb_put(&b, p, n);
		}
		p += n;
	}
	return sb_take(&b);
}

/* The path of a source rule; -1 with *why when warden cannot write it. */
static int resolve(const struct imp *m, const struct imp_item *it, const char *raw,
		   struct ipath *o, const char **why)
{
	*o = (struct ipath){ 0 };
	*why = NULL;
	if (!raw[0]) {
		*why = "an empty path";
		return -1;
	}
	if (has_control(raw)) {
		*why = "control characters in a path";
		return -1;
	}
	if (strpbrk(raw, " \t\r\n")) {
		*why = "a profile's tokens hold no blanks";
		return -1;
	}
	bool home = strcmp(raw, "~") == 0 || strncmp(raw, "~/", 2) == 0;
	bool abs = raw[0] == '/' && !(it->base && raw[1] != '/');
	const char *r = it->base && strncmp(raw, "//", 2) == 0 ? raw + 1 : raw;
	_cleanup_free_ char *n = norm(home ? r + 1 : r);
	if (!n) {
		*why = "'..' components are not mapped";
		return -1;
	}
	o->glob = has_glob(n);
	if (home) {
		o->out = xasprintf("~%s%s", n[0] && n[0] != '/' ? "/" : "", n);
		o->abs = xasprintf("%s%s", m->home, n);
		return 0;
	}
	if (abs) {
		if (m->cwd && path_is_within(n, m->cwd)) {
			const char *rel = n + strlen(m->cwd);
			o->out = xstrdup(rel[0] == '/' ? rel + 1 : rel);
			return 0;
		}
		o->abs = xstrdup(n);
		o->out = xstrdup(n);
		return 0;
	}
	/* relative, or Claude Code's settings-relative "/x": the workspace (a
	 * name starting with '#' or '!' is written as a glob of itself:
	 * mask_token) */
	o->out = xstrdup(n[0] == '/' ? n + 1 : n);
	return 0;
}

/* The absolute directory a path names up to its first glob. */
static char *glob_root(const char *abs)
{
	char *s = xstrdup(abs);
	char *g = strpbrk(s, "*?[{");
	if (g) {
		*g = '\0';
		char *slash = strrchr(s, '/');
		if (slash)
			slash[slash == s ? 1 : 0] = '\0';
	}
	return s;
}

static const char *const system_dirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
					   "/libx32", "/etc" };

static bool in_system_dir(const char *abs)
{
	for (size_t i = 0; i < ARRAY_LEN(system_dirs); i++)
		if (path_is_within(abs, system_dirs[i]))
			return true;
	return false;
}

/* A workspace-relative glob as `mask` matches it (a name at any depth; a
 * path with '/' against the whole relative path, '*' within one part):
 * gitignore's "**" parts go, and a pattern with "**" inside is taken by
 * its last part at any depth, which matches more. NULL when nothing is
 * left. */
/* A mask pattern p as a profile's token: one starting with '#' would be a
 * comment, with '!' an exception (`mask !GLOB`, which unmasks): the same
 * name as a glob ("[#]", "\\!": fnmatch reads both as the character). */
static char *mask_token(const char *p)
{
	return p[0] == '#' ? xasprintf("[#]%s", p + 1)
	       : p[0] == '!' ? xasprintf("\\%s", p) : xstrdup(p);
}

static char *mask_pattern(const char *rel, bool *wider)
{
	_cleanup_free_ char *s = xstrdup(rel);
	*wider = false;
	size_t n = strlen(s);
	while (n >= 3 && strcmp(s + n - 3, "/**") == 0) /* "a/b/" and two stars: the directory a/b */
		s[n -= 3] = '\0';
	if (!strstr(s, "**"))
		return s[0] ? mask_token(s) : NULL;
	const char *last = strrchr(s, '/') ? strrchr(s, '/') + 1 : s;
	if (strstr(last, "**") || !last[0])
		return NULL;
	*wider = strncmp(s, "**/", 3) != 0 || strchr(s + 3, '/');
	return mask_token(last);
}

/* s into b with control characters as '?': nothing a source says can
 * end a comment's line or make a line warden's parser refuses. */
static void sb_safe(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		char c = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
		sb_put(b, &c, 1);
	}
}

char *import_printable(const char *s)
{
	struct sbuf b = { 0 };
	sb_safe(&b, s);
	return sb_take(&b);
}

struct out {
	struct imp *m;
	struct sbuf net, files, tools;
	struct strv binds_denied;  /* absolute roots no bind may hold (read denies) */
	struct strv binds_ro_only; /* absolute roots no read-write bind may hold (write denies) */
	struct strv denied_shown, ro_shown; /* the same as the source wrote them */
};

__attribute__((format(printf, 3, 4)))
static void line(struct sbuf *b, const char *origin, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	char full[2048];
	if (origin)
		snprintf(full, sizeof full, "%-40s # %s", tmp, origin);
	else
		snprintf(full, sizeof full, "%s", tmp);
	sb_safe(b, full);
	sb_puts(b, "\n");
}

__attribute__((format(printf, 3, 4)))
static void unmapped(struct out *o, bool weaker, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	strv_push(weaker ? &o->m->weaker : &o->m->unmapped, tmp);
}

/* ---- network ------------------------------------------------------------ */

/* A source pattern's host part and port ("*.a.b:443" -> "*.a.b", 443). */
static void split_port(const char *p, char *host, size_t len, unsigned *port)
{
	*port = 0;
	snprintf(host, len, "%s", p);
	char *c = strrchr(host, ':');
	if (c && !strchr(host, ']') == !strchr(c, ']') && !strchr(c, ']')) {
		char *end;
		unsigned long v = strtoul(c + 1, &end, 10);
		if (c[1] && !*end && v && v < 65536 && strchr(host, ':') == c) {
			*port = (unsigned)v;
			*c = '\0';
		}
	}
}

/* Does the deny suffix d ("com", "a.b", from "*.a.b" or "a.b") cover the
 * allow host h ("x.a.b", "*.a.b", "a.b")? */
static bool covers(const char *d, const char *h)
{
	if (strncmp(h, "*.", 2) == 0)
		h += 2;
	size_t dn = strlen(d), hn = strlen(h);
	return strcasecmp(h, d) == 0 || (hn > dn && h[hn - dn - 1] == '.' && strcasecmp(h + hn - dn, d) == 0);
}

static void emit_net(struct out *o)
{
	struct imp *m = o->m;
	struct strv wide = { 0 };  /* deny suffixes warden cannot write as a rule */
	struct strv ports = { 0 }; /* "*:PORT" denies, as port numbers */
	bool deny_all = false;
	struct strv done = { 0 };
	for (size_t i = 0; i < m->net_deny.n; i++) {
		const struct imp_item *it = &m->net_deny.v[i];
		char host[300];
		unsigned port;
		split_port(it->text, host, sizeof host, &port);
		if (strcmp(host, "*") == 0) {
			if (port)
				strv_push_owned(&ports, xasprintf("%u", port));
			else
				deny_all = true;
			line(&o->net, NULL, "# %s \"%s\": %s", it->origin, it->text,
			     port ? "no allow rule below reaches that port" : "no allow rule below: no network");
			continue;
		}
		struct net_rule r;
		struct werr e = { 0 };
		if (rules_parse_pattern(&r, it->text, &e) == 0) {
			if (!strv_contains(&done, r.text)) {
				strv_push(&done, r.text);
				line(&o->net, it->origin, "net deny %s", r.text);
			}
			continue;
		}
		const char *h = strncmp(host, "*.", 2) == 0 ? host + 2 : host;
		strv_push(&wide, h);
		line(&o->net, NULL, "# %s \"%s\": not a warden pattern; the allows it covers are left out",
		     it->origin, it->text);
	}
	strv_free(&done);
	for (size_t i = 0; i < m->net_allow.n; i++) {
		const struct imp_item *it = &m->net_allow.v[i];
		char host[300];
		unsigned port;
		split_port(it->text, host, sizeof host, &port);
		bool out = deny_all;
		for (size_t k = 0; !out && k < wide.n; k++)
			out = covers(wide.v[k], host);
		_cleanup_free_ char *pat = NULL;
		for (size_t k = 0; !out && k < ports.n; k++) {
			unsigned dp = (unsigned)atoi(ports.v[k]);
			out = port == dp || (!port && dp == 443);
			if (!out && !port && !pat)
				pat = xasprintf("%s:443", host); /* every port but a denied one: HTTPS only */
		}
		if (out) {
			line(&o->net, NULL, "# %s \"%s\": left out, a deny above covers it", it->origin,
			     it->text);
			continue;
		}
		struct net_rule r;
		struct werr e = { 0 };
		if (rules_parse_pattern(&r, pat ? pat : it->text, &e) < 0) {
			line(&o->net, NULL, "# %s \"%s\": not mapped (%s)", it->origin, it->text, e.msg);
			unmapped(o, false, "%s \"%s\": not a warden pattern (%s); left out", it->origin,
				 it->text, e.msg);
			continue;
		}
		if (strv_contains(&done, r.text))
			continue;
		strv_push(&done, r.text);
		_cleanup_free_ char *org = xasprintf("%s%s", it->origin,
						     pat ? "  (narrowed to HTTPS: a port is denied)" : "");
		line(&o->net, org, "net allow %s", r.text);
	}
	strv_free(&done);
	strv_free(&wide);
	strv_free(&ports);
}

/* ---- files -------------------------------------------------------------- */

/* rel without its trailing gitignore parts of two stars (in place). */
static char *stripped_stars(char *rel)
{
	size_t n = strlen(rel);
	while (n > 3 && strcmp(rel + n - 3, "/**") == 0)
		rel[n -= 3] = '\0';
	return rel;
}

static bool m_cwd_within(const struct out *o, const char *root)
{
	return o->m->cwd && path_is_within(o->m->cwd, root);
}

/* A denied relative pattern (rel, from the workspace) as a `mask` line. */
static void deny_mask(struct out *o, const struct imp_item *it, const char *rel, bool write)
{
	bool wider;
	_cleanup_free_ char *mp = mask_pattern(rel, &wider);
	if (!mp) {
		line(&o->files, NULL, "# %s \"%s\": NOT MAPPED: no part of it names files",
		     it->origin, it->text);
		unmapped(o, true, "%s \"%s\": no part of the pattern names files", it->origin,
			 it->text);
		return;
	}
	char note[160] = "";
	snprintf(note, sizeof note, "%s%s", write ? "  (unreadable too)" : "",
		 wider ? "  (at any depth: matches more)"
		 : !strchr(mp, '/') ? "  (a name: at any depth)" : "");
	_cleanup_free_ char *org = xasprintf("%s%s", it->origin, note);
	line(&o->files, org, "mask %s", mp);
}

/* A denied path in the workspace (p relative): `protect` for writes, `mask`
 * for reads; the workspace itself cannot be. */
static void deny_relative(struct out *o, const struct imp_item *it, const struct ipath *p,
			  bool write)
{
	if (!p->out[0]) {
		line(&o->files, NULL, "# %s \"%s\": NOT MAPPED: warden always shows the workspace%s",
		     it->origin, it->text, write ? " writable (warden run --review keeps every "
						     "write for your review)" : "");
		unmapped(o, true, "%s \"%s\": warden always shows the workspace%s", it->origin,
			 it->text, write ? " writable; run with --review" : "");
	} else if (write && (p->out[0] == '!' || p->out[0] == '#')) {
		/* `protect !X` is an exception that makes X writable, and a
		 * protected path has no glob to spell it as a name: masked */
		deny_mask(o, it, p->out, write);
	} else if (write && p->glob && !has_glob(stripped_stars(p->out))) {
		_cleanup_free_ char *org = xasprintf("%s  (the directory, as a whole)", it->origin);
		line(&o->files, org, "protect %s", stripped_stars(p->out));
	} else if (write && !p->glob) {
		_cleanup_free_ char *org = xasprintf("%s%s", it->origin, strchr(p->out, '/') ? ""
						     : "  (a name: at any depth)");
		line(&o->files, org, "protect %s", p->out);
	} else {
		deny_mask(o, it, p->out, write);
	}
}

/* A denied directory the workspace lies in: only a read rule that allows
 * the workspace again makes it what warden does. */
static void deny_around_workspace(struct out *o, const struct imp_item *it, bool write)
{
	bool reallowed = false;
	for (size_t i = 0; !write && i < o->m->read_allow.n; i++) {
		struct ipath a;
		const char *w;
		if (resolve(o->m, &o->m->read_allow.v[i], o->m->read_allow.v[i].text, &a, &w) == 0) {
			reallowed = reallowed || (!a.abs && !a.out[0]);
			ipath_free(&a);
		}
	}
	if (reallowed) {
		line(&o->files, NULL, "# %s \"%s\": unreadable but for the workspace, which is "
		     "re-allowed", it->origin, it->text);
	} else {
		line(&o->files, NULL, "# %s \"%s\": NOT MAPPED for the workspace in it, which warden "
		     "always shows%s; the rest of it is not there", it->origin, it->text,
		     write ? " writable" : "");
		unmapped(o, true, "%s \"%s\": the workspace in it stays %s", it->origin, it->text,
			 write ? "writable" : "readable");
	}
}

/* A denied path outside the workspace (root: where its glob begins). */
static void deny_absolute(struct out *o, const struct imp_item *it, const char *root, bool write)
{
	if (m_cwd_within(o, root)) {
		/* the workspace lies in it */
		deny_around_workspace(o, it, write);
	} else if (path_is_within(root, "/etc") && etc_view_of(root) != ETC_HOST) {
		line(&o->files, NULL, "# %s \"%s\": %s already: %s", it->origin, it->text,
		     write ? "not writable" : "unreadable",
		     etc_view_of(root) == ETC_OWN ? "warden writes its own in its place"
						  : "warden's curated /etc does not hold it");
	} else if (in_system_dir(root)) {
		if (write) {
			line(&o->files, NULL, "# %s \"%s\": read-only already (a system directory)",
			     it->origin, it->text);
		} else {
			line(&o->files, NULL, "# %s \"%s\": NOT MAPPED: warden shows the system directories "
			     "and a curated /etc read-only and cannot hide a path in them", it->origin, it->text);
			unmapped(o, true, "%s \"%s\": in a system directory, which warden shows read-only",
				 it->origin, it->text);
		}
	} else {
		line(&o->files, NULL, "# %s \"%s\": %s already: warden shows nothing there", it->origin,
		     it->text, write ? "not writable" : "unreadable");
	}
	strv_push(write ? &o->binds_ro_only : &o->binds_denied, root);
	strv_push(write ? &o->ro_shown : &o->denied_shown, it->text);
}

static void deny_path(struct out *o, const struct imp_item *it, bool write)
{
	struct ipath p;
	const char *why;
	if (resolve(o->m, it, it->text, &p, &why) < 0) {
		line(&o->files, NULL, "# %s \"%s\": NOT MAPPED: %s", it->origin, it->text, why);
		unmapped(o, true, "%s \"%s\": %s", it->origin, it->text, why);
		return;
	}
	if (!p.abs) {
		deny_relative(o, it, &p, write);
	} else {
		_cleanup_free_ char *root = glob_root(p.abs);
		deny_absolute(o, it, root, write);
	}
	ipath_free(&p);
}

/* Does the bind of abs hold (or sit in) a denied root? The denied path
 * as the source wrote it. */
static const char *clash(const struct strv *roots, const struct strv *shown, const char *abs)
{
	for (size_t i = 0; i < roots->n; i++)
		if (path_overlaps(roots->v[i], abs))
			return shown->v[i];
	return NULL;
}

static void allow_path(struct out *o, const struct imp_item *it, bool write)
{
	struct ipath p;
	const char *why;
	if (resolve(o->m, it, it->text, &p, &why) < 0) {
		line(&o->files, NULL, "# %s \"%s\": not mapped (%s)", it->origin, it->text, why);
		unmapped(o, false, "%s \"%s\": %s; left out", it->origin, it->text, why);
		return;
	}
	/* what else the profile's parser refuses to bind (/boot writable) */
	const char *refused = p.abs && !in_system_dir(p.abs)
				      ? policy_path_refused(p.abs, write ? POLICY_RW : POLICY_RO) : NULL;
	if (!p.abs) {
		line(&o->files, NULL, "# %s \"%s\": %s already: in the workspace", it->origin, it->text,
		     write ? "writable" : "readable");
	} else if (p.glob) {
		line(&o->files, NULL, "# %s \"%s\": not mapped (warden binds paths, not globs)",
		     it->origin, it->text);
		unmapped(o, false, "%s \"%s\": a glob; warden binds paths; left out", it->origin, it->text);
	} else if (strcmp(p.abs, "/") == 0 || path_is_within(p.abs, "/proc") ||
		   path_is_within(p.abs, "/sys") || path_is_within(p.abs, "/dev")) {
		line(&o->files, NULL, "# %s \"%s\": not mapped (warden does not bind it)", it->origin,
		     it->text);
		unmapped(o, false, "%s \"%s\": warden does not bind it; left out", it->origin, it->text);
	} else if (refused) {
		line(&o->files, NULL, "# %s \"%s\": not mapped (%s)", it->origin, it->text, refused);
		unmapped(o, false, "%s \"%s\": %s; left out", it->origin, it->text, refused);
	} else if (in_system_dir(p.abs)) {
		line(&o->files, NULL, "# %s \"%s\": %s", it->origin, it->text,
		     write ? "not mapped: the system directories stay read-only" : "readable already");
		if (write)
			unmapped(o, false, "%s \"%s\": the system directories stay read-only", it->origin,
				 it->text);
	} else if (!it->dir && p.out[0] == '/' &&
		   (path_is_within(p.abs, "/tmp") || path_is_within(p.abs, "/var/tmp"))) {
		line(&o->files, NULL, "# %s \"%s\": writable already, in a private tmpfs (the host's "
		     "is not shared)", it->origin, it->text);
	} else if (m_cwd_within(o, p.abs)) {
		line(&o->files, NULL, "# %s \"%s\": not mapped: it holds the workspace, which warden "
		     "shows itself", it->origin, it->text);
		unmapped(o, false, "%s \"%s\": holds the workspace; left out", it->origin, it->text);
	} else {
		const char *c = clash(&o->binds_denied, &o->denied_shown, p.abs);
		const char *cw = write ? clash(&o->binds_ro_only, &o->ro_shown, p.abs) : NULL;
		if (c) {
			line(&o->files, NULL, "# %s \"%s\": left out, it would show %s, which is denied",
			     it->origin, it->text, c);
			unmapped(o, false, "%s \"%s\": would show the denied %s; left out", it->origin,
				 it->text, c);
		} else if (cw) {
			_cleanup_free_ char *org = xasprintf("%s  (read-only: %s is denied writing)",
							     it->origin, cw);
			line(&o->files, org, "read-only %s", p.out);
		} else {
			line(&o->files, it->origin, "%s %s", write ? "read-write" : "read-only", p.out);
		}
	}
	ipath_free(&p);
}

/* ---- tool rules (Claude Code's permissions) ----------------------------- */

/* s with fnmatch's special characters but '*' escaped, '#' kept from
 * starting a comment, blanks one space. */
static void glob_lit(struct sbuf *b, const char *s, size_t n, bool keep_star)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '*' && keep_star)
			sb_puts(b, "*");
		else if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\')
			sb_printf(b, "\\%c", c);
		else if (c == '#')
			sb_puts(b, "[#]");
		else if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			sb_puts(b, b->n && b->p[b->n - 1] == ' ' ? "" : " ");
		else if ((unsigned char)c < 0x20 || c == 0x7f)
			sb_puts(b, "?"); /* deny and ask only: any one character, more */
		else
			sb_put(b, &c, 1);
	}
}

/* A path specifier of Read(...)/Edit(...) as a glob over the absolute
 * file_path the client reports: anchored at '/' for "//abs", else any
 * directory before it (which matches more than the source). */
static char *path_glob(const char *spec)
{
	struct sbuf b = { 0 };
	const char *s = spec;
	if (strncmp(s, "//", 2) == 0) {
		s++;
	} else {
		if (strncmp(s, "~/", 2) == 0)
			s += 2;
		else if (strncmp(s, "./", 2) == 0)
			s += 2;
		else if (s[0] == '/')
			s++;
		sb_puts(&b, "*/");
		while (strncmp(s, "**/", 3) == 0) /* any depth: what "*" already matches */
			s += 3;
	}
	for (; *s; s++) {
		if (s[0] == '*' && s[1] == '*') {
			sb_puts(&b, "*");
			s++;
		} else if (*s == '#') {
			sb_puts(&b, "[#]");
		} else if (*s == ' ' || *s == '\t') {
			sb_puts(&b, "?");
		} else {
			sb_put(&b, s, 1);
		}
	}
	if (b.n && b.p[b.n - 1] == '/')
		sb_puts(&b, "*");
	return sb_take(&b);
}

static bool name_ok(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '*'))
			return false;
	return true;
}

/* Bash(SPEC): the command's words as a pattern (SPEC:* a prefix); an allow
 * of a prefix written twice, the command alone and with its arguments. */
static void bash_pattern(struct out *o, const struct imp_item *it, const char *act, const char *name,
			 const char *spec, struct sbuf *pat, const char **note)
{
	bool deny = strcmp(act, "allow") != 0;
	size_t n = strlen(spec);
	bool prefix = n >= 2 && strcmp(spec + n - 2, ":*") == 0;
	if (prefix)
		n -= 2;
	if (deny && spec[0] != '*')
		sb_puts(pat, "*");
	glob_lit(pat, spec, n, true);
	if (!deny && prefix && n && spec[n - 1] != ' ') {
		/* the command alone, or it and its arguments: not "lsof" for "ls:*" */
		_cleanup_free_ char *alone = xstrdup(pat->p);
		_cleanup_free_ char *org1 = xstrdup(it->origin);
		line(&o->tools, org1, "tool %s %s %s", act, name, alone);
		sb_puts(pat, " *");
	} else if (prefix || (deny && pat->p[pat->n - 1] != '*')) {
		sb_puts(pat, "*");
	}
	if (deny)
		*note = "anywhere in the command: matches more";
}

static bool is_file_tool(const char *name)
{
	return strcmp(name, "Read") == 0 || strcmp(name, "Edit") == 0 || strcmp(name, "Write") == 0 ||
	       strcmp(name, "MultiEdit") == 0 || strcmp(name, "NotebookEdit") == 0;
}

/* Read(PATH), Edit(PATH), ...: the path as a glob; a deny (or an allow to
 * write) also becomes a path rule. */
static void file_tool_pattern(struct out *o, const struct imp_item *it, const char *act,
			      const char *name, const char *spec, struct sbuf *pat)
{
	bool deny = strcmp(act, "allow") != 0;
	char *g = path_glob(spec);
	sb_puts(pat, g);
	free(g);
	bool rd = strcmp(name, "Read") == 0;
	if (deny && strcmp(act, "deny") == 0)
		imp_add(rd ? &o->m->read_deny : &o->m->write_deny, spec, it->origin, "claude");
	else if (!deny && !rd)
		imp_add(&o->m->write_allow, spec, it->origin, "claude");
}

/* WebFetch(domain:HOST): a network rule too, and the URLs on the host. */
static void webfetch_pattern(struct out *o, const struct imp_item *it, const char *act,
			     const char *name, const char *host, struct sbuf *pat)
{
	bool deny = strcmp(act, "allow") != 0;
	if (strcmp(act, "allow") == 0)
		imp_add(&o->m->net_allow, host, it->origin, NULL);
	else if (strcmp(act, "deny") == 0)
		imp_add(&o->m->net_deny, host, it->origin, NULL);
	sb_puts(pat, "*://");
	glob_lit(pat, host, strlen(host), true);
	if (!deny) {
		/* the host and what is on it, not a longer name that starts alike */
		line(&o->tools, it->origin, "tool %s %s %s", act, name, pat->p);
		sb_puts(pat, "/*");
	} else {
		sb_puts(pat, "*");
	}
}

/* The pattern of a tool rule's specifier into pat (empty: the whole tool),
 * with a note for its line; false when an allow is left out (said so). */
static bool tool_pattern(struct out *o, const struct imp_item *it, const char *act, const char *name,
			 const char *spec, struct sbuf *pat, const char **note)
{
	bool deny = strcmp(act, "allow") != 0;
	if (!spec || !spec[0] || strcmp(spec, "*") == 0) {
		/* the whole tool */
	} else if (strcmp(name, "Bash") == 0) {
		bash_pattern(o, it, act, name, spec, pat, note);
	} else if (is_file_tool(name)) {
		file_tool_pattern(o, it, act, name, spec, pat);
	} else if (strcmp(name, "WebFetch") == 0 && strncmp(spec, "domain:", 7) == 0) {
		webfetch_pattern(o, it, act, name, spec + 7, pat);
	} else if (strcmp(name, "WebSearch") == 0) {
		glob_lit(pat, spec, strlen(spec), true);
	} else if (deny) {
		*note = "every call of the tool: warden cannot match the specifier";
	} else {
		line(&o->tools, NULL, "# %s: not mapped (warden cannot match the specifier)", it->origin);
		unmapped(o, false, "%s: warden cannot match the specifier; left out", it->origin);
		return false;
	}
	return true;
}

/* A tool line's words: "tool", the action, the name and the pattern's,
 * one more than the specifier's at the most (Bash's " *"); a line holds
 * the directive and POLICY_LINE_WORDS_MAX words. */
#define TOOL_PATTERN_WORDS_MAX (POLICY_LINE_WORDS_MAX - 3)

/* The blank-separated words of s. */
static size_t words(const char *s)
{
	size_t n = 0;
	for (bool in = false; *s; s++) {
		bool blank = *s == ' ' || *s == '\t';
		n += !blank && !in;
		in = !blank;
	}
	return n;
}

static void tool_rule(struct out *o, const struct imp_item *it, const char *act)
{
	const char *s = it->text;
	const char *par = strchr(s, '(');
	size_t nn = par ? (size_t)(par - s) : strlen(s);
	bool deny = strcmp(act, "allow") != 0;
	if (!name_ok(s, nn) || (par && (strlen(par) < 2 || par[strlen(par) - 1] != ')')) ||
	    (!deny && has_control(s))) {
		line(&o->tools, NULL, "# %s: NOT MAPPED: not a rule warden reads", it->origin);
		unmapped(o, deny, "%s: not a rule warden reads", it->origin);
		return;
	}
	_cleanup_free_ char *name = xmalloc(nn + 1);
	memcpy(name, s, nn);
	name[nn] = '\0';
	_cleanup_free_ char *spec = NULL;
	if (par) {
		spec = xstrdup(par + 1);
		spec[strlen(spec) - 1] = '\0';
	}
	if (strncmp(name, "mcp__", 5) == 0 && !strstr(name + 5, "__")) {
		char *n2 = xasprintf("%s__*", name); /* a whole server */
		free(name);
		name = n2;
	}
	struct sbuf pat = { 0 };
	const char *note = NULL;
	if (spec && words(spec) > TOOL_PATTERN_WORDS_MAX) {
		/* more words than a profile's line holds: a deny or an ask of
		 * every call, an allow left out */
		if (!deny) {
			line(&o->tools, NULL, "# %s: not mapped (a pattern of more than %d words)",
			     it->origin, TOOL_PATTERN_WORDS_MAX);
			unmapped(o, false, "%s: a pattern of more than %d words; left out", it->origin,
				 TOOL_PATTERN_WORDS_MAX);
			return;
		}
		free(spec);
		spec = NULL;
		note = "every call of the tool: its pattern has more words than a profile's line holds";
	}
	if (!tool_pattern(o, it, act, name, spec, &pat, &note)) {
		free(pat.p);
		return;
	}
	_cleanup_free_ char *p = sb_take(&pat);
	_cleanup_free_ char *org = note ? xasprintf("%s  (%s)", it->origin, note) : xstrdup(it->origin);
	if (p[0])
		line(&o->tools, org, "tool %s %s %s", act, name, p);
	else
		line(&o->tools, org, "tool %s %s", act, name);
}

/* ---- the profile -------------------------------------------------------- */

static const char *const src_names[] = {
	[IMPORT_CLAUDE] = "claude", [IMPORT_CODEX] = "codex", [IMPORT_SRT] = "srt",
};

static void section(struct sbuf *b, const char *title, struct sbuf *body)
{
	if (!body->n)
		return;
	sb_printf(b, "\n# ---- %s\n", title);
	sb_put(b, body->p, body->n);
}

static void comment_list(struct sbuf *b, const struct strv *s, const char *prefix)
{
	for (size_t i = 0; i < s->n; i++) {
		sb_printf(b, "# - %s", prefix);
		sb_safe(b, s->v[i]);
		sb_puts(b, "\n");
	}
}

static void say_once_emit(struct strv *s, const char *msg)
{
	if (!strv_contains(s, msg))
		strv_push(s, msg);
}

char *import_emit(struct imp *m)
{
	struct out o = { .m = m };
	/* tool rules first: Read/Edit/WebFetch rules add paths and hosts */
	for (size_t i = 0; i < m->tool_deny.n; i++)
		tool_rule(&o, &m->tool_deny.v[i], "deny");
	for (size_t i = 0; i < m->tool_ask.n; i++)
		tool_rule(&o, &m->tool_ask.v[i], "ask");
	for (size_t i = 0; i < m->tool_allow.n; i++)
		tool_rule(&o, &m->tool_allow.v[i], "allow");
	emit_net(&o);
	for (size_t i = 0; i < m->read_deny.n; i++)
		deny_path(&o, &m->read_deny.v[i], false);
	for (size_t i = 0; i < m->write_deny.n; i++)
		deny_path(&o, &m->write_deny.v[i], true);
	for (size_t i = 0; i < m->write_allow.n; i++)
		allow_path(&o, &m->write_allow.v[i], true);
	for (size_t i = 0; i < m->read_allow.n; i++)
		allow_path(&o, &m->read_allow.v[i], false);
	if (m->src == IMPORT_CODEX && !m->mode_set) {
		say_once_emit(&m->stricter, "sandbox_mode is not set: Codex picks read-only or "
			      "workspace-write by the project's trust");
		m->ws_write_limited = true;
		free(m->ws_write_why);
		m->ws_write_why = xstrdup("sandbox_mode not set (read-only in an untrusted project)");
	}
	if (m->ws_write_limited)
		strv_push_owned(&m->weaker, xasprintf("%s: warden lets the workspace be written as a "
						      "whole; `warden run --review` keeps every write "
						      "for your review before it reaches the workspace",
						      m->ws_write_why ? m->ws_write_why : "writes limited"));

	struct sbuf b = { 0 };
	sb_printf(&b, "# warden profile, imported by `warden import %s` from:\n", src_names[m->src]);
	for (size_t i = 0; i < m->files.n; i++) {
		sb_puts(&b, "#   ");
		sb_safe(&b, m->files.v[i]);
		sb_puts(&b, "\n");
	}
	sb_puts(&b, "# Layered on warden's built-in default profile. Check it with\n"
		    "# `warden policy show --profile FILE`, use it with\n"
		    "# `warden run --profile FILE -- COMMAND`.\n"
		    "#\n"
		    "# Stricter in warden than in these settings, whatever they say:\n"
		    "# - the sandbox holds every process of the session, the agent's own included\n"
		    "# - reads: only the system directories, a curated /etc, the workspace and\n"
		    "#   the paths below; the home inside is empty\n"
		    "# - writes: only the workspace, a private /tmp and the read-write paths\n"
		    "#   below, which are mounted noexec\n"
		    "# - network: only the hosts allowed below (and an agent's own API host);\n"
		    "#   no DNS inside; names that resolve to private addresses are refused\n"
		    "# - environment: only PATH, LANG, TERM, TZ and a few more variables pass\n"
		    "# - in the workspace, .env, *.pem, *.key, id_rsa* and other secrets are\n"
		    "#   unreadable, .git/hooks, .claude, .codex and other settings read-only\n");
	comment_list(&b, &m->stricter, "");
	section(&b, "network", &o.net);
	section(&b, "files", &o.files);
	if (o.tools.n)
		sb_puts(&o.tools, "# (allow rules decide only under `tool default deny|ask`; a pattern\n"
				  "# matches the whole command, which Claude Code's rules split at ; && |)\n");
	section(&b, "tool calls (the agent's hook; Claude Code's order: deny, ask, allow)", &o.tools);
	if (m->weaker.n || m->unmapped.n) {
		sb_puts(&b, "\n# ---- not mapped\n");
		comment_list(&b, &m->weaker, "LESS STRICT: ");
		comment_list(&b, &m->unmapped, "");
	}
	if (m->ignored.n) {
		sb_puts(&b, "\n# Not sandbox settings, not imported:");
		size_t col = 36;
		for (size_t i = 0; i < m->ignored.n; i++) {
			size_t n = strlen(m->ignored.v[i]) + 1;
			if (col + n > 78) {
				sb_puts(&b, "\n#  ");
				col = 3;
			}
			sb_puts(&b, " ");
			sb_safe(&b, m->ignored.v[i]);
			col += n;
		}
		sb_puts(&b, "\n");
	}
	free(o.net.p);
	free(o.files.p);
	free(o.tools.p);
	strv_free(&o.binds_denied);
	strv_free(&o.binds_ro_only);
	strv_free(&o.denied_shown);
	strv_free(&o.ro_shown);
	return sb_take(&b);
}
