/* parser.c - the profile parser: profile text (the built-in default, a user
 * file and what it includes) into the compiled struct policy, with errors
 * that name FILE:LINE:COL. This file reads: the files, their lines, the
 * tokens, and runs each line's directive from the grammar's table
 * (policy_directives[] below, directives.h); the directives' handlers are
 * in parse_*.c by topic, the checks they share in parse_util.c.
 *
 * Grammar (one directive per line, tokens separated by spaces or tabs):
 *   include FILE | include default
 *   read-only PATH | read-write PATH
 *   protect RELPATH | unprotect RELPATH
 *   mask GLOB | unmask GLOB
 *   env pass NAME | env set NAME=VALUE | env unset NAME
 *   audit minimal | audit default | audit files
 *   net allow PATTERN | net allow PATTERN private | net deny PATTERN
 *   secret NAME host HOST [HOST...] [file PATH | command CMD [ARG...]]
 *   signal grace SECONDS
 *   freeze timeout DURATION|auto   (0, 90, 30s, 10m, 1h)
 *   terminal clipboard allow|deny
 *   canary on|off
 *   workspace read-only|read-write
 *   limit pids N | limit memory SIZE|N% | limit cpu N | limit tmp SIZE |
 *   limit home SIZE | limit log SIZE   (any of them: unlimited; values: src/policy/limit.c)
 *   exec deny TARGET | exec allow TARGET | exec default allow|deny |
 *   exec strict | exec allow-writable PATH | exec hash-limit SIZE SECONDS |
 *   exec ask TARGET | exec ask argv WORD... | exec kernel auto|on|off
 *   (TARGET: FILE, sha256:HEX, hashes:FILE, for allow also a DIR)
 *   net ask PATTERN [private] | net default ask|deny | net sni required|optional
 *   write ask GLOB
 *   tool allow|deny|ask NAME [PATTERN...] | tool default allow|deny|ask
 *   approve timeout SECONDS | approve command CMD [ARG...] | approve webhook URL
 *   rules FILE   (detection rules: src/detect/ruleset.h; FILE absolute, ~/, or
 *   relative to the profile's directory)
 *   risk warn|ask|freeze|kill N|off | risk half-life DURATION (30s, 10m, 1h)
 *   checkpoint on|off | checkpoint max-size SIZE|unlimited |
 *   checkpoint exclude PATTERN | checkpoint keep N | checkpoint keep-days N
 *   ssh-agent on|ask [KEY...] | ssh-agent KEY... | ssh-agent off
 *   (KEY: SHA256:... or a comment)
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
#include "parse.h"
#include "directives.h"
#include "../common/lines.h"
#include "../net/rules.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_text(struct parser *ps, const char *name, const char *dir,
		      const char *text, size_t len, int depth);

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

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
			return pol_lerr(ps->e, errno, inc, off, "include '%.200s': %s", path, what);
		/* `-p 8080:3000`, docker's habit: -p is warden's --profile */
		bool ports = errno == ENOENT && strspn(path, "0123456789:") == strlen(path) &&
			     strchr(path, ':');
		if (ports)
			return werr_set(ps->e, 0, "%s: %s: %s (-p is --profile; a port is published "
					"with --publish HOST_PORT:PORT)", path, what, strerror(errno));
		return werr_set(ps->e, errno, "%s: %s", path, what);
	}
	strv_push(&ps->p->sources, real);
	strv_push(&ps->p->inputs, real);
	_cleanup_free_ char *dircopy = xstrdup(real);
	return parse_text(ps, name ? name : real, dirname(dircopy), text, len, depth);
}

/* `include FILE | default`: FILE relative to the including file's
 * directory (none for the built-in profiles' own text), nested at most
 * MAX_DEPTH deep; the built-in default once. */
static int parse_include(struct parser *ps, const struct line *l)
{
	int depth = l->depth;
	const char *f = l->tok[1];
	size_t off = l->off[1];
	bool builtin = strcmp(f, "default") == 0;
	if (builtin && strv_contains(&ps->p->sources, BUILTIN_NAME))
		return 0;
	if (!builtin && !l->dir)
		return pol_lerr(ps->e, 0, l, off, "include: including files is not allowed here");
	if (depth >= MAX_DEPTH)
		return pol_lerr(ps->e, 0, l, off, "include nesting too deep (loop?)");
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
		return pol_lerr(ps->e, 0, l, MAX_LINE, "line longer than %d bytes", MAX_LINE);
	const char *nul = memchr(s, '\0', n);
	if (nul)
		return pol_lerr(ps->e, 0, l, (size_t)(nul - s), "NUL byte in profile");

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
		return pol_lerr(ps->e, 0, l, bad, "invalid UTF-8 in profile");
	if (ctl < cut && s[ctl] == '\r')
		return pol_lerr(ps->e, 0, l, ctl, "carriage return in profile (CRLF line endings?)");
	if (ctl < cut)
		return pol_lerr(ps->e, 0, l, ctl, "control character 0x%02x in profile", (unsigned char)s[ctl]);
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

/* The grammar (directives.h). One row a line, `{ "NAME", ...`:
 * tests/docs/man_pages.sh reads the names from here. */
const struct policy_directive policy_directives[] = {
	{ "include", parse_include, 2, 2, true, "FILE | default" },
	{ "read-only", pol_do_read_only, 2, 2, true, "PATH" },
	{ "read-write", pol_do_read_write, 2, 2, true, "PATH" },
	{ "protect", pol_do_protect, 2, 2, true, "RELPATH | !PARENT/NAME" },
	{ "unprotect", pol_do_unprotect, 2, 2, true, "RELPATH | !PARENT/NAME" },
	{ "mask", pol_do_mask, 2, 2, true, "GLOB" },
	{ "unmask", pol_do_unmask, 2, 2, true, "GLOB" },
	{ "cache", pol_do_cache, 2, 2, true, "~/PATH" },
	{ "env", pol_do_env, 3, 0, false, "pass NAME | set NAME=VALUE | unset NAME" },
	{ "audit", pol_do_audit, 2, 2, true, "minimal | default | files" },
	{ "net", pol_do_net, 3, 4, false, "allow|ask PATTERN [private] | deny PATTERN | default ask|deny" },
	{ "mcp", pol_do_mcp, 4, 5, false,
	  "HOST[:PORT] allow|deny|ask TOOL[,TOOL...] | HOST[:PORT] method allow|deny METHOD[,METHOD...]" },
	{ "publish", pol_do_publish, 2, 2, true, "[HOST_PORT:]PORT" },
	{ "secret", pol_do_secret, 4, MAX_TOKENS, false,
	  "NAME host HOST [HOST...] [file PATH | command CMD [ARG...]]" },
	{ "signal", pol_do_signal, 3, 3, false, "grace SECONDS" },
	{ "freeze", pol_do_freeze, 3, 3, false, "timeout DURATION|auto" },
	{ "terminal", pol_do_terminal, 3, 3, false, "clipboard allow|deny" },
	{ "canary", pol_do_canary, 2, 2, true, "on | off" },
	{ "git-identity", pol_do_git_identity, 2, 2, true, "on | off" },
	{ "workspace", pol_do_workspace, 2, 2, true, "read-only | read-write" },
	{ "limit", pol_do_limit, 3, 3, false, "pids|memory|cpu|tmp|home VALUE|unlimited" },
	{ "exec", pol_do_exec, 2, 0, false,
	  "deny TARGET | allow TARGET | ask TARGET | ask argv WORD... | default allow|deny | "
	  "strict | allow-writable PATH | hash-limit SIZE SECONDS | kernel auto|on|off" },
	{ "write", pol_do_write, 3, 3, false, "ask GLOB" },
	{ "tool", pol_do_tool, 3, 0, false, "allow|deny|ask NAME [PATTERN...] | default allow|deny|ask" },
	{ "approve", pol_do_approve, 3, 0, false, "timeout SECONDS | command CMD [ARG...] | webhook URL" },
	{ "rules", pol_do_rules, 2, 2, true, "FILE" },
	{ "risk", pol_do_risk, 3, 3, false, "warn|ask|freeze|kill N|off | half-life DURATION" },
	{ "checkpoint", pol_do_checkpoint, 2, 3, false,
	  "on | off | max-size SIZE|unlimited | exclude PATTERN | keep N | keep-days N" },
	{ "stream", pol_do_stream, 3, 5, false, "otlp URL [ca FILE] | ocsf FILE" },
	{ "ssh-agent", pol_do_ssh_agent, 2, MAX_TOKENS, false, "on | ask | off | [on|ask] KEY..." },
	{ 0 },
};

const struct policy_directive *policy_directive_find(const char *name)
{
	for (const struct policy_directive *d = policy_directives; d->name; d++)
		if (strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

static int run_line(struct parser *ps, const struct line *l)
{
	const struct policy_directive *d = policy_directive_find(l->tok[0]);
	if (!d)
		return pol_lerr(ps->e, 0, l, l->off[0], "unknown directive '%.200s'", l->tok[0]);
	/* the tokens past MAX_TOKENS are counted, not kept: no directive
	 * reads them (those that take words without a bound stop here) */
	if (l->ntok > MAX_TOKENS)
		return pol_lerr(ps->e, 0, l, l->off_over, "%s: too many arguments (max %d)", d->name,
				POLICY_LINE_WORDS_MAX);
	if (d->counted && pol_want_tokens(ps, l, d->min_tokens, d->name) < 0)
		return -1;
	return d->run(ps, l);
}

struct text_walk {
	struct parser *ps;
	struct line *l;
};

static int text_line(const char *s, size_t n, unsigned long lineno, void *ctx)
{
	struct text_walk *w = ctx;
	w->l->lineno = lineno;
	int r = split_line(w->ps, w->l, s, n);
	if (r < 0)
		return -1;
	if (r > 0 && run_line(w->ps, w->l) < 0)
		return -1;
	return 0;
}

static int parse_text(struct parser *ps, const char *name, const char *dir,
		      const char *text, size_t len, int depth)
{
	_cleanup_free_ struct line *l = xcalloc(1, sizeof *l);
	l->name = name ? name : "<profile>";
	l->dir = dir;
	l->depth = depth;
	if (len > MAX_TOTAL - ps->total)
		return werr_set(ps->e, 0, "%s: profiles too large in total (max 8 MiB)", l->name);
	ps->total += len;
	return lines_each(text, len, text_line, &(struct text_walk){ ps, l });
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
	policy_publish_free(p);
	rules_free(&p->net_rules);
	mcp_rules_free(&p->mcp);
	for (size_t i = 0; i < p->nsecrets; i++)
		policy_secret_clear(&p->secrets[i]);
	free(p->secrets);
	for (size_t i = 0; i < LIMIT_KINDS; i++)
		free(p->limits[i].origin);
	strv_free(&p->protect);
	strv_free(&p->protect_except);
	strv_free(&p->caches);
	strv_free(&p->exec.deny);
	strv_free(&p->exec.deny_paths);
	strv_free(&p->exec.allow);
	strv_free(&p->exec.absent);
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
	strv_free(&p->inputs);
	strv_free(&p->checkpoint.exclude);
	strv_free(&p->ssh_agent.keys);
	free(p->approve.webhook);
	free(p->stream.otlp_url);
	free(p->stream.otlp_ca);
	free(p->stream.ocsf_file);
	strv_free(&p->mask);
	strv_free(&p->notes);
	strv_free(&p->env_pass);
	strv_free(&p->env_set);
	strv_free(&p->sources);
	memset(p, 0, sizeof *p);
}
