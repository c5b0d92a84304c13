/* test_supervisor_ttyfilter.c - unit tests of the filter of the agent's
 * terminal output (src/supervisor/ttyfilter.c): text and ordinary escape
 * sequences pass byte for byte; OSC 52 is dropped (BEL or ST, split at
 * every byte, interrupted by another escape or by CAN, far longer than the
 * hold) unless allowed; titles keep printable text only; terminal queries
 * are dropped when their answers would be lost and kept otherwise; a
 * control byte inside a CSI is executed without letting the CSI slip by;
 * an over-long CSI is dropped up to its final byte; what is held at the end
 * comes out by ttyfilter_flush unless it would be dropped; the queries
 * passed are counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/supervisor/ttyfilter.h"
#include "check.h"

/* Filter in through a fresh filter, in pieces of `piece` bytes (0: whole),
 * and flush; the result is malloc'd (NUL-terminated). */
static char *run(const char *in, size_t n, size_t piece, bool clip, bool queries)
{
	struct ttyfilter f;
	ttyfilter_init(&f, clip, queries);
	char *out = malloc(n + 2 * TTYFILTER_HOLD + 1);
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k = piece && n - i > piece ? piece : n - i;
		o += ttyfilter_run(&f, in + i, k, out + o);
		i += k;
	}
	o += ttyfilter_flush(&f, out + o);
	out[o] = '\0';
	return out;
}

/* in filtered (whole, then at every split into two pieces) gives want. */
static void expect_n(int line, const char *in, const char *want, bool clip, bool queries)
{
	size_t n = strlen(in);
	for (size_t piece = 0; piece <= n; piece++) {
		char *got = run(in, n, piece, clip, queries);
		checks++;
		if (strcmp(got, want) != 0) {
			fprintf(stderr, "%s:%d: filtering %zu bytes in pieces of %zu:\n  got:  ", __FILE__,
				line, n, piece);
			for (const char *p = got; *p; p++)
				fprintf(stderr, (unsigned char)*p < 0x20 ? "\\x%02x" : "%c", *p);
			fprintf(stderr, "\n  want: ");
			for (const char *p = want; *p; p++)
				fprintf(stderr, (unsigned char)*p < 0x20 ? "\\x%02x" : "%c", *p);
			fprintf(stderr, "\n");
			failures++;
			free(got);
			return;
		}
		free(got);
	}
}
#define EXPECT(in, want) expect_n(__LINE__, (in), (want), false, true)
#define EXPECT_Q(in, want) expect_n(__LINE__, (in), (want), false, false)
#define EXPECT_CLIP(in, want) expect_n(__LINE__, (in), (want), true, true)

static void test_passes(void)
{
	EXPECT("plain text\r\n", "plain text\r\n");
	EXPECT("caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93");
	EXPECT("\x1b[1;31mred\x1b[0m \x1b[2J\x1b[H\x1b[?25l\x1b[?1049h",
	       "\x1b[1;31mred\x1b[0m \x1b[2J\x1b[H\x1b[?25l\x1b[?1049h");
	EXPECT("\x1b(B\x1b" "7\x1b" "8\x1b=", "\x1b(B\x1b" "7\x1b" "8\x1b=");
	/* a hyperlink (OSC 8) and a cwd report (OSC 7) pass as they are */
	EXPECT("\x1b]8;;https://x.test/\x1b\\link\x1b]8;;\x1b\\",
	       "\x1b]8;;https://x.test/\x1b\\link\x1b]8;;\x1b\\");
	EXPECT("\x1b]7;file://h/w\x07", "\x1b]7;file://h/w\x07");
}

static void test_clipboard(void)
{
	EXPECT("a\x1b]52;c;aGVsbG8=\x07" "b", "ab");
	EXPECT("a\x1b]52;c;aGVsbG8=\x1b\\b", "ab");
	EXPECT("a\x1b]52;c;?\x07" "b", "ab"); /* a read */
	EXPECT("a\x1b]52;;aGk=\x1b[31mb", "a\x1b[31mb"); /* ended by another escape */
	EXPECT("a\x1b]52;c;aGk=\x18" "b", "a\x18" "b"); /* by CAN */
	EXPECT_CLIP("a\x1b]52;c;aGVsbG8=\x07" "b", "a\x1b]52;c;aGVsbG8=\x07" "b");
	/* far longer than the hold: dropped whole, what follows passes */
	size_t big = 3 * TTYFILTER_HOLD;
	char *in = malloc(big + 32);
	strcpy(in, "x\x1b]52;c;");
	size_t n = strlen(in);
	memset(in + n, 'A', big);
	strcpy(in + n + big, "\x07" "after");
	char *got = run(in, strlen(in), 0, false, true);
	CHECK_STR(got, "xafter");
	free(got);
	got = run(in, strlen(in), 7, false, true);
	CHECK_STR(got, "xafter");
	free(got);
	/* cut off by the end: not passed */
	got = run("x\x1b]52;c;aGVsbG8", 15, 0, false, true);
	CHECK_STR(got, "x");
	free(got);
	free(in);
}

static void test_titles(void)
{
	EXPECT("\x1b]0;my title\x07", "\x1b]0;my title\x07");
	EXPECT("\x1b]2;a\tb\x01" "c\x1b\\", "\x1b]2;abc\x1b\\");
	EXPECT("\x1b]1;caf\xc3\xa9\x07", "\x1b]1;caf\xc3\xa9\x07");
	/* a long title: printable text passes, the rest does not */
	size_t big = 2 * TTYFILTER_HOLD;
	char *in = malloc(big + 32), *want = malloc(big + 32);
	strcpy(in, "\x1b]2;");
	strcpy(want, "\x1b]2;");
	size_t n = 4, w = 4;
	for (size_t i = 0; i < big; i++) {
		in[n++] = i % 100 == 0 ? '\x05' : 'T';
		if (i % 100)
			want[w++] = 'T';
	}
	strcpy(in + n, "\x07" "x");
	strcpy(want + w, "\x07" "x");
	char *got = run(in, strlen(in), 0, false, true);
	CHECK(strcmp(got, want) == 0);
	free(got);
	free(in);
	free(want);
}

static void test_queries(void)
{
	static const char *const queries[] = {
		"\x1b[6n", "\x1b[5n", "\x1b[?6n", "\x1b[c", "\x1b[0c", "\x1b[>c", "\x1b[=c",
		"\x1b[18t", "\x1b[14t", "\x1b[21t", "\x1b[?25$p", "\x1b[>q",
		"\x1bP$qm\x1b\\", "\x1bP+q544e\x1b\\",
		"\x1b]11;?\x07", "\x1b]10;?\x1b\\", "\x1b]4;1;?\x07",
	};
	for (size_t i = 0; i < sizeof queries / sizeof *queries; i++) {
		char in[64], want[64];
		snprintf(in, sizeof in, "a%sb", queries[i]);
		EXPECT(in, "ab");
		snprintf(want, sizeof want, "a%sb", queries[i]);
		EXPECT_Q(in, want); /* the answers reach the sandbox: kept */
	}
	/* not queries: a resize (8t) and a colour set */
	EXPECT("\x1b[8;24;80t\x1b]11;#000000\x07", "\x1b[8;24;80t\x1b]11;#000000\x07");
	/* a control inside a CSI is executed; the CSI does not slip by */
	EXPECT("\x1b[6\x07n.", "\x07.");
	EXPECT("\x1b[6\xc3\xa9n.", "."); /* nor with bytes a terminal ignores */
	/* an over-long CSI: dropped up to its final byte */
	size_t big = 2 * TTYFILTER_HOLD;
	char *in = malloc(big + 16);
	strcpy(in, "\x1b[");
	memset(in + 2, '1', big);
	strcpy(in + 2 + big, "nafter");
	char *got = run(in, strlen(in), 0, false, true);
	CHECK_STR(got, "after");
	free(got);
	free(in);
}

/* Queries passed are counted (their answers are owed), the device
 * attributes' apart; dropped ones are not. */
static void test_asked(void)
{
	const char *in = "\033[c\033[0c\033Z\033[>c\033[6n\033]11;?\007\033P$qm\033\\\033[2J";
	char out[256];
	struct ttyfilter f;
	ttyfilter_init(&f, false, false);
	ttyfilter_run(&f, in, strlen(in), out);
	CHECK(f.asked == 7);
	CHECK(f.asked_da == 3);
	ttyfilter_init(&f, false, true);
	ttyfilter_run(&f, in, strlen(in), out);
	CHECK(f.asked == 0 && f.asked_da == 0 && f.dropped == 7);
}

int main(void)
{
	test_passes();
	test_clipboard();
	test_titles();
	test_queries();
	test_asked();
	return check_status_counted("supervisor-ttyfilter");
}
