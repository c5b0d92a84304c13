/* parser.c - the profile parser: profile text (the built-in default, a user
 * file and what it includes) into the compiled struct policy, with errors
 * that name FILE:LINE:COL.
 *
 * Grammar (one directive per line, tokens separated by spaces or tabs):
 *   include FILE | include default
 *   read-only PATH | read-write PATH
 *   protect RELPATH | unprotect RELPATH
 *   mask GLOB | unmask GLOB
 *   env pass NAME | env set NAME=VALUE | env unset NAME
 *   audit default | audit files
 *   net allow PATTERN | net allow PATTERN private | net deny PATTERN
 *   secret NAME host HOST [HOST...] [file PATH | command CMD [ARG...]]
 *   signal grace SECONDS
 *   terminal clipboard allow|deny
 *   canary on|off
 *   workspace read-only|read-write
 *   limit pids N | limit memory SIZE | limit cpu N | limit tmp SIZE |
 *   limit home SIZE   (any of them: unlimited; values: src/policy/limit.c)
 *   exec deny TARGET | exec allow TARGET | exec default allow|deny |
 *   exec strict | exec allow-writable PATH | exec hash-limit SIZE SECONDS |
 *   exec ask TARGET | exec ask argv WORD... | exec kernel auto|on|off
 *   (TARGET: FILE, sha256:HEX, hashes:FILE, for allow also a DIR)
 *   net ask PATTERN [private] | net default ask|deny
 *   write ask GLOB
 *   tool allow|deny|ask NAME [PATTERN...] | tool default allow|deny|ask
 *   approve timeout SECONDS | approve command CMD [ARG...] | approve webhook URL
 *   rules FILE   (detection rules: src/detect/rules.h; FILE absolute, ~/, or
 *   relative to the profile's directory)
 *   risk warn|ask|freeze|kill N|off | risk half-life DURATION (30s, 10m, 1h)
 *   checkpoint on|off | checkpoint max-size SIZE|unlimited |
 *   checkpoint exclude PATTERN | checkpoint keep N | checkpoint keep-days N
 * '#' starts a comment when it begins the line or follows a blank.
 *
 * Network rules: PATTERN is compiled here, once, by rules_parse_pattern
 * (src/net/rules.h); its canonical text is its identity, so "Example.COM"
 * and "example.com" are one rule; a rule equal to one already there
 * (pattern, allow or deny, private) is not added again. Each rule goes both
 * to the declared list (with its origin) and to the policy's compiled rule
 * set that the proxy decides with. `private` lets the names an allow rule
 * covers resolve to private ranges. policy_add_net adds the same rules from
 * the command line.
 *
 * Secrets: `secret NAME host HOST...` binds the value of the host's variable
 * NAME (or of the file PATH, or what the command CMD prints; arguments are
 * split at blanks, no quoting) to the hosts it may be sent to. A later
 * declaration of NAME replaces the earlier one, so a user profile rebinds
 * what an agent profile bound. NAME leaves env_pass and env_set, and a
 * later `env pass NAME` or `env set NAME=...` is an error: the value never
 * passes as a variable. A host is a pattern as for `net allow`, but never a
 * wildcard wider than one registrable domain (policy_secret_host_refused). */
#include "policy.h"
#include "exec_rules.h"
#include "../net/rules.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_LINE 4096                    /* bytes per line, newline excluded */
#define MAX_DEPTH 8                      /* nested includes */
#define MAX_FILE (1024 * 1024)           /* bytes per profile file */
#define MAX_TOTAL (8 * 1024 * 1024)      /* bytes parsed per policy, includes too */
#define MAX_ENTRIES 4096                 /* entries per list (net rules: in total) */
#define MAX_TOKENS 64                    /* tokens kept per line; more are counted */
#define BUILTIN_NAME "builtin:default"

struct parser {
	struct policy *p;
	const char *home;                /* "~/" expands against it; NULL: unknown */
	struct werr *e;
	size_t total;                    /* bytes parsed so far */
};

struct line {
	const char *name;                /* file name for messages and origins */
	const char *dir;                 /* includes resolve against it; NULL: none */
	unsigned long lineno;
	const char *text;                /* the line, comment and trailing blanks cut */
	size_t len;
	size_t ntok;                     /* tokens on the line, may exceed MAX_TOKENS */
	size_t off[MAX_TOKENS];          /* byte offset of each token */
	const char *tok[MAX_TOKENS];     /* NUL-terminated copies inside buf */
	size_t off_over;                 /* byte offset of the first token not kept */
	char buf[MAX_LINE + 1];
};

static int parse_text(struct parser *ps, const char *name, const char *dir,
		      const char *text, size_t len, int depth);

__attribute__((format(printf, 5, 6)))
static int lerr(struct werr *e, int errnum, const struct line *l, size_t off,
		const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return werr_set(e, errnum, "%s:%lu:%zu: %s", l->name, l->lineno, off + 1, msg);
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

/* Valid UTF-8 without control characters. */
static bool is_clean(const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return utf8_invalid_at((const unsigned char *)s, n) == n;
}

/* [A-Za-z_][A-Za-z0-9_]*, and a final '*' when glob is true. */
static bool valid_env_name(const char *s, size_t n, bool glob)
{
	if (glob && n > 1 && s[n - 1] == '*')
		n--;
	if (n == 0 || !((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

bool policy_env_name_valid(const char *name)
{
	return valid_env_name(name, strlen(name), false);
}

static bool has_dotdot_component(const char *s)
{
	for (const char *p = s; *p;) {
		const char *end = strchrnul(p, '/');
		if (end - p == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

static void strip_trailing_slashes(char *s, size_t keep)
{
	size_t n = strlen(s);
	while (n > keep && s[n - 1] == '/')
		s[--n] = '\0';
}

/* Exactly `want` tokens, the directive included. */
static int want_tokens(struct parser *ps, const struct line *l, size_t want, const char *what)
{
	if (l->ntok < want)
		return lerr(ps->e, 0, l, l->len, "%s: missing argument", what);
	if (l->ntok > want)
		return lerr(ps->e, 0, l, l->off[want], "%s: unexpected argument '%.200s'", what,
			    l->tok[want]);
	return 0;
}

static int room(struct parser *ps, const struct line *l, size_t n)
{
	if (n >= MAX_ENTRIES)
		return lerr(ps->e, 0, l, l->off[0], "%s: too many entries (max %d)", l->tok[0],
			    MAX_ENTRIES);
	return 0;
}

static int push_unique(struct parser *ps, const struct line *l, struct strv *s, const char *v)
{
	if (strv_contains(s, v))
		return 0;
	if (room(ps, l, s->n) < 0)
		return -1;
	strv_push(s, v);
	return 0;
}

static const char *const ro_refused[] = { "/proc", "/sys", "/dev" };
static const char *const rw_refused[] = { "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/boot" };

/* The absolute, normalised path a directive names at token `off`: "/..."
 * or "~" / "~/..." expanded against the home. *out malloc'd. */
static int expand_path(struct parser *ps, const struct line *l, size_t off, const char *d,
		       const char *t, char **out)
{
	bool tilde = strcmp(t, "~") == 0 || strncmp(t, "~/", 2) == 0;
	if (!tilde && t[0] != '/')
		return lerr(ps->e, 0, l, off, "%s: path must be absolute or start with ~/: '%.200s'", d, t);
	_cleanup_free_ char *rest = xstrdup(tilde ? t + 1 : t);
	strip_trailing_slashes(rest, tilde ? 0 : 1);
	if (path_has_dot_components(rest))
		return lerr(ps->e, 0, l, off, "%s: '.', '..' and empty components are not allowed: '%.200s'",
			    d, t);
	if (!tilde) {
		*out = steal_ptr(&rest);
		return 0;
	}
	if (!ps->home)
		return lerr(ps->e, 0, l, off, "%s: '~' used but no home directory is known", d);
	_cleanup_free_ char *h = xstrdup(ps->home);
	strip_trailing_slashes(h, 1);
	if (h[0] != '/' || path_has_dot_components(h) || !is_clean(h))
		return lerr(ps->e, 0, l, off, "%s: the home directory '%.200s' is not an absolute normalised path",
			    d, h);
	*out = strcmp(h, "/") == 0 ? xstrdup(rest[0] ? rest : "/") : xasprintf("%s%s", h, rest);
	return 0;
}

/* Why full (absolute, normalised) cannot be bound with mode, or NULL. */
static const char *path_refused(const char *full, enum policy_path_mode mode)
{
	bool refused = strcmp(full, "/") == 0 || path_is_within(full, "/proc");
	for (size_t i = 0; i < ARRAY_LEN(ro_refused); i++)
		refused = refused || strcmp(full, ro_refused[i]) == 0;
	if (refused)
		return "cannot be bound into the sandbox";
	if (mode == POLICY_RW) {
		for (size_t i = 0; i < ARRAY_LEN(ro_refused); i++)
			refused = refused || path_is_within(full, ro_refused[i]);
		for (size_t i = 0; i < ARRAY_LEN(rw_refused); i++)
			refused = refused || strcmp(full, rw_refused[i]) == 0;
		if (refused)
			return "may not be writable in the sandbox";
	}
	return NULL;
}

/* Add or update the path full (taken) with mode and origin (taken). */
static void path_set(struct policy *p, char *full, enum policy_path_mode mode, char *origin)
{
	for (size_t i = 0; i < p->npaths; i++) {
		if (strcmp(p->paths[i].path, full) == 0) {
			p->paths[i].mode = mode;
			free(p->paths[i].origin);
			p->paths[i].origin = origin;
			free(p->paths[i].source);
			p->paths[i].source = NULL;
			free(full);
			return;
		}
	}
	p->paths = xrealloc(p->paths, (p->npaths + 1) * sizeof *p->paths);
	p->paths[p->npaths++] = (struct policy_path){ .path = full, .mode = mode, .origin = origin };
}

static int do_path(struct parser *ps, const struct line *l, enum policy_path_mode mode)
{
	const char *d = l->tok[0], *t = l->tok[1];
	size_t off = l->off[1];
	if (want_tokens(ps, l, 2, d) < 0)
		return -1;
	_cleanup_free_ char *full = NULL;
	if (expand_path(ps, l, off, d, t, &full) < 0)
		return -1;
	const char *why = path_refused(full, mode);
	if (why)
		return lerr(ps->e, 0, l, off, "%s: '%.200s' %s", d, full, why);
	if (room(ps, l, ps->p->npaths) < 0)
		return -1;
	path_set(ps->p, steal_ptr(&full), mode, xasprintf("%s:%lu", l->name, l->lineno));
	return 0;
}

int policy_add_path(struct policy *p, const char *path, enum policy_path_mode mode,
		    const char *origin, struct werr *e)
{
	if (path[0] != '/' || path_has_dot_components(path) ||
	    (strlen(path) > 1 && path[strlen(path) - 1] == '/'))
		return werr_set(e, 0, "%s: '%.200s' is not an absolute, normalised path", origin, path);
	const char *why = path_refused(path, mode);
	if (why)
		return werr_set(e, 0, "%s: '%.200s' %s", origin, path, why);
	if (p->npaths >= MAX_ENTRIES)
		return werr_set(e, 0, "%s: more than %d paths", origin, MAX_ENTRIES);
	path_set(p, xstrdup(path), mode, xstrdup(origin));
	return 0;
}

int policy_add_bind(struct policy *p, const char *inside, const char *source,
		    enum policy_path_mode mode, const char *origin, struct werr *e)
{
	if (policy_add_path(p, inside, mode, origin, e) < 0)
		return -1;
	for (size_t i = 0; i < p->npaths; i++)
		if (strcmp(p->paths[i].path, inside) == 0)
			p->paths[i].source = xstrdup(source);
	return 0;
}

static int do_protect(struct parser *ps, const struct line *l, bool add)
{
	const char *d = l->tok[0], *t = l->tok[1];
	if (want_tokens(ps, l, 2, d) < 0)
		return -1;
	if (t[0] == '/')
		return lerr(ps->e, 0, l, l->off[1], "%s: path must be relative to the workspace: '%.200s'",
			    d, t);
	_cleanup_free_ char *r = xstrdup(t);
	strip_trailing_slashes(r, 0);
	if (path_has_dot_components(r))
		return lerr(ps->e, 0, l, l->off[1],
			    "%s: '.', '..' and empty components are not allowed: '%.200s'", d, t);
	if (!add) {
		strv_remove(&ps->p->protect, r);
		return 0;
	}
	return push_unique(ps, l, &ps->p->protect, r);
}

static int do_mask(struct parser *ps, const struct line *l, bool add)
{
	const char *d = l->tok[0], *t = l->tok[1];
	if (want_tokens(ps, l, 2, d) < 0)
		return -1;
	if (!add) {
		strv_remove(&ps->p->mask, t);
		return 0;
	}
	if (t[0] == '/')
		return lerr(ps->e, 0, l, l->off[1], "%s: pattern must be relative to the workspace: '%.200s'",
			    d, t);
	if (has_dotdot_component(t))
		return lerr(ps->e, 0, l, l->off[1], "%s: '..' components are not allowed: '%.200s'", d, t);
	return push_unique(ps, l, &ps->p->mask, t);
}

/* `audit default` or `audit files`: how much the supervisor records. */
static int do_audit(struct parser *ps, const struct line *l)
{
	if (want_tokens(ps, l, 2, "audit") < 0)
		return -1;
	const char *t = l->tok[1];
	if (strcmp(t, "default") == 0)
		ps->p->audit_files = false;
	else if (strcmp(t, "files") == 0)
		ps->p->audit_files = true;
	else
		return lerr(ps->e, 0, l, l->off[1], "audit: unknown level '%.200s' (expected default or files)", t);
	return 0;
}

/* `signal grace SECONDS`: a decimal number of seconds, 0 to
 * POLICY_SIGNAL_GRACE_MAX; the last one given counts. */
static int do_signal(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2)
		return lerr(ps->e, 0, l, l->len, "signal: missing argument (grace SECONDS)");
	if (strcmp(l->tok[1], "grace") != 0)
		return lerr(ps->e, 0, l, l->off[1], "signal: unknown setting '%.200s' (expected grace)",
			    l->tok[1]);
	if (want_tokens(ps, l, 3, "signal grace") < 0)
		return -1;
	const char *t = l->tok[2];
	unsigned long v = 0;
	size_t n = strspn(t, "0123456789");
	if (n == 0 || t[n] != '\0')
		return lerr(ps->e, 0, l, l->off[2], "signal grace: '%.200s' is not a number of seconds", t);
	for (size_t i = 0; i < n && v <= POLICY_SIGNAL_GRACE_MAX; i++)
		v = v * 10 + (unsigned long)(t[i] - '0');
	if (v > POLICY_SIGNAL_GRACE_MAX)
		return lerr(ps->e, 0, l, l->off[2], "signal grace: %.200s seconds is more than %d", t,
			    POLICY_SIGNAL_GRACE_MAX);
	ps->p->signal_grace = (unsigned)v;
	return 0;
}

/* `terminal clipboard allow|deny`: whether OSC 52 (set or read the
 * clipboard) reaches the user's terminal from the agent's. */
static int do_terminal(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2)
		return lerr(ps->e, 0, l, l->len, "terminal: missing argument (clipboard allow|deny)");
	if (strcmp(l->tok[1], "clipboard") != 0)
		return lerr(ps->e, 0, l, l->off[1], "terminal: unknown setting '%.200s' (expected clipboard)",
			    l->tok[1]);
	if (want_tokens(ps, l, 3, "terminal clipboard") < 0)
		return -1;
	const char *t = l->tok[2];
	if (strcmp(t, "allow") == 0)
		ps->p->terminal_clipboard = true;
	else if (strcmp(t, "deny") == 0)
		ps->p->terminal_clipboard = false;
	else
		return lerr(ps->e, 0, l, l->off[2],
			    "terminal clipboard: '%.200s' (expected allow or deny)", t);
	return 0;
}

/* `workspace read-only|read-write`: the workspace mounted read-only inside
 * (the session's writable places: its scratch directory and the --output
 * paths, src/session/layout.h), or read-write as by default; the last line
 * counts. */
static int do_workspace(struct parser *ps, const struct line *l)
{
	if (want_tokens(ps, l, 2, "workspace") < 0)
		return -1;
	const char *t = l->tok[1];
	if (strcmp(t, "read-only") == 0)
		ps->p->workspace_ro = true;
	else if (strcmp(t, "read-write") == 0)
		ps->p->workspace_ro = false;
	else
		return lerr(ps->e, 0, l, l->off[1], "workspace: '%.200s' (expected read-only or "
			    "read-write)", t);
	return 0;
}

/* `canary on|off`: decoy credentials in the agent's home (on by default;
 * the last one given counts). */
static int do_canary(struct parser *ps, const struct line *l)
{
	if (want_tokens(ps, l, 2, "canary") < 0)
		return -1;
	const char *t = l->tok[1];
	if (strcmp(t, "on") == 0)
		ps->p->canary_off = false;
	else if (strcmp(t, "off") == 0)
		ps->p->canary_off = true;
	else
		return lerr(ps->e, 0, l, l->off[1], "canary: '%.200s' (expected on or off)", t);
	return 0;
}

/* `checkpoint on|off | max-size SIZE | exclude PATTERN | keep N |
 * keep-days N` (src/checkpoint/): the last line of a kind counts; exclude
 * patterns add up. A pattern is a name at any depth ("node_modules") or,
 * with a '/', a path from the workspace ("build/x.o"), never absolute and
 * without "." or ".." components. */
static int do_checkpoint(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2)
		return lerr(ps->e, 0, l, l->len,
			    "checkpoint: missing argument (on, off, max-size, exclude, keep or keep-days)");
	const char *k = l->tok[1];
	struct policy_checkpoint *c = &ps->p->checkpoint;
	if (strcmp(k, "on") == 0 || strcmp(k, "off") == 0) {
		if (want_tokens(ps, l, 2, "checkpoint") < 0)
			return -1;
		c->off = k[1] == 'f';
		return 0;
	}
	_cleanup_free_ char *what = xasprintf("checkpoint %s", k);
	if (strcmp(k, "max-size") == 0) {
		if (want_tokens(ps, l, 3, what) < 0)
			return -1;
		unsigned long long v;
		const char *why = policy_limit_parse(LIMIT_TMP, l->tok[2], &v);
		if (why)
			return lerr(ps->e, 0, l, l->off[2], "%s: '%.200s' is %s", what, l->tok[2], why);
		c->max_size = v;
		return 0;
	}
	if (strcmp(k, "exclude") == 0) {
		if (want_tokens(ps, l, 3, what) < 0)
			return -1;
		const char *p = l->tok[2];
		if (p[0] == '/' || path_has_dot_components(p) || p[strlen(p) - 1] == '/')
			return lerr(ps->e, 0, l, l->off[2], "%s: '%.200s' is not a pattern relative to "
				    "the workspace (no leading or trailing '/', no . or .. component)",
				    what, p);
		return push_unique(ps, l, &c->exclude, p);
	}
	if (strcmp(k, "keep") == 0 || strcmp(k, "keep-days") == 0) {
		if (want_tokens(ps, l, 3, what) < 0)
			return -1;
		const char *t = l->tok[2];
		char *end;
		errno = 0;
		unsigned long v = strtoul(t, &end, 10);
		if (!isdigit((unsigned char)t[0]) || *end || errno || v < 1 || v > 100000)
			return lerr(ps->e, 0, l, l->off[2], "%s: '%.200s' is not a number from 1 to "
				    "100000", what, t);
		if (k[4])
			c->keep_days = (unsigned)v;
		else
			c->keep = (unsigned)v;
		return 0;
	}
	return lerr(ps->e, 0, l, l->off[1], "checkpoint: unknown setting '%.200s' (expected on, "
		    "off, max-size, exclude, keep or keep-days)", k);
}

/* TARGET of `exec deny|allow TARGET` into hashes: a file (its SHA-256
 * now, when the profile is read; its real path into paths), `sha256:HEX`,
 * or `hashes:FILE` (a list as sha256sum writes it). With dirs (allow), a
 * directory is taken as a whole into dirs instead. */
static int exec_target(struct parser *ps, const struct line *l, const char *d,
		       struct strv *hashes, struct strv *paths, struct strv *dirs)
{
	const char *t = l->tok[2];
	size_t off = l->off[2];
	if (strncmp(t, "sha256:", 7) == 0) {
		if (!exec_hex_valid(t + 7))
			return lerr(ps->e, 0, l, off, "%s: '%.200s' is not a SHA-256 (64 hex digits)", d, t);
		char hex[SHA256_HEX_LEN];
		for (size_t i = 0; i < 64; i++)
			hex[i] = (char)tolower((unsigned char)t[7 + i]);
		hex[64] = '\0';
		return push_unique(ps, l, hashes, hex);
	}
	bool list = strncmp(t, "hashes:", 7) == 0;
	_cleanup_free_ char *full = NULL;
	if (expand_path(ps, l, off, d, list ? t + 7 : t, &full) < 0)
		return -1;
	if (list) {
		unsigned long bad = 0;
		if (exec_read_hashes(full, hashes, &bad) < 0)
			return bad ? lerr(ps->e, 0, l, off, "%s: %s:%lu: not a SHA-256 (64 hex digits)",
					  d, full, bad)
				   : lerr(ps->e, errno, l, off, "%s: cannot read %s", d, full);
		return 0;
	}
	struct stat st;
	if (dirs && stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (strcmp(full, "/") == 0)
			return lerr(ps->e, 0, l, off, "%s: '/' as a whole would allow everything; name "
				    "the directories (/usr, ...)", d);
		return push_unique(ps, l, dirs, full);
	}
	char hex[SHA256_HEX_LEN];
	unsigned long long max = ps->p->exec.hash_max_size ? ps->p->exec.hash_max_size
							    : POLICY_EXEC_HASH_MAX_SIZE;
	if (exec_hash_path(full, max, hex) < 0) {
		if (errno == EFBIG)
			return lerr(ps->e, 0, l, off, "%s: %s is larger than the hash limit (%llu MiB; "
				    "`exec hash-limit` before this line raises it)", d, full, max >> 20);
		return lerr(ps->e, errno, l, off, "%s: cannot hash %s%s", d, full,
			    errno == EINVAL ? " (not a regular file)" : "");
	}
	if (paths) {
		_cleanup_free_ char *real = realpath(full, NULL);
		if (real && push_unique(ps, l, paths, real) < 0)
			return -1;
	}
	return push_unique(ps, l, hashes, hex);
}

/* `exec allow-writable PATH`: absolute ("~/" expanded) or relative to the
 * workspace, normalised. */
static int exec_writable(struct parser *ps, const struct line *l)
{
	const char *d = "exec allow-writable", *t = l->tok[2];
	size_t off = l->off[2];
	_cleanup_free_ char *full = NULL;
	if (t[0] == '/' || t[0] == '~') {
		if (expand_path(ps, l, off, d, t, &full) < 0)
			return -1;
		if (strcmp(full, "/") == 0)
			return lerr(ps->e, 0, l, off, "%s: '/' is not a writable path", d);
	} else {
		full = xstrdup(t);
		strip_trailing_slashes(full, 0);
		if (!full[0] || path_has_dot_components(full))
			return lerr(ps->e, 0, l, off,
				    "%s: '.', '..' and empty components are not allowed: '%.200s'", d, t);
	}
	return push_unique(ps, l, &ps->p->exec.allow_writable, full);
}

/* The words of a line from token `from` on, joined by one space (into
 * out); false when there are none. */
static bool rest_of_line(const struct line *l, size_t from, char *out, size_t len)
{
	out[0] = '\0';
	size_t n = 0;
	for (size_t i = from; i < l->ntok; i++) {
		int k = snprintf(out + n, len - n, "%s%s", n ? " " : "", l->tok[i]);
		if (k < 0 || (size_t)k >= len - n)
			return false;
		n += (size_t)k;
	}
	return n > 0;
}

/* `exec ask argv WORD...` */
static int exec_ask_argv(struct parser *ps, const struct line *l)
{
	char pat[1024];
	if (l->ntok < 4)
		return lerr(ps->e, 0, l, l->len, "exec ask argv: missing the words (a program's name, "
			    "then its arguments: git push *)");
	if (!rest_of_line(l, 3, pat, sizeof pat))
		return lerr(ps->e, 0, l, l->off[3], "exec ask argv: the pattern is too long (max 1023)");
	return push_unique(ps, l, &ps->p->exec.ask_argv, pat);
}

/* `exec hash-limit SIZE SECONDS` */
static int exec_hash_limit(struct parser *ps, const struct line *l)
{
	if (want_tokens(ps, l, 4, "exec hash-limit") < 0)
		return -1;
	unsigned long long size;
	const char *why = policy_limit_parse(LIMIT_TMP, l->tok[2], &size);
	if (why)
		return lerr(ps->e, 0, l, l->off[2], "exec hash-limit: '%.200s' is %s", l->tok[2], why);
	if (size == 0)
		return lerr(ps->e, 0, l, l->off[2], "exec hash-limit: a size is needed, not unlimited "
			    "(a file read without end would hold its exec for the whole time limit)");
	char *end;
	errno = 0;
	double secs = strtod(l->tok[3], &end);
	if (errno || *end || !(secs >= 0.001 && secs <= 3600))
		return lerr(ps->e, 0, l, l->off[3],
			    "exec hash-limit: '%.200s' is not a number of seconds (0.001 to 3600)", l->tok[3]);
	ps->p->exec.hash_max_size = size;
	ps->p->exec.hash_timeout_ms = (unsigned)(secs * 1000 + 0.5);
	return 0;
}

/* `exec deny TARGET | allow TARGET | default allow|deny | strict |
 * allow-writable PATH | hash-limit SIZE SECONDS | kernel auto|on|off` */
static int do_exec(struct parser *ps, const struct line *l)
{
	static const char expected[] =
		"deny, allow, ask, default, strict, allow-writable, hash-limit or kernel";
	if (l->ntok < 2)
		return lerr(ps->e, 0, l, l->len, "exec: missing argument (%s)", expected);
	const char *w = l->tok[1];
	struct policy_exec *x = &ps->p->exec;
	if (strcmp(w, "deny") == 0) {
		if (want_tokens(ps, l, 3, "exec deny") < 0)
			return -1;
		return exec_target(ps, l, "exec deny", &x->deny, &x->deny_paths, NULL);
	}
	if (strcmp(w, "allow") == 0) {
		if (want_tokens(ps, l, 3, "exec allow") < 0)
			return -1;
		return exec_target(ps, l, "exec allow", &x->allow, NULL, &x->allow_dirs);
	}
	if (strcmp(w, "ask") == 0) {
		if (l->ntok >= 3 && strcmp(l->tok[2], "argv") == 0)
			return exec_ask_argv(ps, l);
		if (want_tokens(ps, l, 3, "exec ask") < 0)
			return -1;
		return exec_target(ps, l, "exec ask", &x->ask, NULL, NULL);
	}
	if (strcmp(w, "default") == 0) {
		if (want_tokens(ps, l, 3, "exec default") < 0)
			return -1;
		if (strcmp(l->tok[2], "deny") != 0 && strcmp(l->tok[2], "allow") != 0)
			return lerr(ps->e, 0, l, l->off[2],
				    "exec default: '%.200s' (expected allow or deny)", l->tok[2]);
		x->default_deny = l->tok[2][0] == 'd';
		return 0;
	}
	if (strcmp(w, "strict") == 0) {
		if (want_tokens(ps, l, 2, "exec strict") < 0)
			return -1;
		x->strict = true;
		return 0;
	}
	if (strcmp(w, "allow-writable") == 0) {
		if (want_tokens(ps, l, 3, "exec allow-writable") < 0)
			return -1;
		return exec_writable(ps, l);
	}
	if (strcmp(w, "hash-limit") == 0)
		return exec_hash_limit(ps, l);
	if (strcmp(w, "kernel") == 0) {
		static const char *const modes[] = { "auto", "on", "off" };
		if (want_tokens(ps, l, 3, "exec kernel") < 0)
			return -1;
		for (size_t i = 0; i < ARRAY_LEN(modes); i++)
			if (strcmp(l->tok[2], modes[i]) == 0) {
				x->kernel = (enum policy_exec_kernel)i;
				return 0;
			}
		return lerr(ps->e, 0, l, l->off[2], "exec kernel: '%.200s' (expected auto, on or off)",
			    l->tok[2]);
	}
	return lerr(ps->e, 0, l, l->off[1], "exec: unknown rule '%.200s' (expected %s)", w, expected);
}

/* Is this network rule (canonical pattern, action, `private`) already in
 * the policy? */
static bool net_has(const struct policy *p, const struct net_rule *r, enum rules_verdict action)
{
	for (size_t i = 0; i < p->nnet; i++) {
		const struct policy_net_rule *n = &p->net[i];
		if (n->action == action && n->rule.allow_private == r->allow_private &&
		    strcmp(n->rule.text, r->text) == 0)
			return true;
	}
	return false;
}

/* Append a compiled rule to the declared list and to the rule set; the
 * caller checked net_has and the limit. */
static int net_push(struct policy *p, const struct net_rule *r, enum rules_verdict action,
		    const char *origin, struct werr *e)
{
	if (rules_add_rule(&p->net_rules, action, r, e) < 0)
		return -1;
	if ((p->nnet & (p->nnet - 1)) == 0) /* 0, 1, 2, 4 ...: full, double it */
		p->net = xrealloc(p->net, (p->nnet ? 2 * p->nnet : 1) * sizeof *p->net);
	p->net[p->nnet++] = (struct policy_net_rule){
		.rule = *r,
		.action = action,
		.origin = xstrdup(origin),
	};
	return 0;
}

/* `net allow PATTERN [private]`, `net ask PATTERN [private]`, `net deny
 * PATTERN`, or `net default ask|deny` (what no rule names). The arguments
 * are checked first (count, option), then the pattern. */
static int do_net(struct parser *ps, const struct line *l)
{
	struct policy *p = ps->p;
	if (l->ntok < 2)
		return lerr(ps->e, 0, l, l->len, "net: missing argument (allow, ask, deny or default)");
	const char *act = l->tok[1];
	if (strcmp(act, "default") == 0) {
		if (want_tokens(ps, l, 3, "net default") < 0)
			return -1;
		if (strcmp(l->tok[2], "ask") != 0 && strcmp(l->tok[2], "deny") != 0)
			return lerr(ps->e, 0, l, l->off[2], "net default: '%.200s' (expected ask or deny)",
				    l->tok[2]);
		p->net_default_ask = l->tok[2][0] == 'a';
		return 0;
	}
	enum rules_verdict action;
	if (strcmp(act, "allow") == 0)
		action = RULES_ALLOW;
	else if (strcmp(act, "deny") == 0)
		action = RULES_DENY;
	else if (strcmp(act, "ask") == 0)
		action = RULES_ASK;
	else
		return lerr(ps->e, 0, l, l->off[1],
			    "net: unknown action '%.200s' (expected allow, ask, deny or default)", act);
	bool deny = action == RULES_DENY;
	const char *what = action == RULES_DENY ? "net deny" : action == RULES_ASK ? "net ask" : "net allow";
	if (l->ntok < 3)
		return lerr(ps->e, 0, l, l->len, "%s: missing argument", what);

	bool private_ok = false;
	if (l->ntok >= 4) {
		const char *opt = l->tok[3];
		if (deny && strcmp(opt, "private") == 0)
			return lerr(ps->e, 0, l, l->off[3], "net deny: 'private' is only for allow and ask rules");
		if (deny)
			return want_tokens(ps, l, 3, what);
		if (strcmp(opt, "private") != 0)
			return lerr(ps->e, 0, l, l->off[3], "%s: unknown option '%.200s' (expected private)",
				    what, opt);
		if (want_tokens(ps, l, 4, what) < 0)
			return -1;
		private_ok = true;
	}

	struct net_rule r;
	struct werr pe = { 0 };
	if (rules_parse_pattern(&r, l->tok[2], &pe) < 0)
		return lerr(ps->e, 0, l, l->off[2], "%s: %s", what, pe.msg);
	r.allow_private = private_ok;
	if (net_has(p, &r, action))
		return 0;
	if (room(ps, l, p->nnet) < 0)
		return -1;
	_cleanup_free_ char *origin = xasprintf("%s:%lu", l->name, l->lineno);
	return net_push(p, &r, action, origin, ps->e);
}

/* Errors: "ORIGIN "P": WHY" (P made printable by rules_parse_pattern, ORIGIN
 * "--allow-net" when origin is NULL), "ORIGIN "P": 'private' is only for
 * allow rules", "ORIGIN: too many network rules (max 4096)". */
int policy_add_net(struct policy *p, const char *pattern, bool deny, bool private_ok,
		   const char *origin, struct werr *e)
{
	const char *who = origin && origin[0] ? origin : "--allow-net";
	struct net_rule r;
	struct werr pe = { 0 };
	if (rules_parse_pattern(&r, pattern, &pe) < 0) {
		/* pe.msg is "bad network pattern \"P\": WHY" and P holds no '"'. */
		static const char pre[] = "bad network pattern \"";
		const char *shown = pe.msg + sizeof pre - 1;
		const char *end = strncmp(pe.msg, pre, sizeof pre - 1) == 0 ? strstr(shown, "\": ") : NULL;
		if (!end)
			return werr_set(e, 0, "%s: %s", who, pe.msg);
		return werr_set(e, 0, "%s \"%.*s\": %s", who, (int)(end - shown), shown, end + 3);
	}
	if (deny && private_ok)
		return werr_set(e, 0, "%s \"%s\": 'private' is only for allow rules", who, r.text);
	r.allow_private = private_ok;
	enum rules_verdict action = deny ? RULES_DENY : RULES_ALLOW;
	if (net_has(p, &r, action))
		return 0;
	if (p->nnet >= MAX_ENTRIES)
		return werr_set(e, 0, "%s: too many network rules (max %d)", who, MAX_ENTRIES);
	return net_push(p, &r, action, who, e);
}

bool policy_asks(const struct policy *p)
{
	bool tool_ask = p->tool_default == RULES_ASK;
	for (size_t i = 0; i < p->ntools && !tool_ask; i++)
		tool_ask = p->tools[i].action == RULES_ASK;
	return p->net_rules.nask || p->net_default_ask || p->exec.ask.n || p->exec.ask_argv.n ||
	       p->write_ask.n || tool_ask;
}

bool policy_net_allows_any(const struct policy *p)
{
	return p->net_rules.nallow > 0 || p->net_rules.nask > 0 || p->net_default_ask;
}

/* `env pass NAME` and `env set NAME=...` of a secret's NAME: refused, the
 * value never passes as a variable. */
static int env_not_secret(struct parser *ps, const struct line *l, size_t off, const char *what,
			  const char *name, size_t n)
{
	for (size_t i = 0; i < ps->p->nsecrets; i++) {
		const struct policy_secret *s = &ps->p->secrets[i];
		if (strlen(s->name) == n && memcmp(s->name, name, n) == 0)
			return lerr(ps->e, 0, l, off,
				    "%s: %s is a secret (bound at %.200s): its value never passes into the sandbox",
				    what, s->name, s->origin);
	}
	return 0;
}

/* Index of the env_set entry "NAME=..." or -1. */
static long env_set_find(const struct policy *p, const char *name, size_t n)
{
	for (size_t i = 0; i < p->env_set.n; i++)
		if (strncmp(p->env_set.v[i], name, n) == 0 && p->env_set.v[i][n] == '=')
			return (long)i;
	return -1;
}

static int do_env(struct parser *ps, const struct line *l)
{
	struct policy *p = ps->p;
	if (l->ntok < 2)
		return lerr(ps->e, 0, l, l->len, "env: missing argument (pass, set or unset)");
	const char *sub = l->tok[1], *name = l->tok[2];
	size_t off = l->off[2];

	if (strcmp(sub, "pass") == 0) {
		if (want_tokens(ps, l, 3, "env pass") < 0)
			return -1;
		if (!valid_env_name(name, strlen(name), true))
			return lerr(ps->e, 0, l, off, "env pass: invalid variable name '%.200s'", name);
		if (env_not_secret(ps, l, off, "env pass", name, strlen(name)) < 0)
			return -1;
		return push_unique(ps, l, &p->env_pass, name);
	}
	if (strcmp(sub, "unset") == 0) {
		if (want_tokens(ps, l, 3, "env unset") < 0)
			return -1;
		size_t n = strlen(name);
		if (!valid_env_name(name, n, true))
			return lerr(ps->e, 0, l, off, "env unset: invalid variable name '%.200s'", name);
		strv_remove(&p->env_pass, name);
		long i = env_set_find(p, name, n);
		if (i >= 0) {
			struct strv *set = &p->env_set;
			free(set->v[i]);
			memmove(&set->v[i], &set->v[i + 1], (set->n - (size_t)i) * sizeof *set->v);
			set->n--;
		}
		return 0;
	}
	if (strcmp(sub, "set") == 0) {
		if (l->ntok < 3)
			return lerr(ps->e, 0, l, l->len, "env set: missing argument");
		/* NAME=VALUE: VALUE is the rest of the line after the first '='. */
		const char *start = l->text + off;
		const char *eq = memchr(start, '=', l->len - off);
		if (!eq)
			return lerr(ps->e, 0, l, off, "env set: expected NAME=VALUE");
		size_t n = (size_t)(eq - start);
		if (!valid_env_name(start, n, false))
			return lerr(ps->e, 0, l, off, "env set: invalid variable name '%.*s'",
				    (int)(n > 200 ? 200 : n), start);
		if (env_not_secret(ps, l, off, "env set", start, n) < 0)
			return -1;
		char *entry = xasprintf("%.*s", (int)(l->len - off), start);
		long i = env_set_find(p, start, n);
		if (i >= 0) {
			free(p->env_set.v[i]);
			p->env_set.v[i] = entry;
			return 0;
		}
		if (room(ps, l, p->env_set.n) < 0) {
			free(entry);
			return -1;
		}
		strv_push_owned(&p->env_set, entry);
		return 0;
	}
	return lerr(ps->e, 0, l, l->off[1], "env: unknown subcommand '%.200s' (expected pass, set or unset)",
		    sub);
}

/* `secret NAME host HOST [HOST...] [file PATH | command CMD [ARG...]]`. */
static int do_secret(struct parser *ps, const struct line *l)
{
	struct policy *p = ps->p;
	if (l->ntok < 2)
		return lerr(ps->e, 0, l, l->len, "secret: missing argument (NAME host HOST...)");
	if (l->ntok > MAX_TOKENS)
		return lerr(ps->e, 0, l, l->off_over, "secret: too many arguments (max %d)",
			    MAX_TOKENS - 1);
	const char *name = l->tok[1];
	if (!valid_env_name(name, strlen(name), false))
		return lerr(ps->e, 0, l, l->off[1], "secret: invalid variable name '%.200s'", name);
	if (l->ntok < 3)
		return lerr(ps->e, 0, l, l->len, "secret %s: missing 'host HOST...'", name);
	if (strcmp(l->tok[2], "host") != 0)
		return lerr(ps->e, 0, l, l->off[2], "secret %s: expected 'host', found '%.200s'", name,
			    l->tok[2]);

	struct policy_secret s = { .source = SECRET_FROM_ENV };
	size_t i = 3;
	for (; i < l->ntok; i++) {
		const char *t = l->tok[i];
		if (strcmp(t, "file") == 0 || strcmp(t, "command") == 0)
			break;
		struct net_rule r;
		struct werr pe = { 0 };
		const char *why;
		if (rules_parse_pattern(&r, t, &pe) < 0) {
			policy_secret_clear(&s);
			return lerr(ps->e, 0, l, l->off[i], "secret %s: %s", name, pe.msg);
		}
		if ((why = policy_secret_host_refused(&r))) {
			policy_secret_clear(&s);
			return lerr(ps->e, 0, l, l->off[i],
				    "secret %s: \"%s\" is wider than one registrable domain (%s)", name, r.text,
				    why);
		}
		policy_secret_add_host(&s, &r); /* at most 60 tokens: never full */
	}
	if (s.nhosts == 0)
		return lerr(ps->e, 0, l, l->off[i], "secret %s: 'host' needs at least one host", name);

	int rc = 0;
	if (i < l->ntok && strcmp(l->tok[i], "file") == 0) {
		if (i + 1 == l->ntok)
			rc = lerr(ps->e, 0, l, l->len, "secret %s: file: missing argument", name);
		else if (i + 2 < l->ntok)
			rc = lerr(ps->e, 0, l, l->off[i + 2], "secret %s: file: unexpected argument '%.200s'",
				  name, l->tok[i + 2]);
		else
			rc = expand_path(ps, l, l->off[i + 1], "secret file", l->tok[i + 1], &s.file);
		s.source = SECRET_FROM_FILE;
	} else if (i < l->ntok) {
		if (i + 1 == l->ntok)
			rc = lerr(ps->e, 0, l, l->len, "secret %s: command: missing argument", name);
		for (size_t k = i + 1; k < l->ntok; k++)
			strv_push(&s.argv, l->tok[k]);
		s.source = SECRET_FROM_COMMAND;
	}
	if (rc == 0 && !policy_secret_find(p, name))
		rc = room(ps, l, p->nsecrets);
	if (rc < 0) {
		policy_secret_clear(&s);
		return -1;
	}
	s.name = xstrdup(name);
	s.origin = xasprintf("%s:%lu", l->name, l->lineno);
	policy_secret_bind(p, &s);
	return 0;
}

/* `limit KIND VALUE`: the last line naming a kind sets it. */
static int do_limit(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2)
		return lerr(ps->e, 0, l, l->len, "limit: missing argument (pids, memory, cpu, tmp or home)");
	enum policy_limit_kind k = 0;
	while (k < LIMIT_KINDS && strcmp(l->tok[1], policy_limit_name(k)) != 0)
		k++;
	if (k == LIMIT_KINDS)
		return lerr(ps->e, 0, l, l->off[1],
			    "limit: unknown kind '%.200s' (expected pids, memory, cpu, tmp or home)", l->tok[1]);
	_cleanup_free_ char *what = xasprintf("limit %s", l->tok[1]);
	if (want_tokens(ps, l, 3, what) < 0)
		return -1;
	unsigned long long v;
	const char *why = policy_limit_parse(k, l->tok[2], &v);
	if (why)
		return lerr(ps->e, 0, l, l->off[2], "%s: '%.200s' is %s", what, l->tok[2], why);
	struct policy_limit *lim = &ps->p->limits[k];
	free(lim->origin);
	lim->value = v;
	lim->origin = xasprintf("%s:%lu", l->name, l->lineno);
	return 0;
}

/* Read a whole profile file. On failure returns -1 with errno set (0 when the
 * failure has no errno) and what (the caller's) saying what failed. */
static int read_profile(const char *path, char **real, char **text, size_t *len,
			char what[READ_WHY_MAX])
{
	*real = NULL;
	*text = NULL;
	snprintf(what, READ_WHY_MAX, "cannot open");
	_cleanup_free_ char *r = realpath(path, NULL);
	if (!r || read_regular_file(r, MAX_FILE, text, len, what) < 0)
		return -1;
	*real = steal_ptr(&r);
	return 0;
}

/* Parse a profile file. `inc` is the include line (NULL for the top file),
 * `name` the name used in messages about its own lines. */
static int parse_file(struct parser *ps, const char *path, const char *name,
		      const struct line *inc, size_t off, int depth)
{
	_cleanup_free_ char *real = NULL, *text = NULL;
	size_t len = 0;
	char what[READ_WHY_MAX];
	if (read_profile(path, &real, &text, &len, what) < 0) {
		if (inc)
			return lerr(ps->e, errno, inc, off, "include '%.200s': %s", path, what);
		return werr_set(ps->e, errno, "%s: %s", path, what);
	}
	strv_push(&ps->p->sources, real);
	_cleanup_free_ char *dircopy = xstrdup(real);
	return parse_text(ps, name ? name : real, dirname(dircopy), text, len, depth);
}

static int do_include(struct parser *ps, const struct line *l, int depth)
{
	if (want_tokens(ps, l, 2, "include") < 0)
		return -1;
	const char *f = l->tok[1];
	size_t off = l->off[1];
	bool builtin = strcmp(f, "default") == 0;
	if (builtin && strv_contains(&ps->p->sources, BUILTIN_NAME))
		return 0;
	if (!builtin && !l->dir)
		return lerr(ps->e, 0, l, off, "include: including files is not allowed here");
	if (depth >= MAX_DEPTH)
		return lerr(ps->e, 0, l, off, "include nesting too deep (loop?)");
	if (builtin) {
		strv_push(&ps->p->sources, BUILTIN_NAME);
		return parse_text(ps, BUILTIN_NAME, NULL, policy_builtin_default,
				  strlen(policy_builtin_default), depth + 1);
	}
	_cleanup_free_ char *path = f[0] == '/' ? xstrdup(f)
				  : strcmp(l->dir, "/") == 0 ? xasprintf("/%s", f)
							       : xasprintf("%s/%s", l->dir, f);
	return parse_file(ps, path, NULL, l, off, depth + 1);
}

/* Check a line's bytes, cut the comment, split tokens. 1: a directive to
 * run, 0: nothing on the line, -1: error. */
static int split_line(struct parser *ps, struct line *l, const char *s, size_t n)
{
	l->text = s;
	l->len = 0;
	l->ntok = 0;
	if (n > MAX_LINE)
		return lerr(ps->e, 0, l, MAX_LINE, "line longer than %d bytes", MAX_LINE);
	const char *nul = memchr(s, '\0', n);
	if (nul)
		return lerr(ps->e, 0, l, (size_t)(nul - s), "NUL byte in profile");

	size_t cut = 0;
	while (cut < n && !(s[cut] == '#' && (cut == 0 || is_blank(s[cut - 1]))))
		cut++;
	while (cut > 0 && is_blank(s[cut - 1]))
		cut--;
	size_t ctl = 0;
	while (ctl < cut && !(((unsigned char)s[ctl] < 0x20 && s[ctl] != '\t') || s[ctl] == 0x7f))
		ctl++;
	size_t bad = utf8_invalid_at((const unsigned char *)s, ctl);
	if (bad < ctl)
		return lerr(ps->e, 0, l, bad, "invalid UTF-8 in profile");
	if (ctl < cut && s[ctl] == '\r')
		return lerr(ps->e, 0, l, ctl, "carriage return in profile (CRLF line endings?)");
	if (ctl < cut)
		return lerr(ps->e, 0, l, ctl, "control character 0x%02x in profile", (unsigned char)s[ctl]);
	l->len = cut;

	memcpy(l->buf, s, cut);
	l->buf[cut] = '\0';
	for (size_t i = 0; i < cut;) {
		while (i < cut && is_blank(l->buf[i]))
			i++;
		if (i == cut)
			break;
		if (l->ntok < MAX_TOKENS) {
			l->off[l->ntok] = i;
			l->tok[l->ntok] = l->buf + i;
		} else if (l->ntok == MAX_TOKENS) {
			l->off_over = i;
		}
		l->ntok++;
		while (i < cut && !is_blank(l->buf[i]))
			i++;
		l->buf[i++] = '\0';
	}
	for (size_t i = l->ntok; i < MAX_TOKENS; i++) {
		l->off[i] = cut;
		l->tok[i] = "";
	}
	return l->ntok > 0;
}

/* `write ask GLOB`: relative to the workspace, as `mask` takes it. */
static int do_write(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2 || strcmp(l->tok[1], "ask") != 0)
		return lerr(ps->e, 0, l, l->ntok < 2 ? l->len : l->off[1],
			    "write: expected `write ask GLOB`");
	if (want_tokens(ps, l, 3, "write ask") < 0)
		return -1;
	const char *t = l->tok[2];
	if (t[0] == '/')
		return lerr(ps->e, 0, l, l->off[2], "write ask: pattern must be relative to the workspace: "
			    "'%.200s'", t);
	if (has_dotdot_component(t))
		return lerr(ps->e, 0, l, l->off[2], "write ask: '..' components are not allowed: '%.200s'", t);
	return push_unique(ps, l, &ps->p->write_ask, t);
}

static bool verdict_word(const char *w, enum rules_verdict *v)
{
	*v = strcmp(w, "allow") == 0 ? RULES_ALLOW : strcmp(w, "deny") == 0 ? RULES_DENY
	   : strcmp(w, "ask") == 0 ? RULES_ASK : RULES_UNKNOWN;
	return *v != RULES_UNKNOWN;
}

/* `tool allow|deny|ask NAME [PATTERN...]` or `tool default allow|deny|ask` */
static int do_tool(struct parser *ps, const struct line *l)
{
	struct policy *p = ps->p;
	if (l->ntok < 2)
		return lerr(ps->e, 0, l, l->len, "tool: missing argument (allow, deny, ask or default)");
	enum rules_verdict v;
	if (strcmp(l->tok[1], "default") == 0) {
		if (want_tokens(ps, l, 3, "tool default") < 0)
			return -1;
		if (!verdict_word(l->tok[2], &v))
			return lerr(ps->e, 0, l, l->off[2], "tool default: '%.200s' (expected allow, deny or ask)",
				    l->tok[2]);
		p->tool_default = v;
		return 0;
	}
	if (!verdict_word(l->tok[1], &v))
		return lerr(ps->e, 0, l, l->off[1], "tool: unknown action '%.200s' (expected allow, deny, "
			    "ask or default)", l->tok[1]);
	if (l->ntok < 3)
		return lerr(ps->e, 0, l, l->len, "tool %s: missing the tool's name (Bash, Write, mcp__*, *)",
			    l->tok[1]);
	char pat[1024];
	bool has_pat = l->ntok > 3;
	if (has_pat && !rest_of_line(l, 3, pat, sizeof pat))
		return lerr(ps->e, 0, l, l->off[3], "tool %s: the pattern is too long (max 1023)", l->tok[1]);
	if (room(ps, l, p->ntools) < 0)
		return -1;
	p->tools = xrealloc(p->tools, (p->ntools + 1) * sizeof *p->tools);
	p->tools[p->ntools++] = (struct policy_tool_rule){
		.action = v, .name = xstrdup(l->tok[2]), .pattern = has_pat ? xstrdup(pat) : NULL,
		.origin = xasprintf("%s:%lu", l->name, l->lineno) };
	return 0;
}

/* `approve timeout SECONDS | command CMD [ARG...] | webhook URL` */
static int do_approve(struct parser *ps, const struct line *l)
{
	struct policy_approve *a = &ps->p->approve;
	if (l->ntok < 2)
		return lerr(ps->e, 0, l, l->len, "approve: missing argument (timeout, command or webhook)");
	const char *w = l->tok[1];
	if (strcmp(w, "timeout") == 0) {
		if (want_tokens(ps, l, 3, "approve timeout") < 0)
			return -1;
		char *end;
		errno = 0;
		unsigned long v = strtoul(l->tok[2], &end, 10);
		if (errno || *end || l->tok[2][0] < '0' || l->tok[2][0] > '9' || v < 1 || v > 86400)
			return lerr(ps->e, 0, l, l->off[2], "approve timeout: '%.200s' is not a number of "
				    "seconds (1 to 86400)", l->tok[2]);
		a->timeout_s = (unsigned)v;
		return 0;
	}
	if (strcmp(w, "command") == 0) {
		if (l->ntok < 3)
			return lerr(ps->e, 0, l, l->len, "approve command: missing the command");
		if (l->tok[2][0] != '/' && l->tok[2][0] != '~')
			return lerr(ps->e, 0, l, l->off[2], "approve command: the program must be an absolute "
				    "path or start with ~/: '%.200s'", l->tok[2]);
		_cleanup_free_ char *prog = NULL;
		if (expand_path(ps, l, l->off[2], "approve command", l->tok[2], &prog) < 0)
			return -1;
		strv_free(&a->command);
		strv_push(&a->command, prog);
		for (size_t i = 3; i < l->ntok; i++)
			strv_push(&a->command, l->tok[i]);
		return 0;
	}
	if (strcmp(w, "webhook") == 0) {
		if (want_tokens(ps, l, 3, "approve webhook") < 0)
			return -1;
		const char *u = l->tok[2];
		if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0)
			return lerr(ps->e, 0, l, l->off[2], "approve webhook: '%.200s' is not an http:// or "
				    "https:// URL", u);
		if (strlen(u) > 2048 || strpbrk(u, " \t\r\n\"<>\\^`{|}"))
			return lerr(ps->e, 0, l, l->off[2], "approve webhook: not a valid URL: '%.200s'", u);
		free(a->webhook);
		a->webhook = xstrdup(u);
		return 0;
	}
	return lerr(ps->e, 0, l, l->off[1], "approve: unknown setting '%.200s' (expected timeout, "
		    "command or webhook)", w);
}

/* `rules FILE`: read when the session starts (and by `warden rules show`) */
static int do_rules(struct parser *ps, const struct line *l)
{
	if (want_tokens(ps, l, 2, "rules") < 0)
		return -1;
	const char *f = l->tok[1];
	_cleanup_free_ char *path = NULL;
	if (f[0] == '/' || f[0] == '~') {
		if (expand_path(ps, l, l->off[1], "rules", f, &path) < 0)
			return -1;
	} else {
		if (!l->dir)
			return lerr(ps->e, 0, l, l->off[1], "rules: a relative path needs a profile file "
				    "(absolute or ~/ here): '%.200s'", f);
		if (has_dotdot_component(f))
			return lerr(ps->e, 0, l, l->off[1], "rules: '..' components are not allowed: '%.200s'", f);
		path = strcmp(l->dir, "/") == 0 ? xasprintf("/%s", f) : xasprintf("%s/%s", l->dir, f);
	}
	return push_unique(ps, l, &ps->p->rules_files, path);
}

/* `risk warn|ask|freeze|kill N|off` or `risk half-life DURATION` */
static int do_risk(struct parser *ps, const struct line *l)
{
	struct policy_risk *r = &ps->p->risk;
	if (l->ntok < 2)
		return lerr(ps->e, 0, l, l->len, "risk: missing argument (warn, ask, freeze, kill or half-life)");
	if (want_tokens(ps, l, 3, "risk") < 0)
		return -1;
	const char *w = l->tok[1], *v = l->tok[2];
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	bool num = !errno && end != v && v[0] >= '0' && v[0] <= '9';
	if (strcmp(w, "half-life") == 0) {
		if (num && (*end == 'm' || *end == 'h' || *end == 's'))
			x *= *end == 'm' ? 60 : *end == 'h' ? 3600 : 1, end++;
		if (!num || *end || !(x >= 1) || x > 7 * 86400)
			return lerr(ps->e, 0, l, l->off[2], "risk half-life: not a duration from 1s to 7 days: "
				    "'%.200s' (30s, 10m, 1h)", v);
		r->half_life_s = x;
		return 0;
	}
	double *t = strcmp(w, "warn") == 0 ? &r->warn : strcmp(w, "ask") == 0 ? &r->ask
		  : strcmp(w, "freeze") == 0 ? &r->freeze : strcmp(w, "kill") == 0 ? &r->kill : NULL;
	if (!t)
		return lerr(ps->e, 0, l, l->off[1], "risk: unknown setting '%.200s' (warn, ask, freeze, kill, "
			    "half-life)", w);
	if (strcmp(v, "off") == 0) {
		*t = 0;
		return 0;
	}
	if (!num || *end || !(x >= 1) || x > 1e6)
		return lerr(ps->e, 0, l, l->off[2], "risk %s: not a score from 1 to 1000000, or off: '%.200s'",
			    w, v);
	*t = x;
	return 0;
}

static int run_line(struct parser *ps, const struct line *l, int depth)
{
	const char *d = l->tok[0];
	if (strcmp(d, "include") == 0)
		return do_include(ps, l, depth);
	if (strcmp(d, "read-only") == 0)
		return do_path(ps, l, POLICY_RO);
	if (strcmp(d, "read-write") == 0)
		return do_path(ps, l, POLICY_RW);
	if (strcmp(d, "protect") == 0 || strcmp(d, "unprotect") == 0)
		return do_protect(ps, l, d[0] == 'p');
	if (strcmp(d, "mask") == 0 || strcmp(d, "unmask") == 0)
		return do_mask(ps, l, d[0] == 'm');
	if (strcmp(d, "env") == 0)
		return do_env(ps, l);
	if (strcmp(d, "audit") == 0)
		return do_audit(ps, l);
	if (strcmp(d, "net") == 0)
		return do_net(ps, l);
	if (strcmp(d, "secret") == 0)
		return do_secret(ps, l);
	if (strcmp(d, "signal") == 0)
		return do_signal(ps, l);
	if (strcmp(d, "terminal") == 0)
		return do_terminal(ps, l);
	if (strcmp(d, "canary") == 0)
		return do_canary(ps, l);
	if (strcmp(d, "workspace") == 0)
		return do_workspace(ps, l);
	if (strcmp(d, "limit") == 0)
		return do_limit(ps, l);
	if (strcmp(d, "exec") == 0)
		return do_exec(ps, l);
	if (strcmp(d, "write") == 0)
		return do_write(ps, l);
	if (strcmp(d, "tool") == 0)
		return do_tool(ps, l);
	if (strcmp(d, "approve") == 0)
		return do_approve(ps, l);
	if (strcmp(d, "rules") == 0)
		return do_rules(ps, l);
	if (strcmp(d, "risk") == 0)
		return do_risk(ps, l);
	if (strcmp(d, "checkpoint") == 0)
		return do_checkpoint(ps, l);
	return lerr(ps->e, 0, l, l->off[0], "unknown directive '%.200s'", d);
}

static int parse_text(struct parser *ps, const char *name, const char *dir,
		      const char *text, size_t len, int depth)
{
	_cleanup_free_ struct line *l = xcalloc(1, sizeof *l);
	l->name = name ? name : "<profile>";
	l->dir = dir;
	if (len > MAX_TOTAL - ps->total)
		return werr_set(ps->e, 0, "%s: profiles too large in total (max 8 MiB)", l->name);
	ps->total += len;
	for (size_t pos = 0; pos < len;) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		pos += n + (nl ? 1 : 0);
		l->lineno++;
		int r = split_line(ps, l, s, n);
		if (r < 0)
			return -1;
		if (r > 0 && run_line(ps, l, depth) < 0)
			return -1;
	}
	return 0;
}

int policy_parse_text(struct policy *p, const char *name, const char *dir, const char *home,
		      const char *text, size_t len, struct werr *e)
{
	struct parser ps = { .p = p, .home = home, .e = e };
	if (!text)
		len = 0;
	return parse_text(&ps, name, dir, text, len, 0);
}

int policy_load_layered(struct policy *p, const char *layer_name, const char *layer_text,
			const char *file, const char *home, struct werr *e)
{
	struct parser ps = { .p = p, .home = home, .e = e };
	memset(p, 0, sizeof *p);
	strv_push(&p->sources, BUILTIN_NAME);
	if (parse_text(&ps, BUILTIN_NAME, NULL, policy_builtin_default,
		       strlen(policy_builtin_default), 0) < 0)
		goto fail;
	if (layer_text) {
		strv_push(&p->sources, layer_name);
		if (parse_text(&ps, layer_name, NULL, layer_text, strlen(layer_text), 0) < 0)
			goto fail;
	}
	if (file && parse_file(&ps, file, file, NULL, 0, 0) < 0)
		goto fail;
	return 0;
fail:
	policy_free(p);
	return -1;
}

int policy_load(struct policy *p, const char *file, const char *home, struct werr *e)
{
	return policy_load_layered(p, NULL, NULL, file, home, e);
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->npaths; i++) {
		free(p->paths[i].path);
		free(p->paths[i].origin);
		free(p->paths[i].source);
	}
	free(p->paths);
	for (size_t i = 0; i < p->nnet; i++)
		free(p->net[i].origin);
	free(p->net);
	rules_free(&p->net_rules);
	for (size_t i = 0; i < p->nsecrets; i++)
		policy_secret_clear(&p->secrets[i]);
	free(p->secrets);
	for (size_t i = 0; i < LIMIT_KINDS; i++)
		free(p->limits[i].origin);
	strv_free(&p->protect);
	strv_free(&p->exec.deny);
	strv_free(&p->exec.deny_paths);
	strv_free(&p->exec.allow);
	strv_free(&p->exec.allow_dirs);
	strv_free(&p->exec.allow_writable);
	strv_free(&p->exec.ask);
	strv_free(&p->exec.ask_argv);
	strv_free(&p->write_ask);
	for (size_t i = 0; i < p->ntools; i++) {
		free(p->tools[i].name);
		free(p->tools[i].pattern);
		free(p->tools[i].origin);
	}
	free(p->tools);
	strv_free(&p->approve.command);
	strv_free(&p->rules_files);
	strv_free(&p->checkpoint.exclude);
	free(p->approve.webhook);
	strv_free(&p->mask);
	strv_free(&p->env_pass);
	strv_free(&p->env_set);
	strv_free(&p->sources);
	memset(p, 0, sizeof *p);
}
