/* textmemo.h - the detector's conditions' answers, kept by text
 * (detect.c): the same condition on the same text gives the same answer.
 * A build's execs repeat some 1,000 arguments over ten glob conditions: a
 * text is looked up once an event (a hash and a compare), its later globs
 * are a bit each. A regex's answer is kept by the regex and the text, with
 * the steps its run took. Texts of 64 bytes or more are not kept (98% are
 * shorter); their conditions are matched each time. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct textmemo;
struct tm_entry;

/* A memo for conditions numbered from 0 (textmemo_bits: how many it
 * keeps; a condition past them is never kept). */
struct textmemo *textmemo_new(void);
void textmemo_free(struct textmemo *m);
size_t textmemo_bits(void);

/* A new event, or a text of this one freed: the entries found by address
 * so far are looked up again. */
void textmemo_event(struct textmemo *m);

/* The entry of text s, made (with no answers) when new; NULL when s is too
 * long to keep. Valid until the next textmemo_get. stable: s's address
 * holds this text until the next textmemo_event (a string of the event's
 * JSON, not a buffer used again), so the entry is found by it next time. */
struct tm_entry *textmemo_get(struct textmemo *m, const char *s, bool stable);

/* Condition i's answer for the entry's text: 1 match, 0 not, -1 unknown. */
int textmemo_answer(const struct tm_entry *t, size_t i);
void textmemo_put(struct tm_entry *t, size_t i, bool match);

/* cond's kept answer for s (true: *match and *steps set), and keeping one
 * (cond: any address that names the regex). */
bool textmemo_regex(struct textmemo *m, const void *cond, const char *s, bool *match,
		    unsigned long *steps);
void textmemo_regex_put(struct textmemo *m, const void *cond, const char *s, bool match,
			unsigned long steps);
