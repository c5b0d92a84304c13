/* test_audit_reader.c - unit tests of the audit log reader: time parsing,
 * session ids, the line reader (partial and too-long lines), the chain
 * verifier against logs from the real writer with every single-byte edit,
 * removed, repeated, swapped and appended lines and every truncation, the
 * filters, display-safe summaries, the directory (symlinks, FIFOs, prefixes)
 * and garbage fed to all of it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/audit/audit.h"
#include "src/audit/emit.h"
#include "src/audit/reader.h"
#include "src/common/hash.h"
#include "src/common/util.h"
#include "check.h"
#include "files.h"

/* Verify a buffer; returns the broken line (0 intact). */
static unsigned long verify(const char *buf, size_t len, const char *session, struct audit_chain *c)
{
	int r = audit_verify_buffer(buf, len, session, c);
	CHECK((r == 0) == (c->broken == 0));
	CHECK(r == 0 || c->why[0] != '\0');
	return c->broken;
}

/* Line number of byte i (from 1). */
static unsigned long line_of(const char *buf, size_t i)
{
	unsigned long n = 1;
	for (size_t k = 0; k < i; k++)
		n += buf[k] == '\n';
	return n;
}

/* ---- times and ids ------------------------------------------------------- */

static void test_times(void)
{
	struct audit_time t, u;
	CHECK(audit_parse_ts("1970-01-01T00:00:00Z", &t) == 0 && t.sec == 0 && t.nsec == 0);
	CHECK(audit_parse_ts("2026-11-21T12:48:38.221635Z", &t) == 0 && t.sec == 1795265318 && t.nsec == 221635000);
	CHECK(audit_parse_ts("2024-02-29T23:59:59.123456789Z", &t) == 0 && t.nsec == 123456789);
	CHECK(audit_parse_ts("2000-03-01T00:00:00Z", &t) == 0 && t.sec == 951868800);
	static const char *const bad[] = {
		"", "2026-11-21", "2026-11-21T12:48:38", "2026-11-21T12:48:38.Z",
		"2026-11-21T12:48:38.1234567890Z", "2026-11-21 12:48:38Z", "2025-02-29T00:00:00Z",
		"2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z",
		"2026-11-21T24:00:00Z", "2026-11-21T12:60:00Z", "2026-11-21T12:48:60Z",
		"2026-11-21T12:48:38ZZ", "2026-11-21T12:48:38Z ", " 2026-11-21T12:48:38Z",
		"+026-11-21T12:48:38Z", "2026-1-21T12:48:38Z", "2026-11-21T12:48Z", "0000-01-01T00:00:00Z",
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		if (audit_parse_ts(bad[i], &t) == 0) {
			fprintf(stderr, "  accepted bad ts '%s'\n", bad[i]);
			failures++;
		}
	}
	CHECK(audit_parse_ts(NULL, &t) < 0);

	struct audit_time now = { .sec = 1795265318, .nsec = 5 };
	CHECK(audit_parse_time_arg("now", &now, &t) == 0 && audit_time_cmp(&t, &now) == 0);
	CHECK(audit_parse_time_arg("10m", &now, &t) == 0 && t.sec == now.sec - 600);
	CHECK(audit_parse_time_arg("-2h", &now, &t) == 0 && t.sec == now.sec - 7200);
	CHECK(audit_parse_time_arg("7d", &now, &t) == 0 && t.sec == now.sec - 7 * 86400);
	CHECK(audit_parse_time_arg("30s", &now, &t) == 0 && t.sec == now.sec - 30);
	/* as the error's example spells it */
	CHECK(audit_parse_time_arg("2h ago", &now, &t) == 0 && t.sec == now.sec - 7200);
	CHECK(audit_parse_time_arg("7d  ago", &now, &t) == 0 && t.sec == now.sec - 7 * 86400);
	CHECK(audit_parse_time_arg("2h ag", &now, &t) < 0 && audit_parse_time_arg("2hago", &now, &t) < 0 &&
	      audit_parse_time_arg("2h ago x", &now, &t) < 0 && audit_parse_time_arg("2h ", &now, &t) < 0);
	CHECK(audit_parse_time_arg("@1795265318.5", &now, &t) == 0 && t.sec == 1795265318 && t.nsec == 500000000);
	CHECK(audit_parse_time_arg("2026-11-21", &now, &t) == 0 && t.sec == 1795219200);
	CHECK(audit_parse_time_arg("2026-11-21 12:48", &now, &u) == 0 && u.sec == 1795219200 + 12 * 3600 + 48 * 60);
	CHECK(audit_parse_time_arg("2026-11-21T12:48:38Z", &now, &t) == 0 && t.sec == 1795265318);
	CHECK(audit_parse_time_arg("2026-11-21T12:48:38.25", &now, &t) == 0 && t.nsec == 250000000);
	static const char *const badarg[] = { "", "yesterday", "10", "10x", "10mm", "@", "@x", "-",
					      "2026-11-21T", "2026-11-21 ", "2026-02-30", "1234567890123s" };
	for (size_t i = 0; i < ARRAY_LEN(badarg); i++) {
		if (audit_parse_time_arg(badarg[i], &now, &t) == 0) {
			fprintf(stderr, "  accepted bad time argument '%s'\n", badarg[i]);
			failures++;
		}
	}
	char buf[64];
	audit_parse_ts("2026-11-21T12:48:38.221635Z", &t);
	audit_format_time(&t, buf, sizeof buf);
	CHECK_STR(buf, "2026-11-21 12:48:38.221");

	CHECK(audit_session_id_valid("20261121T124838Z-1fe31081"));
	CHECK(audit_session_id_valid("a.b_c-D9"));
	static const char *const badid[] = { "", ".", "..", ".hidden", "../x", "a/b", "/abs", "a b",
					     "a\nb", "a*", "\xc3\xa9" };
	for (size_t i = 0; i < ARRAY_LEN(badid); i++)
		CHECK(!audit_session_id_valid(badid[i]));
	char longid[300];
	memset(longid, 'a', sizeof longid - 1);
	longid[sizeof longid - 1] = '\0';
	CHECK(!audit_session_id_valid(longid));
	CHECK(!audit_session_id_valid(NULL));
}

/* ---- display ------------------------------------------------------------- */

static void check_display(const char *in, size_t max, const char *want)
{
	char *s = audit_display_string(in, max);
	CHECK_STR(s, want);
	free(s);
}

static void test_display(void)
{
	check_display("abc", 100, "abc");
	check_display("/usr/bin/ls", 100, "/usr/bin/ls");
	check_display("", 100, "\"\"");
	check_display("a b", 100, "\"a b\"");
	check_display("say \"hi\"", 100, "\"say \\\"hi\\\"\"");
	check_display("\x1b[2J\x1b]0;pwned\x07", 100, "\"\\x1b[2J\\x1b]0;pwned\\x07\"");
	check_display("a\nb\tc\rd\x7f", 100, "\"a\\nb\\tc\\rd\\x7f\"");
	check_display("evil\xe2\x80\xaegnp.exe", 100, "\"evil\\u202egnp.exe\"");   /* RLO */
	check_display("x\xc2\x9b" "31m", 100, "\"x\\u009b31m\"");                     /* C1 CSI */
	check_display("zw\xe2\x80\x8bsp", 100, "\"zw\\u200bsp\"");
	check_display("tag\xf3\xa0\x80\x81", 100, "\"tag\\U000e0001\"");
	check_display("caf\xc3\xa9", 100, "caf\xc3\xa9");                             /* é is fine */
	check_display("bad\xff\xc3", 100, "\"bad\\xff\\xc3\"");                      /* not UTF-8 */
	check_display("\xed\xa0\x80", 100, "\"\\xed\\xa0\\x80\"");                   /* surrogate */
	check_display("\xc0\xaf", 100, "\"\\xc0\\xaf\"");                            /* overlong */
	check_display("abcdef", 3, "abc...");
	check_display(NULL, 3, "\"\"");

	json_t *argv = json_pack("[s,s,s,i]", "sh", "-c", "echo hi; rm -rf \x1b[0m", 3);
	char *s = audit_display_argv(argv, false);
	CHECK_STR(s, "sh -c \"echo hi; rm -rf \\x1b[0m\" ?");
	free(s);
	json_decref(argv);
	/* escaped (escape.h): shown as the bytes they stand for */
	argv = json_pack("[s,s]", "a\\xFFb", "c\\\\d");
	s = audit_display_argv(argv, true);
	CHECK_STR(s, "\"a\\xffb\" \"c\\\\d\"");
	free(s);
	json_decref(argv);
	json_t *esc = json_pack("{s:s, s:s, s:s, s:[s,s], s:{s:s, s:[s]}, s:[s,s]}", "event",
				"session.start", "workspace", "/w\\xFF", "other", "x\\xFF", "argv",
				"sh", "a\\xFE", "layout", "scratch", "/s\\xFD", "escaped", "scratch",
				"escaped", "argv", "workspace");
	s = audit_event_summary(esc);
	CHECK_STR(s, "argv=[sh \"a\\xfe\"] workspace=\"/w\\xff\" other=\"x\\\\xFF\" "
		     "layout={scratch=\"/s\\xfd\" escaped=[scratch]} escaped=[argv workspace]");
	free(s);
	json_decref(esc);

	json_t *ev = json_pack("{s:i, s:s, s:s, s:i, s:s, s:o, s:s, s:s, s:s, s:{s:s}, s:i, s:s}",
			       "v", 1, "ts", "2026-11-21T12:48:38.221635Z", "session", "s", "seq", 1,
			       "event", "session.start", "argv", json_pack("[s,s]", "ls", "-l"),
			       "workspace", "/w s", "policy_digest", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			       "version", "0.1.0", "kernel", "release", "6", "zz", 7, "prev", "x");
	s = audit_event_summary(ev);
	CHECK_STR(s, "argv=[ls -l] workspace=\"/w s\" zz=7");
	free(s);
	json_object_set_new(ev, "event", json_string("exec"));
	json_object_set_new(ev, "sha256", json_string("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
	json_object_set_new(ev, "decision", json_string("deny"));
	json_object_set_new(ev, "ratio", json_real(0.5));
	json_object_set_new(ev, "ok", json_true());
	json_object_set_new(ev, "\x1b[31m", json_null());
	s = audit_event_summary(ev);
	CHECK_STR(s, "decision=deny argv=[ls -l] workspace=\"/w s\" policy_digest=0123456789abcdef... "
		     "version=0.1.0 kernel={release=6} zz=7 sha256=0123456789abcdef... ratio=0.5 ok=true "
		     "\"\\x1b[31m\"=null");
	CHECK(strchr(s, '\x1b') == NULL);
	free(s);
	json_decref(ev);

	/* Deep and wide values stay bounded. */
	json_t *deep = json_array();
	for (int i = 0; i < 100; i++)
		deep = json_pack("[o]", deep);
	json_t *wide = json_array();
	for (int i = 0; i < 1000; i++)
		json_array_append_new(wide, json_integer(i));
	ev = json_pack("{s:s, s:o, s:o}", "event", "x", "deep", deep, "wide", wide);
	s = audit_event_summary(ev);
	CHECK(s && strlen(s) < 2000 && strstr(s, "[...]") && strstr(s, "(936 more)"));
	free(s);
	json_decref(ev);
}

/* ---- the line reader ------------------------------------------------------- */

static void test_reader(void)
{
	char *path = xasprintf("%s/lines", tmpdir);
	int wfd = open(path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0600);
	int rfd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(wfd >= 0 && rfd >= 0);
	struct audit_reader r;
	struct audit_line l;
	struct werr e;
	audit_reader_init(&r, rfd);
	CHECK(audit_reader_next(&r, &l, false, &e) == 0);
	CHECK(write(wfd, "one\ntw", 6) == 6);
	CHECK(audit_reader_next(&r, &l, false, &e) == 1 && l.len == 3 && memcmp(l.text, "one", 3) == 0 &&
	      l.lineno == 1 && l.complete);
	/* A partial line waits while following... */
	CHECK(audit_reader_next(&r, &l, false, &e) == 0);
	CHECK(write(wfd, "o\n\nthr", 6) == 6);
	CHECK(audit_reader_next(&r, &l, false, &e) == 1 && l.len == 3 && memcmp(l.text, "two", 3) == 0 && l.lineno == 2);
	CHECK(audit_reader_next(&r, &l, false, &e) == 1 && l.len == 0 && l.complete && l.lineno == 3);
	CHECK(audit_reader_next(&r, &l, false, &e) == 0);
	/* ...and is returned, incomplete, when flushing. */
	CHECK(audit_reader_next(&r, &l, true, &e) == 1 && l.len == 3 && !l.complete && !l.too_long && l.lineno == 4);
	CHECK(audit_reader_next(&r, &l, true, &e) == 0);

	/* A line past the limit is cut and the rest of it skipped. */
	size_t big = AUDIT_LINE_MAX + 100000;
	char *junk = xmalloc(big);
	memset(junk, 'a', big);
	CHECK(write(wfd, "\n", 1) == 1); /* after a flushed partial line: an empty one */
	CHECK(audit_reader_next(&r, &l, true, &e) == 1 && l.len == 0 && l.complete && l.lineno == 5);
	CHECK(audit_reader_next(&r, &l, true, &e) == 0);
	CHECK(write(wfd, junk, big) == (ssize_t)big);
	CHECK(write(wfd, "\nafter\n", 7) == 7);
	CHECK(audit_reader_next(&r, &l, true, &e) == 1 && l.too_long && !l.complete && l.lineno == 6);
	CHECK(audit_reader_next(&r, &l, true, &e) == 1 && l.len == 5 && memcmp(l.text, "after", 5) == 0 && l.lineno == 7);
	CHECK(audit_reader_next(&r, &l, true, &e) == 0);
	audit_reader_free(&r);
	free(junk);
	close(wfd);
	close(rfd);
	free(path);
}

/* ---- the chain ----------------------------------------------------------------- */

/* A real log from the writer: DIR/ID.jsonl, n events, the last session.end. */
static char *write_log(const char *dir, const char *id, int n, size_t *len)
{
	struct audit *a;
	struct werr e;
	if (audit_open(&a, dir, id, &e) < 0) {
		fprintf(stderr, "  %s\n", e.msg);
		exit(1);
	}
	CHECK(audit_emit(a, "session.start", json_pack("{s:[s,s,s], s:s}", "argv", "sh", "-c", "true", "workspace", "/w"), &e) == 0);
	for (int i = 2; i < n; i++)
		CHECK(audit_emit(a, i % 3 ? "exec" : "net", json_pack("{s:i, s:s, s:[s]}", "pid", i, "decision", i % 2 ? "allow" : "deny", "argv", "x"), &e) == 0);
	CHECK(audit_emit(a, "session.end", json_pack("{s:i, s:o}", "exit", 0, "counts", audit_counts(a)), &e) == 0);
	char *path = xasprintf("%s/%s.jsonl", dir, id);
	audit_close(a);
	char *text = slurp(path, len);
	free(path);
	return text;
}

/* Start of line k (from 1) and its length without the newline. */
static size_t line_span(const char *buf, unsigned long k, size_t *n)
{
	size_t i = 0;
	for (unsigned long j = 1; j < k; j++)
		i = (size_t)(strchr(buf + i, '\n') - buf) + 1;
	*n = (size_t)(strchr(buf + i, '\n') - (buf + i));
	return i;
}

static void test_chain_edits(void)
{
	char *dir = xasprintf("%s/state/warden", tmpdir);
	size_t len;
	const int N = 6;
	char *log = write_log(dir, "s-1", N, &len);
	struct audit_chain c;
	CHECK(verify(log, len, "s-1", &c) == 0 && c.lines == (unsigned long)N && c.ended);
	CHECK(verify(log, len, "s-2", &c) == 1 && strstr(c.why, "session is s-1"));
	CHECK(verify(log, 0, "s-1", &c) == 0 && c.lines == 0 && !c.ended);

	/* Every byte of every line but the last, changed three ways: the
	 * verifier names that very line. */
	size_t last_start, last_n;
	last_start = line_span(log, (unsigned long)N, &last_n);
	char *m = xmalloc(len + 1);
	unsigned long misses = 0, edits = 0;
	for (size_t i = 0; i < last_start; i++) {
		const char repl[3] = { (char)(log[i] ^ 1), '\n', log[i] == 'x' ? 'y' : 'x' };
		for (int k = 0; k < 3; k++) {
			if (repl[k] == log[i])
				continue;
			memcpy(m, log, len);
			m[i] = repl[k];
			unsigned long want = line_of(log, i), got = verify(m, len, "s-1", &c);
			edits++;
			if (got != want) {
				if (misses++ < 5)
					fprintf(stderr, "  byte %zu (line %lu) '%c' -> 0x%02x: reported line %lu (%s)\n",
						i, want, log[i], (unsigned char)repl[k], got, c.why);
				failures++;
			}
		}
	}
	CHECK(edits > 1000);
	/* The last line: an edit is caught when it breaks the line; an edit of
	 * its prev cannot be told from an edit of the line before (no line
	 * after it to ask), and the message names both. */
	for (size_t i = last_start; i < len; i++) {
		memcpy(m, log, len);
		m[i] ^= 1;
		unsigned long got = verify(m, len, "s-1", &c);
		bool prev_field = i >= last_start + last_n - 66 && i < last_start + last_n - 2;
		if (prev_field && got == (unsigned long)N - 1)
			CHECK(strstr(c.why, "line 5 or line 6 was changed") != NULL);
		else
			CHECK(got == 0 || got == (unsigned long)N);
	}

	/* Each line removed: reported at the line after the gap; the last one
	 * removed leaves a shorter intact chain without session.end. */
	for (unsigned long k = 1; k <= (unsigned long)N; k++) {
		size_t n, at = line_span(log, k, &n);
		memcpy(m, log, at);
		memcpy(m + at, log + at + n + 1, len - at - n - 1);
		unsigned long got = verify(m, len - n - 1, "s-1", &c);
		if (k < (unsigned long)N) {
			CHECK(got == k);
			CHECK(strstr(c.why, "removed") != NULL);
		} else {
			CHECK(got == 0 && c.lines == (unsigned long)N - 1 && !c.ended);
		}
	}
	/* A line repeated; two lines swapped. */
	for (unsigned long k = 1; k < (unsigned long)N; k++) {
		size_t n, at = line_span(log, k, &n);
		char *d = xmalloc(len + n + 1);
		memcpy(d, log, at + n + 1);
		memcpy(d + at + n + 1, log + at, len - at);
		CHECK(verify(d, len + n + 1, "s-1", &c) == k + 1);
		free(d);
		size_t n2, at2 = line_span(log, k + 1, &n2);
		memcpy(m, log, len);
		memcpy(m + at, log + at2, n2 + 1);
		memcpy(m + at + n2 + 1, log + at, n + 1);
		CHECK(verify(m, len, "s-1", &c) == k);
	}
	/* Every truncation: a cut inside a line breaks that line. */
	for (size_t i = 1; i < len; i++) {
		unsigned long got = verify(log, i, "s-1", &c);
		if (log[i - 1] == '\n')
			CHECK(got == 0 && c.lines == line_of(log, i) - 1);
		else
			CHECK(got == line_of(log, i) && strstr(c.why, "no newline"));
	}
	free(m);

	/* A correctly chained line appended after session.end. */
	char prev[SHA256_HEX_LEN];
	size_t ln, lat = line_span(log, (unsigned long)N, &ln);
	sha256_hex(log + lat, ln, prev);
	char *extra = xasprintf("%s{\"v\":1,\"ts\":\"2099-01-01T00:00:00.000000Z\",\"session\":\"s-1\",\"seq\":%d,"
				"\"event\":\"exec\",\"prev\":\"%s\"}\n", log, N + 1, prev);
	CHECK(verify(extra, strlen(extra), "s-1", &c) == (unsigned long)N + 1 && strstr(c.why, "after the session.end"));
	free(extra);

	/* The same through a file descriptor. */
	char *path = xasprintf("%s/s-1.jsonl", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct werr e;
	CHECK(audit_verify_fd(fd, "s-1", &c, &e) == 0 && c.lines == (unsigned long)N);
	close(fd);
	free(path);
	free(log);
	free(dir);
}

/* A hand-made log: lines "TS EVENT" chained correctly. */
static char *chain_of(const char *session, const char *const *spec, size_t n, size_t *len)
{
	char prev[SHA256_HEX_LEN];
	memset(prev, '0', 64);
	prev[64] = '\0';
	char *out = xstrdup("");
	for (size_t i = 0; i < n; i++) {
		char ts[64], ev[64];
		CHECK(sscanf(spec[i], "%63s %63s", ts, ev) == 2);
		char *line = xasprintf("{\"v\":1,\"ts\":\"%s\",\"session\":\"%s\",\"seq\":%zu,\"event\":\"%s\",\"prev\":\"%s\"}",
				       ts, session, i + 1, ev, prev);
		sha256_hex(line, strlen(line), prev);
		char *next = xasprintf("%s%s\n", out, line);
		free(out);
		free(line);
		out = next;
	}
	*len = strlen(out);
	return out;
}

static void test_chain_fields(void)
{
	struct audit_chain c;
	size_t len;
	static const char *const ok[] = { "2026-01-01T00:00:00.5Z session.start", "2026-01-01T00:00:00.5Z exec",
					  "2026-01-01T00:00:01Z alert", "2026-01-02T00:00:00.000000001Z session.end" };
	char *log = chain_of("x", ok, 4, &len);
	CHECK(verify(log, len, "x", &c) == 0 && c.lines == 4);
	free(log);

	static const char *const back[] = { "2026-01-01T00:00:01Z session.start", "2026-01-01T00:00:02Z exec",
					    "2026-01-01T00:00:01.999Z exec", "2026-01-01T00:00:03Z exec" };
	log = chain_of("x", back, 4, &len);
	CHECK(verify(log, len, "x", &c) == 3 && strstr(c.why, "earlier than line 2"));
	free(log);

	static const char *const badts[] = { "2026-01-01T00:00:01Z session.start", "2026-02-30T00:00:02Z exec" };
	log = chain_of("x", badts, 2, &len);
	CHECK(verify(log, len, "x", &c) == 2 && strstr(c.why, "\"ts\""));
	free(log);

	/* Lines that are not events. */
	static const struct {
		const char *line;
		const char *why;
	} bad[] = {
		{ "", "empty line" },
		{ "   ", "empty line" },
		{ "[1]", "not a JSON object" },
		{ "{\"v\":1", "not valid JSON" },
		{ "{} {}", "not valid JSON" },
		{ "{\"v\":1,\"v\":1}", "not valid JSON" }, /* duplicate key */
		{ "{\"v\":2,\"ts\":\"2026-01-01T00:00:00Z\",\"session\":\"x\",\"seq\":1,\"event\":\"e\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}", "\"v\"" },
		{ "{\"v\":1.0,\"ts\":\"2026-01-01T00:00:00Z\",\"session\":\"x\",\"seq\":1,\"event\":\"e\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}", "\"v\"" },
		{ "{\"v\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"session\":1,\"seq\":1,\"event\":\"e\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}", "\"session\"" },
		{ "{\"v\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"session\":\"x\",\"seq\":\"1\",\"event\":\"e\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}", "\"seq\"" },
		{ "{\"v\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"session\":\"x\",\"seq\":0,\"event\":\"e\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}", "\"seq\"" },
		{ "{\"v\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"session\":\"x\",\"seq\":1,\"event\":\"\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}", "\"event\"" },
		{ "{\"v\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"session\":\"x\",\"seq\":1,\"event\":\"e\",\"prev\":\"000000000000000000000000000000000000000000000000000000000000000A\"}", "\"prev\"" },
		{ "{\"v\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"session\":\"x\",\"seq\":1,\"event\":\"e\",\"prev\":\"1000000000000000000000000000000000000000000000000000000000000000\"}", "64 zeros" },
		{ "{\"v\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"session\":\"x\",\"seq\":2,\"event\":\"e\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}", "seq is 2, expected 1" },
		{ "{\"v\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"session\":\"x\",\"seq\":1,\"event\":\"e\",\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\"}\r", "" },
		{ "\x1b]0;owned\x07", "not valid JSON" },
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		char *text = xasprintf("%s\n", bad[i].line);
		unsigned long got = verify(text, strlen(text), "x", &c);
		if (!bad[i].why[0]) {
			CHECK(got == 0); /* JSON allows the \r as whitespace; the hash covers it */
		} else if (got != 1 || !strstr(c.why, bad[i].why)) {
			fprintf(stderr, "  '%s': line %lu, '%s', expected '%s'\n", bad[i].line, got, c.why, bad[i].why);
			failures++;
		}
		CHECK(!strchr(c.why, '\x1b') && !strchr(c.why, '\x07'));
		free(text);
	}
}

/* An empty log: the line reader and the chain take it (no line, an intact
 * chain of none), but as a whole log it is broken: it has no session.start.
 * Under UBSan this also checks that nothing adds 0 to a NULL buffer. */
static void test_empty(void)
{
	char *dir = xasprintf("%s/empty-logs", tmpdir);
	CHECK(mkdir(dir, 0700) == 0);
	char *path = xasprintf("%s/e-1.jsonl", dir);
	spit(path, "", 0);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	struct audit_reader r;
	struct audit_line l;
	struct audit_chain c;
	struct werr e;
	audit_reader_init(&r, fd);
	CHECK(audit_reader_next(&r, &l, true, &e) == 0);
	audit_reader_free(&r);
	CHECK(audit_verify_fd(fd, "e-1", &c, &e) == 0 && c.lines == 0 && !c.started);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK(audit_verify_log(fd, "e-1", &c, &e) == 1 && c.broken == 1);
	CHECK(strstr(c.why, "empty") && strstr(c.why, "no session.start"));
	CHECK(strstr(c.never, "the log is empty")); /* a session that never started */
	close(fd);
	CHECK(audit_verify_buffer("", 0, "e-1", &c) == 0 && c.lines == 0);

	/* a chain intact from a first line that is not a session.start */
	static const char *const spec[] = { "2026-01-01T00:00:00Z exec", "2026-01-01T00:00:01Z session.end" };
	size_t len;
	char *log = chain_of("e-2", spec, 2, &len);
	free(path);
	path = xasprintf("%s/e-2.jsonl", dir);
	spit(path, log, len);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(audit_verify_log(fd, "e-2", &c, &e) == 1 && c.broken == 1 && strstr(c.why, "not a session.start"));
	CHECK(c.never[0] == '\0'); /* not a session that never started */
	close(fd);
	free(log);

	/* only a log.failed: never started; a log.failed and more: broken */
	static const char *const lf[] = { "2026-01-01T00:00:00Z log.failed", "2026-01-01T00:00:01Z session.end" };
	for (size_t n = 1; n <= 2; n++) {
		log = chain_of("e-4", lf, n, &len);
		free(path);
		path = xasprintf("%s/e-4.jsonl", dir);
		spit(path, log, len);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		CHECK(audit_verify_log(fd, "e-4", &c, &e) == 1 && c.broken == 1);
		CHECK(n == 1 ? strstr(c.never, "could not be written") != NULL : c.never[0] == '\0');
		close(fd);
		/* the first line cut short: never started */
		spit(path, log, n == 1 ? len - 5 : len - 1);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		CHECK(audit_verify_log(fd, "e-4", &c, &e) == 1);
		CHECK(n == 1 ? strstr(c.never, "cut short") != NULL : c.never[0] == '\0');
		close(fd);
		free(log);
	}

	/* a real log is whole */
	free(path);
	path = xasprintf("%s/e-3.jsonl", dir);
	free(write_log(dir, "e-3", 4, &len));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(audit_verify_log(fd, "e-3", &c, &e) == 0 && c.lines == 4 && c.started && c.ended);
	close(fd);
	free(path);
	free(dir);
}

/* ---- filters ------------------------------------------------------------------- */

static void test_filter(void)
{
	struct audit_filter f = { 0 };
	json_t *ev = json_pack("{s:s, s:s, s:i, s:s}", "ts", "2026-11-21T12:00:00.5Z", "event", "session.start",
			       "pid", 42, "decision", "deny");
	CHECK(audit_filter_match(&f, ev));
	strv_push(&f.events, "exec");
	CHECK(!audit_filter_match(&f, ev));
	strv_push(&f.events, "session");
	CHECK(audit_filter_match(&f, ev));
	strv_free(&f.events);
	strv_push(&f.events, "sess");
	CHECK(!audit_filter_match(&f, ev)); /* a prefix ends at a dot */
	strv_free(&f.events);
	strv_push(&f.events, "session.start");
	CHECK(audit_filter_match(&f, ev));
	f.has_pid = true;
	f.pid = 42;
	CHECK(audit_filter_match(&f, ev));
	f.pid = 4;
	CHECK(!audit_filter_match(&f, ev));
	f.has_pid = false;
	f.decision = "allow";
	CHECK(!audit_filter_match(&f, ev));
	f.decision = "deny";
	CHECK(audit_filter_match(&f, ev));
	f.has_since = f.has_until = true;
	audit_parse_ts("2026-11-21T12:00:00.5Z", &f.since);
	f.until = f.since;
	CHECK(audit_filter_match(&f, ev)); /* both inclusive */
	f.since.nsec++;
	CHECK(!audit_filter_match(&f, ev));
	f.since.nsec -= 2;
	f.until.nsec--;
	CHECK(!audit_filter_match(&f, ev));
	audit_filter_free(&f);

	struct audit_filter g = { .has_pid = true, .pid = 42 };
	json_object_set_new(ev, "pid", json_string("42"));
	CHECK(!audit_filter_match(&g, ev));
	json_decref(ev);
	CHECK(!audit_filter_match(&g, NULL));
}

/* ---- the directory ------------------------------------------------------------- */

static void test_dir(void)
{
	struct werr e;
	char *dir = xasprintf("%s/dir/warden", tmpdir);
	CHECK(audit_dir_open(dir, &e) < 0 && e.errnum == ENOENT);
	size_t len;
	/* Ids sort against times: b-later started after a-early? The writer
	 * stamps real time, so write "late" second. */
	free(write_log(dir, "zz-first", 3, &len));
	usleep(2000);
	free(write_log(dir, "aa-second", 4, &len));
	usleep(2000);
	free(write_log(dir, "mm-third", 2, &len));
	/* Not sessions: a symlink, a FIFO, a bad name, another suffix. */
	char *p = xasprintf("%s/zz-first.jsonl", dir), *q = xasprintf("%s/link.jsonl", dir);
	CHECK(symlink(p, q) == 0);
	free(q);
	q = xasprintf("%s/fifo.jsonl", dir);
	CHECK(mkfifo(q, 0600) == 0);
	free(q);
	q = xasprintf("%s/.hidden.jsonl", dir);
	spit(q, "x\n", 2);
	free(q);
	q = xasprintf("%s/notes.txt", dir);
	spit(q, "x\n", 2);
	free(q);
	/* A live session: no session.end yet, its last line half written. */
	q = xasprintf("%s/zz-live.jsonl", dir);
	static const char *const live[] = { "2099-01-01T00:00:00Z session.start", "2099-01-01T00:00:01Z exec" };
	char *text = chain_of("zz-live", live, 2, &len);
	char *half = xasprintf("%s{\"v\":1,\"ts", text);
	spit(q, half, strlen(half));
	free(half);
	free(text);
	free(q);

	int dfd = audit_dir_open(dir, &e);
	CHECK(dfd >= 0);
	struct audit_session_info *s;
	size_t n;
	CHECK(audit_list_sessions(dfd, dir, &s, &n, &e) == 0);
	CHECK(n == 4);
	if (n == 4) {
		CHECK_STR(s[0].id, "zz-first");
		CHECK_STR(s[1].id, "aa-second");
		CHECK_STR(s[2].id, "mm-third");
		CHECK_STR(s[3].id, "zz-live");
		CHECK(s[0].events == 3 && s[1].events == 4 && s[2].events == 2 && s[3].events == 2);
		CHECK(s[0].start && s[0].end && s[3].start && !s[3].end);
		CHECK(json_integer_value(json_object_get(s[1].end, "exit")) == 0);
	}
	audit_sessions_free(s, n);

	char *id;
	CHECK(audit_resolve_session(dfd, dir, NULL, &id, &e) == 0);
	CHECK_STR(id, "zz-live");
	free(id);
	CHECK(audit_resolve_session(dfd, dir, "aa", &id, &e) == 0);
	CHECK_STR(id, "aa-second");
	free(id);
	CHECK(audit_resolve_session(dfd, dir, "mm-third", &id, &e) == 0);
	CHECK_STR(id, "mm-third");
	free(id);
	CHECK(audit_resolve_session(dfd, dir, "zz", &id, &e) < 0 && id == NULL);
	CHECK(strstr(e.msg, "ambiguous") && strstr(e.msg, "zz-first, zz-live"));
	CHECK(audit_resolve_session(dfd, dir, "nope", &id, &e) < 0 && strstr(e.msg, "no session nope"));
	CHECK(audit_resolve_session(dfd, dir, "../warden/aa-second", &id, &e) < 0 && strstr(e.msg, "invalid session id"));
	CHECK(audit_resolve_session(dfd, dir, "..", &id, &e) < 0 && strstr(e.msg, "invalid session id"));
	/* empty: never the latest */
	CHECK(audit_resolve_session(dfd, dir, "", &id, &e) < 0 && id == NULL &&
	      strstr(e.msg, "an empty session id"));
	CHECK(audit_resolve_session(dfd, dir, "li", &id, &e) < 0); /* the symlink is no session */

	/* Opening: a symlink and a FIFO are refused, without blocking. */
	CHECK(audit_log_open(dfd, dir, "link", &e) < 0 && strstr(e.msg, "symbolic link"));
	CHECK(audit_log_open(dfd, dir, "fifo", &e) < 0 && strstr(e.msg, "not a regular file"));
	CHECK(audit_log_open(dfd, dir, "../x", &e) < 0);
	int fd = audit_log_open(dfd, dir, "zz-live", &e);
	CHECK(fd >= 0);
	struct audit_chain c;
	CHECK(audit_verify_fd(fd, "zz-live", &c, &e) == 1 && c.broken == 3 && strstr(c.why, "no newline"));
	close(fd);
	close(dfd);

	/* The directory itself a symlink. */
	char *link = xasprintf("%s/dirlink", tmpdir);
	CHECK(symlink(dir, link) == 0);
	CHECK(audit_dir_open(link, &e) < 0 && strstr(e.msg, "symbolic link"));
	free(link);

	/* An empty directory: no latest session. */
	char *empty = xasprintf("%s/empty", tmpdir);
	CHECK(mkdir(empty, 0700) == 0);
	dfd = audit_dir_open(empty, &e);
	CHECK(dfd >= 0 && audit_resolve_session(dfd, empty, NULL, &id, &e) < 0 && strstr(e.msg, "no sessions"));
	close(dfd);
	free(empty);
	free(p);
	free(dir);
}

/* ---- garbage ---------------------------------------------------------------------- */

static unsigned long long rng = 88172645463325252ull;
static unsigned rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)rng;
}

static void feed_all(const char *buf, size_t len)
{
	struct audit_chain c;
	audit_verify_buffer(buf, len, "s-1", &c);
	CHECK(c.broken == 0 || c.why[0]);
	for (const char *p = c.why; *p; p++)
		CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
	/* Every line that parses is summarised and filtered without trouble. */
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - buf) - i : len - i;
		char why[256];
		json_t *ev = audit_parse_line(buf + i, n, why, sizeof why);
		if (ev) {
			char *s = audit_event_summary(ev);
			for (const char *p = s; *p; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					failures++;
			free(s);
			struct audit_filter f = { .has_pid = true, .pid = 1, .decision = "deny" };
			audit_filter_match(&f, ev);
			json_decref(ev);
		}
		i += n + 1;
	}
}

static void test_garbage(void)
{
	static const char *const tokens[] = {
		"{", "}", "[", "]", ",", ":", "\"v\"", "\"ts\"", "\"session\"", "\"seq\"", "\"event\"",
		"\"prev\"", "1", "0", "-1", "1e999", "1.5", "99999999999999999999", "\"s-1\"",
		"\"2026-11-21T12:48:38.221635Z\"", "\"0000000000000000000000000000000000000000000000000000000000000000\"",
		"\"session.end\"", "\"exec\"", "\"pid\"", "\"argv\"", "null", "true", "\"\\u0000\"", "\"\\ud800\"",
		"\"\\u202e\"", "\"\x1b[31m\"", "\n", " ", "\r", "\xff", "\"", "\\",
	};
	char buf[4096];
	for (int iter = 0; iter < 20000; iter++) {
		size_t len = 0;
		if (iter % 2) {
			len = rnd() % 600;
			for (size_t i = 0; i < len; i++)
				buf[i] = (char)rnd();
		} else {
			int nt = (int)(rnd() % 80);
			for (int t = 0; t < nt; t++) {
				const char *tok = tokens[rnd() % ARRAY_LEN(tokens)];
				size_t tl = strlen(tok);
				if (len + tl >= sizeof buf)
					break;
				memcpy(buf + len, tok, tl);
				len += tl;
			}
		}
		feed_all(buf, len);
	}
	/* A real log, mangled at random: several edits, cuts and splices. */
	char *dir = xasprintf("%s/garbage/warden", tmpdir);
	size_t len;
	char *log = write_log(dir, "s-1", 8, &len);
	char *m = xmalloc(len * 2 + 1);
	for (int iter = 0; iter < 5000; iter++) {
		size_t n = len;
		memcpy(m, log, len);
		int edits = 1 + (int)(rnd() % 4);
		for (int k = 0; k < edits && n > 0; k++) {
			size_t at = rnd() % n;
			switch (rnd() % 4) {
			case 0: m[at] = (char)rnd(); break;
			case 1: n = at; break;
			case 2: {
				size_t cut = rnd() % (n - at + 1);
				memmove(m + at, m + at + cut, n - at - cut);
				n -= cut;
				break;
			}
			default: {
				/* a copy of a piece of the log spliced in */
				size_t from = rnd() % len, cnt = rnd() % (len - from + 1);
				if (n + cnt > len * 2)
					cnt = len * 2 - n;
				memmove(m + at + cnt, m + at, n - at);
				memcpy(m + at, log + from, cnt);
				n += cnt;
				break;
			}
			}
		}
		feed_all(m, n);
	}
	free(m);
	free(log);
	free(dir);
}

int main(void)
{
	umask(022);
	setenv("TZ", "America/New_York", 1); /* times are UTC whatever TZ says */
	tmpdir_make("warden-test-reader");
	test_times();
	test_display();
	test_reader();
	test_chain_edits();
	test_chain_fields();
	test_filter();
	test_dir();
	test_garbage();
	test_empty();

	tmpdir_remove();
	return check_status();
}
