/* fuzz_export.c - libFuzzer target for `warden log export`'s mappings and
 * the POST's parsers: each line of the input that parses as an event
 * (audit_parse_line) is made an OCSF event (src/export/ocsf.c) and an OTLP
 * log record (src/export/otlp.c), whatever types its fields have; the OCSF
 * event must say type_uid = class_uid * 100 + activity_id and carry the
 * base attributes, and both must encode as JSON. The first line is also
 * read as a collector URL (post_url_parse: when taken, a target starting
 * with '/' and a port) and the whole input as a response head
 * (post_status: -1, 0 or 100-999). Linked with replay.c it is
 * fuzz-export-replay, which replays the seed corpus without clang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/export/ocsf.h"
#include "src/export/otlp.h"
#include "src/audit/reader.h"
#include "src/net/post.h"
#include "replay.h"

static void check_ocsf(json_t *o)
{
	static const char *const need[] = { "category_uid", "class_uid", "activity_id", "type_uid",
					    "severity_id", "time", "metadata" };
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		if (!json_object_get(o, need[i]))
			abort();
	json_int_t cls = json_integer_value(json_object_get(o, "class_uid"));
	json_int_t act = json_integer_value(json_object_get(o, "activity_id"));
	if (json_integer_value(json_object_get(o, "type_uid")) != cls * 100 + act)
		abort();
	char *s = json_dumps(o, JSON_COMPACT);
	if (!s)
		abort();
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	const struct ocsf_ctx ctx = { .product_version = "0", .hostname = "h" };
	size_t off = 0;
	bool first = true;
	while (off < size) {
		const char *nl = memchr(buf + off, '\n', size - off);
		size_t len = nl ? (size_t)(nl - (buf + off)) : size - off;
		if (first) {
			char *url = strndup(buf + off, len);
			struct post_url u;
			struct werr e;
			if (url && post_url_parse(url, &u, &e) == 0 && (u.target[0] != '/' || u.port == 0))
				abort();
			free(url);
			first = false;
		}
		char why[256];
		json_t *ev = audit_parse_line(buf + off, len, why, sizeof why);
		if (ev) {
			json_t *o = ocsf_event(ev, &ctx);
			if (o)
				check_ocsf(o);
			json_decref(o);
			json_t *r = otlp_record(ev, buf + off, len);
			char *s = r ? json_dumps(r, JSON_COMPACT) : NULL;
			if (!s)
				abort();
			free(s);
			json_decref(r);
			json_decref(ev);
		}
		off += len + 1;
	}
	int st = post_status(buf, size);
	if (st != -1 && st != 0 && (st < 100 || st > 999))
		abort();
	return 0;
}
