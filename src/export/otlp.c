/* otlp.c - audit events as OTLP/HTTP JSON log records, batched and POSTed
 * to a collector (otlp.h). */
#include "otlp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../audit/events.h"
#include "../audit/times.h"
#include "../common/util.h"
#include "../net/tls.h"

/* An OTLP AnyValue of a JSON value; depth bounds the nesting followed. */
static json_t *any_value(json_t *v, int depth)
{
	switch (json_typeof(v)) {
	case JSON_STRING: return json_pack("{s:O}", "stringValue", v);
	case JSON_INTEGER: /* int64 is a decimal string in the JSON encoding */
		return json_pack("{s:o}", "intValue", json_sprintf("%lld", (long long)json_integer_value(v)));
	case JSON_REAL: return json_pack("{s:f}", "doubleValue", json_real_value(v));
	case JSON_TRUE: return json_pack("{s:b}", "boolValue", 1);
	case JSON_FALSE: return json_pack("{s:b}", "boolValue", 0);
	case JSON_ARRAY: {
		json_t *a = json_array();
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
			json_array_append_new(a, depth > 0 ? any_value(x, depth - 1) : json_object());
		return json_pack("{s:{s:o}}", "arrayValue", "values", a);
	}
	case JSON_OBJECT: {
		json_t *a = json_array();
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x)
			json_array_append_new(a, json_pack("{s:s, s:o}", "key", k, "value",
							   depth > 0 ? any_value(x, depth - 1) : json_object()));
		return json_pack("{s:{s:o}}", "kvlistValue", "values", a);
	}
	default: return json_object(); /* null: an empty AnyValue */
	}
}

static json_t *attr(const char *key, json_t *value)
{
	return json_pack("{s:s, s:o}", "key", key, "value", value);
}

/* severityNumber: INFO 9, WARN 13, ERROR 17, FATAL 21. */
static int severity(json_t *ev, const char **text)
{
	const char *kind = json_string_value(json_object_get(ev, "event"));
	const char *d = json_string_value(json_object_get(ev, "decision"));
	int n = 9;
	if (strcmp(kind, "alert") == 0) {
		const char *s = json_string_value(json_object_get(ev, "severity"));
		n = s && strcmp(s, "critical") == 0 ? 21 : s && strcmp(s, "high") == 0 ? 17 : 13;
	} else if (strcmp(kind, "log.failed") == 0) {
		n = 17;
	} else if (strcmp(kind, "risk") == 0 || (d && strcmp(d, "allow") != 0)) {
		n = 13;
	}
	*text = n == 21 ? "FATAL" : n == 17 ? "ERROR" : n == 13 ? "WARN" : "INFO";
	return n;
}

json_t *otlp_record(json_t *ev, const char *line, size_t len)
{
	struct audit_time t = { 0 };
	audit_parse_ts(json_string_value(json_object_get(ev, "ts")), &t);
	char ns[32];
	snprintf(ns, sizeof ns, "%lld%09ld", (long long)t.sec, (long)t.nsec);
	const char *text;
	int sev = severity(ev, &text);
	json_t *attrs = json_array();
	json_array_append_new(attrs, attr("event.name", json_pack("{s:o}", "stringValue",
		json_sprintf("warden.%s", json_string_value(json_object_get(ev, "event"))))));
	json_array_append_new(attrs, attr("warden.session", any_value(json_object_get(ev, "session"), 0)));
	json_array_append_new(attrs, attr("warden.seq", any_value(json_object_get(ev, "seq"), 0)));
	const char *k;
	json_t *v;
	json_object_foreach(ev, k, v) {
		if (audit_is_header_key(k))
			continue;
		char key[300];
		snprintf(key, sizeof key, "warden.%s", k);
		json_array_append_new(attrs, attr(key, any_value(v, 8)));
	}
	return json_pack("{s:s, s:s, s:i, s:s, s:{s:s%}, s:o}", "timeUnixNano", ns,
			 "observedTimeUnixNano", ns, "severityNumber", sev, "severityText", text,
			 "body", "stringValue", line, len, "attributes", attrs);
}

int otlp_open(struct otlp_export *x, const char *url, const char *ca, unsigned timeout_ms,
	      const char *service_version, struct werr *e)
{
	*x = (struct otlp_export){ .timeout_ms = timeout_ms, .records = json_array() };
	snprintf(x->service_version, sizeof x->service_version, "%s", service_version);
	if (gethostname(x->hostname, sizeof x->hostname - 1) < 0)
		x->hostname[0] = '\0';
	if (!url) {
		x->to_stdout = true;
		return 0;
	}
	if (post_url_parse(url, &x->url, e) < 0)
		return werr_wrap(e, "the collector's URL");
	/* the signal's path: URL/v1/logs, unless the URL says it already */
	char *t = x->url.target;
	size_t n = strcspn(t, "?");
	if (t[n])
		return werr_set(e, EINVAL, "the collector's URL: a query string is not supported (the path /v1/logs is added to the URL)");
	static const char sfx[] = "/v1/logs";
	if (n < sizeof sfx - 1 || strcmp(t + n - (sizeof sfx - 1), sfx) != 0) {
		while (n > 0 && t[n - 1] == '/')
			t[--n] = '\0';
		if (n + sizeof sfx > sizeof x->url.target)
			return werr_set(e, EINVAL, "the collector's URL is too long");
		memcpy(t + n, sfx, sizeof sfx);
	}
	const char *cas[2] = { ca, NULL };
	if (post_ready(e) < 0 || (x->url.tls && !(x->ctx = tls_client_ctx(ca ? cas : NULL, e))))
		return werr_wrap(e, "the collector's URL");
	if (!x->url.tls && ca)
		return werr_set(e, EINVAL, "--ca is for an https:// URL");
	return 0;
}

static json_t *request(struct otlp_export *x, json_t *records)
{
	json_t *res = json_pack("[o, o, o]",
		attr("service.name", json_pack("{s:s}", "stringValue", "warden")),
		attr("service.version", json_pack("{s:s}", "stringValue", x->service_version)),
		attr("host.name", json_pack("{s:s}", "stringValue", x->hostname)));
	return json_pack("{s:[{s:{s:o}, s:[{s:{s:s, s:s}, s:O}]}]}", "resourceLogs", "resource",
			 "attributes", res, "scopeLogs", "scope", "name", "warden.audit", "version", "1",
			 "logRecords", records);
}

static bool retryable(const struct post_result *r)
{
	return r->status == 0 || r->status == 429 || r->status == 502 || r->status == 503 ||
	       r->status == 504;
}

int otlp_flush(struct otlp_export *x, struct werr *e)
{
	size_t n = json_array_size(x->records);
	if (n == 0)
		return 0;
	_cleanup_json_ json_t *req = request(x, x->records);
	_cleanup_free_ char *body = json_dumps(req, JSON_COMPACT);
	if (!body)
		return werr_set(e, ENOMEM, "cannot encode the OTLP request");
	json_array_clear(x->records);
	x->bytes = 0;
	if (x->to_stdout) {
		if (puts(body) == EOF)
			return werr_errno(e, "cannot write the output");
	} else {
		struct post_result r = { 0 };
		for (int i = 0; i < OTLP_TRIES; i++) {
			if (i)
				nanosleep(&(struct timespec){ .tv_sec = i / 2, .tv_nsec = i % 2 * 500000000L }, NULL);
			post_once(&(struct post_req){ .url = &x->url, .ctx = x->ctx, .cancel = -1,
						      .deadline_ms = x->timeout_ms, .body = body,
						      .len = strlen(body) }, &r);
			if (!r.why[0] || !retryable(&r))
				break;
		}
		if (r.why[0] && retryable(&r))
			return werr_set(e, 0, "OTLP export to %s://%s%s: %s (tried %d times)",
					x->url.tls ? "https" : "http", x->url.authority, x->url.target, r.why,
					OTLP_TRIES);
		if (r.why[0])
			return werr_set(e, 0, "OTLP export to %s://%s%s: %s", x->url.tls ? "https" : "http",
					x->url.authority, x->url.target, r.why);
	}
	x->sent += n;
	x->requests++;
	return 0;
}

int otlp_send_once(struct otlp_export *x, int cancel, unsigned grace_ms, unsigned deadline_ms,
		   char *why, size_t whylen)
{
	_cleanup_json_ json_t *req = request(x, x->records);
	_cleanup_free_ char *body = json_dumps(req, JSON_COMPACT);
	size_t n = json_array_size(x->records);
	json_array_clear(x->records);
	x->bytes = 0;
	if (!body) {
		snprintf(why, whylen, "cannot encode the OTLP request");
		return -1;
	}
	struct post_result r = { 0 };
	post_once(&(struct post_req){ .url = &x->url, .ctx = x->ctx, .cancel = cancel,
				      .cancel_grace_ms = grace_ms, .deadline_ms = deadline_ms, .body = body,
				      .len = strlen(body) }, &r);
	if (r.why[0]) {
		snprintf(why, whylen, "%s", r.why);
		return -1;
	}
	x->sent += n;
	x->requests++;
	return 0;
}

int otlp_add(struct otlp_export *x, json_t *ev, const char *line, size_t len, struct werr *e)
{
	json_t *rec = otlp_record(ev, line, len);
	if (!rec)
		return werr_set(e, EINVAL, "line %lld: cannot make an OTLP record of it",
				(long long)json_integer_value(json_object_get(ev, "seq")));
	json_array_append_new(x->records, rec);
	x->bytes += len * 2 + 256; /* the body and the attributes, about */
	if (json_array_size(x->records) >= OTLP_BATCH_RECORDS || x->bytes >= OTLP_BATCH_BYTES)
		return otlp_flush(x, e);
	return 0;
}

void otlp_close(struct otlp_export *x)
{
	json_decref(x->records);
	x->records = NULL;
	if (x->ctx)
		tls_ctx_free(x->ctx);
	x->ctx = NULL;
}
