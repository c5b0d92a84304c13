/* parse.h - inside the profile parser: the parser's state, a line split
 * into tokens, the checks every directive's handler shares (parser.c) and
 * the handlers, one topic file each (parse_paths.c, parse_net.c,
 * parse_exec.c, parse_ask.c, parse_settings.c), which parser.c puts in the
 * grammar's table. The calls run one way: parser.c -> parse_*.c ->
 * parse_util.c. Not for callers outside src/policy: they read
 * policy.h (the compiled policy) and directives.h (the grammar). */
#pragma once
#include "directives.h"
#include "policy.h"

#include <stddef.h>

#define MAX_LINE 4096                    /* bytes per line, newline excluded */
#define MAX_DEPTH 8                      /* nested includes */
#define MAX_FILE (1024 * 1024)           /* bytes per profile file */
#define MAX_TOTAL (8 * 1024 * 1024)      /* bytes parsed per policy, includes too */
#define MAX_ENTRIES 4096                 /* entries per list (net rules: in total) */
#define MAX_TOKENS (POLICY_LINE_WORDS_MAX + 1) /* tokens kept per line; more are counted */
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
	int depth;                       /* includes nested around this file */
	unsigned long lineno;
	const char *text;                /* the line, comment and trailing blanks cut */
	size_t len;
	size_t ntok;                     /* tokens on the line, may exceed MAX_TOKENS */
	size_t off[MAX_TOKENS];          /* byte offset of each token */
	const char *tok[MAX_TOKENS];     /* NUL-terminated copies inside buf */
	size_t off_over;                 /* byte offset of the first token not kept */
	char buf[MAX_LINE + 1];
};

/* The shared checks (parse_util.c). Each returns -1 with ps->e set ("FILE:LINE:
 * COL: ...", COL the byte at offset off, from 1), or 0. */
__attribute__((format(printf, 5, 6)))
int pol_lerr(struct werr *e, int errnum, const struct line *l, size_t off, const char *fmt, ...);
/* A note on line l into the policy's notes ("FILE:LINE: ..."): what the
 * line cannot do here, which is no error. */
__attribute__((format(printf, 3, 4)))
void pol_note(struct parser *ps, const struct line *l, const char *fmt, ...);
/* Exactly `want` tokens, the directive included. */
int pol_want_tokens(struct parser *ps, const struct line *l, size_t want, const char *what);
/* Room for one more entry in a list of n. */
int pol_room(struct parser *ps, const struct line *l, size_t n);
/* v into s unless it is there already. */
int pol_push_unique(struct parser *ps, const struct line *l, struct strv *s, const char *v);
/* The absolute, normalised path a directive names at token `off`: "/..."
 * or "~" / "~/..." expanded against the home. *out malloc'd. */
int pol_expand_path(struct parser *ps, const struct line *l, size_t off, const char *d, const char *t,
		    char **out);
bool pol_has_dotdot_component(const char *s);
void pol_strip_trailing_slashes(char *s, size_t keep);
/* The words of a line from token `from` on, joined by one space (into
 * out); false when there are none. */
bool pol_rest_of_line(const struct line *l, size_t from, char *out, size_t len);

/* The handlers: the line's first token is theirs. A directive the table
 * marks `counted` gets its line with min_tokens tokens exactly; the others
 * check their own. */
typedef int directive_fn(struct parser *ps, const struct line *l);
/* parse_paths.c */
directive_fn pol_do_read_only, pol_do_read_write, pol_do_protect, pol_do_unprotect, pol_do_mask,
	pol_do_unmask, pol_do_cache, pol_do_env;
/* parse_net.c */
directive_fn pol_do_net, pol_do_secret;
/* parse_netprog.c: a trailing `program NAME` of a net rule into r->prog:
 * 1 with *cut the line without it, 0 when there is none, -1 on an error. */
int pol_net_program(struct parser *ps, const struct line *l, enum rules_verdict action,
		    const char *what, struct line *cut, struct net_rule *r);
directive_fn pol_do_mcp; /* parse_mcp.c */
/* publish.c */
directive_fn pol_do_publish;
/* parse_exec.c */
directive_fn pol_do_exec;
/* parse_ask.c */
directive_fn pol_do_write, pol_do_tool, pol_do_approve;
/* parse_settings.c */
directive_fn pol_do_audit, pol_do_signal, pol_do_terminal, pol_do_workspace, pol_do_canary,
	pol_do_git_identity, pol_do_checkpoint, pol_do_limit, pol_do_rules, pol_do_risk,
	pol_do_freeze;
/* parse_ssh.c */
directive_fn pol_do_ssh_agent;
/* parse_stream.c */
directive_fn pol_do_stream;
