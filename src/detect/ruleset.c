/* ruleset.c - the detection rules parser (the format is in ruleset.h): rules
 * text into a ruleset, every error naming FILE:LINE:COL; the built-in rules
 * first, then the profile's files; and the ruleset back as text for
 * `warden rules show`. */
#include "ruleset.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../audit/events.h"
#include "../common/glob.h"
#include "../common/lines.h"
#include "../common/sbuf.h"
#include "../common/util.h"
#include "../policy/exec_rules.h"

#define MAX_LINE 4096
#define MAX_TOKENS 64
#define MAX_FILE (1024 * 1024)
#define MAX_RULES 4096
#define MAX_CONDS 32
#define MAX_STEPS 8
#define MAX_ALTS 256
#define BUILTIN_NAME "builtin:rules"

static const char *const sev_names[SEV_COUNT] = { "low", "medium", "high", "critical" };
static const char *const act_names[] = { "none", "warn", "ask", "freeze", "kill" };

const char *severity_name(enum severity s) { return s < SEV_COUNT ? sev_names[s] : "?"; }
const char *det_action_name(enum det_action a) { return a <= ACT_KILL ? act_names[a] : "?"; }

struct line {
	const char *name;
	unsigned long lineno;
	size_t ntok;
	size_t off[MAX_TOKENS];
	char *tok[MAX_TOKENS];
	char buf[MAX_LINE + 1];
};

static int lerr(struct werr *e, const struct line *l, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int lerr(struct werr *e, const struct line *l, size_t off, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return werr_set(e, 0, "%s:%lu:%zu: %s", l->name, l->lineno, off + 1, msg);
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

/* Split a line into tokens (quoted ones unquoted in place), the comment
 * cut. 1: tokens, 0: an empty line, -1: error. */
static int split(struct line *l, const char *s, size_t n, struct werr *e)
{
	l->ntok = 0;
	if (n > MAX_LINE)
		return lerr(e, l, MAX_LINE, "line longer than %d bytes", MAX_LINE);
	size_t bad = utf8_invalid_at((const unsigned char *)s, n);
	if (bad < n)
		return lerr(e, l, bad, "invalid UTF-8");
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') || s[i] == 0x7f)
			return lerr(e, l, i, s[i] == '\r' ? "carriage return (CRLF line endings?)"
							   : "control character 0x%02x", (unsigned char)s[i]);
	size_t i = 0, o = 0;
	while (i < n) {
		while (i < n && is_blank(s[i]))
			i++;
		if (i == n || s[i] == '#')
			break;
		if (l->ntok == MAX_TOKENS)
			return lerr(e, l, i, "more than %d tokens on a line", MAX_TOKENS);
		l->off[l->ntok] = i;
		l->tok[l->ntok++] = l->buf + o;
		while (i < n && !is_blank(s[i])) {
			if (s[i] != '"') {
				l->buf[o++] = s[i++];
				continue;
			}
			size_t q = i++;
			for (;;) {
				if (i == n)
					return lerr(e, l, q, "unterminated quote");
				if (s[i] == '"') {
					i++;
					break;
				}
				if (s[i] == '\\' && i + 1 < n && (s[i + 1] == '"' || s[i + 1] == '\\'))
					i++;
				l->buf[o++] = s[i++];
			}
		}
		l->buf[o++] = '\0';
	}
	return l->ntok > 0;
}

/* A duration: N, Ns, Nm, Nh (N may have a fraction), more than 0, at most
 * a day. */
static bool parse_duration(const char *t, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(t, &end);
	if (errno || end == t || t[0] < '0' || t[0] > '9')
		return false;
	if (*end == 'm')
		v *= 60, end++;
	else if (*end == 'h')
		v *= 3600, end++;
	else if (*end == 's')
		end++;
	if (*end || !(v > 0) || v > 86400)
		return false;
	*out = v;
	return true;
}

/* A number with an optional K, M or G (powers of 1000). */
static bool parse_number(const char *t, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(t, &end);
	if (errno || end == t || !isfinite(v) || (t[0] != '-' && (t[0] < '0' || t[0] > '9')))
		return false;
	if (*end == 'K' || *end == 'k')
		v *= 1e3, end++;
	else if (*end == 'M')
		v *= 1e6, end++;
	else if (*end == 'G')
		v *= 1e9, end++;
	if (*end)
		return false;
	*out = v;
	return true;
}

static bool field_name_ok(const char *f)
{
	if (!f[0] || strlen(f) > 64)
		return false;
	for (const char *c = f; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '_' || *c == '.' || *c == '-'))
			return false;
	return true;
}

static void cond_free(struct cond *c)
{
	free(c->field);
	free(c->text);
	for (size_t i = 0; i < c->nalts; i++)
		free(c->alts[i]);
	free(c->alts);
	free(c->globs);
	for (size_t i = 0; i < c->nset; i++)
		free(c->set[i]);
	free(c->set);
	dre_free(c->re);
}

static void step_free(struct step *s)
{
	free(s->kind);
	for (size_t i = 0; i < s->nconds; i++)
		cond_free(&s->conds[i]);
	free(s->conds);
}

static void rule_free(struct rule *r)
{
	free(r->name);
	for (size_t i = 0; i < r->nsteps; i++)
		step_free(&r->steps[i]);
	free(r->steps);
	free(r->same);
	free(r->differ);
	free(r->about);
	free(r->origin);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* FIELD=hashes:FILE: the hashes FILE lists, sorted into c->set. FILE is
 * absolute or relative to the directory of the rules file (l->name). */
static int read_set(const struct line *l, size_t off, const char *file, struct cond *c, struct werr *e)
{
	if (!file[0]) {
		cond_free(c);
		return lerr(e, l, off, "hashes: missing the file");
	}
	const char *slash = strrchr(l->name, '/');
	_cleanup_free_ char *path = file[0] == '/' ? xstrdup(file)
				  : slash ? xasprintf("%.*s/%s", (int)(slash - l->name), l->name, file)
					  : NULL;
	if (!path) {
		cond_free(c);
		return lerr(e, l, off, "hashes: a relative file needs a rules file to be relative to: '%.100s'",
			    file);
	}
	struct stat st;
	if (stat(path, &st) < 0) {
		int err = errno;
		cond_free(c);
		return lerr(e, l, off, "hashes: %s: %s", path, strerror(err));
	}
	if (!S_ISREG(st.st_mode)) { /* a FIFO would hang the read */
		cond_free(c);
		return lerr(e, l, off, "hashes: %s: not a regular file", path);
	}
	struct strv hs = { 0 };
	unsigned long bad = 0;
	if (exec_read_hashes(path, &hs, &bad) < 0) {
		int err = errno;
		strv_free(&hs);
		cond_free(c);
		return bad ? lerr(e, l, off, "hashes: %s:%lu: not a SHA-256 (64 hex digits)", path, bad)
			   : lerr(e, l, off, "hashes: %s: %s", path, strerror(err));
	}
	c->set = hs.v;
	c->nset = hs.n;
	if (c->nset)
		qsort(c->set, c->nset, sizeof *c->set, cmp_str);
	return 0;
}

/* One COND token at l->tok[k]. */
static int parse_cond(const struct line *l, size_t k, struct cond *c, struct werr *e)
{
	const char *t = l->tok[k];
	size_t off = l->off[k];
	*c = (struct cond){ .seen = -1 };
	if (strncmp(t, "new:", 4) == 0) {
		if (!field_name_ok(t + 4))
			return lerr(e, l, off + 4, "new: expects a field name, not '%.100s'", t + 4);
		*c = (struct cond){ .field = xstrdup(t + 4), .op = COND_NEW, .text = xstrdup(""), .seen = -1 };
		return 0;
	}
	if (t[0] == '!' && t[1] != '=') {
		if (!field_name_ok(t + 1))
			return lerr(e, l, off + 1, "not a field name: '%.100s'", t + 1);
		*c = (struct cond){ .field = xstrdup(t + 1), .op = COND_ABSENT, .text = xstrdup(""), .seen = -1 };
		return 0;
	}
	size_t flen = strcspn(t, "=!~<>");
	char field[80];
	if (flen == 0 || flen >= sizeof field)
		return lerr(e, l, off, "a condition starts with a field name: '%.100s'", t);
	memcpy(field, t, flen);
	field[flen] = '\0';
	if (!field_name_ok(field))
		return lerr(e, l, off, "not a field name: '%.100s'", field);
	const char *rest = t + flen;
	if (!*rest) {
		*c = (struct cond){ .field = xstrdup(field), .op = COND_PRESENT, .text = xstrdup(""), .seen = -1 };
		return 0;
	}
	enum cond_op op;
	size_t olen = 1;
	if (rest[0] == '=')
		op = COND_GLOB;
	else if (rest[0] == '!' && rest[1] == '=')
		op = COND_NOT_GLOB, olen = 2;
	else if (rest[0] == '~')
		op = COND_REGEX;
	else if (rest[0] == '>')
		op = COND_GT;
	else if (rest[0] == '<')
		op = COND_LT;
	else
		return lerr(e, l, off + flen, "unknown operator in '%.100s' (=, !=, ~, >, <)", t);
	const char *v = rest + olen;
	size_t voff = off + flen + olen;
	if (!*v)
		return lerr(e, l, voff, "missing value after '%.*s'", (int)(flen + olen), t);
	c->field = xstrdup(field);
	c->op = op;
	c->text = xstrdup(v);
	if (op == COND_GT || op == COND_LT) {
		if (!parse_number(v, &c->num))
			return cond_free(c), lerr(e, l, voff, "not a number: '%.100s'", v);
		return 0;
	}
	if (op == COND_REGEX) {
		struct werr re_err = { 0 };
		c->re = dre_compile(v, &re_err);
		if (!c->re) {
			cond_free(c);
			return lerr(e, l, voff, "bad regular expression '%.100s': %s", v, re_err.msg);
		}
		return 0;
	}
	if (strncmp(v, "hashes:", 7) == 0)
		return read_set(l, voff + 7, v + 7, c, e);
	for (const char *p = v;;) {
		size_t n = strcspn(p, "|");
		if (n == 0) {
			cond_free(c);
			return lerr(e, l, voff + (size_t)(p - v), "empty alternative in '%.100s'", v);
		}
		if (c->nalts == MAX_ALTS) {
			cond_free(c);
			return lerr(e, l, voff, "more than %d alternatives", MAX_ALTS);
		}
		c->alts = xrealloc(c->alts, (c->nalts + 1) * sizeof *c->alts);
		char *a = xmalloc(n + 1);
		memcpy(a, p, n);
		a[n] = '\0';
		c->alts[c->nalts++] = a;
		if (!p[n])
			break;
		p += n + 1;
	}
	return 0;
}

/* A kind the stream carries (audit_event_kind_known), or "*"; else -1
 * with e naming them all at the token's column. */
static int kind_ok(const struct line *l, struct werr *e)
{
	const char *k = l->tok[1];
	if (strcmp(k, "*") == 0 || audit_event_kind_known(k))
		return 0;
	const char *const *v;
	size_t n = audit_event_kinds(&v);
	struct sbuf b = { 0 };
	for (size_t i = 0; i < n; i++)
		sb_printf(&b, "%s, ", v[i]);
	_cleanup_free_ char *all = sb_take(&b);
	return lerr(e, l, l->off[1], "%s: not an event kind: '%.100s' (%s*: warden-events(5))",
		    l->tok[0], k, all);
}

static int parse_step(const struct line *l, struct step *s, struct werr *e)
{
	*s = (struct step){ 0 };
	if (l->ntok < 2)
		return lerr(e, l, l->off[0] + strlen(l->tok[0]), "%s: missing the event kind", l->tok[0]);
	if (kind_ok(l, e) < 0)
		return -1;
	if (l->ntok - 2 > MAX_CONDS)
		return lerr(e, l, l->off[2 + MAX_CONDS], "more than %d conditions", MAX_CONDS);
	s->kind = xstrdup(l->tok[1]);
	s->conds = xcalloc(l->ntok, sizeof *s->conds);
	for (size_t k = 2; k < l->ntok; k++) {
		if (parse_cond(l, k, &s->conds[s->nconds], e) < 0) {
			step_free(s);
			return -1;
		}
		if (s->conds[s->nconds++].op == COND_NEW && strcmp(s->kind, "*") == 0) {
			step_free(s);
			return lerr(e, l, l->off[k], "new: needs an event kind, not *");
		}
	}
	return 0;
}

static struct rule *find_rule(struct ruleset *rs, const char *name)
{
	for (size_t i = 0; i < rs->nrules; i++)
		if (strcmp(rs->rules[i].name, name) == 0)
			return &rs->rules[i];
	return NULL;
}

static bool rule_name_ok(const char *n)
{
	if (!n[0] || strlen(n) > 100 || n[0] == '.' || n[0] == '-')
		return false;
	for (const char *c = n; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '.' || *c == '-' || *c == '_'))
			return false;
	return true;
}

static bool severity_of(const char *w, enum severity *s)
{
	for (int i = 0; i < SEV_COUNT; i++)
		if (strcmp(w, sev_names[i]) == 0)
			return *s = (enum severity)i, true;
	return false;
}

struct parser {
	struct ruleset *rs;
	struct rule cur;         /* being read; name NULL: none */
	unsigned long cur_line;
	bool has_on;
	struct werr *e;
};

/* Array v of n elements of size bytes, grown here alone, with room for one
 * more: its room doubles (8, 16, 32...), where a realloc to one more for
 * each rule moved the array again and again, each copy new heap touched. */
static void *room_for_one(void *v, size_t n, size_t size)
{
	if (n != 0 && (n < 8 || (n & (n - 1)) != 0))
		return v;
	return xrealloc(v, (n ? 2 * n : 8) * size);
}

/* The rule read so far, checked and added (replacing one of its name). */
static int finish(struct parser *ps, const struct line *l)
{
	struct rule *r = &ps->cur;
	if (!r->name)
		return 0;
	struct line at = *l;
	at.lineno = ps->cur_line;
	if (!ps->has_on) {
		rule_free(r);
		*r = (struct rule){ 0 };
		return lerr(ps->e, &at, 0, "rule: no `on` line");
	}
	if (r->tree && r->nsteps < 2) {
		rule_free(r);
		*r = (struct rule){ 0 };
		return lerr(ps->e, &at, 0, "rule: `scope tree` is for a sequence (`then`)");
	}
	if (r->differ && r->count < 2 && r->nsteps < 2) {
		rule_free(r);
		*r = (struct rule){ 0 };
		return lerr(ps->e, &at, 0, "rule: `differ` is for a count or a sequence");
	}
	if (r->count > 1 && r->nsteps > 1) {
		rule_free(r);
		*r = (struct rule){ 0 };
		return lerr(ps->e, &at, 0, "rule: `count` and `then` do not go together");
	}
	struct rule *old = find_rule(ps->rs, r->name);
	if (old) {
		rule_free(old);
		*old = *r;
	} else {
		if (ps->rs->nrules == MAX_RULES) {
			rule_free(r);
			*r = (struct rule){ 0 };
			return lerr(ps->e, &at, 0, "more than %d rules", MAX_RULES);
		}
		ps->rs->rules = room_for_one(ps->rs->rules, ps->rs->nrules, sizeof *ps->rs->rules);
		ps->rs->rules[ps->rs->nrules++] = *r;
	}
	*r = (struct rule){ 0 };
	return 0;
}

static int want(const struct line *l, size_t n, struct werr *e)
{
	if (l->ntok < n)
		return lerr(e, l, l->off[l->ntok - 1] + strlen(l->tok[l->ntok - 1]), "%s: missing argument",
			    l->tok[0]);
	if (l->ntok > n)
		return lerr(e, l, l->off[n], "%s: unexpected argument '%.100s'", l->tok[0], l->tok[n]);
	return 0;
}

/* `rule NAME SEVERITY`: the rule before it is finished, this one begins. */
static int d_rule(struct parser *ps, const struct line *l)
{
	struct werr *e = ps->e;
	if (finish(ps, l) < 0 || want(l, 3, e) < 0)
		return -1;
	if (!rule_name_ok(l->tok[1]))
		return lerr(e, l, l->off[1], "rule: not a rule name: '%.100s' (letters, digits, . - _)",
			    l->tok[1]);
	enum severity s;
	if (!severity_of(l->tok[2], &s))
		return lerr(e, l, l->off[2], "rule: unknown severity '%.100s' (low, medium, high, "
			    "critical)", l->tok[2]);
	ps->cur = (struct rule){ .name = xstrdup(l->tok[1]), .sev = s, .within_s = 60,
				 .origin = xasprintf("%s:%lu", l->name, l->lineno) };
	ps->cur_line = l->lineno;
	ps->has_on = false;
	return 0;
}

/* `disable NAME`: a rule defined before (in this file or one read earlier). */
static int d_disable(struct parser *ps, const struct line *l)
{
	struct werr *e = ps->e;
	if (finish(ps, l) < 0 || want(l, 2, e) < 0)
		return -1;
	struct rule *old = find_rule(ps->rs, l->tok[1]);
	if (!old)
		return lerr(e, l, l->off[1], "disable: no rule '%.100s' defined before", l->tok[1]);
	old->disabled = true;
	return 0;
}

/* `rate GLOB SEVERITY` */
static int d_rate(struct parser *ps, const struct line *l)
{
	struct werr *e = ps->e;
	if (finish(ps, l) < 0 || want(l, 3, e) < 0)
		return -1;
	enum severity s;
	if (!severity_of(l->tok[2], &s))
		return lerr(e, l, l->off[2], "rate: unknown severity '%.100s'", l->tok[2]);
	if (ps->rs->nrates == MAX_RULES)
		return lerr(e, l, l->off[0], "more than %d rates", MAX_RULES);
	ps->rs->rates = xrealloc(ps->rs->rates, (ps->rs->nrates + 1) * sizeof *ps->rs->rates);
	ps->rs->rates[ps->rs->nrates++] = (struct rate){
		.glob = xstrdup(l->tok[1]), .sev = s,
		.origin = xasprintf("%s:%lu", l->name, l->lineno),
		.builtin = strcmp(l->name, BUILTIN_NAME) == 0 };
	return 0;
}

/* `on STEP` (one, first) and `then STEP` (after it) */
static int d_step(struct parser *ps, const struct line *l)
{
	struct werr *e = ps->e;
	struct rule *r = &ps->cur;
	bool on = l->tok[0][0] == 'o';
	if (on == ps->has_on)
		return lerr(e, l, l->off[0], on ? "on: a rule has one `on` line"
						: "then: comes after the `on` line");
	if (!on && r->nsteps == MAX_STEPS)
		return lerr(e, l, l->off[0], "then: more than %d steps", MAX_STEPS);
	struct step s;
	if (parse_step(l, &s, e) < 0)
		return -1;
	r->steps = xrealloc(r->steps, (r->nsteps + 1) * sizeof *r->steps);
	r->steps[r->nsteps++] = s;
	ps->has_on = true;
	return 0;
}

static int d_within(struct parser *ps, const struct line *l)
{
	if (want(l, 2, ps->e) < 0)
		return -1;
	if (!parse_duration(l->tok[1], &ps->cur.within_s))
		return lerr(ps->e, l, l->off[1], "within: not a duration: '%.100s' (30s, 5m, 1h; at most "
			    "a day)", l->tok[1]);
	return 0;
}

static int d_count(struct parser *ps, const struct line *l)
{
	if (want(l, 2, ps->e) < 0)
		return -1;
	char *end;
	errno = 0;
	unsigned long v = strtoul(l->tok[1], &end, 10);
	if (errno || *end || l->tok[1][0] < '1' || l->tok[1][0] > '9' || v < 2 || v > 10000)
		return lerr(ps->e, l, l->off[1], "count: not a number from 2 to 10000: '%.100s'", l->tok[1]);
	ps->cur.count = (unsigned)v;
	return 0;
}

static int d_scope(struct parser *ps, const struct line *l)
{
	if (want(l, 2, ps->e) < 0)
		return -1;
	if (strcmp(l->tok[1], "session") != 0 && strcmp(l->tok[1], "tree") != 0)
		return lerr(ps->e, l, l->off[1], "scope: '%.100s' (session or tree)", l->tok[1]);
	ps->cur.tree = l->tok[1][0] == 't';
	return 0;
}

/* `same FIELD` and `differ FIELD` */
static int d_same(struct parser *ps, const struct line *l)
{
	if (want(l, 2, ps->e) < 0)
		return -1;
	if (!field_name_ok(l->tok[1]))
		return lerr(ps->e, l, l->off[1], "%s: not a field name: '%.100s'", l->tok[0], l->tok[1]);
	char **f = l->tok[0][0] == 's' ? &ps->cur.same : &ps->cur.differ;
	free(*f);
	*f = xstrdup(l->tok[1]);
	return 0;
}

static int d_action(struct parser *ps, const struct line *l)
{
	if (want(l, 2, ps->e) < 0)
		return -1;
	for (int a = ACT_WARN; a <= ACT_KILL; a++)
		if (strcmp(l->tok[1], act_names[a]) == 0)
			return ps->cur.action = (enum det_action)a, 0;
	return lerr(ps->e, l, l->off[1], "action: unknown action '%.100s' (warn, ask, freeze, kill)",
		    l->tok[1]);
}

static int d_about(struct parser *ps, const struct line *l)
{
	if (l->ntok < 2)
		return lerr(ps->e, l, l->off[0] + 5, "about: missing the text");
	struct sbuf b = { 0 };
	for (size_t i = 1; i < l->ntok; i++) {
		if (i > 1)
			sb_putc(&b, ' ');
		sb_puts(&b, l->tok[i]); /* not sb_printf: every session parses these */
	}
	free(ps->cur.about);
	ps->cur.about = sb_take(&b);
	return 0;
}

/* The rules' grammar: the directives that stand alone, and those inside a
 * rule (after its `rule` line). */
static const struct {
	const char *name;
	int (*run)(struct parser *ps, const struct line *l);
	bool in_rule;
} directives[] = {
	{ "rule", d_rule, false },      { "rate", d_rate, false },     { "disable", d_disable, false },
	{ "on", d_step, true },         { "then", d_step, true },      { "within", d_within, true },
	{ "count", d_count, true },     { "same", d_same, true },      { "differ", d_same, true },
	{ "scope", d_scope, true },
	{ "action", d_action, true },   { "about", d_about, true },
};

static int run_line(struct parser *ps, const struct line *l)
{
	const char *d = l->tok[0];
	size_t k = 0;
	while (k < ARRAY_LEN(directives) && strcmp(d, directives[k].name) != 0)
		k++;
	bool known = k < ARRAY_LEN(directives);
	if (known && !directives[k].in_rule)
		return directives[k].run(ps, l);
	if (!ps->cur.name)
		return lerr(ps->e, l, l->off[0], known
			    ? "'%.100s' outside a rule (a `rule NAME SEVERITY` line comes first)"
			    : "unknown directive '%.100s' (rule, rate or disable)", d);
	if (known)
		return directives[k].run(ps, l);
	return lerr(ps->e, l, l->off[0], "unknown directive '%.100s' (on, then, within, count, same, "
		    "differ, scope, action, about; or rule, rate, disable)", d);
}

struct text_walk {
	struct parser *ps;
	struct line *l;
};

static int text_line(const char *s, size_t n, unsigned long lineno, void *ctx)
{
	struct text_walk *w = ctx;
	w->l->lineno = lineno;
	int r = split(w->l, s, n, w->ps->e);
	if (r < 0 || (r > 0 && run_line(w->ps, w->l) < 0))
		return -1;
	return 0;
}

int drules_parse(struct ruleset *rs, const char *name, const char *text, size_t len, struct werr *e)
{
	_cleanup_free_ struct line *l = xcalloc(1, sizeof *l);
	l->name = name ? name : "<rules>";
	if (memchr(text, '\0', len))
		return werr_set(e, 0, "%s: NUL byte in rules file", l->name);
	struct parser ps = { .rs = rs, .e = e };
	size_t rates_before = rs->nrates;
	if (lines_each(text, len, text_line, &(struct text_walk){ &ps, l }) < 0) {
		rule_free(&ps.cur);
		return -1;
	}
	l->lineno++;
	l->ntok = 0;
	if (finish(&ps, l) < 0)
		return -1;
	/* this file's rates come before those of the files read before it:
	 * the first that matches rates an alert */
	size_t k = rs->nrates - rates_before;
	if (k && rates_before) {
		struct rate *tmp = xmalloc(k * sizeof *tmp);
		memcpy(tmp, rs->rates + rates_before, k * sizeof *tmp);
		memmove(rs->rates + k, rs->rates, rates_before * sizeof *tmp);
		memcpy(rs->rates, tmp, k * sizeof *tmp);
		free(tmp);
	}
	rs->sources = xrealloc(rs->sources, (rs->nsources + 1) * sizeof *rs->sources);
	rs->sources[rs->nsources++] = xstrdup(l->name);
	return 0;
}

/* Does glob name an alert: a rule's, or another check's? */
static bool names_an_alert(const struct ruleset *rs, const char *glob)
{
	for (size_t i = 0; i < rs->nrules; i++)
		if (glob_match(glob, rs->rules[i].name))
			return true;
	for (size_t i = 0; detect_other_alerts[i]; i++)
		if (glob_match(glob, detect_other_alerts[i]))
			return true;
	return false;
}

/* Each rate line of a user's file names an alert. */
static int rates_known(const struct ruleset *rs, struct werr *e)
{
	for (size_t i = 0; i < rs->nrates; i++)
		if (!rs->rates[i].builtin && !names_an_alert(rs, rs->rates[i].glob))
			return werr_set(e, 0, "%s: rate %.100s: no alert has that name (`warden rules "
					"show` lists the rules; the other checks' alerts are in "
					"doc/audit-log.md)", rs->rates[i].origin, rs->rates[i].glob);
	return 0;
}

int drules_load(struct ruleset *rs, const char *const *files, size_t nfiles, struct werr *e)
{
	if (drules_parse(rs, BUILTIN_NAME, detect_builtin_rules, strlen(detect_builtin_rules), e) < 0)
		return -1;
	for (size_t i = 0; i < nfiles; i++) {
		_cleanup_free_ char *text = NULL;
		size_t len = 0;
		char what[READ_WHY_MAX];
		if (read_regular_file(files[i], MAX_FILE, &text, &len, what) < 0)
			return werr_set(e, errno, "rules file %s: %s", files[i], what);
		if (drules_parse(rs, files[i], text, len, e) < 0)
			return -1;
	}
	return rates_known(rs, e);
}

void drules_free(struct ruleset *rs)
{
	for (size_t i = 0; i < rs->nrules; i++)
		rule_free(&rs->rules[i]);
	free(rs->rules);
	for (size_t i = 0; i < rs->nrates; i++) {
		free(rs->rates[i].glob);
		free(rs->rates[i].origin);
	}
	free(rs->rates);
	for (size_t i = 0; i < rs->nsources; i++)
		free(rs->sources[i]);
	free(rs->sources);
	*rs = (struct ruleset){ 0 };
}

/* A token as the parser reads it back: quoted when it has a blank, a quote,
 * a '#' or is empty. */
static void put_token(struct sbuf *b, const char *t)
{
	if (t[0] && !strpbrk(t, " \t\"#\\")) {
		sb_printf(b, "%s", t);
		return;
	}
	sb_printf(b, "\"");
	for (const char *c = t; *c; c++)
		sb_printf(b, "%s%c", *c == '"' || *c == '\\' ? "\\" : "", *c);
	sb_printf(b, "\"");
}

static const char *op_text(enum cond_op op)
{
	switch (op) {
	case COND_GLOB: return "=";
	case COND_NOT_GLOB: return "!=";
	case COND_REGEX: return "~";
	case COND_GT: return ">";
	case COND_LT: return "<";
	default: return "";
	}
}

char *drules_text(const struct ruleset *rs)
{
	struct sbuf b = { 0 };
	sb_printf(&b, "# sources:");
	for (size_t i = 0; i < rs->nsources; i++)
		sb_printf(&b, " %s", rs->sources[i]);
	sb_printf(&b, "\n");
	for (size_t i = 0; i < rs->nrules; i++) {
		const struct rule *r = &rs->rules[i];
		if (r->disabled)
			continue;
		sb_printf(&b, "\nrule %s %s    # %s\n", r->name, severity_name(r->sev), r->origin);
		for (size_t k = 0; k < r->nsteps; k++) {
			const struct step *s = &r->steps[k];
			sb_printf(&b, "  %s %s", k ? "then" : "on", s->kind);
			for (size_t c = 0; c < s->nconds; c++) {
				const struct cond *cd = &s->conds[c];
				struct sbuf t = { 0 };
				sb_printf(&t, "%s%s%s%s", cd->op == COND_NEW ? "new:" : cd->op == COND_ABSENT ? "!" : "",
					    cd->field, op_text(cd->op), cd->text);
				char *tt = sb_take(&t);
				sb_printf(&b, " ");
				put_token(&b, tt);
				free(tt);
			}
			sb_printf(&b, "\n");
		}
		if (r->count > 1)
			sb_printf(&b, "  count %u\n", r->count);
		if (r->count > 1 || r->nsteps > 1)
			sb_printf(&b, "  within %gs\n", r->within_s);
		if (r->same)
			sb_printf(&b, "  same %s\n", r->same);
		if (r->differ)
			sb_printf(&b, "  differ %s\n", r->differ);
		if (r->tree)
			sb_printf(&b, "  scope tree\n");
		if (r->action != ACT_NONE)
			sb_printf(&b, "  action %s\n", det_action_name(r->action));
		if (r->about) {
			sb_printf(&b, "  about ");
			put_token(&b, r->about);
			sb_printf(&b, "\n");
		}
	}
	if (rs->nrates)
		sb_printf(&b, "\n");
	for (size_t i = 0; i < rs->nrates; i++)
		sb_printf(&b, "rate %s %s    # %s\n", rs->rates[i].glob, severity_name(rs->rates[i].sev),
			    rs->rates[i].origin);
	return sb_take(&b);
}
