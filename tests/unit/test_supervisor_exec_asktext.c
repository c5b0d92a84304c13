/* test_supervisor_exec_asktext.c - unit tests of the words of an `exec
 * ask` question (src/supervisor/exec/asktext.c): the argv quoted so that
 * no two argvs read alike ("a b" against a b, a quote, an empty word); a
 * subject that names a long argv by its hash, never by a cut text (argvs
 * alike in their first 2 KiB differ); a summary that shows a long argv's
 * start and end and how much is left out, and says when warden did not
 * read all of it. */
#include <stdlib.h>
#include <string.h>

#include "src/supervisor/exec/asktext.h"
#include "argv.h"
#include "check.h"


static void check_quoted(struct strv a, const char *want)
{
	char *q = exec_argv_quoted(&a);
	CHECK_STR(q, want);
	free(q);
}

static void test_quoted(void)
{
	check_quoted(ARGV("touch", "a b"), "touch 'a b'");
	check_quoted(ARGV("touch", "a", "b"), "touch a b");
	check_quoted(ARGV("echo", "it's", ""), "echo 'it'\\''s' ''");
	check_quoted(ARGV("git", "push", "origin", "+main:main", "--force"),
		     "git push origin +main:main --force");
	check_quoted(ARGV("x", "(in /safe)", "@", "a[1]"), "x '(in /safe)' '@' 'a[1]'");
	check_quoted(ARGV("x", "a\nb"), "x 'a\nb'");
}

/* A word of n bytes of c (malloc'd). */
static char *word(size_t n, char c)
{
	char *w = malloc(n + 1);
	memset(w, c, n);
	w[n] = '\0';
	return w;
}

static void test_subject(void)
{
	char *s = exec_ask_subject("ab", PARGV("touch", "a b"), false, "/w s");
	CHECK_STR(s, "sha256:ab touch 'a b' @ '/w s'");
	char *t = exec_ask_subject("ab", PARGV("touch", "a", "b"), false, "/w s");
	CHECK(strcmp(s, t) != 0);
	free(s);
	free(t);
	s = exec_ask_subject(NULL, PARGV("true"), false, "/w");
	CHECK_STR(s, "sha256:unknown true @ /w");
	free(s);

	/* alike in their first 2100 bytes: a long argv by its hash */
	char *x = word(2100, 'x');
	s = exec_ask_subject("ab", PARGV("touch", x, "ok1"), false, "/w");
	t = exec_ask_subject("ab", PARGV("touch", x, "EVIL"), false, "/w");
	char *u = exec_ask_subject("ab", PARGV("touch", x, "ok1"), false, "/w");
	CHECK(strcmp(s, t) != 0);
	CHECK_STR(s, u);
	CHECK(strncmp(s, "sha256:ab [argv sha256:", 23) == 0);
	CHECK(strstr(s, ", 2111 bytes in 3 words] touch xxx") != NULL);
	CHECK(strlen(s) < ASKTEXT_SUBJECT_ARGV_MAX);
	free(u);
	/* cut when read: said, and never the subject of a whole one */
	u = exec_ask_subject("ab", PARGV("touch", x, "ok1"), true, "/w");
	CHECK(strcmp(s, u) != 0);
	CHECK(strstr(u, "words, cut at warden's bounds] ") != NULL);
	free(s);
	free(t);
	free(u);
	free(x);
}

static void test_summary(void)
{
	char *s = exec_ask_summary("/bin/touch", PARGV("touch", "a b"), false, "/w", "");
	CHECK_STR(s, "run touch 'a b' (in /w)");
	free(s);
	s = exec_ask_summary("/bin/x", &(struct strv){ 0 }, false, "/w", "; a script run by /bin/sh");
	CHECK_STR(s, "run /bin/x (in /w; a script run by /bin/sh)");
	free(s);

	/* the start and the end of a long one, and how much is between */
	char *x = word(3000, 'x');
	s = exec_ask_summary("/bin/touch", PARGV("touch", x, "--force"), false, "/w", "");
	size_t q = strlen("touch ") + 3000 + strlen(" --force");
	char mark[96];
	snprintf(mark, sizeof mark, " [... %zu bytes not shown ...] ",
		 q - ASKTEXT_SUMMARY_HEAD - ASKTEXT_SUMMARY_TAIL);
	CHECK(strstr(s, mark) != NULL);
	CHECK(strncmp(s, "run touch xxx", 13) == 0);
	CHECK(strlen(s) > strlen(" --force (in /w)") &&
	      strcmp(s + strlen(s) - strlen("x --force (in /w)"), "x --force (in /w)") == 0);
	free(s);
	/* not read whole: said, with what a yes covers */
	s = exec_ask_summary("/bin/touch", PARGV("touch", "y"), true, "/w", "");
	CHECK(strstr(s, "run touch y [... and more that warden did not read") == s);
	CHECK(strstr(s, "a yes covers this exec only] (in /w)") != NULL);
	free(s);
	free(x);
}

int main(void)
{
	test_quoted();
	test_subject();
	test_summary();
	return check_status_counted("supervisor-exec-asktext");
}
