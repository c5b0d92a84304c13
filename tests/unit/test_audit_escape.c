/* test_audit_escape.c - unit tests of the lossless escaping of strings that
 * are not UTF-8 in events (src/audit/escape.c): validity (overlongs,
 * surrogates, beyond U+10FFFF, cut sequences), the escaped form, the round
 * trip for every byte value, and the "escaped" marker of json_set_bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/audit/escape.h"
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

int main(void)
{
	test_valid();
	test_escape();
	test_json();
	return check_status();
}
