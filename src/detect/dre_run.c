/* dre_run.c - a compiled pattern (dre_int.h) run over a value. The Thompson
 * NFA: the set of states alive at each byte, each state entered at most once
 * per byte, so a match costs at most (bytes + 1) x states steps. Over it, a
 * cache of the sets it met as the states of a DFA, each with its transitions
 * as they are needed: a pattern that meets the same sets again (most do, on
 * most values) costs one table lookup a byte. The cache is bounded (it
 * starts over when full); a pattern with a \b \B \< or \> runs without it.
 * A step is a state entered, a byte read through the cache, or a state put
 * in a new set of the cache. The cache's arrays start small and double as
 * sets are met, up to their bounds: most patterns meet a few sets in a
 * session, and a cache made whole at the first match would zero 99 KB a
 * pattern for them. */
#include "dre.h"
#include "dre_int.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

#define DFA_STATES 64            /* sets of states cached per pattern */
#define DFA_PCS 16384            /* states in them, together */
#define DFA_STATES_FIRST 4       /* the arrays' first sizes, doubled as needed */
#define DFA_PCS_FIRST 64

struct dstate {
	uint32_t off, n;             /* its states: the dfa's pcs[off..off+n), sorted */
	uint32_t hash;
	bool match;                  /* a match ended here */
	bool eol;                    /* some of its states wait for the value's end ($) */
	int16_t next[256];           /* the state after each byte; -1 not known yet */
};

struct dfa {
	struct dstate *st;           /* nst of cst made, cst <= DFA_STATES */
	size_t nst, cst;
	uint32_t *pcs;               /* npcs of cpcs, cpcs <= DFA_PCS */
	size_t npcs, cpcs;
	unsigned gen;                /* times it started over */
	int start;                   /* the state at the first byte, or -1 */
};

struct run {
	struct dre *re;
	const unsigned char *s;
	size_t len;
	unsigned long *budget;
	bool mid;                    /* building the cache: $ does not hold (a byte follows) */
};

struct list {
	uint32_t *dense, *sparse;
	size_t n;
};

void dre_run_init(struct dre *re)
{
	for (int k = 0; k < 2; k++) {
		re->dense[k] = xcalloc(re->n, sizeof *re->dense[k]);
		re->sparse[k] = xcalloc(re->n, sizeof *re->sparse[k]);
	}
	re->stack = xcalloc(2 * re->n + 2, sizeof *re->stack);
	re->bits = xcalloc(re->n / 64 + 1, sizeof *re->bits);
}

void dre_run_free(struct dre *re)
{
	for (int k = 0; k < 2; k++) {
		free(re->dense[k]);
		free(re->sparse[k]);
	}
	free(re->stack);
	free(re->bits);
	if (re->dfa) {
		free(re->dfa->st);
		free(re->dfa->pcs);
		free(re->dfa);
	}
}

static struct list list_of(struct dre *re, int k)
{
	return (struct list){ re->dense[k], re->sparse[k], 0 };
}

static bool in_list(const struct list *l, uint32_t pc)
{
	return l->sparse[pc] < l->n && l->dense[l->sparse[pc]] == pc;
}

static bool assert_holds(const struct run *r, unsigned as, size_t pos)
{
	bool before = pos > 0 && dre_is_word(r->s[pos - 1]);
	bool after = pos < r->len && dre_is_word(r->s[pos]);
	switch (as) {
	case AS_BOL: return pos == 0;
	case AS_EOL: return pos == r->len && !r->mid;
	case AS_WORDB: return before != after;
	case AS_NWORDB: return before == after;
	case AS_WBEG: return !before && after;
	case AS_WEND: return before && !after;
	}
	return false;
}

/* Enter pc and the states it leads to without a byte, at pos. 1: the
 * match state was reached; -1: out of budget; 0: otherwise. */
static int add(struct run *r, struct list *l, uint32_t pc, size_t pos)
{
	uint32_t *stack = r->re->stack;
	size_t sp = 0;
	stack[sp++] = pc;
	while (sp) {
		pc = stack[--sp];
		if (in_list(l, pc))
			continue;
		if (*r->budget == 0)
			return -1;
		--*r->budget;
		l->sparse[pc] = (uint32_t)l->n;
		l->dense[l->n++] = pc;
		const struct inst *in = &r->re->prog[pc];
		switch (in->op) {
		case OP_MATCH:
			return 1;
		case OP_JMP:
			stack[sp++] = in->x;
			break;
		case OP_SPLIT:
			stack[sp++] = in->y;
			stack[sp++] = in->x;
			break;
		case OP_ASSERT:
			if (assert_holds(r, in->as, pos))
				stack[sp++] = pc + 1;
			break;
		default:
			break;
		}
	}
	return 0;
}

static bool reads(const struct dre *re, uint32_t pc, unsigned c)
{
	const struct inst *in = &re->prog[pc];
	return in->op == OP_SET && (re->sets[in->set][c >> 3] & (1u << (c & 7)));
}

/* The NFA alone. */
static int nfa_run(struct run *r)
{
	struct dre *re = r->re;
	struct list cur = list_of(re, 0), nxt = list_of(re, 1);
	for (size_t pos = 0;; pos++) {
		int a = add(r, &cur, 0, pos); /* a match may start at any byte */
		if (a != 0)
			return a;
		if (pos == r->len)
			return 0;
		nxt.n = 0;
		for (size_t i = 0; i < cur.n; i++)
			if (reads(re, cur.dense[i], r->s[pos]) && (a = add(r, &nxt, cur.dense[i] + 1, pos + 1)) != 0)
				return a;
		struct list t = cur;
		cur = nxt;
		nxt = t;
	}
}

/* Room in f for one more state of n states (n <= DFA_PCS), the arrays
 * doubled up to their bounds while the cache is not full. */
static void dfa_room(struct dfa *f, size_t n)
{
	if (f->nst == f->cst) {
		f->cst = f->cst * 2 < DFA_STATES ? f->cst * 2 : DFA_STATES;
		f->st = xrealloc(f->st, f->cst * sizeof *f->st);
	}
	if (f->npcs + n > f->cpcs) {
		size_t c = f->cpcs;
		while (c < f->npcs + n)
			c *= 2;
		f->cpcs = c < DFA_PCS ? c : DFA_PCS;
		f->pcs = xrealloc(f->pcs, f->cpcs * sizeof *f->pcs);
	}
}

/* The cached state of list l's states that matter (those that read a byte,
 * and the $ that wait), made when new: the cache starts over when full.
 * l's order is lost. */
static int dfa_state(struct dre *re, struct list *l, bool match)
{
	struct dfa *f = re->dfa;
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++) { /* sorted through a bitmap: qsort cost more than the NFA */
		uint32_t pc = l->dense[i];
		const struct inst *in = &re->prog[pc];
		if (in->op == OP_SET || (in->op == OP_ASSERT && in->as == AS_EOL))
			re->bits[pc >> 6] |= 1ULL << (pc & 63);
	}
	for (size_t w = 0; w <= re->n / 64; w++)
		for (; re->bits[w]; re->bits[w] &= re->bits[w] - 1)
			l->dense[n++] = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(re->bits[w]));
	uint32_t h = 2166136261u ^ match;
	for (size_t i = 0; i < n; i++)
		h = (h ^ l->dense[i]) * 16777619u;
	for (size_t i = 0; i < f->nst; i++)
		if (f->st[i].hash == h && f->st[i].n == n && f->st[i].match == match &&
		    memcmp(f->pcs + f->st[i].off, l->dense, n * sizeof *l->dense) == 0)
			return (int)i;
	if (f->nst == DFA_STATES || f->npcs + n > DFA_PCS) {
		f->nst = f->npcs = 0;
		f->start = -1;
		f->gen++;
	}
	dfa_room(f, n);
	struct dstate *st = &f->st[f->nst];
	*st = (struct dstate){ .off = (uint32_t)f->npcs, .n = (uint32_t)n, .hash = h, .match = match };
	memset(st->next, 0xff, sizeof st->next);
	for (size_t i = 0; i < n; i++)
		st->eol |= re->prog[l->dense[i]].op == OP_ASSERT;
	memcpy(f->pcs + f->npcs, l->dense, n * sizeof *l->dense);
	f->npcs += n;
	return (int)f->nst++;
}

/* The state after state from reads byte pos; -1 out of budget. */
static int dfa_step(struct run *r, int from, size_t pos)
{
	struct dre *re = r->re;
	struct dfa *f = re->dfa;
	unsigned c = r->s[pos];
	struct list l = list_of(re, 1);
	const struct dstate *st = &f->st[from];
	int a = 0;
	for (uint32_t i = 0; i < st->n && a == 0; i++)
		if (reads(re, f->pcs[st->off + i], c))
			a = add(r, &l, f->pcs[st->off + i] + 1, pos + 1);
	if (a == 0)
		a = add(r, &l, 0, pos + 1); /* a match may start at the next byte */
	/* a new set costs its states again, and a scan of the program's bitmap */
	unsigned long cost = l.n + re->n / 64 + 8;
	if (a < 0 || *r->budget < cost)
		return *r->budget = 0, -1;
	*r->budget -= cost;
	unsigned gen = f->gen;
	int to = dfa_state(re, &l, a == 1);
	if (f->gen == gen)
		f->st[from].next[c] = (int16_t)to;
	return to;
}

/* At the value's end: the $ that wait in state cur now hold. */
static int dfa_end(struct run *r, int cur)
{
	const struct dfa *f = r->re->dfa;
	const struct dstate *st = &f->st[cur];
	if (!st->eol)
		return 0;
	r->mid = false;
	struct list l = list_of(r->re, 0);
	for (uint32_t i = 0; i < st->n; i++) {
		uint32_t pc = f->pcs[st->off + i];
		if (r->re->prog[pc].op != OP_ASSERT)
			continue;
		int a = add(r, &l, pc + 1, r->len);
		if (a != 0)
			return a;
	}
	return 0;
}

/* The NFA through the cache (a value of one byte or more). */
static int dfa_run(struct run *r)
{
	struct dre *re = r->re;
	if (!re->dfa) {
		re->dfa = xcalloc(1, sizeof *re->dfa);
		*re->dfa = (struct dfa){ .st = xmalloc(DFA_STATES_FIRST * sizeof *re->dfa->st),
					 .cst = DFA_STATES_FIRST,
					 .pcs = xmalloc(DFA_PCS_FIRST * sizeof *re->dfa->pcs),
					 .cpcs = DFA_PCS_FIRST, .start = -1 };
	}
	r->mid = true;
	int cur = re->dfa->start;
	if (cur < 0) {
		struct list l = list_of(re, 1);
		int a = add(r, &l, 0, 0);
		if (a < 0)
			return -1;
		cur = re->dfa->start = dfa_state(re, &l, a == 1);
	}
	for (size_t pos = 0; pos < r->len; pos++) {
		if (re->dfa->st[cur].match)
			return 1;
		if (*r->budget == 0)
			return -1;
		--*r->budget;
		int nx = re->dfa->st[cur].next[r->s[pos]];
		if (nx < 0 && (nx = dfa_step(r, cur, pos)) < 0)
			return -1;
		cur = nx;
	}
	return re->dfa->st[cur].match ? 1 : dfa_end(r, cur);
}

int dre_match(struct dre *re, const char *s, size_t len, unsigned long *budget)
{
	struct run r = { .re = re, .s = (const unsigned char *)s, .len = len, .budget = budget };
	return re->wordy || len == 0 ? nfa_run(&r) : dfa_run(&r);
}

int dre_match_nfa(struct dre *re, const char *s, size_t len, unsigned long *budget)
{
	struct run r = { .re = re, .s = (const unsigned char *)s, .len = len, .budget = budget };
	return nfa_run(&r);
}
