/* test_audit_escape.c - unit tests of the lossless escaping of strings that
 * are not UTF-8 in events (src/audit/escape.c): validity (overlongs,
 * surrogates, beyond U+10FFFF, cut sequences), the escaped form, the round
 * trip for every byte value, the "escaped" marker of json_set_bytes; the
 * round trip through a line's JSON text and back with json_get_bytes of
 * 20,000 random strings of stray bytes, backslashes and escapes spelled
 * out; what a reader refuses; and session.start's argv, workspace and
 * profiles kept whatever their bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/audit/escape.h"
#include "src/audit/events.h"
#include "check.h"

static void test_valid(void)
{
	CHECK(utf8_valid("", 0));
	CHECK(utf8_valid("plain ascii", 11));
	CHECK(utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14));
	CHECK(!utf8_valid("\xff", 1));
	CHECK(!utf8_valid("\xc0\xaf", 2));             /* overlong / */
	CHECK(!utf8_valid("\xe0\x80\xaf", 3));         /* overlong */
	CHECK(!utf8_valid("\xed\xa0\x80", 3));         /* a surrogate */
	CHECK(!utf8_valid("\xf4\x90\x80\x80", 4));     /* beyond U+10FFFF */
	CHECK(!utf8_valid("\xe2\x82", 2));             /* cut short */
	CHECK(!utf8_valid("a\x80", 2));                /* a lone continuation */
}

static void test_escape(void)
{
	char *e = utf8_escape("a\xfd" "b\\c\xc3\xa9");
	CHECK_STR(e, "a\\xFDb\\\\c\xc3\xa9");
	size_t n = 0;
	char *u = utf8_unescape(e, &n);
	CHECK(u && n == 7 && memcmp(u, "a\xfd" "b\\c\xc3\xa9", 7) == 0);
	free(u);
	free(e);
	/* every byte value but NUL comes back */
	char all[256];
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	e = utf8_escape(all);
	CHECK(utf8_valid(e, strlen(e)));
	u = utf8_unescape(e, &n);
	CHECK(u && n == 255 && memcmp(u, all, 255) == 0);
	free(u);
	free(e);
	/* not an escaped string */
	CHECK(utf8_unescape("a\\q", NULL) == NULL);
	CHECK(utf8_unescape("a\\x4", NULL) == NULL);
	CHECK(utf8_unescape("end\\", NULL) == NULL);
}

static void test_json(void)
{
	json_t *o = json_object(), *esc = NULL;
	json_set_bytes(o, "ok", "fine\\path", &esc);
	CHECK(esc == NULL);
	CHECK_STR(json_string_value(json_object_get(o, "ok")), "fine\\path");
	json_set_bytes(o, "bad", "x\xff", &esc);
	CHECK(esc && json_array_size(esc) == 1);
	CHECK_STR(json_string_value(json_array_get(esc, 0)), "bad");
	CHECK_STR(json_string_value(json_object_get(o, "bad")), "x\\xFF");
	json_set_bytes(o, "none", NULL, &esc);
	CHECK(json_is_null(json_object_get(o, "none")));
	json_decref(esc);
	json_decref(o);
	char *v[] = { "a\\b", "c\xfe" };
	bool any = false;
	json_t *a = json_bytes_array(v, 2, &any);
	CHECK(any);
	CHECK_STR(json_string_value(json_array_get(a, 0)), "a\\\\b"); /* all escaped alike */
	CHECK_STR(json_string_value(json_array_get(a, 1)), "c\\xFE");
	json_decref(a);
	a = json_bytes_array(v, 1, &any);
	CHECK(!any);
	CHECK_STR(json_string_value(json_array_get(a, 0)), "a\\b");
	json_decref(a);
}

/* Through a line of the log and back: the JSON text written, parsed again,
 * and the bytes read back with json_get_bytes (the readers' way). */
static json_t *through_text(json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT);
	CHECK(text != NULL);
	json_t *back = text ? json_loads(text, 0, NULL) : NULL;
	CHECK(back != NULL);
	free(text);
	json_decref(o);
	return back;
}

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static unsigned rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)rng;
}

/* A string of 0-31 bytes, none NUL: stray bytes, backslashes, "\\xFF"
 * spelled out, valid sequences cut short. */
static void random_bytes(char *buf)
{
	static const char *const parts[] = { "\\", "\\x", "\\xFF", "\xc3\xa9", "\xe2\x82", "\xff",
					     "\x80", "a", "/", "\xf0\x9f\x98\x80", "\xed\xa0\x80", "x" };
	size_t n = 0, want = rnd() % 32;
	while (n < want) {
		const char *p = rnd() % 3 ? parts[rnd() % 12] : NULL;
		char one[2] = { (char)(1 + rnd() % 255), 0 };
		if (!p)
			p = one;
		size_t l = strlen(p);
		if (n + l > 31)
			break;
		memcpy(buf + n, p, l);
		n += l;
	}
	buf[n] = '\0';
}

static void test_round_trip(void)
{
	for (int round = 0; round < 20000; round++) {
		char a[32], b[32], c[32];
		random_bytes(a);
		random_bytes(b);
		random_bytes(c);
		json_t *o = json_object(), *esc = NULL;
		json_set_bytes(o, "one", a, &esc);
		char *v[] = { b, c, a };
		json_set_bytes_array(o, "list", v, 3, &esc);
		if (esc)
			json_object_set_new(o, "escaped", esc);
		o = through_text(o);
		char *got = json_get_bytes(o, "one");
		CHECK(got && strcmp(got, a) == 0);
		free(got);
		for (size_t i = 0; i < 3; i++) {
			got = json_get_bytes_at(o, "list", i);
			CHECK(got && strcmp(got, v[i]) == 0);
			free(got);
		}
		CHECK(json_get_bytes_at(o, "list", 3) == NULL);
		json_decref(o);
	}
	/* not what a reader may take: a malformed escape, a NUL, not a string */
	json_t *o = json_pack("{s:s, s:s, s:i, s:s, s:[s, s, s]}", "bad", "a\\q", "nul", "a\\x00b",
			      "num", 3, "plain", "a\\xFF", "escaped", "bad", "nul", "num");
	CHECK(json_get_bytes(o, "bad") == NULL);
	CHECK(json_get_bytes(o, "nul") == NULL);
	CHECK(json_get_bytes(o, "num") == NULL);
	CHECK(json_get_bytes(o, "missing") == NULL);
	char *plain = json_get_bytes(o, "plain"); /* not listed: as it is */
	CHECK_STR(plain, "a\\xFF");
	free(plain);
	CHECK(json_is_escaped(o, "bad") && !json_is_escaped(o, "plain"));
	json_decref(o);
}

/* session.start: the argv, the workspace and the profiles' paths come back
 * as they were, whatever their bytes (the line used to lose every field). */
static void test_session_start(void)
{
	char *argv[] = { "sh", "-c", "a\xfd\\b", NULL };
	char *profiles[] = { "builtin:default", "/p\xfe.profile", NULL };
	struct event ev = ev_session_start(&(struct ev_session_start){
		.version = "0", .argv = argv, .workspace = "/tmp/ws-\xff", .policy_digest = "d",
		.profiles = profiles, .uid = 1, .kernel = json_object(),
		.checkpoint = json_pack("{s:s}", "manifest", "m") });
	json_t *o = through_text(ev.fields);
	char *ws = json_get_bytes(o, "workspace");
	CHECK_STR(ws, "/tmp/ws-\xff");
	free(ws);
	for (size_t i = 0; argv[i]; i++) {
		char *a = json_get_bytes_at(o, "argv", i);
		CHECK_STR(a, argv[i]);
		free(a);
	}
	char *p = json_get_bytes_at(o, "profiles", 1);
	CHECK_STR(p, "/p\xfe.profile");
	free(p);
	CHECK_STR(json_string_value(json_object_get(json_object_get(o, "checkpoint"), "manifest")), "m");
	CHECK(json_is_escaped(o, "argv") && json_is_escaped(o, "workspace") &&
	      json_is_escaped(o, "profiles"));
	json_decref(o);
	/* all UTF-8: no "escaped" */
	char *plain[] = { "ls", NULL };
	ev = ev_session_start(&(struct ev_session_start){ .version = "0", .argv = plain,
		.workspace = "/w", .policy_digest = "d", .profiles = plain, .kernel = json_object() });
	CHECK(ev.fields && !json_object_get(ev.fields, "escaped"));
	event_discard(&ev);
}

int main(void)
{
	test_valid();
	test_escape();
	test_json();
	test_round_trip();
	test_session_start();
	return check_status();
}
