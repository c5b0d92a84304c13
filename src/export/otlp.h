/* otlp.h - warden's audit events as OpenTelemetry log records, sent to a
 * collector over OTLP/HTTP with the JSON encoding (`warden log export
 * --format otlp --url URL`): each POST to URL/v1/logs (Content-Type
 * application/json) is one ExportLogsServiceRequest,
 *   {"resourceLogs":[{"resource":{"attributes":[service.name "warden",
 *     service.version, host.name]},
 *     "scopeLogs":[{"scope":{"name":"warden.audit","version":"1"},
 *       "logRecords":[...]}]}]}
 * and each record, one line of the log:
 *   timeUnixNano / observedTimeUnixNano  the event's ts (a decimal string)
 *   severityNumber, severityText         INFO (9); a refusal WARN (13); an
 *                                        alert by its severity: low, medium
 *                                        WARN, high ERROR (17), critical
 *                                        FATAL (21); risk WARN; log.failed
 *                                        ERROR
 *   body                                 the line exactly as logged (its
 *                                        chain can be checked downstream)
 *   attributes                           event.name "warden.KIND",
 *                                        warden.session, warden.seq, and each
 *                                        field as warden.FIELD (objects as
 *                                        kvlistValue, arrays as arrayValue)
 * Records go in batches of at most OTLP_BATCH_RECORDS records or about
 * OTLP_BATCH_BYTES; a batch that fails to connect, times out or is answered
 * 429, 502, 503 or 504 is tried again (OTLP_TRIES in all, 0.5 s then 1 s
 * apart); any other answer but a 2xx is an error at once. Only the URL
 * given is ever contacted. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "../common/err.h"
#include "../net/post.h"

#define OTLP_BATCH_RECORDS 512
#define OTLP_BATCH_BYTES (1024 * 1024)
#define OTLP_TRIES 3

/* The log record of ev (audit_parse_line's), line[0..len) its text. */
json_t *otlp_record(json_t *ev, const char *line, size_t len);

struct otlp_export {
	bool to_stdout;          /* no URL: each request a line on stdout */
	struct post_url url;
	SSL_CTX *ctx;
	unsigned timeout_ms;     /* each attempt's */
	char service_version[64], hostname[256];
	json_t *records;         /* the batch being built */
	size_t bytes;
	unsigned long sent, requests;
};

/* url NULL: to stdout. ca: a PEM file of trust anchors beside the system's
 * (https), or NULL. */
int otlp_open(struct otlp_export *x, const char *url, const char *ca, unsigned timeout_ms,
	      const char *service_version, struct werr *e);
/* Add a record; sends the batch when it is full. */
int otlp_add(struct otlp_export *x, json_t *ev, const char *line, size_t len, struct werr *e);
/* Send what is left. */
int otlp_flush(struct otlp_export *x, struct werr *e);
/* One attempt at sending the records added so far (the live stream,
 * src/export/stream.h), whatever the batch's size: 0 sent, -1 not (why
 * says why). The batch is emptied either way: the stream builds it again
 * from the log. cancel, grace_ms: as post_req's cancel and
 * cancel_grace_ms. */
int otlp_send_once(struct otlp_export *x, int cancel, unsigned grace_ms, unsigned deadline_ms,
		   char *why, size_t whylen);
void otlp_close(struct otlp_export *x);
