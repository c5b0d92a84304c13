/* gitconfig.c - git's configuration syntax, read as git's parser reads it
 * (config.c in git: sections "[name]", "[name "subsection"]" and the old
 * "[name.subsection]", keys on the header's line too, values with quotes,
 * escapes, continued lines and comments), for core.hooksPath, the include
 * directives, the user's identity, init.defaultBranch, remote URLs and the
 * signing settings; and
 * where the host's own files are. A line git refuses ends the scan: git
 * then refuses the whole configuration and runs nothing from it. */
#include "gitconfig.h"

#include "../common/util.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct src {
	const unsigned char *p, *end;
	bool eof;
};

/* git's isspace and friends: ASCII only, whatever the locale */
static bool g_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool g_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool g_key(int c) { return g_alpha(c) || (c >= '0' && c <= '9') || c == '-'; }
static int g_lower(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

/* The next character, "\r\n" read as "\n"; at the end a "\n" with eof
 * set, as in git. */
static int next_char(struct src *s)
{
	if (s->p >= s->end) {
		s->eof = true;
		return '\n';
	}
	int c = *s->p++;
	if (c == '\r' && s->p < s->end && *s->p == '\n')
		c = *s->p++;
	return c;
}

/* A growing string, never longer than the input. */
struct str {
	char *v;
	size_t n;
};

static void add(struct str *b, int c) { b->v[b->n++] = (char)c; b->v[b->n] = '\0'; }

/* After "[name" and a space: ' "subsection"]'. */
static int extended_section(struct src *s, struct str *name, int c)
{
	do {
		if (c == '\n')
			return -1;
		c = next_char(s);
	} while (g_space(c));
	if (c != '"')
		return -1;
	add(name, '.');
	for (;;) {
		c = next_char(s);
		if (c == '\n')
			return -1;
		if (c == '"')
			break;
		if (c == '\\') {
			c = next_char(s);
			if (c == '\n')
				return -1;
		}
		add(name, c);
	}
	return next_char(s) == ']' ? 0 : -1;
}

/* After "[": the section's name, lower case, ".subsection" as written. */
static int section(struct src *s, struct str *name)
{
	for (;;) {
		int c = next_char(s);
		if (s->eof)
			return -1;
		if (c == ']')
			return 0;
		if (g_space(c))
			return extended_section(s, name, c);
		if (!g_key(c) && c != '.')
			return -1;
		add(name, g_lower(c));
	}
}

/* After "=": the value up to the end of its line (or of the lines it
 * continues on). */
static int value(struct src *s, struct str *v)
{
	bool quote = false, comment = false;
	size_t space = 0;
	for (;;) {
		int c = next_char(s);
		if (c == '\n')
			return quote ? -1 : 0;
		if (comment)
			continue;
		if (g_space(c) && !quote) {
			if (v->n)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		for (; space; space--)
			add(v, ' ');
		if (c == '\\') {
			c = next_char(s);
			switch (c) {
			case '\n':
				continue;
			case 't': c = '\t'; break;
			case 'b': c = '\b'; break;
			case 'n': c = '\n'; break;
			case '\\':
			case '"':
				break;
			default:
				return -1; /* git refuses an unknown escape */
			}
			add(v, c);
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		add(v, c);
	}
}

/* The setting var names ("section[.subsection].key", its section and key
 * in lower case), if it is one of those reported. */
static bool which(const char *var, enum gitcfg_kind *kind)
{
	if (strcmp(var, "core.hookspath") == 0)
		*kind = GITCFG_HOOKS_PATH;
	else if (strcmp(var, "include.path") == 0)
		*kind = GITCFG_INCLUDE;
	else if (strncmp(var, "includeif.", 10) == 0 && strlen(var) > 15 &&
		 strcmp(var + strlen(var) - 5, ".path") == 0)
		*kind = GITCFG_INCLUDE_IF; /* includeif.<condition>.path */
	else if (strcmp(var, "user.name") == 0)
		*kind = GITCFG_USER_NAME;
	else if (strcmp(var, "user.email") == 0)
		*kind = GITCFG_USER_EMAIL;
	else if (strcmp(var, "init.defaultbranch") == 0)
		*kind = GITCFG_INIT_BRANCH;
	else if (strcmp(var, "gpg.format") == 0)
		*kind = GITCFG_GPG_FORMAT;
	else if (strcmp(var, "user.signingkey") == 0)
		*kind = GITCFG_SIGNING_KEY;
	else if (strcmp(var, "commit.gpgsign") == 0)
		*kind = GITCFG_COMMIT_SIGN;
	else if (strcmp(var, "tag.gpgsign") == 0)
		*kind = GITCFG_TAG_SIGN;
	else if (strncmp(var, "remote.", 7) == 0 && strlen(var) >= 11 &&
		 strcmp(var + strlen(var) - 4, ".url") == 0)
		*kind = GITCFG_REMOTE_URL; /* remote.<name>.url: a subsection, maybe empty */
	else
		return false;
	return true;
}

/* Each setting of text, in order, to each (gitcfg_each's). 0 when git
 * would read all of it, -1 at the first line git refuses or where each
 * said -1. */
static int scan(const char *text, size_t len, gitcfg_each_fn each, void *ctx)
{
	struct src s = { .p = (const unsigned char *)text, .end = (const unsigned char *)text + len };
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		s.p += 3; /* a UTF-8 byte order mark */
	_cleanup_free_ char *vbuf = xmalloc(len + 2), *nbuf = xmalloc(len + 8);
	struct str var = { nbuf, 0 }, val = { vbuf, 0 };
	var.v[0] = '\0';
	size_t base = 0;
	bool comment = false;
	for (;;) {
		int c = next_char(&s);
		if (c == '\n') {
			if (s.eof)
				return 0;
			comment = false;
			continue;
		}
		if (comment || g_space(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[') {
			var.n = 0;
			var.v[0] = '\0';
			if (section(&s, &var) < 0 || var.n < 1)
				return -1;
			add(&var, '.');
			base = var.n;
			continue;
		}
		if (!g_alpha(c))
			return -1;
		/* a key: its name, then nothing (a boolean) or "= value" */
		var.n = base;
		add(&var, g_lower(c));
		for (;;) {
			c = next_char(&s);
			if (s.eof || !g_key(c))
				break;
			add(&var, g_lower(c));
		}
		while (c == ' ' || c == '\t')
			c = next_char(&s);
		if (c == '\n') {
			if (each(ctx, var.v, NULL) < 0)
				return -1;
			continue;
		}
		if (c != '=')
			return -1;
		val.n = 0;
		val.v[0] = '\0';
		if (value(&s, &val) < 0 || each(ctx, var.v, val.v) < 0)
			return -1;
	}
}

struct reported {
	gitcfg_fn fn;
	void *ctx;
};

static int report(void *ctx, char *var, const char *value)
{
	struct reported *r = ctx;
	enum gitcfg_kind kind = GITCFG_HOOKS_PATH;
	if (!which(var, &kind))
		return 0;
	if (!value && (kind == GITCFG_COMMIT_SIGN || kind == GITCFG_TAG_SIGN))
		value = "true"; /* a boolean without "=" is true */
	if (!value) /* a boolean: git refuses it where a path is due */
		return kind == GITCFG_HOOKS_PATH || kind == GITCFG_INCLUDE || kind == GITCFG_INCLUDE_IF
			       ? -1 : 0;
	if (kind != GITCFG_INCLUDE_IF) {
		r->fn(r->ctx, kind, NULL, value);
		return 0;
	}
	/* "includeif." COND ".path": the condition cut out in place */
	size_t vlen = strlen(var);
	var[vlen - 5] = '\0';
	r->fn(r->ctx, kind, var + 10, value);
	var[vlen - 5] = '.';
	return 0;
}

int gitcfg_scan(const char *text, size_t len, gitcfg_fn fn, void *ctx)
{
	return scan(text, len, report, &(struct reported){ fn, ctx });
}

int gitcfg_each(const char *text, size_t len, gitcfg_each_fn fn, void *ctx)
{
	return scan(text, len, fn, ctx);
}

struct strv gitcfg_host_files(bool system)
{
	struct strv v = { 0 };
	const char *nosys = getenv("GIT_CONFIG_NOSYSTEM"), *sys = getenv("GIT_CONFIG_SYSTEM");
	if (system && (!nosys || !*nosys || strcmp(nosys, "0") == 0 || strcasecmp(nosys, "false") == 0))
		strv_push(&v, sys && sys[0] == '/' ? sys : "/etc/gitconfig");
	const char *global = getenv("GIT_CONFIG_GLOBAL"), *home = getenv("HOME"),
		   *xdg = getenv("XDG_CONFIG_HOME");
	if (global) {
		if (global[0] == '/')
			strv_push(&v, global);
		return v;
	}
	_cleanup_free_ char *x = xdg && xdg[0] == '/' ? xasprintf("%s/git/config", xdg)
			       : home && home[0] == '/' ? xasprintf("%s/.config/git/config", home)
			       : NULL;
	if (x)
		strv_push(&v, x);
	if (home && home[0] == '/') {
		_cleanup_free_ char *g = xasprintf("%s/.gitconfig", home);
		strv_push(&v, g);
	}
	return v;
}
