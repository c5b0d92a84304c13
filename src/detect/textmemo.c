/* textmemo.c - answers kept by text (textmemo.h). A direct-mapped table of
 * texts, each with bit sets (answered, matched) and its regexes' steps; in
 * front of it, for the event being matched, the entries found by the
 * address of the text (an event's argv is asked by a dozen conditions: one
 * hash of each argument, not a dozen). A slot's stamp changes when another
 * text takes it, so an address kept for the event never answers for the
 * wrong text. */
#include "textmemo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/fnv.h"
#include "../common/util.h"

#define SLOTS 2048    /* texts kept */
#define TEXT 64       /* the longest text kept, its NUL included */
#define WORDS 8       /* 512 globs */
#define REGEXES 16
#define NEAR 512      /* the event's text addresses kept */

struct tm_entry {
	uint64_t stamp;
	uint64_t known[WORDS], match[WORDS];
	uint32_t re_known, re_match;
	uint32_t re_steps[REGEXES];
	size_t len;
	char text[TEXT];
};

struct near {
	const char *p;
	struct tm_entry *t;
	uint64_t stamp, event;
};

struct textmemo {
	struct tm_entry *slot[SLOTS]; /* each made at its first use */
	struct near near[NEAR];
	uint64_t stamps, event;
};

struct textmemo *textmemo_new(void)
{
	struct textmemo *m = xcalloc(1, sizeof *m);
	m->event = 1;
	return m;
}

void textmemo_free(struct textmemo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < SLOTS; i++)
		free(m->slot[i]);
	free(m);
}

size_t textmemo_globs(void)
{
	return WORDS * 64;
}

size_t textmemo_regexes(void)
{
	return REGEXES;
}

void textmemo_event(struct textmemo *m)
{
	m->event++;
}

struct tm_entry *textmemo_get(struct textmemo *m, const char *s, bool stable)
{
	/* the address's bits mixed: malloc's are 16 apart */
	struct near *nr = &m->near[((uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ULL) >> 55];
	if (stable && nr->event == m->event && nr->p == s && nr->t->stamp == nr->stamp)
		return nr->t;
	size_t len;
	uint64_t h = fnv1a(s, TEXT, &len);
	if (len >= TEXT)
		return NULL;
	struct tm_entry **slot = &m->slot[h % SLOTS];
	if (!*slot)
		*slot = xcalloc(1, sizeof **slot);
	struct tm_entry *t = *slot;
	if (!t->stamp || t->len != len || memcmp(t->text, s, len) != 0) {
		memset(t, 0, sizeof *t);
		t->stamp = ++m->stamps;
		t->len = len;
		memcpy(t->text, s, len + 1);
	}
	if (stable)
		*nr = (struct near){ .p = s, .t = t, .stamp = t->stamp, .event = m->event };
	return t;
}

int textmemo_glob(const struct tm_entry *t, size_t i)
{
	if (i >= WORDS * 64 || !(t->known[i / 64] & (1ULL << (i % 64))))
		return -1;
	return (t->match[i / 64] >> (i % 64)) & 1;
}

void textmemo_glob_put(struct tm_entry *t, size_t i, bool match)
{
	if (i >= WORDS * 64)
		return;
	t->known[i / 64] |= 1ULL << (i % 64);
	if (match)
		t->match[i / 64] |= 1ULL << (i % 64);
}

int textmemo_regex(const struct tm_entry *t, size_t i, unsigned long *steps)
{
	if (i >= REGEXES || !(t->re_known & (1U << i)))
		return -1;
	*steps = t->re_steps[i];
	return (t->re_match >> i) & 1;
}

void textmemo_regex_put(struct tm_entry *t, size_t i, bool match, unsigned long steps)
{
	if (i >= REGEXES || steps > UINT32_MAX)
		return;
	t->re_known |= 1U << i;
	if (match)
		t->re_match |= 1U << i;
	t->re_steps[i] = (uint32_t)steps;
}
