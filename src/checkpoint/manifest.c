/* manifest.c - a checkpoint's manifest: building it, its text form, and the
 * strict parser that reads it back (manifest.h). */
#include "manifest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/sbuf.h"

void manifest_add(struct manifest *m, const struct mf_entry *e)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 256;
		m->v = xrealloc(m->v, m->cap * sizeof *m->v);
	}
	struct mf_entry *d = &m->v[m->n++];
	*d = *e;
	d->path = xstrdup(e->path);
	d->target = e->target ? xstrdup(e->target) : NULL;
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct mf_entry *)a)->path, ((const struct mf_entry *)b)->path);
}

static int cmp_entry_ptr(const void *a, const void *b)
{
	return cmp_entry(*(const struct mf_entry *const *)a, *(const struct mf_entry *const *)b);
}

/* Pointers sorted, the entries moved once: qsort of the entries themselves
 * copies each (a hundred bytes) log n times. */
void manifest_sort(struct manifest *m)
{
	size_t i = 1;
	while (i < m->n && strcmp(m->v[i - 1].path, m->v[i].path) < 0)
		i++;
	if (i >= m->n)
		return;
	struct mf_entry **p = xmalloc(m->n * sizeof *p);
	for (i = 0; i < m->n; i++)
		p[i] = &m->v[i];
	qsort(p, m->n, sizeof *p, cmp_entry_ptr);
	struct mf_entry *v = xmalloc(m->n * sizeof *v);
	for (i = 0; i < m->n; i++)
		v[i] = *p[i];
	free(p);
	free(m->v);
	m->v = v;
	m->cap = m->n;
}

static const struct mf_entry *find_in(const struct mf_entry *v, size_t n, const char *path)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(path, v[mid].path);
		if (c == 0)
			return &v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const struct mf_entry *manifest_find(const struct manifest *m, const char *path)
{
	return find_in(m->v, m->n, path);
}

void manifest_free(struct manifest *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].path);
		free(m->v[i].target);
	}
	free(m->v);
	strv_free(&m->exclude);
	*m = (struct manifest){ 0 };
}

static bool must_escape(unsigned char c)
{
	return c < 0x21 || c == 0x7f || c == '%';
}

void mf_escape_put(struct sbuf *b, const char *s)
{
	static const char digits[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s, *run = p;
	for (; *p; p++) {
		if (!must_escape(*p))
			continue;
		sb_put(b, (const char *)run, (size_t)(p - run));
		char x[3] = { '%', digits[*p >> 4], digits[*p & 15] };
		sb_put(b, x, 3);
		run = p + 1;
	}
	sb_put(b, (const char *)run, (size_t)(p - run));
}

char *mf_escape(const char *s)
{
	struct sbuf b = { 0 };
	mf_escape_put(&b, s);
	return sb_take(&b);
}

/* A line per entry, written without printf (a manifest has one for each
 * file of the workspace): "T MODE SIZE MSEC.MNSEC HASH PATH[ TARGET]". */
static void format_entry(struct sbuf *b, const struct mf_entry *e)
{
	char t[2] = { e->type, ' ' };
	sb_put(b, t, 2);
	sb_put_num(b, false, (unsigned)(e->mode & 07777), 8, 4);
	sb_putc(b, ' ');
	sb_put_ull(b, e->size);
	sb_putc(b, ' ');
	sb_put_time(b, e->mtime_sec, e->mtime_nsec);
	sb_putc(b, ' ');
	sb_puts(b, e->type == MF_FILE ? e->hash : "-");
	sb_putc(b, ' ');
	mf_escape_put(b, e->path);
	if (e->type == MF_LINK) {
		sb_putc(b, ' ');
		mf_escape_put(b, e->target);
	}
	sb_putc(b, '\n');
}

char *manifest_format(const struct manifest *m, size_t *len)
{
	struct sbuf b = { 0 };
	sb_printf(&b, "warden-manifest 2\nroot %04o\n", (unsigned)(m->root_mode & 07777));
	for (size_t i = 0; i < m->exclude.n; i++) {
		sb_puts(&b, "exclude ");
		mf_escape_put(&b, m->exclude.v[i]);
		sb_putc(&b, '\n');
	}
	for (size_t i = 0; i < m->n; i++)
		format_entry(&b, &m->v[i]);
	*len = b.n;
	return b.p;
}

/* ---- the parser ------------------------------------------------------------ */

struct pline {
	unsigned long no;
	char *f[8];
	size_t nf;
};

/* Decode a %XX-escaped field; NULL when it holds a raw byte that must be
 * escaped, a bad escape, a NUL, or is longer than MF_MAX_PATH decoded. */
char *mf_unescape(const char *s)
{
	size_t n = strlen(s);
	char *out = xmalloc(n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '%') {
			int a = i + 1 < n ? hex_digit((unsigned char)s[i + 1]) : -1;
			int b = i + 2 < n ? hex_digit((unsigned char)s[i + 2]) : -1;
			int h = a < 0 || b < 0 ? -1 : a * 16 + b;
			if (h <= 0) {
				free(out);
				return NULL;
			}
			*o++ = (char)h;
			i += 2;
		} else if (must_escape(c)) {
			free(out);
			return NULL;
		} else {
			*o++ = (char)c;
		}
	}
	*o = '\0';
	if ((size_t)(o - out) > MF_MAX_PATH) {
		free(out);
		return NULL;
	}
	return out;
}

static bool parse_mode(const char *s, mode_t *m)
{
	if (strlen(s) < 1 || strlen(s) > 5)
		return false;
	unsigned v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '7')
			return false;
		v = v * 8 + (unsigned)(*p - '0');
	}
	if (v > 07777)
		return false;
	*m = (mode_t)v;
	return true;
}

static bool parse_u64(const char *s, unsigned long long max, unsigned long long *v)
{
	if (!*s || strlen(s) > 20 || (s[0] == '0' && s[1]))
		return false;
	unsigned long long x = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		unsigned d = (unsigned)(*p - '0');
		if (x > (max - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

static bool parse_mtime(const char *s, long long *sec, long *nsec)
{
	const char *dot = strchr(s, '.');
	if (!dot || strlen(dot + 1) != 9)
		return false;
	bool neg = s[0] == '-';
	_cleanup_free_ char *whole = xasprintf("%.*s", (int)(dot - s - neg), s + neg);
	unsigned long long w, f;
	if (!parse_u64(whole, 1ULL << 62, &w))
		return false;
	for (const char *p = dot + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	f = strtoull(dot + 1, NULL, 10);
	*sec = neg ? -(long long)w : (long long)w;
	*nsec = (long)f;
	return true;
}

static bool hash_valid(const char *s)
{
	if (strlen(s) != 64)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

static int perr(struct werr *e, unsigned long no, const char *what)
{
	return werr_set(e, 0, "manifest line %lu: %s", no, what);
}

static bool known_type(const char *t)
{
	return strlen(t) == 1 && (t[0] == MF_DIR || t[0] == MF_FILE || t[0] == MF_LINK ||
				  mf_special(t[0]));
}

static int parse_entry(struct manifest *m, struct pline *l, struct werr *e)
{
	const char *t = l->f[0];
	if (!known_type(t))
		return perr(e, l->no, "unknown entry type");
	struct mf_entry en = { .type = t[0] };
	if (l->nf != (en.type == MF_LINK ? 7u : 6u))
		return perr(e, l->no, "wrong number of fields");
	if (!parse_mode(l->f[1], &en.mode))
		return perr(e, l->no, "bad mode");
	if (!parse_u64(l->f[2], 1ULL << 62, &en.size))
		return perr(e, l->no, "bad size");
	if (!parse_mtime(l->f[3], &en.mtime_sec, &en.mtime_nsec))
		return perr(e, l->no, "bad mtime");
	if (en.type == MF_FILE) {
		if (!hash_valid(l->f[4]))
			return perr(e, l->no, "bad content hash");
		memcpy(en.hash, l->f[4], SHA256_HEX_LEN);
	} else if (strcmp(l->f[4], "-") != 0) {
		return perr(e, l->no, "a hash on an entry that is not a file");
	}
	if ((en.type == MF_DIR || mf_special(en.type)) && en.size != 0)
		return perr(e, l->no, "a directory, FIFO, socket or device with a size");
	_cleanup_free_ char *path = mf_unescape(l->f[5]);
	if (!path || !*path)
		return perr(e, l->no, "bad path");
	if (path[0] == '/' || path[strlen(path) - 1] == '/' || path_has_dot_components(path))
		return perr(e, l->no, "a path that is absolute or has an empty, . or .. component");
	if (m->n && strcmp(m->v[m->n - 1].path, path) >= 0)
		return perr(e, l->no, "entries out of order or repeated");
	char *slash = strrchr(path, '/');
	if (slash) {
		*slash = '\0';
		const struct mf_entry *p = find_in(m->v, m->n, path);
		*slash = '/';
		if (!p || p->type != MF_DIR)
			return perr(e, l->no, "its parent is not a directory of the manifest");
	}
	_cleanup_free_ char *target = NULL;
	if (en.type == MF_LINK) {
		target = mf_unescape(l->f[6]);
		if (!target || !*target)
			return perr(e, l->no, "bad link target");
		if (en.size != strlen(target))
			return perr(e, l->no, "a link whose size is not its target's length");
	}
	if (m->n >= MF_MAX_ENTRIES)
		return perr(e, l->no, "too many entries");
	en.path = path;
	en.target = target;
	manifest_add(m, &en);
	return 0;
}

int manifest_parse(const char *text, size_t len, struct manifest *m, struct werr *e)
{
	*m = (struct manifest){ 0 };
	if (memchr(text, '\0', len)) {
		werr_set(e, 0, "manifest: a NUL byte");
		return -1;
	}
	size_t pos = 0;
	unsigned long no = 0;
	bool root = false, entries = false;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		no++;
		if (!nl) {
			perr(e, no, "no newline at the end");
			goto fail;
		}
		_cleanup_free_ char *line = xasprintf("%.*s", (int)(nl - text - pos), text + pos);
		pos = (size_t)(nl - text) + 1;
		struct pline l = { .no = no };
		char *s = line;
		for (;;) {
			if (l.nf == ARRAY_LEN(l.f)) {
				perr(e, no, "too many fields");
				goto fail;
			}
			l.f[l.nf++] = s;
			char *sp = strchr(s, ' ');
			if (!sp)
				break;
			*sp = '\0';
			s = sp + 1;
		}
		for (size_t i = 0; i < l.nf; i++)
			if (!*l.f[i]) {
				perr(e, no, "an empty field");
				goto fail;
			}
		if (no == 1) {
			if (l.nf != 2 || strcmp(l.f[0], "warden-manifest") != 0 ||
			    (strcmp(l.f[1], "1") != 0 && strcmp(l.f[1], "2") != 0)) {
				perr(e, no, "not a warden manifest (version 1 or 2)");
				goto fail;
			}
			m->specials_unknown = strcmp(l.f[1], "1") == 0;
		} else if (no == 2) {
			if (l.nf != 2 || strcmp(l.f[0], "root") != 0 ||
			    !parse_mode(l.f[1], &m->root_mode)) {
				perr(e, no, "expected root MODE");
				goto fail;
			}
			root = true;
		} else if (strcmp(l.f[0], "exclude") == 0) {
			char *p = l.nf == 2 && !entries ? mf_unescape(l.f[1]) : NULL;
			if (!p || !*p) {
				free(p);
				perr(e, no, "bad exclude line");
				goto fail;
			}
			strv_push_owned(&m->exclude, p);
		} else {
			entries = true;
			if (parse_entry(m, &l, e) < 0)
				goto fail;
		}
	}
	if (!root) {
		werr_set(e, 0, "manifest: truncated (no root line)");
		goto fail;
	}
	return 0;
fail:
	manifest_free(m);
	return -1;
}

bool mf_same_content(const struct mf_entry *a, const struct mf_entry *b)
{
	if (a->type != b->type || a->mode != b->mode)
		return false;
	if (a->type == MF_FILE)
		return strcmp(a->hash, b->hash) == 0;
	if (a->type == MF_LINK)
		return strcmp(a->target, b->target) == 0;
	return true;
}
