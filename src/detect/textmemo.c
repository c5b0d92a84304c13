/* textmemo.c - answers kept by text (textmemo.h). The globs': a
 * direct-mapped table of texts, each with two bit sets (answered, matched);
 * in front of it, for the event being matched, the entries found by the
 * address of the text (an event's argv is asked by ten conditions: one
 * hash of each argument, not ten). A slot's stamp changes when another text
 * takes it, so an address kept for the event never answers for the wrong
 * text. The regexes': a direct-mapped table by regex and text. */
#include "textmemo.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

#define SLOTS 2048    /* texts kept */
#define TEXT 64       /* the longest text kept, its NUL included */
#define WORDS 8       /* 512 conditions */
#define NEAR 256      /* the event's text addresses kept */

struct tm_entry {
	uint64_t stamp;
	uint64_t known[WORDS], match[WORDS];
	size_t len;
	char text[TEXT];
};

struct near {
	const char *p;
	struct tm_entry *t;
	uint64_t stamp, event;
};

struct re_entry {
	const void *cond;             /* NULL: empty */
	unsigned long steps;
	bool match;
	char text[TEXT];
};

struct textmemo {
	struct tm_entry *slot[SLOTS]; /* each made at its first use */
	struct re_entry *re[SLOTS];
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
	for (size_t i = 0; i < SLOTS; i++) {
		free(m->slot[i]);
		free(m->re[i]);
	}
	free(m);
}

size_t textmemo_bits(void)
{
	return WORDS * 64;
}

void textmemo_event(struct textmemo *m)
{
	m->event++;
}

static uint64_t hash(const char *s, size_t *len)
{
	uint64_t h = 1469598103934665603ULL;
	size_t n = 0;
	for (; s[n] && n < TEXT; n++)
		h = (h ^ (unsigned char)s[n]) * 1099511628211ULL;
	*len = n;
	return h;
}

struct tm_entry *textmemo_get(struct textmemo *m, const char *s, bool stable)
{
	struct near *nr = &m->near[((uintptr_t)s >> 3) % NEAR];
	if (stable && nr->event == m->event && nr->p == s && nr->t->stamp == nr->stamp)
		return nr->t;
	size_t len;
	uint64_t h = hash(s, &len);
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

int textmemo_answer(const struct tm_entry *t, size_t i)
{
	if (i >= WORDS * 64 || !(t->known[i / 64] & (1ULL << (i % 64))))
		return -1;
	return (t->match[i / 64] >> (i % 64)) & 1;
}

void textmemo_put(struct tm_entry *t, size_t i, bool match)
{
	if (i >= WORDS * 64)
		return;
	t->known[i / 64] |= 1ULL << (i % 64);
	if (match)
		t->match[i / 64] |= 1ULL << (i % 64);
}

/* The regex slot of cond and s, NULL when s is too long to keep. */
static struct re_entry **re_slot(struct textmemo *m, const void *cond, const char *s)
{
	size_t len;
	uint64_t h = hash(s, &len) ^ ((uint64_t)(uintptr_t)cond >> 4);
	return len < TEXT ? &m->re[h % SLOTS] : NULL;
}

bool textmemo_regex(struct textmemo *m, const void *cond, const char *s, bool *match,
		    unsigned long *steps)
{
	struct re_entry **e = re_slot(m, cond, s);
	if (!e || !*e || (*e)->cond != cond || strcmp((*e)->text, s) != 0)
		return false;
	*match = (*e)->match;
	*steps = (*e)->steps;
	return true;
}

void textmemo_regex_put(struct textmemo *m, const void *cond, const char *s, bool match,
			unsigned long steps)
{
	struct re_entry **e = re_slot(m, cond, s);
	if (!e)
		return;
	if (!*e)
		*e = xcalloc(1, sizeof **e);
	**e = (struct re_entry){ .cond = cond, .match = match, .steps = steps };
	snprintf((*e)->text, sizeof (*e)->text, "%s", s);
}
