/* fuzz_reviewer.c - libFuzzer target for what a reviewer command prints
 * (src/control/reviewer_answer.c: reviewer_parse_answer). The input is the
 * reviewer's whole output. Invariants: a refusal is a denial with a
 * printable message; an answer was one JSON object (parsed again here,
 * independently) whose "decision" is the verdict's name and whose "reason"
 * was a string or null or absent; the reason kept is valid UTF-8 without
 * C0, C1 or DEL, within REVIEWER_REASON_MAX bytes, and a prefix of the
 * original with controls made spaces; the answer written back as JSON
 * parses to the same verdict and reason; parsing is deterministic. Linked
 * with replay.c it is fuzz-reviewer-replay, which replays files and corpus
 * directories without clang. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/common/util.h"
#include "src/control/reviewer.h"

/* Valid UTF-8 without C0, C1 controls or DEL. */
static bool clean_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		if (*p < 0x20 || *p == 0x7f)
			return false;
		size_t k = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 :
			   (*p & 0xf8) == 0xf0 ? 4 : 0;
		if (!k || (k == 2 && *p < 0xc2))
			return false;
		for (size_t i = 1; i < k; i++)
			if ((p[i] & 0xc0) != 0x80)
				return false;
		if (k == 2 && *p == 0xc2 && p[1] < 0xa0)
			return false; /* C1 */
		p += k;
	}
	return true;
}

/* The kept reason is the original's start, controls made spaces. */
static bool prefix_of(const char *kept, const char *orig, size_t olen)
{
	size_t i = 0, j = 0;
	while (kept[i]) {
		if (j >= olen)
			return false;
		unsigned char c = (unsigned char)orig[j];
		bool ctl = c < 0x20 || c == 0x7f;
		bool c1 = c == 0xc2 && j + 1 < olen && (unsigned char)orig[j + 1] >= 0x80 &&
			  (unsigned char)orig[j + 1] < 0xa0;
		if (ctl || c1) {
			if (kept[i] != ' ')
				return false;
			i++;
			j += c1 ? 2 : 1;
			continue;
		}
		if (kept[i] != orig[j])
			return false;
		i++;
		j++;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reviewer_answer a, b;
	struct werr e = { 0 }, e2 = { 0 };
	int r = reviewer_parse_answer((const char *)data, size, &a, &e);
	int r2 = reviewer_parse_answer((const char *)data, size, &b, &e2);
	if (r != r2 || a.verdict != b.verdict || strcmp(a.reason, b.reason) != 0)
		abort();
	if (r < 0) {
		if (!fuzz_printable(e.msg) || a.verdict != REVIEW_DENY || strcmp(e.msg, e2.msg) != 0)
			abort();
		return 0;
	}
	if (r != 0 || (a.verdict != REVIEW_ALLOW && a.verdict != REVIEW_DENY && a.verdict != REVIEW_ASK))
		abort();
	if (strlen(a.reason) > REVIEWER_REASON_MAX || !clean_utf8(a.reason))
		abort();
	/* the oracle: the same text, read here */
	_cleanup_json_ json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(j))
		abort();
	json_t *d = json_object_get(j, "decision"), *why = json_object_get(j, "reason");
	if (!json_is_string(d) || strcmp(json_string_value(d), reviewer_verdict_name(a.verdict)) != 0 ||
	    json_string_length(d) != strlen(reviewer_verdict_name(a.verdict)))
		abort();
	if (why && !json_is_string(why) && !json_is_null(why))
		abort();
	if (json_is_string(why) ? !prefix_of(a.reason, json_string_value(why), json_string_length(why))
				: a.reason[0] != '\0')
		abort();
	/* written back, read again: a fixed point */
	_cleanup_json_ json_t *back = json_pack("{s:s,s:s}", "decision", reviewer_verdict_name(a.verdict),
						"reason", a.reason);
	char *s = json_dumps(back, JSON_COMPACT);
	if (!s)
		abort();
	r = reviewer_parse_answer(s, strlen(s), &b, &e);
	free(s);
	if (r != 0 || b.verdict != a.verdict || strcmp(b.reason, a.reason) != 0)
		abort();
	return 0;
}
