/* textmemo.h - the detector's conditions' answers, kept by text
 * (detect.c): the same condition on the same text gives the same answer.
 * A build's execs repeat some 1,000 arguments over a dozen conditions: a
 * text is looked up once an event (a hash and a compare), then each glob's
 * answer is a bit, each regex's a bit and the steps its run took (a kept
 * answer costs them again: the rule's budget runs out where the runs
 * would have). Texts of 64 bytes or more are not kept (98% are shorter);
 * their conditions are matched each time, as are the globs and regexes
 * past the ones a text keeps (textmemo_globs, textmemo_regexes). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct textmemo;
struct tm_entry;

struct textmemo *textmemo_new(void);
void textmemo_free(struct textmemo *m);
size_t textmemo_globs(void);
size_t textmemo_regexes(void);

/* A new event, or a text of this one freed: the entries found by address
 * so far are looked up again. */
void textmemo_event(struct textmemo *m);

/* The entry of text s, made (with no answers) when new; NULL when s is too
 * long to keep. Valid until the next textmemo_get. stable: s's address
 * holds this text until the next textmemo_event (a string of the event's
 * JSON, not a buffer used again), so the entry is found by it next time. */
struct tm_entry *textmemo_get(struct textmemo *m, const char *s, bool stable);

/* Glob i's answer for the entry's text: 1 match, 0 not, -1 unknown. */
int textmemo_glob(const struct tm_entry *t, size_t i);
void textmemo_glob_put(struct tm_entry *t, size_t i, bool match);
/* Regex i's: the same, and *steps the steps its run took. */
int textmemo_regex(const struct tm_entry *t, size_t i, unsigned long *steps);
void textmemo_regex_put(struct tm_entry *t, size_t i, bool match, unsigned long steps);
