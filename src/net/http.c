/* http.c - incremental parser of proxy request heads (CONNECT and
 * absolute-form http://; origin-form inside an intercepted connection), the
 * upstream head, and refusal responses. */
#include "http.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../common/util.h"

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* RFC 9110 tchar. */
static bool is_tchar(char c)
{
	return is_alpha(c) || is_digit(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

static bool ieq(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);
	return alen == blen && strncasecmp(a, b, alen) == 0;
}

static enum http_result fail(struct http_parser *p, int status, const char *reason)
{
	p->state = HTTP_ERROR;
	p->status = status;
	snprintf(p->reason, sizeof p->reason, "%s", reason);
	return HTTP_ERROR;
}

static enum http_result fail2(struct http_parser *p, int status, const char *what,
			      const char *why)
{
	p->state = HTTP_ERROR;
	p->status = status;
	snprintf(p->reason, sizeof p->reason, "%s: %s", what, why);
	return HTTP_ERROR;
}

void http_parser_init(struct http_parser *p)
{
	/* buf is written before it is read: leave its 16 KiB alone. */
	memset(p, 0, offsetof(struct http_parser, buf));
	p->state = HTTP_NEED_MORE;
	p->host_field = p->cl_field = p->te_field = -1;
}

void http_parser_init_origin(struct http_parser *p, const struct net_host *host, uint16_t port,
			     bool tls)
{
	http_parser_init(p);
	p->origin = true;
	p->origin_tls = tls;
	p->origin_any_host = host == NULL;
	if (host)
		p->origin_host = *host;
	else
		memset(&p->origin_host, 0, sizeof p->origin_host);
	p->origin_port = port;
}

/* host[:port] or [v6][:port], no userinfo. An empty port after ':' counts as
 * none unless need_port. Returns 0, -1 bad host (*why set), -2 bad port. */
static int parse_authority(const char *s, size_t len, bool need_port, struct net_host *h,
			   uint16_t *port, bool *port_given, const char **why)
{
	size_t hlen = len;
	const char *colon = NULL;
	*port_given = false;
	*port = 0;
	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (!close) {
			*why = "bad IPv6 address";
			return -1;
		}
		hlen = (size_t)(close - s) + 1;
		if (hlen < len) {
			if (s[hlen] != ':') {
				*why = "junk after ']'";
				return -1;
			}
			colon = s + hlen;
		}
	} else {
		colon = memchr(s, ':', len);
		if (colon) {
			hlen = (size_t)(colon - s);
			if (memchr(colon + 1, ':', len - hlen - 1)) {
				*why = "IPv6 address needs brackets";
				return -1;
			}
		}
	}
	if (net_host_parse(h, s, hlen, why) < 0)
		return -1;
	if (colon) {
		size_t plen = len - (size_t)(colon + 1 - s);
		if (plen == 0 && !need_port)
			return 0;
		if (net_port_parse(colon + 1, plen, port) < 0)
			return -2;
		*port_given = true;
	}
	if (need_port && !*port_given)
		return -2;
	return 0;
}

/* Origin mode: does an authority the client wrote (a Host header, an
 * absolute URL's) name the connection's destination? */
static bool names_destination(const struct http_parser *p, const char *s, size_t n)
{
	struct net_host h;
	uint16_t port;
	bool given;
	const char *why;
	if (memchr(s, '@', n) || parse_authority(s, n, false, &h, &port, &given, &why) < 0)
		return false;
	if (p->origin_any_host)
		return true;
	if (!given)
		port = p->origin_tls ? 443 : 80;
	return h.kind == p->origin_host.kind && strcmp(h.name, p->origin_host.name) == 0 &&
	       port == p->origin_port;
}

/* Origin mode: the request target t[0..tlen). */
static enum http_result origin_target(struct http_parser *p, const char *t, size_t tlen)
{
	struct http_request *r = &p->req;
	const char *path = t, *end = t + tlen;
	if (r->connect)
		return fail(p, 400, "CONNECT inside an intercepted connection");
	if (tlen == 1 && t[0] == '*') {
		if (strcmp(r->method, "OPTIONS") != 0)
			return fail(p, 400, "bad request target");
	} else if (t[0] != '/') {
		const char *sep = memmem(t, tlen, "://", 3);
		if (!sep || !ieq(t, (size_t)(sep - t), p->origin_tls ? "https" : "http"))
			return fail(p, 400, "bad request target");
		const char *a = sep + 3;
		size_t alen = 0;
		while (a + alen < end && a[alen] != '/' && a[alen] != '?' && a[alen] != '#')
			alen++;
		if (!names_destination(p, a, alen))
			return fail(p, 400, "URL disagrees with the connection");
		path = a + alen;
	}
	const char *hash = memchr(path, '#', (size_t)(end - path));
	if (hash)
		end = hash;
	p->path = (uint16_t)(path - p->buf);
	p->path_len = (uint16_t)(end - path);
	r->host = p->origin_host;
	r->port = p->origin_port;
	return HTTP_NEED_MORE;
}

/* The request line s[0..n) in its three parts: the method (s[0..*mlen)),
 * checked; the target (*t, *tlen), of visible characters; the version,
 * HTTP/1.x (its minor number into the request). */
static enum http_result line_parts(struct http_parser *p, const char *s, size_t n, size_t *mlen,
				   const char **t, size_t *tlen)
{
	const char *sp1 = memchr(s, ' ', n);
	if (!sp1 || sp1 == s)
		return fail(p, 400, "malformed request line");
	*mlen = (size_t)(sp1 - s);
	for (size_t i = 0; i < *mlen; i++)
		if (!is_tchar(s[i]))
			return fail(p, 400, "bad method");
	if (*mlen > HTTP_METHOD_MAX)
		return fail(p, 400, "bad method");
	const char *end = s + n;
	*t = sp1 + 1;
	const char *sp2 = memchr(*t, ' ', (size_t)(end - *t));
	if (!sp2 || sp2 == *t)
		return fail(p, 400, "malformed request line");
	*tlen = (size_t)(sp2 - *t);
	const char *v = sp2 + 1;
	size_t vlen = (size_t)(end - v);
	if (memchr(v, ' ', vlen))
		return fail(p, 400, "malformed request line");
	if (vlen != 8 || memcmp(v, "HTTP/", 5) != 0 || !is_digit(v[5]) || v[6] != '.' ||
	    !is_digit(v[7]))
		return fail(p, 400, "malformed HTTP version");
	if (v[5] != '1')
		return fail(p, 505, "HTTP version not supported");
	p->req.version_minor = v[7] - '0';
	for (size_t i = 0; i < *tlen; i++) {
		unsigned char c = (unsigned char)(*t)[i];
		if (c <= 0x20 || c >= 0x7f)
			return fail(p, 400, "bad character in request target");
	}
	return HTTP_NEED_MORE;
}

/* A CONNECT's target t[0..tlen): host:port, nothing else. */
static enum http_result connect_target(struct http_parser *p, const char *t, size_t tlen)
{
	struct http_request *r = &p->req;
	const char *why = NULL;
	if (t[0] == '/' || memmem(t, tlen, "://", 3) || memchr(t, '@', tlen))
		return fail(p, 400, "CONNECT needs host:port");
	int k = parse_authority(t, tlen, true, &r->host, &r->port, &r->port_given, &why);
	if (k == -1)
		return fail2(p, 400, "bad host in CONNECT", why);
	if (k == -2)
		return fail(p, 400, "CONNECT needs host:port");
	return HTTP_NEED_MORE;
}

/* Any other method's target t[0..tlen) through the proxy: an absolute
 * http:// URL (its authority the destination, port 80 unless given; the
 * path up to a fragment). */
static enum http_result absolute_target(struct http_parser *p, const char *t, size_t tlen)
{
	struct http_request *r = &p->req;
	const char *why = NULL;
	const char *tend = t + tlen;
	const char *sep = memmem(t, tlen, "://", 3);
	if (t[0] == '/' || (tlen == 1 && t[0] == '*') || !sep)
		return fail(p, 400, "not an absolute URL (configure this as a proxy)");
	size_t slen = (size_t)(sep - t);
	if (slen == 0)
		return fail(p, 400, "bad URL scheme");
	for (size_t i = 0; i < slen; i++)
		if (!is_alpha(t[i]) && !(i > 0 && (is_digit(t[i]) || strchr("+-.", t[i]))))
			return fail(p, 400, "bad URL scheme");
	if (ieq(t, slen, "https"))
		return fail(p, 501, "https URL: use CONNECT");
	if (!ieq(t, slen, "http"))
		return fail(p, 501, "unsupported URL scheme");
	const char *a = sep + 3;
	size_t alen = 0;
	while (a + alen < tend && a[alen] != '/' && a[alen] != '?' &&
	       a[alen] != '#')
		alen++;
	if (memchr(a, '@', alen))
		return fail(p, 400, "userinfo in URL");
	int k = parse_authority(a, alen, false, &r->host, &r->port, &r->port_given, &why);
	if (k == -1)
		return fail2(p, 400, "bad host in URL", why);
	if (k == -2)
		return fail(p, 400, "bad port in URL");
	if (!r->port_given)
		r->port = 80;
	const char *path = a + alen;
	const char *hash = memchr(path, '#', (size_t)(tend - path));
	const char *pend = hash ? hash : tend;
	p->path = (uint16_t)(path - p->buf);
	p->path_len = (uint16_t)(pend - path);
	return HTTP_NEED_MORE;
}

static enum http_result request_line(struct http_parser *p, const char *s, size_t n)
{
	struct http_request *r = &p->req;
	size_t mlen = 0, tlen = 0;
	const char *t = NULL;
	if (line_parts(p, s, n, &mlen, &t, &tlen) == HTTP_ERROR)
		return HTTP_ERROR;
	memcpy(r->method, s, mlen);
	r->method[mlen] = '\0';
	r->connect = mlen == 7 && memcmp(s, "CONNECT", 7) == 0;
	if (p->origin)
		return origin_target(p, t, tlen);
	if (r->connect)
		return connect_target(p, t, tlen);
	return absolute_target(p, t, tlen);
}

static int parse_content_length(const char *s, size_t n, uint64_t *out)
{
	if (n == 0)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > HTTP_CONTENT_LENGTH_MAX)
			return -2;
	}
	*out = v;
	return 0;
}

/* A list of transfer codings whose last is chunked (and only the last). */
static bool te_ok(const char *s, size_t n)
{
	size_t i = 0;
	bool last_chunked = false;
	while (i < n) {
		while (i < n && is_ows(s[i]))
			i++;
		size_t start = i;
		while (i < n && is_tchar(s[i]))
			i++;
		size_t tl = i - start;
		while (i < n && is_ows(s[i]))
			i++;
		if (tl == 0 || (i < n && s[i] != ','))
			return false;
		if (last_chunked)
			return false; /* chunked was not the last */
		last_chunked = ieq(s + start, tl, "chunked");
		if (i < n)
			i++; /* ',' */
		if (i == n && s[n - 1] == ',')
			return false;
	}
	return last_chunked;
}

static enum http_result header_line(struct http_parser *p, const char *s, size_t n)
{
	if (is_ows(s[0]))
		return fail(p, 400, "obsolete line folding");
	const char *colon = memchr(s, ':', n);
	if (!colon || colon == s)
		return fail(p, 400, "malformed header line");
	size_t nlen = (size_t)(colon - s);
	if (is_ows(s[nlen - 1]))
		return fail(p, 400, "whitespace before colon");
	for (size_t i = 0; i < nlen; i++)
		if (!is_tchar(s[i]))
			return fail(p, 400, "bad header name");
	const char *v = colon + 1, *end = s + n;
	while (v < end && is_ows(*v))
		v++;
	while (end > v && is_ows(end[-1]))
		end--;
	for (const char *c = v; c < end; c++) {
		unsigned char u = (unsigned char)*c;
		if ((u < 0x20 && u != '\t') || u == 0x7f)
			return fail(p, 400, "bad character in header value");
	}
	if (p->nfields == HTTP_HEADERS_MAX)
		return fail(p, 431, "too many header lines");
	int idx = (int)p->nfields;
	struct http_field *f = &p->fields[p->nfields++];
	f->name = (uint16_t)(s - p->buf);
	f->name_len = (uint16_t)nlen;
	f->value = (uint16_t)(v - p->buf);
	f->value_len = (uint16_t)(end - v);

	if (ieq(s, nlen, "Host")) {
		if (p->host_field >= 0)
			return fail(p, 400, "duplicate Host header");
		p->host_field = idx;
	} else if (ieq(s, nlen, "Content-Length")) {
		if (p->cl_field >= 0)
			return fail(p, 400, "duplicate Content-Length");
		p->cl_field = idx;
		int k = parse_content_length(v, (size_t)(end - v), &p->req.content_length);
		if (k == -1)
			return fail(p, 400, "bad Content-Length");
		if (k == -2)
			return fail(p, 413, "Content-Length too large");
	} else if (ieq(s, nlen, "Transfer-Encoding")) {
		if (p->te_field >= 0)
			return fail(p, 400, "duplicate Transfer-Encoding");
		p->te_field = idx;
		if (!te_ok(v, (size_t)(end - v)))
			return fail(p, 501, "unsupported Transfer-Encoding");
	}
	return HTTP_NEED_MORE;
}

/* The empty line: cross-header checks. */
static enum http_result finish(struct http_parser *p)
{
	struct http_request *r = &p->req;
	if (p->te_field >= 0 && p->cl_field >= 0)
		return fail(p, 400, "Transfer-Encoding with Content-Length");
	if (r->connect && (p->te_field >= 0 || (p->cl_field >= 0 && r->content_length > 0)))
		return fail(p, 400, "body on CONNECT");
	if (p->te_field >= 0)
		r->body = HTTP_BODY_CHUNKED;
	else if (p->cl_field >= 0 && r->content_length > 0)
		r->body = HTTP_BODY_LENGTH;
	if (p->origin) {
		if (p->te_field >= 0 && r->version_minor == 0)
			return fail(p, 400, "Transfer-Encoding in HTTP/1.0");
		if (p->host_field < 0)
			return fail(p, 400, "missing Host header");
		const struct http_field *f = &p->fields[p->host_field];
		if (!names_destination(p, p->buf + f->value, f->value_len))
			return fail(p, 400, "Host header disagrees with the connection");
	} else if (p->host_field >= 0) {
		const struct http_field *f = &p->fields[p->host_field];
		struct net_host h;
		uint16_t port;
		bool given;
		const char *why;
		if (memchr(p->buf + f->value, '@', f->value_len) ||
		    parse_authority(p->buf + f->value, f->value_len, false, &h, &port, &given,
				    &why) < 0)
			return fail(p, 400, "bad Host header");
		if (!given)
			port = r->connect ? r->port : 80;
		if (h.kind != r->host.kind || strcmp(h.name, r->host.name) != 0 || port != r->port) {
			/* both named (normalised: plain ASCII), for the record */
			bool u6 = r->host.kind == NET_HOST_IPV6, h6 = h.kind == NET_HOST_IPV6;
			char both[HTTP_REASON_MAX];
			snprintf(both, sizeof both, "Host header disagrees with URL (%s%.18s%s:%hu, Host "
				 "%s%.18s%s:%hu)", u6 ? "[" : "", r->host.name, u6 ? "]" : "",
				 (unsigned short)r->port, h6 ? "[" : "", h.name, h6 ? "]" : "",
				 (unsigned short)port);
			return fail(p, 400, both);
		}
	}
	p->state = HTTP_COMPLETE;
	p->head_len = p->len;
	return HTTP_COMPLETE;
}

static enum http_result line(struct http_parser *p, size_t start, size_t end)
{
	const char *s = p->buf + start;
	size_t n = end - start;
	if (!p->have_request_line) {
		if (n == 0)
			return HTTP_NEED_MORE; /* empty lines before the request line */
		p->have_request_line = true;
		return request_line(p, s, n);
	}
	if (n == 0)
		return finish(p);
	return header_line(p, s, n);
}

enum http_result http_feed(struct http_parser *p, const void *data, size_t len, size_t *used)
{
	const unsigned char *d = data;
	size_t i = 0;
	if (p->state != HTTP_NEED_MORE) {
		if (used)
			*used = 0;
		return p->state;
	}
	for (; i < len; i++) {
		unsigned char c = d[i];
		if (c == '\0') {
			fail(p, 400, "NUL byte in request head");
			break;
		}
		bool after_cr = p->len > p->line_start && p->buf[p->len - 1] == '\r';
		if (after_cr && c != '\n') {
			fail(p, 400, "CR without LF");
			break;
		}
		if (!after_cr && c == '\n') {
			fail(p, 400, "LF without CR"); /* see http.h: CRLF only */
			break;
		}
		p->buf[p->len++] = (char)c;
		if (c == '\n') {
			size_t end = p->len - 2; /* without the CRLF */
			size_t start = p->line_start;
			p->line_start = p->len;
			if (line(p, start, end) != HTTP_NEED_MORE) {
				i++;
				break;
			}
		} else if (!p->have_request_line && c != '\r' &&
			   p->len - p->line_start > HTTP_REQUEST_LINE_MAX) {
			fail(p, 414, "request line too long");
			i++;
			break;
		}
		/* A head that fills the buffer without its empty line cannot end
		 * within the limit: refuse it now rather than wait for one more
		 * byte. */
		if (p->len == HTTP_HEAD_MAX) {
			fail(p, 431, "request head too large");
			i++;
			break;
		}
	}
	if (used)
		*used = i;
	return p->state;
}

const char *http_path(const struct http_parser *p, size_t *len)
{
	*len = p->path_len;
	return p->buf + p->path;
}

/* Is token[0..tl) among the comma-separated tokens of the values of every
 * header named name? */
static bool header_has_token(const struct http_parser *p, const char *name, const char *token,
			     size_t tl)
{
	for (size_t i = 0; i < p->nfields; i++) {
		const struct http_field *f = &p->fields[i];
		if (!ieq(p->buf + f->name, f->name_len, name))
			continue;
		const char *v = p->buf + f->value, *end = v + f->value_len;
		while (v < end) {
			const char *comma = memchr(v, ',', (size_t)(end - v));
			const char *a = v, *b = comma ? comma : end;
			while (a < b && is_ows(*a))
				a++;
			while (b > a && is_ows(b[-1]))
				b--;
			if ((size_t)(b - a) == tl && strncasecmp(a, token, tl) == 0)
				return true;
			v = comma ? comma + 1 : end;
		}
	}
	return false;
}

/* Is the header name s[0..n) listed in one of the client's Connection headers? */
static bool named_by_connection(const struct http_parser *p, const char *s, size_t n)
{
	return header_has_token(p, "Connection", s, n);
}

static bool dropped(const struct http_parser *p, const struct http_field *f)
{
	static const char *const hop[] = {
		"Host", "Proxy-Authorization", "Proxy-Connection", "Connection",
		"Keep-Alive", "TE", "Upgrade",
	};
	const char *s = p->buf + f->name;
	for (size_t i = 0; i < sizeof hop / sizeof hop[0]; i++)
		if (ieq(s, f->name_len, hop[i]))
			return true;
	if (ieq(s, f->name_len, "Content-Length") || ieq(s, f->name_len, "Transfer-Encoding"))
		return false;
	return named_by_connection(p, s, f->name_len);
}

struct out {
	char *b;
	size_t cap, n;
	bool full;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->full || n > o->cap - o->n) {
		o->full = true;
		return;
	}
	memcpy(o->b + o->n, s, n);
	o->n += n;
}

static void puts_(struct out *o, const char *s) { put(o, s, strlen(s)); }

ssize_t http_forward_head(const struct http_parser *p, char *out, size_t cap)
{
	if (p->state != HTTP_COMPLETE || p->req.connect || p->origin)
		return -1;
	struct out o = { out, cap, 0, false };
	const struct http_request *r = &p->req;
	puts_(&o, r->method);
	puts_(&o, " ");
	const char *path = p->buf + p->path;
	if (p->path_len == 0)
		puts_(&o, strcmp(r->method, "OPTIONS") == 0 ? "*" : "/");
	else if (path[0] == '?')
		puts_(&o, "/");
	put(&o, path, p->path_len);
	puts_(&o, " HTTP/1.1\r\nHost: ");
	bool v6 = r->host.kind == NET_HOST_IPV6;
	if (v6)
		puts_(&o, "[");
	puts_(&o, r->host.name);
	if (v6)
		puts_(&o, "]");
	if (r->port != 80) {
		char port[8];
		snprintf(port, sizeof port, ":%u", r->port);
		puts_(&o, port);
	}
	puts_(&o, "\r\n");
	for (size_t i = 0; i < p->nfields; i++) {
		const struct http_field *f = &p->fields[i];
		if (dropped(p, f))
			continue;
		put(&o, p->buf + f->name, f->name_len);
		puts_(&o, ": ");
		put(&o, p->buf + f->value, f->value_len);
		puts_(&o, "\r\n");
	}
	puts_(&o, "Connection: close\r\n\r\n");
	return o.full ? -1 : (ssize_t)o.n;
}

ssize_t http_origin_head(const struct http_parser *p, char *out, size_t cap)
{
	if (p->state != HTTP_COMPLETE || !p->origin)
		return -1;
	struct out o = { out, cap, 0, false };
	const struct http_request *r = &p->req;
	const char *path = p->buf + p->path;
	char version[16];
	puts_(&o, r->method);
	puts_(&o, " ");
	if (p->path_len == 0)
		puts_(&o, strcmp(r->method, "OPTIONS") == 0 ? "*" : "/");
	else if (path[0] == '?')
		puts_(&o, "/");
	put(&o, path, p->path_len);
	snprintf(version, sizeof version, " HTTP/1.%d\r\n", r->version_minor);
	puts_(&o, version);
	for (size_t i = 0; i < p->nfields; i++) {
		const struct http_field *f = &p->fields[i];
		put(&o, p->buf + f->name, f->name_len);
		puts_(&o, ": ");
		put(&o, p->buf + f->value, f->value_len);
		puts_(&o, "\r\n");
	}
	puts_(&o, "\r\n");
	return o.full ? -1 : (ssize_t)o.n;
}

bool http_is_upgrade(const struct http_parser *p)
{
	if (p->state != HTTP_COMPLETE)
		return false;
	bool upgrade = false;
	for (size_t i = 0; i < p->nfields; i++)
		upgrade |= ieq(p->buf + p->fields[i].name, p->fields[i].name_len, "Upgrade");
	return upgrade && header_has_token(p, "Connection", "upgrade", 7);
}

ssize_t http_error_response(int status, const char *reason, char *out, size_t cap)
{
	if (status < 100 || status > 999)
		return -1;
	char clean[201];
	size_t n = 0;
	for (; reason && reason[n] && n < sizeof clean - 1; n++) {
		unsigned char c = (unsigned char)reason[n];
		clean[n] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	clean[n] = '\0';
	if (n == 0)
		snprintf(clean, sizeof clean, "refused");
	int w = snprintf(out, cap,
			 "HTTP/1.1 %d %s\r\n"
			 "X-Warden-Reason: %s\r\n"
			 "Content-Type: text/plain\r\n"
			 "Content-Length: %zu\r\n"
			 "Connection: close\r\n"
			 "\r\n"
			 "warden: %s\n",
			 status, clean, clean, strlen(clean) + 9, clean);
	if (w < 0 || (size_t)w >= cap)
		return -1;
	return w;
}

/* ---- request bodies ---- */

enum { B_SIZE, B_DATA, B_DATA_CR, B_DATA_LF, B_TRAILER };

static enum http_result body_fail(struct http_body_reader *b, const char *reason)
{
	b->state = HTTP_ERROR;
	b->status = 400;
	b->reason = reason;
	return HTTP_ERROR;
}

void http_body_init(struct http_body_reader *b, const struct http_request *r)
{
	memset(b, 0, sizeof *b);
	b->kind = r->body;
	b->phase = B_SIZE;
	b->state = HTTP_NEED_MORE;
	if (r->body == HTTP_BODY_NONE || (r->body == HTTP_BODY_LENGTH && r->content_length == 0))
		b->state = HTTP_COMPLETE;
	b->left = r->content_length;
}

/* One byte of a chunk-size line or a trailer line (everything but data). */
static enum http_result body_line_byte(struct http_body_reader *b, unsigned char c)
{
	if (b->cr) {
		if (c != '\n')
			return body_fail(b, "CR without LF in chunked body");
		b->cr = false;
		if (b->phase == B_SIZE) {
			if (!b->digits)
				return body_fail(b, "bad chunk size");
			b->phase = b->left ? B_DATA : B_TRAILER;
			b->line = 0;
			return HTTP_NEED_MORE;
		}
		/* trailer line: an empty one ends the body */
		if (b->line == 0) {
			b->state = HTTP_COMPLETE;
			return HTTP_COMPLETE;
		}
		b->line = 0;
		return HTTP_NEED_MORE;
	}
	if (c == '\r') {
		b->cr = true;
		return HTTP_NEED_MORE;
	}
	if (c == '\n')
		return body_fail(b, "LF without CR in chunked body");
	if (c == 0 || (c < 0x20 && c != '\t') || c == 0x7f)
		return body_fail(b, "bad character in chunked body");
	if (b->phase == B_TRAILER) {
		if (b->line == 0 && (c == ' ' || c == '\t'))
			return body_fail(b, "obsolete line folding in trailer");
		b->line++;
		if (++b->trailers > HTTP_HEAD_MAX)
			return body_fail(b, "trailer section too large");
		return HTTP_NEED_MORE;
	}
	if (++b->line > 1024)
		return body_fail(b, "chunk size line too long");
	if (b->ext)
		return HTTP_NEED_MORE; /* chunk extensions: passed on, not read */
	int h = hex_digit(c);
	if (h >= 0 && !b->bws) {
		if (b->left > (HTTP_CONTENT_LENGTH_MAX - (uint64_t)h) / 16)
			return body_fail(b, "chunk too large");
		b->left = b->left * 16 + (uint64_t)h;
		b->digits = true;
		return HTTP_NEED_MORE;
	}
	if (!b->digits)
		return body_fail(b, "bad chunk size");
	if (c == ' ' || c == '\t')
		b->bws = true;
	else if (c == ';')
		b->ext = true;
	else
		return body_fail(b, "bad chunk size");
	return HTTP_NEED_MORE;
}

enum http_result http_body_feed(struct http_body_reader *b, const void *data, size_t len,
				size_t *used)
{
	const unsigned char *d = data;
	size_t i = 0;
	while (i < len && b->state == HTTP_NEED_MORE) {
		if (b->kind == HTTP_BODY_LENGTH) {
			size_t take = b->left < len - i ? (size_t)b->left : len - i;
			b->left -= take;
			i += take;
			if (b->left == 0)
				b->state = HTTP_COMPLETE;
			break;
		}
		switch (b->phase) {
		case B_DATA: {
			size_t take = b->left < len - i ? (size_t)b->left : len - i;
			b->left -= take;
			i += take;
			if (b->left == 0)
				b->phase = B_DATA_CR;
			break;
		}
		case B_DATA_CR:
			if (d[i++] != '\r')
				body_fail(b, "chunk data longer than its size");
			b->phase = B_DATA_LF;
			break;
		case B_DATA_LF:
			if (d[i++] != '\n')
				body_fail(b, "CR without LF in chunked body");
			b->phase = B_SIZE;
			b->digits = b->ext = b->bws = false;
			b->line = 0;
			break;
		default:
			body_line_byte(b, d[i++]);
			break;
		}
	}
	if (used)
		*used = i;
	return b->state;
}
