/* http_resp.c - the framing of relayed HTTP/1.x responses, watched. */
#include "http_resp.h"

#include <string.h>
#include <strings.h>

enum {
	R_IDLE,     /* between responses (blank lines skipped) */
	R_STATUS,   /* in the status line */
	R_HEADERS,  /* in a header line */
	R_BODY,     /* in a chunked or Content-Length body */
	R_CLOSE,    /* in a body that ends with the connection */
	R_SWITCHED, /* after a 101 */
	R_LOST,
};

void http_resp_init(struct http_resp *r)
{
	memset(r, 0, sizeof *r);
	r->phase = R_IDLE;
}

void http_resp_next(struct http_resp *r, bool head_request)
{
	if (r->phase == R_IDLE)
		r->head = head_request;
}

bool http_resp_idle(const struct http_resp *r)
{
	return r->phase == R_IDLE;
}

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

/* The value of "Name: value" when the line is that header (trimmed), else NULL. */
static const char *header_value(const char *line, size_t n, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	if (n <= nl || line[nl] != ':' || strncasecmp(line, name, nl) != 0)
		return NULL;
	const char *v = line + nl + 1, *end = line + n;
	while (v < end && is_ows(*v))
		v++;
	while (end > v && is_ows(end[-1]))
		end--;
	*vlen = (size_t)(end - v);
	return v;
}

static bool parse_status(struct http_resp *r, const char *s, size_t n)
{
	if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || s[7] < '0' || s[7] > '9' || s[8] != ' ')
		return false;
	int st = 0;
	for (int i = 9; i < 12; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		st = st * 10 + (s[i] - '0');
	}
	if (st < 100 || (n > 12 && s[12] != ' '))
		return false;
	r->status = st;
	r->cl_seen = r->te_seen = r->chunked = false;
	r->cl = 0;
	return true;
}

/* One header line (kept part of it: n bytes, whole when !cut). */
static bool header(struct http_resp *r, const char *s, size_t n, bool cut)
{
	size_t vl;
	const char *v;
	if ((v = header_value(s, n, "Content-Length", &vl))) {
		uint64_t x = 0;
		if (cut || vl == 0 || vl > 19)
			return false;
		for (size_t i = 0; i < vl; i++) {
			if (v[i] < '0' || v[i] > '9')
				return false;
			x = x * 10 + (uint64_t)(v[i] - '0');
		}
		if (r->cl_seen && x != r->cl)
			return false;
		r->cl_seen = true;
		r->cl = x;
	} else if ((v = header_value(s, n, "Transfer-Encoding", &vl))) {
		if (cut)
			return false;
		/* the last coding of all Transfer-Encoding lines decides */
		const char *end = v + vl, *last = v;
		for (const char *c = v; c < end; c++)
			if (*c == ',')
				last = c + 1;
		while (last < end && is_ows(*last))
			last++;
		r->te_seen = true;
		r->chunked = (size_t)(end - last) == 7 && strncasecmp(last, "chunked", 7) == 0;
	}
	return true;
}

/* The empty line that ends a head. */
static enum http_resp_event end_of_head(struct http_resp *r)
{
	int st = r->status;
	if (st >= 200 || st == 101)
		r->heads++;
	if (st == 101) {
		r->phase = R_SWITCHED;
		return HTTP_RESP_SWITCH;
	}
	if (st < 200) {
		r->phase = R_STATUS; /* interim: the final response follows */
		return HTTP_RESP_MORE;
	}
	struct http_request req = { .body = HTTP_BODY_NONE };
	if (r->head || st == 204 || st == 304) {
		/* no body */
	} else if (r->te_seen && r->chunked) {
		req.body = HTTP_BODY_CHUNKED;
	} else if (r->te_seen) {
		r->phase = R_CLOSE;
		return HTTP_RESP_MORE;
	} else if (r->cl_seen) {
		req.body = HTTP_BODY_LENGTH;
		req.content_length = r->cl;
	} else {
		r->phase = R_CLOSE;
		return HTTP_RESP_MORE;
	}
	if (req.body == HTTP_BODY_NONE || (req.body == HTTP_BODY_LENGTH && r->cl == 0)) {
		r->phase = R_IDLE;
		r->head = false;
		return HTTP_RESP_DONE;
	}
	http_body_init(&r->body, &req);
	r->phase = R_BODY;
	return HTTP_RESP_MORE;
}

/* A complete head line (CR dropped), kept part in r->line. */
static enum http_resp_event head_line(struct http_resp *r, bool cut)
{
	size_t n = r->line_len < HTTP_RESP_LINE_KEEP ? r->line_len : HTTP_RESP_LINE_KEEP;
	if (n > 0 && !cut && r->line[n - 1] == '\r')
		n--;
	r->line_len = 0;
	if (r->phase == R_STATUS) {
		if (!parse_status(r, r->line, n)) {
			r->phase = R_LOST;
			return HTTP_RESP_LOST;
		}
		r->phase = R_HEADERS;
		return HTTP_RESP_MORE;
	}
	if (n == 0)
		return end_of_head(r);
	if (r->line[0] == ' ' || r->line[0] == '\t' || !header(r, r->line, n, cut)) {
		r->phase = R_LOST;
		return HTTP_RESP_LOST;
	}
	return HTTP_RESP_MORE;
}

enum http_resp_event http_resp_feed(struct http_resp *r, const void *data, size_t len,
				    size_t *used)
{
	const char *d = data;
	size_t i = 0;
	enum http_resp_event ev = HTTP_RESP_MORE;
	while (i < len && ev == HTTP_RESP_MORE) {
		switch (r->phase) {
		case R_IDLE:
			if (d[i] == '\r' || d[i] == '\n') {
				i++;
				break;
			}
			r->phase = R_STATUS;
			r->line_len = 0;
			/* fall through */
		case R_STATUS:
		case R_HEADERS: {
			const char *nl = memchr(d + i, '\n', len - i);
			size_t take = nl ? (size_t)(nl - (d + i)) : len - i;
			if (r->line_len < HTTP_RESP_LINE_KEEP) {
				size_t keep = HTTP_RESP_LINE_KEEP - r->line_len;
				memcpy(r->line + r->line_len, d + i, take < keep ? take : keep);
			}
			bool cut = r->line_len + take > HTTP_RESP_LINE_KEEP;
			r->line_len += take;
			i += take;
			if (nl) {
				i++;
				ev = head_line(r, cut);
			}
			break;
		}
		case R_BODY: {
			size_t u = 0;
			enum http_result b = http_body_feed(&r->body, d + i, len - i, &u);
			i += u;
			if (b == HTTP_ERROR) {
				r->phase = R_LOST;
				ev = HTTP_RESP_LOST;
			} else if (b == HTTP_COMPLETE) {
				r->phase = R_IDLE;
				r->head = false;
				ev = HTTP_RESP_DONE;
			}
			break;
		}
		case R_CLOSE:
			i = len;
			break;
		case R_SWITCHED:
			i = len;
			ev = HTTP_RESP_SWITCH;
			break;
		default:
			i = len;
			ev = HTTP_RESP_LOST;
			break;
		}
	}
	if (used)
		*used = i;
	return ev;
}

enum http_resp_event http_resp_eof(struct http_resp *r)
{
	switch (r->phase) {
	case R_IDLE:
		return HTTP_RESP_MORE;
	case R_CLOSE:
		r->phase = R_IDLE;
		return HTTP_RESP_DONE;
	case R_SWITCHED:
		return HTTP_RESP_SWITCH;
	default:
		r->phase = R_LOST;
		return HTTP_RESP_LOST;
	}
}
