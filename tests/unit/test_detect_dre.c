/* test_detect_dre.c - the detection rules' regular expressions
 * (src/detect/dre.c): the same answers as glibc's regcomp/regexec (POSIX
 * extended, the C locale) on random patterns over a small alphabet and the
 * built-in rules' patterns; the errors (a back-reference among them); the
 * cost linear in the value whatever the pattern ((a+)+$, (a|aa)*c); the
 * budget of steps running out; the cache of sets grown as a pattern meets
 * more of them, kept whole as it grows; and in the detector, a rule whose pattern
 * runs out of its steps on one event turned off for the session, with a
 * high alert, while the other rules go on. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "src/common/util.h"
#include "src/detect/detect.h"
#include "src/detect/dre.h"

static int dre_once(const char *pat, const char *s)
{
	struct werr e = { 0 };
	struct dre *re = dre_compile(pat, &e);
	if (!re) {
		fprintf(stderr, "  /%s/: %s\n", pat, e.msg);
		return -2;
	}
	unsigned long budget = 10000000;
	int m = dre_match(re, s, strlen(s), &budget);
	dre_free(re);
	return m;
}

static int glibc_once(const char *pat, const char *s)
{
	regex_t g;
	if (regcomp(&g, pat, REG_EXTENDED | REG_NOSUB) != 0)
		return -2;
	int m = regexec(&g, s, 0, NULL, 0) == 0;
	regfree(&g);
	return m;
}

/* Random patterns: compiled by both or neither, the same answers on every
 * string (none with a newline: glibc matches a ^ or $ in the middle of a
 * pattern next to one, which POSIX does not). */
static void test_against_glibc(void)
{
	static const char *const toks[] = {
		"a", "b", "c", "(", ")", "|", "*", "+", "?", "{2}", "{1,2}", "{,2}", "{2,}", "{", "}",
		".", "^", "$", "[ab]", "[^a]", "[a-c]", "\\b", "\\B", "\\<", "\\>", "\\w", "\\W", "\\s",
		"\\S", "\\.", "\\a", "[[:alpha:]]", "[[:digit:]]", "[[:space:]]", "[^[:alnum:]]", "[]a]",
		"[a-]", " ", "\\`", "\\'", "{0}", "()", "{1,0}", "[.a.]", "[=b=]", "[^]a]", "[b-a]",
		"[[:foo:]]", "[\\]", "\\", "1", "a|", "|", "{99999}", "[[.-.]]", "\\{", "\\(",
	};
	static const char *const strs[] = {
		"", "a", "b", "ab", "ba", "aab", "abc", "cab", "a b", "aaaa", "abab", "b a", "a.b",
		"_a", "ccc ab", "1a2", "a]b", "a-b", "a\\b", "{", "}", "(a)", "|", "*", "x{1}", "\tb",
	};
	srand(35);
	int compiled = 0, differ = 0;
	for (int t = 0; t < 20000; t++) {
		char pat[128] = "";
		for (int k = 1 + rand() % 8; k > 0; k--)
			strcat(pat, toks[rand() % (int)ARRAY_LEN(toks)]);
		regex_t g;
		bool gok = regcomp(&g, pat, REG_EXTENDED | REG_NOSUB) == 0;
		struct werr e = { 0 };
		struct dre *re = dre_compile(pat, &e);
		bool backref = strstr(pat, "\\1") != NULL;
		if (gok != (re != NULL) && !(backref && gok)) {
			if (differ++ < 5)
				fprintf(stderr, "  /%s/: glibc %s, dre %s\n", pat, gok ? "compiles" : "refuses",
					re ? "compiles" : e.msg);
		}
		for (size_t s = 0; gok && re && s < ARRAY_LEN(strs); s++) {
			unsigned long budget = 1000000;
			int m = dre_match(re, strs[s], strlen(strs[s]), &budget);
			if (m != (regexec(&g, strs[s], 0, NULL, 0) == 0) && differ++ < 5)
				fprintf(stderr, "  /%s/ on '%s': dre %d\n", pat, strs[s], m);
		}
		compiled += re != NULL;
		if (gok)
			regfree(&g);
		dre_free(re);
	}
	CHECK(differ == 0);
	CHECK(compiled > 5000);
}

static void test_syntax(void)
{
	/* the built-in rules' patterns */
	const char *b64 = "^[A-Za-z0-9+/]{200,}={0,2}$";
	char v[300];
	memset(v, 'Q', 240);
	strcpy(v + 240, "==");
	CHECK(dre_once(b64, v) == 1);
	v[10] = '!';
	CHECK(dre_once(b64, v) == 0);
	CHECK(dre_once("[A-Za-z0-9+_=-]{40,}", "x.aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd.example") == 1);
	CHECK(dre_once("[A-Za-z0-9+_=-]{40,}", "x.aaaaaaaaaa.example") == 0);
	/* each construct, against glibc */
	static const char *const cases[][2] = {
		{ "^/usr/(s?bin|lib)/", "/usr/sbin/x" }, { "\\.(sh|py)$", "run.py" },
		{ "[[:upper:]][[:lower:]]+", "Hello" }, { "\\<curl\\>", "/bin/curl -s" },
		{ "\\bwget\\b", "xwget" }, { "a{3}", "aa" }, { "(ab){2,}$", "xabab" },
		{ "x\\sy", "x\ty" }, { "[^[:space:]]{3}", "a b c" }, { "a)", "a)" },
		{ "\\`a", "ba" }, { "b\\'", "ab" }, { "[]-]", "-" }, { ".", "\n" }, { "[^a]", "\n" },
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		int want = glibc_once(cases[i][0], cases[i][1]);
		if (dre_once(cases[i][0], cases[i][1]) != want)
			fprintf(stderr, "  /%s/ on '%s': not %d\n", cases[i][0], cases[i][1], want);
		CHECK(dre_once(cases[i][0], cases[i][1]) == want);
	}
	/* POSIX without REG_NEWLINE: a newline is a byte like any other */
	CHECK(dre_once("a.^b", "a\n\nb") == 0);
	CHECK(dre_once("^b", "a\nb") == 0);
	CHECK(dre_once("a$", "a\nb") == 0);
}

static void compile_err(const char *pat, const char *want)
{
	struct werr e = { 0 };
	struct dre *re = dre_compile(pat, &e);
	CHECK(re == NULL);
	if (!strstr(e.msg, want))
		fprintf(stderr, "  /%s/: got '%s', want '%s'\n", pat, e.msg, want);
	CHECK(strstr(e.msg, want) != NULL);
	dre_free(re);
}

static void test_errors(void)
{
	struct werr e = { 0 };
	compile_err("(a)\\1", "back-references (\\1..\\9) are not supported");
	compile_err("(", "unmatched ( or \\(");
	compile_err("[a", "unmatched [");
	compile_err("a{2", "unmatched \\{");
	compile_err("a{3,2}", "invalid content of \\{\\}");
	compile_err("a\\", "trailing backslash");
	compile_err("*a", "invalid preceding regular expression");
	compile_err("^*", "invalid preceding regular expression");
	compile_err("[[:word:]]", "invalid character class");
	compile_err("[z-a]", "invalid range end");
	compile_err("a{40000}", "a count over 32767");
	compile_err("(a{100}){100}", "more than 8192 states");
	compile_err("(((a){30}){30}){30}", "more than 8192 states");
	char deep[512] = "";
	for (int i = 0; i < 250; i++)
		strcat(deep, "(");
	compile_err(deep, "nested too deep");
	char *long_pat = xmalloc(5000);
	memset(long_pat, 'a', 4999);
	long_pat[4999] = '\0';
	compile_err(long_pat, "longer than 4096 bytes");
	free(long_pat);
	/* through the rules parser: FILE:LINE:COL of the pattern */
	const char *text = "rule a low\n  on exec argv~(x)\\1\n";
	struct ruleset rs = { 0 };
	CHECK(drules_parse(&rs, "f.rules", text, strlen(text), &e) < 0);
	CHECK(strstr(e.msg, "f.rules:2:16: bad regular expression '(x)\\1': back-references") != NULL);
	drules_free(&rs);
	/* the largest allowed */
	struct dre *re = dre_compile("a{0,4095}", &e);
	CHECK(re != NULL && dre_states(re) <= DRE_MAX_STATES);
	dre_free(re);
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The patterns that take a backtracking engine exponential (or glibc's
 * seconds) time: here at most (bytes + 2) x (states + 1) steps as an NFA,
 * three times that through the cache, and the same answers. */
static void test_linear(void)
{
	static const char *const hostile[] = { "(a+)+$", "(a|aa)*c", "(a*)*b", "(.*a){12}$", "((a+)+)+!$",
						"\\<(a+)+\\>$" };
	char *v = xmalloc(4097);
	memset(v, 'a', 4095);
	v[4095] = '!';
	v[4096] = '\0';
	for (size_t i = 0; i < ARRAY_LEN(hostile); i++) {
		struct werr e = { 0 };
		struct dre *re = dre_compile(hostile[i], &e);
		CHECK(re != NULL);
		if (!re)
			continue;
		unsigned long budget = 1UL << 40;
		int want = dre_match_nfa(re, v, 4096, &budget);
		unsigned long steps = (1UL << 40) - budget;
		CHECK(want >= 0 && steps <= 4098 * (dre_states(re) + 1));
		budget = 1UL << 40;
		double t = now_s();
		int m = dre_match(re, v, 4096, &budget);
		t = now_s() - t;
		steps = (1UL << 40) - budget;
		CHECK(m == want);
		CHECK(steps <= 3 * 4098 * (dre_states(re) + 4));
		if (t > 0.05)
			fprintf(stderr, "  /%s/: %.3f s\n", hostile[i], t);
		CHECK(t < 0.05);
		dre_free(re);
	}
	free(v);
}

static void test_budget(void)
{
	struct werr e = { 0 };
	struct dre *re = dre_compile("a{0,3000}%", &e);
	CHECK(re != NULL);
	char *v = xmalloc(4097);
	memset(v, 'a', 4096);
	v[4096] = '\0';
	unsigned long budget = 1000000;
	CHECK(dre_match(re, v, 4096, &budget) == -1);
	CHECK(budget == 0);
	budget = 0;
	CHECK(dre_match(re, "%", 1, &budget) == -1); /* nothing left: not even one step */
	budget = 10000;
	CHECK(dre_match(re, "%", 1, &budget) == 1);
	CHECK(budget < 10000);
	/* the scratch space is fine after a run cut short */
	budget = 1000000;
	CHECK(dre_match(re, "aaa%", 4, &budget) == 1);
	budget = 1000000;
	CHECK(dre_match(re, "aaa", 3, &budget) == 0);
	dre_free(re);
	free(v);
}

/* The cache of sets starts small and grows: a pattern that meets some 32
 * sets (the last five bytes' a's) gives glibc's answers, and once every set
 * is cached, a value costs one step a byte; one whose sets hold a thousand
 * states each fills the cache's states and starts it over, and still
 * answers as the NFA does, at most three times its cost. */
static void test_cache_grows(void)
{
	struct werr e = { 0 };
	struct dre *re = dre_compile("a[ab]{4}c|b[ab]{4}d", &e);
	CHECK(re != NULL);
	char v[2002];
	srand(7);
	for (size_t i = 0; i < 2000; i++)
		v[i] = rand() % 2 ? 'a' : 'b';
	v[2000] = '\0';
	unsigned long budget = 1UL << 40;
	CHECK(dre_match(re, v, 2000, &budget) == 0);
	budget = 1UL << 40;
	CHECK(dre_match(re, v, 2000, &budget) == 0);
	CHECK((1UL << 40) - budget == 2000); /* every set met was kept */
	memcpy(v + 1994, "abbbbc", 7);
	budget = 1UL << 40;
	CHECK(dre_match(re, v, 2000, &budget) == 1 && glibc_once("a[ab]{4}c|b[ab]{4}d", v) == 1);
	dre_free(re);
	re = dre_compile("[ab]{0,1000}x", &e);
	CHECK(re != NULL);
	for (int round = 0; round < 3; round++) {
		v[1999] = round == 1 ? 'x' : 'b';
		budget = 1UL << 40;
		int want = dre_match_nfa(re, v, 2000, &budget);
		unsigned long nfa = (1UL << 40) - budget;
		budget = 1UL << 40;
		CHECK(dre_match(re, v, 2000, &budget) == want && want == (round == 1));
		CHECK((1UL << 40) - budget <= 3 * nfa);
	}
	dre_free(re);
}

static unsigned feed(struct detect *d, const char *kind, json_t *f)
{
	static unsigned long seq;
	unsigned n = detect_feed(d, kind, f, ++seq, 1);
	json_decref(f);
	return n;
}

/* In the detector: the costly rule is off after the event that ran it out of
 * steps (a high alert: the score rises 25), the others still fire. */
static void test_detector_turns_off(void)
{
	const char *text = "rule costly low\n  on exec argv~a{0,3000}%\n"
			   "rule cheap low\n  on exec argv~(a+)+$\n";
	struct ruleset rs = { 0 };
	struct werr e = { 0 };
	CHECK(drules_parse(&rs, "t", text, strlen(text), &e) == 0);
	struct detect_risk quiet = { .half_life_s = 600 };
	struct detect *d = detect_new(&rs, NULL, &quiet);
	char *v = xmalloc(4097);
	memset(v, 'a', 4096);
	v[4096] = '\0';
	json_t *argv = json_array();
	for (int i = 0; i < 8; i++)
		json_array_append_new(argv, json_string(v));
	double t = now_s();
	CHECK(feed(d, "exec", json_pack("{s:o}", "argv", argv)) == 1); /* cheap */
	CHECK(now_s() - t < 0.5);
	CHECK(detect_alerts(d) == 2);        /* cheap's, and the costly one turned off */
	CHECK(detect_risk_at(d, 1) == 2 + 25);
	json_t *st = detect_status(d);
	const char *names = json_dumps(st, JSON_COMPACT);
	CHECK(strstr(names, "\"rule\":\"" DETECT_RULE_BOUNDED "\",\"severity\":\"high\"") != NULL);
	free((void *)names);
	json_decref(st);
	/* off: a value it would match cheaply no longer fires it */
	CHECK(feed(d, "exec", json_pack("{s:[s]}", "argv", "%")) == 0);
	CHECK(feed(d, "exec", json_pack("{s:[s]}", "argv", "aa")) == 1);
	CHECK(detect_alerts(d) == 3);
	detect_free(d);
	free(v);
}

int main(void)
{
	test_against_glibc();
	test_syntax();
	test_errors();
	test_linear();
	test_budget();
	test_cache_grows();
	test_detector_turns_off();
	return check_status_counted("detect-dre");
}
