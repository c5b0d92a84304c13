/* dre.c - the detection rules' regular expressions (dre.h), compiled: a
 * POSIX extended pattern parsed into a tree, the tree counted out into a
 * program of states (dre_int.h; a repetition {m,n} copies its operand),
 * which dre_run.c runs without back-tracking -- hence no back-references. */
#include "dre.h"
#include "dre_int.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

#define DUP_MAX 32767   /* glibc's RE_DUP_MAX: the largest {m,n} */
#define DEPTH_MAX 200   /* groups and repetitions within each other */
#define PATTERN_MAX 4096 /* bytes: a rules line's length */

/* ---- the tree ----------------------------------------------------------- */

enum nkind { N_SET, N_ASSERT, N_CAT, N_ALT, N_REP };

struct node {
	enum nkind k;
	int arg;                 /* N_SET: the set's index; N_ASSERT: the assertion */
	int kid, next;           /* N_CAT, N_ALT, N_REP: first child; siblings; -1 none */
	int min, max;            /* N_REP: max -1 unbounded */
};

struct parse {
	const char *p, *start;
	struct node *n;
	size_t nn, cap;
	uint8_t (*sets)[32];
	size_t nsets;
	int depth;
	struct werr *e;
};

static int perr(struct parse *ps, const char *what)
{
	return werr_set(ps->e, 0, "%s (at offset %zu)", what, (size_t)(ps->p - ps->start));
}

static int node_new(struct parse *ps, enum nkind k, int arg)
{
	if (ps->nn == ps->cap) {
		ps->cap = ps->cap ? ps->cap * 2 : 32;
		ps->n = xrealloc(ps->n, ps->cap * sizeof *ps->n);
	}
	ps->n[ps->nn] = (struct node){ .k = k, .arg = arg, .kid = -1, .next = -1 };
	return (int)ps->nn++;
}

static int set_new(struct parse *ps)
{
	ps->sets = xrealloc(ps->sets, (ps->nsets + 1) * sizeof *ps->sets);
	memset(ps->sets[ps->nsets], 0, sizeof *ps->sets);
	return (int)ps->nsets++;
}

static void set_add(uint8_t *set, unsigned c) { set[c >> 3] |= (uint8_t)(1u << (c & 7)); }

/* A set node for one byte. */
static int lit_node(struct parse *ps, unsigned char c)
{
	int s = set_new(ps);
	set_add(ps->sets[s], c);
	return node_new(ps, N_SET, s);
}

/* [:NAME:]'s bytes into set; false for an unknown NAME. */
static bool add_class(uint8_t *set, const char *name, size_t len)
{
	static const struct { const char *name; int (*fn)(int); } cls[] = {
		{ "alpha", isalpha }, { "digit", isdigit }, { "alnum", isalnum }, { "upper", isupper },
		{ "lower", islower }, { "space", isspace }, { "blank", isblank }, { "punct", ispunct },
		{ "print", isprint }, { "graph", isgraph }, { "cntrl", iscntrl }, { "xdigit", isxdigit },
	};
	for (size_t i = 0; i < ARRAY_LEN(cls); i++)
		if (strlen(cls[i].name) == len && memcmp(cls[i].name, name, len) == 0) {
			for (unsigned c = 1; c < 256; c++)
				if (cls[i].fn((int)c))
					set_add(set, c);
			return true;
		}
	return false;
}

/* One end of a bracket's item: a byte, or [.c.] / [=c=] naming one. */
static int bracket_char(struct parse *ps, unsigned *c)
{
	if (ps->p[0] == '[' && (ps->p[1] == '.' || ps->p[1] == '=')) {
		char kind = ps->p[1];
		if (!ps->p[2] || ps->p[3] != kind || ps->p[4] != ']')
			return perr(ps, "unsupported collating element (only [.c.] and [=c=] of one byte)");
		*c = (unsigned char)ps->p[2];
		ps->p += 5;
		return 0;
	}
	*c = (unsigned char)*ps->p++;
	return 0;
}

/* [...]: p after the '['. */
static int parse_bracket(struct parse *ps)
{
	int s = set_new(ps);
	bool neg = *ps->p == '^';
	if (neg)
		ps->p++;
	for (bool first = true;; first = false) {
		if (!*ps->p)
			return perr(ps, "unmatched [ or [^");
		if (*ps->p == ']' && !first)
			break;
		if (ps->p[0] == '[' && ps->p[1] == ':') {
			const char *end = strstr(ps->p + 2, ":]");
			if (!end || !add_class(ps->sets[s], ps->p + 2, (size_t)(end - ps->p - 2)))
				return perr(ps, "invalid character class");
			ps->p = end + 2;
			continue;
		}
		unsigned lo, hi;
		if (bracket_char(ps, &lo) < 0)
			return -1;
		hi = lo;
		if (ps->p[0] == '-' && ps->p[1] && ps->p[1] != ']') {
			ps->p++;
			if (bracket_char(ps, &hi) < 0)
				return -1;
			if (hi < lo)
				return perr(ps, "invalid range end");
		}
		for (unsigned c = lo; c <= hi; c++)
			if (c)
				set_add(ps->sets[s], c);
	}
	ps->p++;
	if (neg)
		for (unsigned i = 0; i < 32; i++)
			ps->sets[s][i] = (uint8_t)~ps->sets[s][i];
	ps->sets[s][0] &= (uint8_t)~1u; /* never the NUL that ends a value */
	return node_new(ps, N_SET, s);
}

/* \X: p after the backslash. */
static int parse_escape(struct parse *ps)
{
	unsigned char c = (unsigned char)*ps->p++;
	int s;
	switch (c) {
	case '\0':
		ps->p--;
		return perr(ps, "trailing backslash");
	case 'w': case 'W': case 's': case 'S': {
		bool word = c == 'w' || c == 'W', in = c == 'w' || c == 's'; /* \W, \S: not in */
		s = set_new(ps);
		for (unsigned b = 1; b < 256; b++)
			if ((word ? dre_is_word((int)b) : isspace((int)b) != 0) == in)
				set_add(ps->sets[s], b);
		return node_new(ps, N_SET, s);
	}
	case 'b': return node_new(ps, N_ASSERT, AS_WORDB);
	case 'B': return node_new(ps, N_ASSERT, AS_NWORDB);
	case '<': return node_new(ps, N_ASSERT, AS_WBEG);
	case '>': return node_new(ps, N_ASSERT, AS_WEND);
	case '`': return node_new(ps, N_ASSERT, AS_BOL);
	case '\'': return node_new(ps, N_ASSERT, AS_EOL);
	default:
		if (c >= '1' && c <= '9') {
			ps->p--;
			return perr(ps, "back-references (\\1..\\9) are not supported: they cannot be matched "
					"in linear time");
		}
		return lit_node(ps, c);
	}
}

static int parse_alt(struct parse *ps);

static int parse_atom(struct parse *ps)
{
	char c = *ps->p++;
	switch (c) {
	case '(': {
		if (++ps->depth > DEPTH_MAX)
			return perr(ps, "groups nested too deep");
		int g = parse_alt(ps);
		if (g < 0)
			return -1;
		if (*ps->p != ')')
			return perr(ps, "unmatched ( or \\(");
		ps->p++;
		ps->depth--;
		return g;
	}
	case '[':
		return parse_bracket(ps);
	case '.': {
		int s = set_new(ps);
		memset(ps->sets[s], 0xff, sizeof *ps->sets);
		ps->sets[s][0] &= (uint8_t)~1u;
		return node_new(ps, N_SET, s);
	}
	case '^': return node_new(ps, N_ASSERT, AS_BOL);
	case '$': return node_new(ps, N_ASSERT, AS_EOL);
	case '\\': return parse_escape(ps);
	case '*': case '+': case '?': case '{':
		ps->p--;
		return perr(ps, "invalid preceding regular expression");
	default:
		return lit_node(ps, (unsigned char)c);
	}
}

static bool read_count(struct parse *ps, int *out)
{
	if (!isdigit((unsigned char)*ps->p))
		return false;
	long v = 0;
	while (isdigit((unsigned char)*ps->p)) {
		v = v * 10 + (*ps->p++ - '0');
		if (v > DUP_MAX)
			v = DUP_MAX + 1;
	}
	*out = (int)v;
	return true;
}

/* {m}, {m,}, {m,n}, {,n}: p after the '{'. */
static int parse_interval(struct parse *ps, int *min, int *max)
{
	bool has_min = read_count(ps, min);
	if (!has_min)
		*min = 0;
	*max = *min;
	if (*ps->p == ',') {
		ps->p++;
		if (!read_count(ps, max))
			*max = -1;
	} else if (!has_min) {
		return perr(ps, "invalid content of \\{\\}");
	}
	if (*ps->p != '}')
		return perr(ps, *ps->p ? "invalid content of \\{\\}" : "unmatched \\{");
	ps->p++;
	if (*min > DUP_MAX || *max > DUP_MAX)
		return perr(ps, "regular expression too big (a count over 32767)");
	if (*max >= 0 && *max < *min)
		return perr(ps, "invalid content of \\{\\}");
	return 0;
}

/* An atom and its repetitions. */
static int parse_rep(struct parse *ps)
{
	int a = parse_atom(ps);
	int depth = ps->depth;
	while (a >= 0 && (*ps->p == '*' || *ps->p == '+' || *ps->p == '?' || *ps->p == '{')) {
		if (ps->n[a].k == N_ASSERT) /* as regcomp: ^* is no pattern */
			return perr(ps, "invalid preceding regular expression");
		char op = *ps->p++;
		int min = op == '+', max = op == '?' ? 1 : -1;
		if (op == '{' && parse_interval(ps, &min, &max) < 0)
			return -1;
		if (++depth > DEPTH_MAX)
			return perr(ps, "repetitions nested too deep");
		int r = node_new(ps, N_REP, 0);
		ps->n[r].kid = a;
		ps->n[r].min = min;
		ps->n[r].max = max;
		a = r;
	}
	return a;
}

/* A sequence up to '|', an open group's ')' or the end. */
static int parse_cat(struct parse *ps)
{
	int cat = node_new(ps, N_CAT, 0), last = -1;
	while (*ps->p && *ps->p != '|' && !(*ps->p == ')' && ps->depth > 0)) {
		int a = parse_rep(ps);
		if (a < 0)
			return -1;
		if (last < 0)
			ps->n[cat].kid = a;
		else
			ps->n[last].next = a;
		last = a;
	}
	return cat;
}

static int parse_alt(struct parse *ps)
{
	int alt = node_new(ps, N_ALT, 0), last = -1;
	for (;;) {
		int c = parse_cat(ps);
		if (c < 0)
			return -1;
		if (last < 0)
			ps->n[alt].kid = c;
		else
			ps->n[last].next = c;
		last = c;
		if (*ps->p != '|')
			return alt;
		ps->p++;
	}
}

/* ---- the program ---------------------------------------------------------- */

/* The states node needs, at most DRE_MAX_STATES + 1. */
static size_t size_of(const struct parse *ps, int i)
{
	const struct node *nd = &ps->n[i];
	size_t s = 0;
	switch (nd->k) {
	case N_SET:
	case N_ASSERT:
		return 1;
	case N_CAT:
	case N_ALT:
		for (int k = nd->kid; k >= 0; k = ps->n[k].next) {
			/* gen_alt: a SPLIT and a JMP for each branch but the last */
			s += size_of(ps, k) + (nd->k == N_ALT && ps->n[k].next >= 0 ? 2 : 0);
			if (s > DRE_MAX_STATES)
				return DRE_MAX_STATES + 1;
		}
		return s;
	case N_REP: {
		/* gen_rep: min copies, then x* (a SPLIT, x, a JMP) or max-min
		 * optional ones (a SPLIT and x each) */
		size_t k = size_of(ps, nd->kid), min = (size_t)nd->min;
		s = min * k + (nd->max < 0 ? k + 2 : ((size_t)nd->max - min) * (k + 1));
		return s > DRE_MAX_STATES ? DRE_MAX_STATES + 1 : s;
	}
	}
	return 0;
}

struct gen {
	const struct parse *ps;
	struct inst *prog;
	size_t n, cap;
};

static size_t emit(struct gen *g, struct inst in)
{
	if (g->n == g->cap) /* size_of counted wrong: a bug, not a pattern's fault */
		abort();
	g->prog[g->n] = in;
	return g->n++;
}

static void gen_node(struct gen *g, int i);

/* An alternation: SPLIT to each branch but the last, every branch but the
 * last ending in a JMP past them all. */
static void gen_alt(struct gen *g, const struct node *nd)
{
	uint32_t jumps = UINT32_MAX; /* the JMPs to patch, chained through their x */
	for (int k = nd->kid; k >= 0; k = g->ps->n[k].next) {
		if (g->ps->n[k].next < 0) {
			gen_node(g, k);
			break;
		}
		size_t split = emit(g, (struct inst){ .op = OP_SPLIT });
		g->prog[split].x = (uint32_t)g->n;
		gen_node(g, k);
		jumps = (uint32_t)emit(g, (struct inst){ .op = OP_JMP, .x = jumps });
		g->prog[split].y = (uint32_t)g->n;
	}
	while (jumps != UINT32_MAX) {
		uint32_t prev = g->prog[jumps].x;
		g->prog[jumps].x = (uint32_t)g->n;
		jumps = prev;
	}
}

/* x{m,n}: m copies, then n-m optional ones (each SPLIT skips to the end);
 * x{m,}: m copies, then x* (a SPLIT into x, which jumps back to it). */
static void gen_rep(struct gen *g, const struct node *nd)
{
	for (int c = 0; c < nd->min; c++)
		gen_node(g, nd->kid);
	if (nd->max < 0) {
		size_t split = emit(g, (struct inst){ .op = OP_SPLIT });
		g->prog[split].x = (uint32_t)g->n;
		gen_node(g, nd->kid);
		emit(g, (struct inst){ .op = OP_JMP, .x = (uint32_t)split });
		g->prog[split].y = (uint32_t)g->n;
		return;
	}
	uint32_t splits = UINT32_MAX; /* the SPLITs to patch, chained through their y */
	for (int c = nd->min; c < nd->max; c++) {
		size_t split = emit(g, (struct inst){ .op = OP_SPLIT, .y = splits });
		g->prog[split].x = (uint32_t)g->n;
		gen_node(g, nd->kid);
		splits = (uint32_t)split;
	}
	while (splits != UINT32_MAX) {
		uint32_t prev = g->prog[splits].y;
		g->prog[splits].y = (uint32_t)g->n;
		splits = prev;
	}
}

static void gen_node(struct gen *g, int i)
{
	const struct node *nd = &g->ps->n[i];
	switch (nd->k) {
	case N_SET:
		emit(g, (struct inst){ .op = OP_SET, .set = (uint32_t)nd->arg });
		return;
	case N_ASSERT:
		emit(g, (struct inst){ .op = OP_ASSERT, .as = (uint8_t)nd->arg });
		return;
	case N_CAT:
		for (int k = nd->kid; k >= 0; k = g->ps->n[k].next)
			gen_node(g, k);
		return;
	case N_ALT:
		gen_alt(g, nd);
		return;
	case N_REP:
		gen_rep(g, nd);
		return;
	}
}

struct dre *dre_compile(const char *pat, struct werr *e)
{
	struct parse ps = { .p = pat, .start = pat, .e = e };
	struct dre *re = NULL;
	if (strlen(pat) > PATTERN_MAX) {
		werr_set(e, 0, "regular expression longer than %d bytes", PATTERN_MAX);
		return NULL;
	}
	int root = parse_alt(&ps);
	if (root >= 0 && *ps.p) /* a ')' closing nothing is an ordinary byte: not here */
		root = perr(&ps, "unmatched ) or \\)");
	if (root >= 0) {
		size_t n = size_of(&ps, root) + 1; /* and the MATCH */
		if (n > DRE_MAX_STATES)
			werr_set(e, 0, "regular expression too big (more than %d states once its "
				 "repetitions are counted out)", DRE_MAX_STATES);
		else {
			re = xcalloc(1, sizeof *re);
			re->prog = xcalloc(n, sizeof *re->prog);
			struct gen g = { .ps = &ps, .prog = re->prog, .cap = n };
			gen_node(&g, root);
			emit(&g, (struct inst){ .op = OP_MATCH });
			if (g.n != n) /* size_of and gen_node disagree: a bug */
				abort();
			re->n = g.n;
			re->sets = steal_ptr(&ps.sets);
			for (size_t i = 0; i < re->n; i++)
				if (re->prog[i].op == OP_ASSERT && re->prog[i].as >= AS_WORDB)
					re->wordy = true;
			dre_run_init(re);
		}
	}
	free(ps.n);
	free(ps.sets);
	return re;
}

void dre_free(struct dre *re)
{
	if (!re)
		return;
	dre_run_free(re);
	free(re->prog);
	free(re->sets);
	free(re);
}

size_t dre_states(const struct dre *re) { return re->n; }
