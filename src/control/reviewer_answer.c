/* reviewer_answer.c - what a reviewer command printed, read as its answer
 * (reviewer.h): one JSON object with a known decision and an optional
 * reason, or a clear error. Pure: no I/O, nothing kept; the fuzz target
 * tests/fuzz/fuzz_reviewer.c feeds it anything. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "../common/util.h"
#include "reviewer.h"

static const char *const verdict_names[] = { [REVIEW_ALLOW] = "allow", [REVIEW_DENY] = "deny",
					     [REVIEW_ASK] = "ask" };

const char *reviewer_verdict_name(enum review_verdict v)
{
	return (unsigned)v < sizeof verdict_names / sizeof verdict_names[0] ? verdict_names[v] : "?";
}

unsigned reviewer_limit_s(unsigned timeout_s)
{
	unsigned s = timeout_s / 2;
	if (s > REVIEWER_LIMIT_MAX_S)
		s = REVIEWER_LIMIT_MAX_S;
	return s ? s : 1;
}

/* src (NUL-terminated) as printable ASCII into dst: other bytes become
 * '?', at most len - 1 of them. */
static void printable(char *dst, size_t len, const char *src)
{
	size_t n = 0;
	for (; *src && n + 1 < len; src++)
		dst[n++] = (unsigned char)*src >= 0x20 && (unsigned char)*src < 0x7f ? *src : '?';
	dst[n] = '\0';
}

/* The length of the UTF-8 character at s (valid UTF-8, as jansson leaves
 * its strings). */
static size_t char_len(unsigned char c)
{
	return c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
}

/* The reason as reviewer.h keeps it: C0 and C1 controls and DEL made
 * spaces (a reason is shown to humans and put in a header), whole
 * characters only, within the buffer. */
static void clean_reason(char *dst, size_t cap, const char *src, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)src[i];
		size_t k = char_len(c);
		if (k > len - i)
			break; /* not jansson's: cannot happen */
		bool control = c < 0x20 || c == 0x7f ||
			       (c == 0xc2 && (unsigned char)src[i + 1] >= 0x80 && (unsigned char)src[i + 1] < 0xa0);
		size_t out = control ? 1 : k;
		if (n + out + 1 > cap)
			break;
		if (control)
			dst[n] = ' ';
		else
			memcpy(dst + n, src + i, k);
		n += out;
		i += k;
	}
	dst[n] = '\0';
}

int reviewer_parse_answer(const char *buf, size_t len, struct reviewer_answer *out, struct werr *e)
{
	*out = (struct reviewer_answer){ .verdict = REVIEW_DENY };
	if (len > REVIEWER_OUTPUT_MAX)
		return werr_set(e, 0, "more than %d KiB of output", REVIEWER_OUTPUT_MAX / 1024);
	size_t i = 0;
	while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
		i++;
	if (i == len)
		return werr_set(e, 0, "no answer on its output");
	json_error_t jerr;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j) {
		char why[sizeof jerr.text];
		printable(why, sizeof why, jerr.text);
		return werr_set(e, 0, "its output is not JSON: %s (at byte %d)", why, jerr.position);
	}
	_cleanup_json_ json_t *answer = j;
	if (!json_is_object(answer))
		return werr_set(e, 0, "its output is JSON but not an object");
	json_t *d = json_object_get(answer, "decision");
	if (!json_is_string(d))
		return werr_set(e, 0, "its answer has no \"decision\" string (allow, deny or ask)");
	const char *ds = json_string_value(d);
	size_t dl = json_string_length(d);
	bool known = false;
	for (size_t v = 0; v < sizeof verdict_names / sizeof verdict_names[0]; v++)
		if (strlen(verdict_names[v]) == dl && memcmp(ds, verdict_names[v], dl) == 0) {
			out->verdict = (enum review_verdict)v;
			known = true;
		}
	if (!known) {
		char what[48];
		printable(what, sizeof what, dl < sizeof what ? ds : "(too long)");
		return werr_set(e, 0, "its answer's decision '%s' is none of allow, deny, ask", what);
	}
	json_t *r = json_object_get(answer, "reason");
	if (r && !json_is_string(r) && !json_is_null(r)) {
		out->verdict = REVIEW_DENY;
		return werr_set(e, 0, "its answer's \"reason\" is not a string");
	}
	if (json_is_string(r))
		clean_reason(out->reason, sizeof out->reason, json_string_value(r), json_string_length(r));
	return 0;
}
