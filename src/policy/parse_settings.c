/* parse_settings.c - the profile's directives that set one value of the
 * session each: `audit`, `signal`, `terminal`, `workspace`, `canary`,
 * `checkpoint`, `limit`, `rules`, `risk` and `freeze`. */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* `audit minimal`, `audit default` or `audit files`: how much the
 * supervisor records of the file operations. */
int pol_do_audit(struct parser *ps, const struct line *l)
{
	const char *t = l->tok[1];
	bool minimal = strcmp(t, "minimal") == 0, files = strcmp(t, "files") == 0;
	if (!minimal && !files && strcmp(t, "default") != 0)
		return pol_lerr(ps->e, 0, l, l->off[1],
				"audit: unknown level '%.200s' (expected minimal, default or files)", t);
	ps->p->audit_files = files;
	ps->p->audit_minimal = minimal;
	return 0;
}

/* `signal grace SECONDS`: a decimal number of seconds, 0 to
 * POLICY_SIGNAL_GRACE_MAX; the last one given counts. */
int pol_do_signal(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "signal: missing argument (grace SECONDS)");
	if (strcmp(l->tok[1], "grace") != 0)
		return pol_lerr(ps->e, 0, l, l->off[1], "signal: unknown setting '%.200s' (expected grace)",
				l->tok[1]);
	if (pol_want_tokens(ps, l, 3, "signal grace") < 0)
		return -1;
	const char *t = l->tok[2];
	unsigned long v = 0;
	size_t n = strspn(t, "0123456789");
	if (n == 0 || t[n] != '\0')
		return pol_lerr(ps->e, 0, l, l->off[2], "signal grace: '%.200s' is not a number of seconds", t);
	for (size_t i = 0; i < n && v <= POLICY_SIGNAL_GRACE_MAX; i++)
		v = v * 10 + (unsigned long)(t[i] - '0');
	if (v > POLICY_SIGNAL_GRACE_MAX)
		return pol_lerr(ps->e, 0, l, l->off[2], "signal grace: %.200s seconds is more than %d", t,
				POLICY_SIGNAL_GRACE_MAX);
	ps->p->signal_grace = (unsigned)v;
	return 0;
}

/* `terminal clipboard allow|deny`: whether OSC 52 (set or read the
 * clipboard) reaches the user's terminal from the agent's. */
int pol_do_terminal(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "terminal: missing argument (clipboard allow|deny)");
	if (strcmp(l->tok[1], "clipboard") != 0)
		return pol_lerr(ps->e, 0, l, l->off[1], "terminal: unknown setting '%.200s' (expected clipboard)",
				l->tok[1]);
	if (pol_want_tokens(ps, l, 3, "terminal clipboard") < 0)
		return -1;
	const char *t = l->tok[2];
	if (strcmp(t, "allow") == 0)
		ps->p->terminal_clipboard = true;
	else if (strcmp(t, "deny") == 0)
		ps->p->terminal_clipboard = false;
	else
		return pol_lerr(ps->e, 0, l, l->off[2],
				"terminal clipboard: '%.200s' (expected allow or deny)", t);
	return 0;
}

/* `workspace read-only|read-write`: the workspace mounted read-only inside
 * (the session's writable places: its scratch directory and the --output
 * paths, src/session/layout.h), or read-write as by default; the last line
 * counts. */
int pol_do_workspace(struct parser *ps, const struct line *l)
{
	const char *t = l->tok[1];
	if (strcmp(t, "read-only") == 0)
		ps->p->workspace_ro = true;
	else if (strcmp(t, "read-write") == 0)
		ps->p->workspace_ro = false;
	else
		return pol_lerr(ps->e, 0, l, l->off[1], "workspace: '%.200s' (expected read-only or "
				"read-write)", t);
	return 0;
}

/* `NAME on|off`: *off set or cleared (the last line counts). */
static int on_off(struct parser *ps, const struct line *l, bool *off)
{
	const char *t = l->tok[1];
	if (strcmp(t, "on") == 0)
		*off = false;
	else if (strcmp(t, "off") == 0)
		*off = true;
	else
		return pol_lerr(ps->e, 0, l, l->off[1], "%s: '%.200s' (expected on or off)",
				l->tok[0], t);
	return 0;
}

/* `canary on|off`: decoy credentials in the agent's home (on by default) */
int pol_do_canary(struct parser *ps, const struct line *l)
{
	return on_off(ps, l, &ps->p->canary_off);
}

/* `git-identity on|off` (src/workspace/gitident.h) */
int pol_do_git_identity(struct parser *ps, const struct line *l)
{
	return on_off(ps, l, &ps->p->git_identity_off);
}

/* `checkpoint on|off | max-size SIZE | exclude PATTERN | keep N |
 * keep-days N` (src/checkpoint/): the last line of a kind counts; exclude
 * patterns add up. A pattern is a name at any depth ("node_modules") or,
 * with a '/', a path from the workspace ("build/x.o"), never absolute and
 * without "." or ".." components. */
int pol_do_checkpoint(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len,
				"checkpoint: missing argument (on, off, max-size, exclude, keep or keep-days)");
	const char *k = l->tok[1];
	struct policy_checkpoint *c = &ps->p->checkpoint;
	if (strcmp(k, "on") == 0 || strcmp(k, "off") == 0) {
		if (pol_want_tokens(ps, l, 2, "checkpoint") < 0)
			return -1;
		c->off = k[1] == 'f';
		return 0;
	}
	_cleanup_free_ char *what = xasprintf("checkpoint %s", k);
	if (strcmp(k, "max-size") == 0) {
		if (pol_want_tokens(ps, l, 3, what) < 0)
			return -1;
		unsigned long long v;
		const char *why = policy_limit_parse(LIMIT_TMP, l->tok[2], &v);
		if (why)
			return pol_lerr(ps->e, 0, l, l->off[2], "%s: '%.200s' is %s", what, l->tok[2], why);
		c->max_size = v;
		return 0;
	}
	if (strcmp(k, "exclude") == 0) {
		if (pol_want_tokens(ps, l, 3, what) < 0)
			return -1;
		const char *p = l->tok[2];
		if (p[0] == '/' || path_has_dot_components(p) || p[strlen(p) - 1] == '/')
			return pol_lerr(ps->e, 0, l, l->off[2], "%s: '%.200s' is not a pattern relative to "
					"the workspace (no leading or trailing '/', no . or .. component)",
					what, p);
		return pol_push_unique(ps, l, &c->exclude, p);
	}
	if (strcmp(k, "keep") == 0 || strcmp(k, "keep-days") == 0) {
		if (pol_want_tokens(ps, l, 3, what) < 0)
			return -1;
		const char *t = l->tok[2];
		char *end;
		errno = 0;
		unsigned long v = strtoul(t, &end, 10);
		if (!isdigit((unsigned char)t[0]) || *end || errno || v < 1 || v > 100000)
			return pol_lerr(ps->e, 0, l, l->off[2], "%s: '%.200s' is not a number from 1 to "
					"100000", what, t);
		if (k[4])
			c->keep_days = (unsigned)v;
		else
			c->keep = (unsigned)v;
		return 0;
	}
	return pol_lerr(ps->e, 0, l, l->off[1], "checkpoint: unknown setting '%.200s' (expected on, "
			"off, max-size, exclude, keep or keep-days)", k);
}

/* `limit KIND VALUE`: the last line naming a kind sets it. */
int pol_do_limit(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "limit: missing argument (pids, memory, cpu, tmp, home or log)");
	enum policy_limit_kind k = 0;
	while (k < LIMIT_KINDS && strcmp(l->tok[1], policy_limit_name(k)) != 0)
		k++;
	if (k == LIMIT_KINDS)
		return pol_lerr(ps->e, 0, l, l->off[1],
				"limit: unknown kind '%.200s' (expected pids, memory, cpu, tmp, home or log)", l->tok[1]);
	_cleanup_free_ char *what = xasprintf("limit %s", l->tok[1]);
	if (pol_want_tokens(ps, l, 3, what) < 0)
		return -1;
	unsigned long long v = 0;
	unsigned percent = 0;
	const char *why = NULL;
	int share = k == LIMIT_MEMORY ? policy_limit_parse_share(l->tok[2], &percent, &why) : 0;
	if (share == 0)
		why = policy_limit_parse(k, l->tok[2], &v);
	if (why)
		return pol_lerr(ps->e, 0, l, l->off[2], "%s: '%.200s' is %s", what, l->tok[2], why);
	struct policy_limit *lim = &ps->p->limits[k];
	free(lim->origin);
	lim->value = v;
	lim->percent = percent;
	lim->origin = xasprintf("%s:%lu", l->name, l->lineno);
	return 0;
}

/* `rules FILE`: read when the session starts (and by `warden rules show`) */
int pol_do_rules(struct parser *ps, const struct line *l)
{
	const char *f = l->tok[1];
	_cleanup_free_ char *path = NULL;
	if (f[0] == '/' || f[0] == '~') {
		if (pol_expand_path(ps, l, l->off[1], "rules", f, &path) < 0)
			return -1;
	} else {
		if (!l->dir)
			return pol_lerr(ps->e, 0, l, l->off[1], "rules: a relative path needs a profile file "
					"(absolute or ~/ here): '%.200s'", f);
		if (pol_has_dotdot_component(f))
			return pol_lerr(ps->e, 0, l, l->off[1], "rules: '..' components are not allowed: '%.200s'", f);
		path = strcmp(l->dir, "/") == 0 ? xasprintf("/%s", f) : xasprintf("%s/%s", l->dir, f);
	}
	/* there and a file now, so that `policy show` fails where the
	 * session would, naming this line (the rules' own errors are
	 * `warden rules show`'s and the session's, naming their lines) */
	struct stat st;
	if (stat(path, &st) < 0)
		return pol_lerr(ps->e, 0, l, l->off[1], "rules: %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return pol_lerr(ps->e, 0, l, l->off[1], "rules: %s: not a regular file", path);
	if (!strv_contains(&ps->p->inputs, path))
		strv_push(&ps->p->inputs, path);
	return pol_push_unique(ps, l, &ps->p->rules_files, path);
}

/* `risk warn|ask|freeze|kill N|off` or `risk half-life DURATION` */
int pol_do_risk(struct parser *ps, const struct line *l)
{
	struct policy_risk *r = &ps->p->risk;
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "risk: missing argument (warn, ask, freeze, kill or half-life)");
	if (pol_want_tokens(ps, l, 3, "risk") < 0)
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
			return pol_lerr(ps->e, 0, l, l->off[2], "risk half-life: not a duration from 1s to 7 days: "
					"'%.200s' (30s, 10m, 1h)", v);
		r->half_life_s = x;
		return 0;
	}
	double *t = strcmp(w, "warn") == 0 ? &r->warn : strcmp(w, "ask") == 0 ? &r->ask
		  : strcmp(w, "freeze") == 0 ? &r->freeze : strcmp(w, "kill") == 0 ? &r->kill : NULL;
	if (!t)
		return pol_lerr(ps->e, 0, l, l->off[1], "risk: unknown setting '%.200s' (warn, ask, freeze, kill, "
				"half-life)", w);
	if (strcmp(v, "off") == 0) {
		*t = 0;
		return 0;
	}
	if (!num || *end || !(x >= 1) || x > 1e6)
		return pol_lerr(ps->e, 0, l, l->off[2], "risk %s: not a score from 1 to 1000000, or off: '%.200s'",
				w, v);
	*t = x;
	return 0;
}

/* `freeze timeout DURATION|auto`: DURATION seconds, or with s, m or h, 0
 * to POLICY_FREEZE_TIMEOUT_MAX; the last one given counts. */
int pol_do_freeze(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "freeze: missing argument (timeout DURATION|auto)");
	if (strcmp(l->tok[1], "timeout") != 0)
		return pol_lerr(ps->e, 0, l, l->off[1], "freeze: unknown setting '%.200s' (expected timeout)",
				l->tok[1]);
	if (l->ntok == 4 && strspn(l->tok[2], "0123456789") == strlen(l->tok[2]) &&
	    strchr("hms", l->tok[3][0]) &&
	    strspn(l->tok[3], "abcdefghijklmnopqrstuvwxyz") == strlen(l->tok[3]))
		/* "30 minutes": the unit is a letter of the number's */
		return pol_lerr(ps->e, 0, l, l->off[3], "freeze timeout: unexpected argument '%.200s' "
				"(a unit is written on the number: %.20s%s)", l->tok[3], l->tok[2],
				l->tok[3][0] == 'h' ? "h" : l->tok[3][0] == 's' ? "s" : "m");
	if (pol_want_tokens(ps, l, 3, "freeze timeout") < 0)
		return -1;
	const char *v = l->tok[2];
	if (strcmp(v, "auto") == 0) {
		ps->p->freeze_timeout_auto = true;
		ps->p->freeze_timeout_s = POLICY_FREEZE_TIMEOUT_DEFAULT;
		return 0;
	}
	unsigned long x = 0;
	size_t n = strspn(v, "0123456789");
	for (size_t i = 0; i < n && x <= POLICY_FREEZE_TIMEOUT_MAX; i++)
		x = x * 10 + (unsigned long)(v[i] - '0');
	unsigned long unit = v[n] == 'h' ? 3600 : v[n] == 'm' ? 60 : 1;
	bool suffix = v[n] == 'h' || v[n] == 'm' || v[n] == 's';
	if (n == 0 || v[n + suffix] != '\0' || x > POLICY_FREEZE_TIMEOUT_MAX / unit)
		return pol_lerr(ps->e, 0, l, l->off[2], "freeze timeout: not a duration from 0 to 24h, or auto: "
				"'%.200s' (90, 30s, 10m, 1h)", v);
	ps->p->freeze_timeout_auto = false;
	ps->p->freeze_timeout_s = (unsigned)(x * unit);
	return 0;
}

unsigned policy_freeze_timeout(const struct policy *p, bool attended)
{
	return p->freeze_timeout_auto && !attended ? 0 : p->freeze_timeout_s;
}
