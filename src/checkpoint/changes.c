/* changes.c - comparing two manifests, and a unified diff of two texts: a
 * longest common subsequence of their lines between the common head and
 * tail, bounded in size (changes.h). */
#include "changes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/shown.h"

static void push(struct changes *c, enum change_kind k, const struct mf_entry *a,
		 const struct mf_entry *b)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->v = xrealloc(c->v, c->cap * sizeof *c->v);
	}
	c->v[c->n++] = (struct change){ k, a, b };
}

bool change_mtime_differs(const struct mf_entry *a, const struct mf_entry *b)
{
	return (a->type == MF_FILE || a->type == MF_LINK) &&
	       (a->mtime_sec != b->mtime_sec || a->mtime_nsec != b->mtime_nsec);
}

void changes_compute(const struct manifest *a, const struct manifest *b, struct changes *out)
{
	*out = (struct changes){ .root_mode = a->root_mode != b->root_mode };
	/* against a manifest that could not name FIFOs, sockets and devices,
	 * those of the other side are left out: not seen as made, so never
	 * removed by an undo to it */
	bool specials = !a->specials_unknown && !b->specials_unknown;
	size_t i = 0, j = 0;
	while (i < a->n || j < b->n) {
		if (!specials && i < a->n && mf_special(a->v[i].type)) {
			i++;
			continue;
		}
		if (!specials && j < b->n && mf_special(b->v[j].type)) {
			j++;
			continue;
		}
		int c = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->v[i].path, b->v[j].path);
		if (c < 0) {
			push(out, CH_REMOVED, &a->v[i++], NULL);
		} else if (c > 0) {
			push(out, CH_ADDED, NULL, &b->v[j++]);
		} else {
			const struct mf_entry *x = &a->v[i++], *y = &b->v[j++];
			if (x->type != y->type)
				push(out, CH_TYPE, x, y);
			else if ((x->type == MF_FILE && strcmp(x->hash, y->hash) != 0) ||
				 (x->type == MF_LINK && strcmp(x->target, y->target) != 0))
				push(out, CH_MODIFIED, x, y);
			else if (x->mode != y->mode)
				push(out, CH_MODE, x, y);
			else if (change_mtime_differs(x, y))
				push(out, CH_MTIME, x, y);
		}
	}
}

void changes_free(struct changes *c)
{
	free(c->v);
	*c = (struct changes){ 0 };
}

const char *change_label(enum change_kind k)
{
	static const char *const l[] = { "added", "removed", "modified", "mode", "type", "mtime" };
	return l[k];
}

static const char *type_word(char t)
{
	return t == MF_DIR ? "directory" : t == MF_LINK ? "symlink" : t == MF_FILE ? "file"
		: mf_special_word(t);
}

/* One mtime in UTC, with its nanoseconds when ns. */
static void put_mtime(FILE *out, long long sec, long nsec, bool ns)
{
	time_t t = (time_t)sec;
	struct tm tm;
	char buf[64];
	if (gmtime_r(&t, &tm) && strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm))
		fputs(buf, out);
	else
		fprintf(out, "@%lld", sec);
	if (ns)
		fprintf(out, ".%09ld", nsec);
}

/* "OLD -> NEW UTC": the nanoseconds of both when either has some (two
 * mtimes in one second differ in them alone). */
static void put_mtimes(FILE *out, const struct mf_entry *a, const struct mf_entry *b)
{
	bool ns = a->mtime_nsec || b->mtime_nsec;
	put_mtime(out, a->mtime_sec, a->mtime_nsec, ns);
	fputs(" -> ", out);
	put_mtime(out, b->mtime_sec, b->mtime_nsec, ns);
	fputs(" UTC", out);
}

void changes_print(FILE *out, const struct changes *c, const struct manifest *from,
		   const struct manifest *to)
{
	if (c->root_mode)
		fprintf(out, "  mode      . (%04o -> %04o)\n", (unsigned)from->root_mode,
			(unsigned)to->root_mode);
	for (size_t i = 0; i < c->n; i++) {
		const struct change *ch = &c->v[i];
		const struct mf_entry *en = ch->b ? ch->b : ch->a;
		_cleanup_free_ char *p = path_shown(en->path);
		fprintf(out, "  %-9s %s%s", change_label(ch->kind), p, en->type == MF_DIR ? "/" : "");
		if (ch->kind == CH_MODE || (ch->kind == CH_MODIFIED && ch->a->mode != ch->b->mode)) {
			fprintf(out, " (%04o -> %04o", (unsigned)ch->a->mode, (unsigned)ch->b->mode);
			/* a mode and an mtime changed: one line, both said */
			if (ch->kind == CH_MODE && change_mtime_differs(ch->a, ch->b)) {
				fputs("; mtime ", out);
				put_mtimes(out, ch->a, ch->b);
			}
			fputc(')', out);
		}
		if (ch->kind == CH_MTIME) {
			fputs(" (", out);
			put_mtimes(out, ch->a, ch->b);
			fputc(')', out);
		}
		if (ch->kind == CH_TYPE)
			fprintf(out, " (%s -> %s)", type_word(ch->a->type), type_word(ch->b->type));
		else if (mf_special(en->type))
			fprintf(out, " (%s)", type_word(en->type));
		if (en->type == MF_LINK) {
			_cleanup_free_ char *t = path_shown(en->target);
			fprintf(out, " -> %s", t);
		}
		fputc('\n', out);
	}
}

bool text_is_diffable(const char *s, size_t n)
{
	return !memchr(s, '\0', n) && utf8_invalid_at((const unsigned char *)s, n) == n;
}

struct lines {
	const char **p;
	size_t *len;
	size_t n;
};

static void split(const char *s, size_t n, struct lines *l)
{
	size_t cap = 16;
	l->p = xmalloc(cap * sizeof *l->p);
	l->len = xmalloc(cap * sizeof *l->len);
	l->n = 0;
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(s + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - s) + 1 : n;
		if (l->n == cap) {
			cap *= 2;
			l->p = xrealloc(l->p, cap * sizeof *l->p);
			l->len = xrealloc(l->len, cap * sizeof *l->len);
		}
		l->p[l->n] = s + i;
		l->len[l->n++] = end - i;
		i = end;
	}
}

static bool eq(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && memcmp(a->p[i], b->p[j], a->len[i]) == 0;
}

/* One line of the edit script: ' ', '-' or '+', and its index. */
struct op {
	char k;
	size_t i;
};

#define DIFF_CELLS (16u << 20)

/* One line of a hunk: on a terminal shown (shown.h), so that a carriage
 * return or a cursor move in the new text cannot hide a line of it from
 * the reviewer; else as it is, a patch's bytes. */
static void put_line(FILE *out, bool terminal, char k, const char *p, size_t len)
{
	bool nl = len && p[len - 1] == '\n';
	fputc(k, out);
	if (terminal) {
		_cleanup_free_ char *s = line_shown(p, nl ? len - 1 : len);
		fputs(s, out);
		if (nl)
			fputc('\n', out);
	} else {
		fwrite(p, 1, len, out);
	}
	if (!nl)
		fputs("\n\\ No newline at end of file\n", out);
}

/* The edit script of a against b whose first head and last tail lines
 * are equal: a longest common subsequence (m * n cells at most
 * DIFF_CELLS, the caller checked) walked into ops ('-', '+', ' '), which
 * it returns (malloc'd, *nops of them); *changed: the '-' and '+'. */
static struct op *diff_ops(const struct lines *la, const struct lines *lb, size_t head, size_t tail,
			   size_t *nops_out, size_t *changed)
{
	size_t m = la->n - head - tail, n = lb->n - head - tail;
	/* L[i][j]: the LCS of a's middle from i and b's from j */
	uint32_t *L = xcalloc((m + 1) * (n + 1), sizeof *L);
#define LL(i, j) L[(i) * (n + 1) + (j)]
	for (size_t i = m; i-- > 0;)
		for (size_t j = n; j-- > 0;)
			LL(i, j) = eq(la, head + i, lb, head + j) ? LL(i + 1, j + 1) + 1
				   : LL(i + 1, j) > LL(i, j + 1) ? LL(i + 1, j) : LL(i, j + 1);
	struct op *ops = xmalloc((la->n + lb->n + 1) * sizeof *ops);
	size_t nops = 0;
	for (size_t k = 0; k < head; k++)
		ops[nops++] = (struct op){ ' ', k };
	size_t i = 0, j = 0;
	while (i < m || j < n) {
		if (i < m && j < n && eq(la, head + i, lb, head + j)) {
			ops[nops++] = (struct op){ ' ', head + i };
			i++, j++;
		} else if (i < m && (j == n || LL(i + 1, j) >= LL(i, j + 1))) {
			ops[nops++] = (struct op){ '-', head + i++ };
			(*changed)++;
		} else {
			ops[nops++] = (struct op){ '+', head + j++ };
			(*changed)++;
		}
	}
#undef LL
	free(L);
	for (size_t k = 0; k < tail; k++)
		ops[nops++] = (struct op){ ' ', la->n - tail + k };
	*nops_out = nops;
	return ops;
}

/* The end of the hunk whose first change is ops[k]: changes closer than 7
 * lines of context joined, 3 lines of context after the last. */
static size_t hunk_end(const struct op *ops, size_t nops, size_t k)
{
	size_t end = k;
	for (;;) {
		while (end < nops && ops[end].k != ' ')
			end++;
		size_t ctx = end;
		while (ctx < nops && ops[ctx].k == ' ' && ctx - end < 7)
			ctx++;
		if (ctx < nops && ops[ctx].k != ' ' && ctx - end < 7) {
			end = ctx;
			continue;
		}
		return end + 3 < nops ? end + 3 : nops;
	}
}

/* The hunk ops[start..end): its @@ line (line numbers counted from the
 * ops before start) and its lines. */
static void put_hunk(FILE *out, bool terminal, const struct op *ops, size_t start, size_t end,
		     const struct lines *la, const struct lines *lb)
{
	size_t ai = 0, bi = 0, ac = 0, bc = 0;
	for (size_t q = 0; q < start; q++) {
		if (ops[q].k != '+')
			ai++;
		if (ops[q].k != '-')
			bi++;
	}
	for (size_t q = start; q < end; q++) {
		if (ops[q].k != '+')
			ac++;
		if (ops[q].k != '-')
			bc++;
	}
	fprintf(out, "@@ -%zu,%zu +%zu,%zu @@\n", ac ? ai + 1 : ai, ac, bc ? bi + 1 : bi, bc);
	for (size_t q = start; q < end; q++) {
		const struct lines *l = ops[q].k == '+' ? lb : la;
		size_t idx = ops[q].i;
		if (ops[q].k == ' ') /* a context line's index is a's */
			l = la;
		put_line(out, terminal, ops[q].k, l->p[idx], l->len[idx]);
	}
}

size_t text_unified_diff(FILE *out, bool terminal, const char *label_a, const char *label_b,
			 const char *a, size_t na, const char *b, size_t nb)
{
	struct lines la, lb;
	split(a, na, &la);
	split(b, nb, &lb);
	size_t head = 0;
	while (head < la.n && head < lb.n && eq(&la, head, &lb, head))
		head++;
	size_t tail = 0;
	while (tail < la.n - head && tail < lb.n - head &&
	       eq(&la, la.n - 1 - tail, &lb, lb.n - 1 - tail))
		tail++;
	size_t m = la.n - head - tail, n = lb.n - head - tail;
	size_t changed = 0;
	if ((m + 1) * (n + 1) > DIFF_CELLS) {
		fprintf(out, "--- %s\n+++ %s\n(%zu lines against %zu: too large to show line by line)\n",
			label_a, label_b, la.n, lb.n);
		changed = m + n;
	} else {
		size_t nops;
		struct op *ops = diff_ops(&la, &lb, head, tail, &nops, &changed);
		fprintf(out, "--- %s\n+++ %s\n", label_a, label_b);
		/* hunks: runs of changes with 3 lines of context, joined when close */
		size_t k = 0;
		while (k < nops) {
			while (k < nops && ops[k].k == ' ')
				k++;
			if (k == nops)
				break;
			size_t start = k >= 3 ? k - 3 : 0, end = hunk_end(ops, nops, k);
			put_hunk(out, terminal, ops, start, end, &la, &lb);
			k = end;
		}
		free(ops);
	}
	free(la.p);
	free(la.len);
	free(lb.p);
	free(lb.len);
	return changed;
}
