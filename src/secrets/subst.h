/* subst.h - the phantom-to-value substitution at the proxy's edge: in an
 * HTTP/1.1 request head going to a host and port, every phantom of a
 * secret bound there is replaced by its real value, in any header value and
 * inside "Basic" credentials (base64 of user:password); a phantom anywhere
 * else (the request line, a header name, a header to a host its secret is
 * not bound to, a line it cannot be placed in) refuses the request. And a
 * stream scanner that reports a phantom in bytes the proxy can see (bodies,
 * clear-text streams), even one split across reads.
 *
 * A value has the length of its phantom, so the head keeps its length and
 * every byte that is not a phantom stays where it was. The phantom itself
 * is worthless outside the session: refusing it where it is not substituted
 * is for detection (an alert), not for secrecy. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secrets.h"

#define SUBST_HITS_MAX 16

struct subst_hit {
	const struct secret *secret;
	char header[64]; /* header name as sent, cut to 63 */
};

struct subst_result {
	struct subst_hit hits[SUBST_HITS_MAX]; /* each (secret, header) once */
	size_t nhits;
	const struct secret *leak;     /* set when refused */
	const char *leak_where;        /* static: "url", "header to an unbound host", ... */
};

/* head[0..len): the request line to the empty line, CRLF line ends, the
 * request line in origin-form ("METHOD /path HTTP/1.1") or absolute-form.
 * Returns 0 with *out (malloc'd, NUL-terminated) and *outlen (== len): the
 * head with every phantom of a secret bound to h:port replaced by its value
 * in header values, Basic credentials included; r->hits says which secret
 * went in which header. Returns -1 with r->leak and r->leak_where set,
 * *out NULL, nothing to send, when a phantom stands
 *   "url"                        in the request line (percent-decoded too)
 *   "header name"                in a header's name
 *   "header to an unbound host"  in a header (or its Basic credentials) and
 *                                its secret is not bound to h:port
 *   "malformed header"           in a line that is no "name: value" header
 *                                (no colon, folded, a bare CR or LF)
 *   "overlapping phantoms"       across another phantom
 *   "after substitution"         in the result (a value next to text that
 *                                makes a phantom again)
 *   "basic credentials out of place"  inside "Basic TOKEN" (canonical
 *                                base64) anywhere it was not substituted:
 *                                the URL, a malformed line, within a value
 *   "after the head"             in bytes after the empty line. */
int subst_head(const struct secrets *s, const struct net_host *h, uint16_t port, const char *head,
	       size_t len, char **out, size_t *outlen, struct subst_result *r);

/* %XX decoded (other bytes as they are) into out (room for n); its
 * length. */
size_t pct_decode(const char *s, size_t n, char *out);

/* A stream scanner: keeps the last maxlen-1 bytes, so a phantom split
 * across calls is found; it holds nothing back (detect and report). */
struct phantom_scan {
	const struct secrets *s;
	char *tail;
	size_t tail_len;
};

void scan_init(struct phantom_scan *sc, const struct secrets *s);
/* The secret whose phantom ends in these bytes (whole or begun in earlier
 * ones), or NULL. */
const struct secret *scan_feed(struct phantom_scan *sc, const void *data, size_t len);
void scan_free(struct phantom_scan *sc);
