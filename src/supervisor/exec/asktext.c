/* asktext.c - the words of an `exec ask` question (asktext.h). An answer
 * for the session is bound to the subject, so the subject is the argv
 * quoted, never two argvs with one text (`touch "a b"` is not `touch a
 * b`), and a long one is named by its hash rather than cut. The summary
 * is what a human decides on: quoted as well (an argument cannot pass for
 * two, nor for the working directory), and when shortened, its start and
 * its end with how much is left out between them. */
#include "asktext.h"

#include <stdio.h>
#include <string.h>

#include "../../common/hash.h"
#include "../../common/sbuf.h"
#include "../target.h"

static bool plain(const char *w)
{
	if (!*w)
		return false;
	for (const unsigned char *s = (const unsigned char *)w; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("_%+=:,./-", *s)))
			return false;
	return true;
}

static void quote_word(struct sbuf *b, const char *w)
{
	if (plain(w)) {
		sb_puts(b, w);
		return;
	}
	sb_putc(b, '\'');
	for (const char *s = w; *s; s++)
		if (*s == '\'')
			sb_puts(b, "'\\''");
		else
			sb_putc(b, *s);
	sb_putc(b, '\'');
}

char *exec_argv_quoted(const struct strv *argv)
{
	struct sbuf b = { 0 };
	sb_puts(&b, "");
	for (size_t i = 0; i < argv->n; i++) {
		if (i)
			sb_putc(&b, ' ');
		quote_word(&b, argv->v[i]);
	}
	return b.p;
}

/* The hash of argv's words, each ended by its NUL (as the kernel lays
 * them out: no two argvs alike), and their bytes. */
static size_t argv_digest(const struct strv *argv, char hex[SHA256_HEX_LEN])
{
	struct sbuf b = { 0 };
	sb_puts(&b, "");
	for (size_t i = 0; i < argv->n; i++)
		sb_put(&b, argv->v[i], strlen(argv->v[i]) + 1);
	sha256_hex(b.p, b.n, hex);
	size_t n = b.n;
	free(b.p);
	return n;
}

char *exec_ask_subject(const char *hex, const struct strv *argv, bool truncated, const char *cwd)
{
	_cleanup_free_ char *q = exec_argv_quoted(argv);
	size_t qn = strlen(q);
	struct sbuf b = { 0 };
	sb_printf(&b, "sha256:%s ", hex ? hex : "unknown");
	if (!truncated && qn <= ASKTEXT_SUBJECT_ARGV_MAX) {
		sb_put(&b, q, qn);
	} else {
		/* "[" right after the hash: a quoted argv never starts so */
		char ah[SHA256_HEX_LEN];
		size_t bytes = argv_digest(argv, ah);
		sb_printf(&b, "[argv sha256:%s, %zu bytes in %zu words%s] ", ah, bytes, argv->n,
			  truncated ? ", cut at warden's bounds" : "");
		sb_put(&b, q, qn < ASKTEXT_SUBJECT_ARGV_MAX / 2 ? qn : ASKTEXT_SUBJECT_ARGV_MAX / 2);
		sb_puts(&b, "...");
	}
	sb_puts(&b, " @ ");
	quote_word(&b, cwd ? cwd : "");
	return b.p;
}

char *exec_ask_summary(const char *path, const struct strv *argv, bool truncated, const char *cwd,
		       const char *via)
{
	struct strv one = { .v = (char **)&path, .n = 1 };
	_cleanup_free_ char *q = exec_argv_quoted(argv->n ? argv : &one);
	size_t qn = strlen(q);
	struct sbuf b = { 0 };
	sb_puts(&b, "run ");
	/* (a gap shorter than the marker is not worth one) */
	if (qn <= ASKTEXT_SUMMARY_HEAD + ASKTEXT_SUMMARY_TAIL + 64) {
		sb_put(&b, q, qn);
	} else {
		sb_put(&b, q, ASKTEXT_SUMMARY_HEAD);
		sb_printf(&b, " [... %zu bytes not shown ...] ",
			  qn - ASKTEXT_SUMMARY_HEAD - ASKTEXT_SUMMARY_TAIL);
		sb_put(&b, q + qn - ASKTEXT_SUMMARY_TAIL, ASKTEXT_SUMMARY_TAIL);
	}
	if (truncated)
		sb_printf(&b, " [... and more that warden did not read (it reads %d arguments, %d bytes "
			  "of each, %d KiB in all): a yes covers this exec only]", TARGET_ARGV_MAX,
			  TARGET_ARG_MAX_LEN - 1, TARGET_ARGV_TOTAL / 1024);
	sb_printf(&b, " (in %s%s)", cwd ? cwd : "", via ? via : "");
	return b.p;
}
