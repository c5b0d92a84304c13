/* dre.h - the detection rules' regular expressions (FIELD~REGEX): POSIX
 * extended syntax, as regcomp(3) reads it with REG_EXTENDED in the C locale,
 * with GNU's \w \W \s \S \b \B \< \> \` \' -- but no back-references (\1..\9),
 * which no engine matches in linear time.
 *
 * A pattern is compiled to at most DRE_MAX_STATES states and run as a
 * Thompson NFA: every state at most once per byte of the value, so one match
 * costs at most (bytes + 2) x (states + 1) steps, whatever the pattern
 * ((a+)+$ on "aaaa...!" is linear, not exponential as in a backtracking
 * engine). The sets of states met are cached as the states of a DFA, so a
 * pattern met again costs a step a byte (a set new to the cache costs its
 * states again: three times the bound above at most). A budget of steps, shared by the
 * caller's matches, bounds a run further: the detector gives each rule a
 * budget per event (detect.c). */
#pragma once
#include <stddef.h>

#include "../common/err.h"

#define DRE_MAX_STATES 8192

struct dre;

/* NULL with e ("...: the reason") when pat is not a regular expression, uses
 * a back-reference, or is larger than DRE_MAX_STATES once its repetitions
 * are counted out. */
struct dre *dre_compile(const char *pat, struct werr *e);
void dre_free(struct dre *re);

/* The number of states of re (for tests and the benchmark). */
size_t dre_states(const struct dre *re);

/* Whether re matches anywhere in s[0..len): 1 it does, 0 it does not, -1
 * the budget ran out first (then *budget is 0). Each step (a state entered at
 * a position, or a byte read through the cache) takes one from *budget. re's
 * scratch space and cache are its own: one match at a time per compiled
 * pattern. */
int dre_match(struct dre *re, const char *s, size_t len, unsigned long *budget);

/* The same answer without the cache (for the tests and the fuzz target). */
int dre_match_nfa(struct dre *re, const char *s, size_t len, unsigned long *budget);
