/* intercept_h2.c - the HTTP/2 relay of an intercepted connection
 * (intercept_h2.h): two nghttp2 sessions, the streams paired, heads through
 * the owner's callbacks, bytes moved with their windows. */
#include "intercept_h2.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>

#include "../common/bytebuf.h"
#include "../common/util.h"
#include "http.h"
#include "intercept_io.h"

#define RD 16384
#define OUT_HIGH 65536
#define MAX_STREAMS 64
#define IDLE_MS (10 * 60 * 1000)

struct hdrs {
	nghttp2_nv *nv;
	size_t n, cap;
};

/* One direction of a stream's body: bytes waiting for the other session. */
struct half {
	struct bytebuf q;
	bool eof;          /* END_STREAM came */
	bool deferred;     /* the data provider waits for bytes */
	struct hdrs trailers;
	/* the last bytes of q that on_resp held (they may begin the value it
	 * masks): not sent until more came, END_STREAM, or INTERCEPT_HELD_MS
	 * passed */
	size_t held;
	struct timespec held_since;
};

struct stream {
	int32_t cid, uid;  /* client side, upstream side (0: none) */
	struct hdrs req, resp;
	struct half up, down;
	bool started;      /* the request went upstream */
	bool resp_sent;    /* a final response head went to the client */
	bool refused;      /* answered by us */
	bool c_closed, u_closed;
	char answer[300];
	size_t answer_len, answer_off;
	struct stream *next;
};

struct conn {
	SSL *ssl;
	int fd;
	struct bytebuf out;      /* frames for the socket */
	bool eof;
	short rd_ev, wr_ev;
	uint64_t *count;
};

struct h2 {
	struct intercept_job *job;
	nghttp2_session *c, *u;
	struct conn cc, uc;
	struct stream *streams;
	struct http_parser hp, check;
	bool u_gone;       /* the upstream session is over */
	bool fatal;
};

static void set_error(struct h2 *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(struct h2 *h, const char *fmt, ...)
{
	if (h->job->error[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(h->job->error, sizeof h->job->error, fmt, ap);
	va_end(ap);
}

/* ---- header lists ------------------------------------------------------- */

static void hdrs_add(struct hdrs *l, const void *name, size_t nlen, const void *value, size_t vlen,
		     bool lower)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->nv = xrealloc(l->nv, l->cap * sizeof *l->nv);
	}
	uint8_t *n = xmalloc(nlen + 1), *v = xmalloc(vlen + 1);
	memcpy(n, name, nlen);
	memcpy(v, value, vlen);
	for (size_t i = 0; lower && i < nlen; i++)
		if (n[i] >= 'A' && n[i] <= 'Z')
			n[i] = (uint8_t)(n[i] - 'A' + 'a');
	n[nlen] = v[vlen] = 0;
	l->nv[l->n++] = (nghttp2_nv){ .name = n, .value = v, .namelen = nlen, .valuelen = vlen };
}

static void hdrs_clear(struct hdrs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->nv[i].name);
		free(l->nv[i].value);
	}
	l->n = 0;
}

static void hdrs_free(struct hdrs *l)
{
	hdrs_clear(l);
	free(l->nv);
	l->nv = NULL;
	l->cap = 0;
}

static const nghttp2_nv *hdrs_get(const struct hdrs *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp((const char *)l->nv[i].name, name) == 0)
			return &l->nv[i];
	return NULL;
}

/* Fields HTTP/2 forbids (RFC 9113 section 8.2.2). */
static bool conn_specific(const char *name, size_t len)
{
	static const char *const bad[] = { "connection", "keep-alive", "proxy-connection",
					   "transfer-encoding", "upgrade", "host" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (strlen(bad[i]) == len && strncasecmp(bad[i], name, len) == 0)
			return true;
	return false;
}

/* ---- streams ------------------------------------------------------------ */

static void half_put(struct half *hf, const void *d, size_t n)
{
	bytebuf_put(&hf->q, d, n, RD);
}

static void stream_free(struct stream *s)
{
	hdrs_free(&s->req);
	hdrs_free(&s->resp);
	hdrs_free(&s->up.trailers);
	hdrs_free(&s->down.trailers);
	bytebuf_free(&s->up.q);
	bytebuf_free(&s->down.q);
	free(s);
}

/* Both sides closed: nothing refers to it any more. */
static void maybe_free(struct h2 *h, struct stream *s)
{
	if (!s->c_closed || (s->uid > 0 && !s->u_closed))
		return;
	/* no session may hand it out again (a closed stream may linger in one) */
	nghttp2_session_set_stream_user_data(h->c, s->cid, NULL);
	if (s->uid > 0)
		nghttp2_session_set_stream_user_data(h->u, s->uid, NULL);
	for (struct stream **p = &h->streams; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	stream_free(s);
}

/* The body of one direction for the session that sends it; the bytes taken
 * open the window of the session they came from. */
static ssize_t half_read(struct half *hf, nghttp2_session *sess, int32_t id,
			 nghttp2_session *from, int32_t from_id, uint8_t *buf, size_t len,
			 uint32_t *flags)
{
	size_t held = hf->eof ? 0 : hf->held;
	size_t n = bytebuf_pending(&hf->q) - held;
	if (n > len)
		n = len;
	memcpy(buf, hf->q.p + hf->q.off, n);
	hf->q.off += n;
	if (n) {
		nghttp2_session_consume_connection(from, n);
		if (from_id > 0)
			nghttp2_session_consume_stream(from, from_id, n);
	}
	if (bytebuf_pending(&hf->q) > held)
		return (ssize_t)n;
	if (hf->eof) {
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		if (hf->trailers.n) {
			*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
			nghttp2_submit_trailer(sess, id, hf->trailers.nv, hf->trailers.n);
		}
		return (ssize_t)n;
	}
	if (n == 0) {
		hf->deferred = true;
		return NGHTTP2_ERR_DEFERRED;
	}
	return (ssize_t)n;
}

static ssize_t up_read(nghttp2_session *sess, int32_t id, uint8_t *buf, size_t len,
		       uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = src->ptr;
	return half_read(&s->up, sess, id, h->c, s->c_closed ? 0 : s->cid, buf, len, flags);
}

static ssize_t down_read(nghttp2_session *sess, int32_t id, uint8_t *buf, size_t len,
			 uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = src->ptr;
	return half_read(&s->down, sess, id, h->u, s->u_closed ? 0 : s->uid, buf, len, flags);
}

static ssize_t answer_read(nghttp2_session *sess, int32_t id, uint8_t *buf, size_t len,
			   uint32_t *flags, nghttp2_data_source *src, void *ud)
{
	struct stream *s = src->ptr;
	size_t n = s->answer_len - s->answer_off;
	if (n > len)
		n = len;
	memcpy(buf, s->answer + s->answer_off, n);
	s->answer_off += n;
	if (s->answer_off == s->answer_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

/* Answer the stream ourselves (status, reason) when no response began,
 * else reset it; reset its upstream stream. */
static void refuse_stream(struct h2 *h, struct stream *s, int status, const char *why,
			  bool by_callback)
{
	set_error(h, "%s", why);
	h->job->refused |= by_callback;
	if (s->refused)
		return;
	s->refused = true;
	if (s->uid > 0 && !s->u_closed)
		nghttp2_submit_rst_stream(h->u, NGHTTP2_FLAG_NONE, s->uid, NGHTTP2_CANCEL);
	if (s->c_closed)
		return;
	if (s->resp_sent) {
		nghttp2_submit_rst_stream(h->c, NGHTTP2_FLAG_NONE, s->cid, NGHTTP2_CANCEL);
		return;
	}
	int n = snprintf(s->answer, sizeof s->answer, "%.200s\n", why);
	s->answer_len = n > 0 && (size_t)n < sizeof s->answer ? (size_t)n : 0;
	for (size_t i = 0; i < s->answer_len; i++)
		if ((s->answer[i] < 0x20 && s->answer[i] != '\n') || s->answer[i] > 0x7e)
			s->answer[i] = '?';
	char st[8], len[24];
	snprintf(st, sizeof st, "%d", status);
	snprintf(len, sizeof len, "%zu", s->answer_len);
	char reason[210];
	snprintf(reason, sizeof reason, "%.*s", (int)(s->answer_len ? s->answer_len - 1 : 0),
		 s->answer);
	nghttp2_nv nv[] = {
		{ (uint8_t *)":status", (uint8_t *)st, 7, strlen(st), 0 },
		{ (uint8_t *)"content-type", (uint8_t *)"text/plain", 12, 10, 0 },
		{ (uint8_t *)"content-length", (uint8_t *)len, 14, strlen(len), 0 },
		{ (uint8_t *)"x-warden-reason", (uint8_t *)reason, 15, strlen(reason), 0 },
	};
	nghttp2_data_provider prd = { .source.ptr = s, .read_callback = answer_read };
	s->resp_sent = true;
	nghttp2_submit_response(h->c, s->cid, nv, 4, &prd);
}

/* A head being written, HTTP_HEAD_MAX bytes at most: big once a piece did
 * not fit (the pieces after it that fit still go in). */
struct headw {
	char *p;
	size_t n;
	bool big;
};

static void put(struct headw *w, const void *d, size_t l)
{
	if (w->n + l > HTTP_HEAD_MAX) {
		w->big = true;
	} else {
		memcpy(w->p + w->n, d, l);
		w->n += l;
	}
}

/* The request's header list as an HTTP/1.1 head into w: the request line
 * (when :method and :path are there: false when not), Host from
 * :authority, the other fields as they came. */
static bool head_from_list(const struct stream *s, struct headw *w)
{
	const nghttp2_nv *m = hdrs_get(&s->req, ":method"), *p = hdrs_get(&s->req, ":path"),
			 *a = hdrs_get(&s->req, ":authority");
	if (m && p) {
		put(w, m->value, m->valuelen);
		put(w, " ", 1);
		put(w, p->value, p->valuelen);
		put(w, " HTTP/1.1\r\n", 11);
	}
	if (a) {
		put(w, "Host: ", 6);
		put(w, a->value, a->valuelen);
		put(w, "\r\n", 2);
	}
	for (size_t i = 0; i < s->req.n; i++) {
		const nghttp2_nv *f = &s->req.nv[i];
		if (f->name[0] == ':' || (a && strcmp((const char *)f->name, "host") == 0))
			continue;
		put(w, f->name, f->namelen);
		put(w, ": ", 2);
		put(w, f->value, f->valuelen);
		put(w, "\r\n", 2);
	}
	put(w, "\r\n", 2);
	return m && p;
}

/* The head in w (line: it has a request line) checked by the origin-mode
 * parser and shown to on_head: the parser of the head to send upstream
 * (h->hp; h->check when on_head rewrote it into *out, malloc'd), or NULL
 * when the stream was refused. */
static struct http_parser *head_through_owner(struct h2 *h, struct stream *s,
					      const struct headw *w, bool line, char **out,
					      size_t *outlen)
{
	struct intercept_job *j = h->job;
	http_parser_init_origin(&h->hp, j->any_host ? NULL : &j->host, j->port, true);
	size_t used = 0;
	if (w->big || !line || http_feed(&h->hp, w->p, w->n, &used) != HTTP_COMPLETE ||
	    used != w->n) {
		char why[160];
		snprintf(why, sizeof why, "malformed request: %s",
			 w->big ? "head too large" : h->hp.state == HTTP_ERROR ? h->hp.reason : "incomplete");
		refuse_stream(h, s, w->big ? 431 : h->hp.state == HTTP_ERROR ? h->hp.status : 400, why,
			      false);
		return NULL;
	}
	if (j->on_req) { /* method/path rules: that stream answered, the others go on */
		size_t tl = 0;
		const char *t = http_path(&h->hp, &tl);
		char why[512] = "";
		int st = j->on_req(j->req_ctx, h->hp.req.method, t, tl, why, sizeof why);
		if (st) {
			refuse_stream(h, s, st, why[0] ? why : "request refused", false);
			return NULL;
		}
	}
	if (j->on_head) {
		char why[256] = "";
		if (j->on_head(j->ctx, w->p, w->n, out, outlen, why, sizeof why) != 0) {
			free(*out);
			*out = NULL;
			why[sizeof why - 1] = '\0';
			refuse_stream(h, s, 403, why[0] ? why : "request refused", true);
			return NULL;
		}
	}
	if (!*out)
		return &h->hp;
	struct http_parser *q = &h->check;
	http_parser_init_origin(q, j->any_host ? NULL : &j->host, j->port, true);
	used = 0;
	if (http_feed(q, *out, *outlen, &used) != HTTP_COMPLETE || used != *outlen ||
	    q->req.body != h->hp.req.body ||
	    q->req.content_length != h->hp.req.content_length ||
	    http_is_upgrade(q) != http_is_upgrade(&h->hp) ||
	    strcmp(q->req.method, h->hp.req.method) != 0) {
		free(*out);
		*out = NULL;
		refuse_stream(h, s, 500, "rewritten request head is malformed", false);
		return NULL;
	}
	return q;
}

/* The head q parsed, as the header list sent upstream (:method, :scheme,
 * :authority from Host, :path; names in lower case; connection-specific
 * fields dropped, TE but "trailers"); with a body when body. */
static void submit_upstream(struct h2 *h, struct stream *s, const struct http_parser *q, bool body)
{
	struct hdrs l = { 0 };
	size_t plen;
	const char *path = http_path(q, &plen);
	char *pbuf = xmalloc(plen + 2);
	size_t pl = 0;
	if (strcmp(q->req.method, "OPTIONS") == 0 && plen == 0)
		pbuf[pl++] = '*';
	else if (plen == 0 || path[0] != '/')
		pbuf[pl++] = '/';
	memcpy(pbuf + pl, path, plen);
	pl += plen;
	hdrs_add(&l, ":method", 7, q->req.method, strlen(q->req.method), false);
	hdrs_add(&l, ":scheme", 7, "https", 5, false);
	if (q->host_field >= 0) {
		const struct http_field *f = &q->fields[q->host_field];
		hdrs_add(&l, ":authority", 10, q->buf + f->value, f->value_len, false);
	}
	hdrs_add(&l, ":path", 5, pbuf, pl, false);
	free(pbuf);
	for (size_t i = 0; i < q->nfields; i++) {
		const struct http_field *f = &q->fields[i];
		if (conn_specific(q->buf + f->name, f->name_len))
			continue;
		if (f->name_len == 2 && strncasecmp(q->buf + f->name, "te", 2) == 0 &&
		    !(f->value_len == 8 && strncasecmp(q->buf + f->value, "trailers", 8) == 0))
			continue;
		hdrs_add(&l, q->buf + f->name, f->name_len, q->buf + f->value, f->value_len, true);
	}
	nghttp2_data_provider prd = { .source.ptr = s, .read_callback = up_read };
	int32_t id = nghttp2_submit_request(h->u, NULL, l.nv, l.n, body ? &prd : NULL, s);
	hdrs_free(&l);
	if (id < 0) {
		nghttp2_submit_rst_stream(h->c, NGHTTP2_FLAG_NONE, s->cid, NGHTTP2_REFUSED_STREAM);
		s->refused = true;
		return;
	}
	s->uid = id;
	h->job->requests++;
}

/* The request's header list as an HTTP/1.1 head, through on_head, and the
 * head it returns sent upstream as a header list. */
static void start_request(struct h2 *h, struct stream *s, bool body)
{
	s->started = true;
	if (h->u_gone) {
		nghttp2_submit_rst_stream(h->c, NGHTTP2_FLAG_NONE, s->cid, NGHTTP2_REFUSED_STREAM);
		s->refused = true;
		return;
	}
	struct headw w = { .p = xmalloc(HTTP_HEAD_MAX + 1) };
	bool line = head_from_list(s, &w);
	char *out = NULL;
	size_t outlen = 0;
	const struct http_parser *q = head_through_owner(h, s, &w, line, &out, &outlen);
	free(w.p);
	if (q)
		submit_upstream(h, s, q, body);
	free(out);
}

/* ---- the client's session (we are its server) --------------------------- */

static int c_begin_headers(nghttp2_session *sess, const nghttp2_frame *fr, void *ud)
{
	struct h2 *h = ud;
	if (fr->hd.type != NGHTTP2_HEADERS || fr->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	struct stream *s = xcalloc(1, sizeof *s);
	s->cid = fr->hd.stream_id;
	s->next = h->streams;
	h->streams = s;
	nghttp2_session_set_stream_user_data(sess, s->cid, s);
	return 0;
}

static int c_header(nghttp2_session *sess, const nghttp2_frame *fr, const uint8_t *name,
		    size_t nlen, const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct stream *s = nghttp2_session_get_stream_user_data(sess, fr->hd.stream_id);
	if (!s || fr->hd.type != NGHTTP2_HEADERS)
		return 0;
	hdrs_add(s->started ? &s->up.trailers : &s->req, name, nlen, value, vlen, false);
	return 0;
}

static void up_end(struct h2 *h, struct stream *s)
{
	s->up.eof = true;
	if (s->up.deferred && s->uid > 0 && !s->u_closed) {
		s->up.deferred = false;
		nghttp2_session_resume_data(h->u, s->uid);
	}
}

static int c_frame_recv(nghttp2_session *sess, const nghttp2_frame *fr, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = fr->hd.stream_id
				   ? nghttp2_session_get_stream_user_data(sess, fr->hd.stream_id)
				   : NULL;
	switch (fr->hd.type) {
	case NGHTTP2_HEADERS:
		if (!s)
			break;
		if (!s->started)
			start_request(h, s, !(fr->hd.flags & NGHTTP2_FLAG_END_STREAM));
		else if (fr->hd.flags & NGHTTP2_FLAG_END_STREAM)
			up_end(h, s);
		break;
	case NGHTTP2_DATA:
		if (s && (fr->hd.flags & NGHTTP2_FLAG_END_STREAM))
			up_end(h, s);
		break;
	case NGHTTP2_GOAWAY:
		if (!h->u_gone)
			nghttp2_submit_goaway(h->u, NGHTTP2_FLAG_NONE, 0, fr->goaway.error_code,
					      NULL, 0);
		break;
	default:
		break;
	}
	return 0;
}

static int c_data(nghttp2_session *sess, uint8_t flags, int32_t id, const uint8_t *d, size_t n,
		  void *ud)
{
	struct h2 *h = ud;
	struct stream *s = nghttp2_session_get_stream_user_data(sess, id);
	if (!s || s->refused || s->uid <= 0 || s->u_closed) {
		nghttp2_session_consume(sess, id, n);
		return 0;
	}
	struct intercept_job *j = h->job;
	if (j->on_data) {
		char why[256] = "";
		if (j->on_data(j->ctx, d, n, why, sizeof why) != 0) {
			why[sizeof why - 1] = '\0';
			nghttp2_session_consume(sess, id, n);
			refuse_stream(h, s, 403, why[0] ? why : "request refused", true);
			return 0;
		}
	}
	half_put(&s->up, d, n);
	if (s->up.deferred) {
		s->up.deferred = false;
		nghttp2_session_resume_data(h->u, s->uid);
	}
	return 0;
}

static int c_stream_close(nghttp2_session *sess, int32_t id, uint32_t code, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = nghttp2_session_get_stream_user_data(sess, id);
	if (!s)
		return 0;
	s->c_closed = true;
	if (s->uid > 0 && !s->u_closed && !h->u_gone)
		nghttp2_submit_rst_stream(h->u, NGHTTP2_FLAG_NONE, s->uid,
					  code ? code : NGHTTP2_CANCEL);
	maybe_free(h, s);
	return 0;
}

/* ---- the server's session (we are its client) ---------------------------- */

static int u_header(nghttp2_session *sess, const nghttp2_frame *fr, const uint8_t *name,
		    size_t nlen, const uint8_t *value, size_t vlen, uint8_t flags, void *ud)
{
	struct stream *s = nghttp2_session_get_stream_user_data(sess, fr->hd.stream_id);
	if (!s || fr->hd.type != NGHTTP2_HEADERS)
		return 0;
	hdrs_add(s->resp_sent ? &s->down.trailers : &s->resp, name, nlen, value, vlen, false);
	return 0;
}

static void down_end(struct h2 *h, struct stream *s)
{
	s->down.eof = true;
	if (s->down.deferred && !s->c_closed) {
		s->down.deferred = false;
		nghttp2_session_resume_data(h->c, s->cid);
	}
}

/* Response fields through on_resp as the lines an HTTP/1.1 head would
 * have ("name: value\r\n"), rewritten in place. */
static void resp_fields(struct h2 *h, struct hdrs *l)
{
	if (!h->job->on_resp)
		return;
	for (size_t i = 0; i < l->n; i++) {
		nghttp2_nv *f = &l->nv[i];
		if (f->name[0] == ':')
			continue;
		size_t n = f->namelen + 2 + f->valuelen + 2;
		char *line = xmalloc(n);
		memcpy(line, f->name, f->namelen);
		memcpy(line + f->namelen, ": ", 2);
		memcpy(line + f->namelen + 2, f->value, f->valuelen);
		memcpy(line + n - 2, "\r\n", 2);
		h->job->on_resp(h->job->ctx, line, n);
		memcpy(f->value, line + f->namelen + 2, f->valuelen);
		free(line);
	}
}

static int u_frame_recv(nghttp2_session *sess, const nghttp2_frame *fr, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = fr->hd.stream_id
				   ? nghttp2_session_get_stream_user_data(sess, fr->hd.stream_id)
				   : NULL;
	bool end = fr->hd.flags & NGHTTP2_FLAG_END_STREAM;
	switch (fr->hd.type) {
	case NGHTTP2_HEADERS: {
		if (!s || s->refused || s->c_closed)
			break;
		if (s->resp_sent) { /* trailers */
			if (end)
				down_end(h, s);
			break;
		}
		const nghttp2_nv *st = hdrs_get(&s->resp, ":status");
		int status = st ? atoi((const char *)st->value) : 0;
		struct hdrs l = { 0 };
		for (size_t i = 0; i < s->resp.n; i++) {
			const nghttp2_nv *f = &s->resp.nv[i];
			if (!conn_specific((const char *)f->name, f->namelen))
				hdrs_add(&l, f->name, f->namelen, f->value, f->valuelen, false);
		}
		resp_fields(h, &l);
		hdrs_clear(&s->resp);
		if (status < 200) {
			nghttp2_submit_headers(h->c, NGHTTP2_FLAG_NONE, s->cid, NULL, l.nv, l.n, NULL);
		} else {
			if (!h->job->first_status)
				h->job->first_status = status;
			nghttp2_data_provider prd = { .source.ptr = s, .read_callback = down_read };
			s->resp_sent = true;
			nghttp2_submit_response(h->c, s->cid, l.nv, l.n, end ? NULL : &prd);
		}
		hdrs_free(&l);
		break;
	}
	case NGHTTP2_DATA:
		if (s && end)
			down_end(h, s);
		break;
	case NGHTTP2_GOAWAY:
		/* no new streams: the client opens its next ones elsewhere */
		nghttp2_submit_goaway(h->c, NGHTTP2_FLAG_NONE,
				      nghttp2_session_get_last_proc_stream_id(h->c),
				      NGHTTP2_NO_ERROR, NULL, 0);
		h->u_gone = true; /* streams above its last id are refused as they close */
		break;
	default:
		break;
	}
	return 0;
}

static int u_data(nghttp2_session *sess, uint8_t flags, int32_t id, const uint8_t *d, size_t n,
		  void *ud)
{
	struct h2 *h = ud;
	struct stream *s = nghttp2_session_get_stream_user_data(sess, id);
	if (!s || s->refused || s->c_closed) {
		nghttp2_session_consume(sess, id, n);
		return 0;
	}
	size_t keep = s->down.held;
	half_put(&s->down, d, n);
	if (h->job->on_resp) {
		/* what was held and what came, together: a value split between
		 * two DATA frames is whole here */
		s->down.held = h->job->on_resp(h->job->ctx, s->down.q.p + s->down.q.len - n - keep,
					       keep + n);
		if (s->down.held)
			clock_gettime(CLOCK_MONOTONIC, &s->down.held_since);
	}
	if (s->down.deferred) {
		s->down.deferred = false;
		nghttp2_session_resume_data(h->c, s->cid);
	}
	return 0;
}

static int u_stream_close(nghttp2_session *sess, int32_t id, uint32_t code, void *ud)
{
	struct h2 *h = ud;
	struct stream *s = nghttp2_session_get_stream_user_data(sess, id);
	if (!s)
		return 0;
	s->u_closed = true;
	if (!s->c_closed && !s->refused && (code || !s->down.eof))
		nghttp2_submit_rst_stream(h->c, NGHTTP2_FLAG_NONE, s->cid,
					  code ? code : NGHTTP2_INTERNAL_ERROR);
	maybe_free(h, s);
	return 0;
}

/* ---- I/O ---------------------------------------------------------------- */

/* Read what the socket has into the session: false when the side ended. */
static bool conn_read(struct h2 *h, struct conn *c, nghttp2_session *sess, const char *name,
		      bool *moved)
{
	char buf[RD];
	c->rd_ev = 0;
	for (int i = 0; i < 4; i++) {
		size_t n = 0;
		ERR_clear_error();
		errno = 0;
		if (SSL_read_ex(c->ssl, buf, sizeof buf, &n) != 1) {
			int err = SSL_get_error(c->ssl, 0);
			if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
				c->rd_ev = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
				return true;
			}
			if (err != SSL_ERROR_ZERO_RETURN && err != SSL_ERROR_SSL)
				set_error(h, "%s: %s", name, errno ? strerror(errno) : "connection closed");
			ERR_clear_error();
			c->eof = true;
			*moved = true;
			return false;
		}
		*moved = true;
		ssize_t r = nghttp2_session_mem_recv(sess, (const uint8_t *)buf, n);
		if (r < 0) {
			set_error(h, "%s: HTTP/2: %s", name, nghttp2_strerror((int)r));
			c->eof = true;
			return false;
		}
	}
	return true;
}

/* Frames the session has, out to the socket as far as it takes them. */
static bool conn_write(struct h2 *h, struct conn *c, nghttp2_session *sess, const char *name,
		       bool *moved)
{
	c->wr_ev = 0;
	for (;;) {
		if (!bytebuf_pending(&c->out)) {
			c->out.off = c->out.len = 0;
			while (c->out.len < OUT_HIGH) {
				const uint8_t *d;
				ssize_t n = nghttp2_session_mem_send(sess, &d);
				if (n < 0) {
					set_error(h, "%s: HTTP/2: %s", name, nghttp2_strerror((int)n));
					return false;
				}
				if (n == 0)
					break;
				bytebuf_put(&c->out, d, (size_t)n, OUT_HIGH);
			}
			if (!bytebuf_pending(&c->out))
				return true;
		}
		size_t n = 0;
		ERR_clear_error();
		errno = 0;
		if (SSL_write_ex(c->ssl, c->out.p + c->out.off, bytebuf_pending(&c->out), &n) != 1) {
			int err = SSL_get_error(c->ssl, 0);
			if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
				c->wr_ev = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
				return true;
			}
			set_error(h, "%s: %s", name, errno ? strerror(errno) : "write failed");
			ERR_clear_error();
			c->eof = true;
			return false;
		}
		c->out.off += n;
		*c->count += n;
		*moved = true;
	}
}

static nghttp2_session *new_session(struct h2 *h, bool server)
{
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	nghttp2_session *s = NULL;
	if (nghttp2_session_callbacks_new(&cb) != 0)
		return NULL;
	if (nghttp2_option_new(&opt) != 0) {
		nghttp2_session_callbacks_del(cb);
		return NULL;
	}
	nghttp2_option_set_no_auto_window_update(opt, 1);
	nghttp2_option_set_no_closed_streams(opt, 1);
	if (server) {
		nghttp2_session_callbacks_set_on_begin_headers_callback(cb, c_begin_headers);
		nghttp2_session_callbacks_set_on_header_callback(cb, c_header);
		nghttp2_session_callbacks_set_on_frame_recv_callback(cb, c_frame_recv);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, c_data);
		nghttp2_session_callbacks_set_on_stream_close_callback(cb, c_stream_close);
		if (nghttp2_session_server_new2(&s, cb, h, opt) != 0)
			s = NULL;
	} else {
		nghttp2_session_callbacks_set_on_header_callback(cb, u_header);
		nghttp2_session_callbacks_set_on_frame_recv_callback(cb, u_frame_recv);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, u_data);
		nghttp2_session_callbacks_set_on_stream_close_callback(cb, u_stream_close);
		if (nghttp2_session_client_new2(&s, cb, h, opt) != 0)
			s = NULL;
	}
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	return s;
}

static bool live_streams(const struct h2 *h)
{
	for (const struct stream *s = h->streams; s; s = s->next)
		if (!s->c_closed)
			return true;
	return false;
}

/* The upstream session is over (its socket ended, or it wants nothing
 * more and has nothing to send): marked gone, and what it left unfinished
 * reset towards the client. true when a reset was sent. */
static bool upstream_over(struct h2 *h)
{
	if (!h->uc.eof && (nghttp2_session_want_read(h->u) || nghttp2_session_want_write(h->u) ||
			   bytebuf_pending(&h->uc.out)))
		return false;
	bool moved = false;
	h->uc.eof = true;
	h->u_gone = true;
	for (struct stream *s = h->streams, *nx; s; s = nx) {
		nx = s->next;
		if (s->uid > 0 && !s->u_closed) {
			s->u_closed = true;
			if (!s->c_closed && !s->down.eof) {
				nghttp2_submit_rst_stream(h->c, NGHTTP2_FLAG_NONE, s->cid,
							  NGHTTP2_INTERNAL_ERROR);
				moved = true;
			}
		}
	}
	return moved;
}

/* Every read and write that has room, until none moves: false when the
 * client's side ended (the relay is over). */
static bool pump(struct h2 *h)
{
	bool moved;
	do {
		moved = false;
		if (!h->uc.eof && !conn_read(h, &h->uc, h->u, "upstream", &moved))
			h->u_gone = true;
		if (!h->cc.eof && !conn_read(h, &h->cc, h->c, "client", &moved))
			return false;
		if (!h->uc.eof && !conn_write(h, &h->uc, h->u, "upstream", &moved))
			h->uc.eof = h->u_gone = true;
		if (!conn_write(h, &h->cc, h->c, "client", &moved))
			return false;
		if (upstream_over(h))
			moved = true;
	} while (moved);
	return true;
}

/* Nothing more will move to the client: its session is done, or the
 * upstream is gone and no stream of the client's is open. */
static bool finished(const struct h2 *h)
{
	if (!nghttp2_session_want_read(h->c) && !nghttp2_session_want_write(h->c) &&
	    !bytebuf_pending(&h->cc.out))
		return true;
	return h->u_gone && !live_streams(h) && !bytebuf_pending(&h->cc.out) &&
	       !nghttp2_session_want_write(h->c);
}

/* How long until the first of the streams' held bytes must go
 * (INTERCEPT_HELD_MS after they were held: a stream that pauses there
 * sends them as they are), or left when none wait; with release, those
 * due go now. */
static long held_due(struct h2 *h, long left, bool release)
{
	for (struct stream *s = h->streams; s; s = s->next) {
		if (!s->down.held || s->down.eof)
			continue;
		long due = INTERCEPT_HELD_MS - (long)ms_since(&s->down.held_since);
		if (release && due <= 0) {
			s->down.held = 0;
			if (s->down.deferred && !s->c_closed) {
				s->down.deferred = false;
				nghttp2_session_resume_data(h->c, s->cid);
			}
		} else if (due < left) {
			left = due > 0 ? due : 0;
		}
	}
	return left;
}

/* Wait for what each side waits for (readable at least), up to the idle
 * limit since *last or the first held bytes' due time: false when the
 * relay must end (stopped, idle, poll failed). */
static bool wait_sides(struct h2 *h, struct timespec *last)
{
	int stop_fd = h->job->stop_fd;
	struct pollfd p[3] = { { .fd = h->cc.fd, .events = h->cc.rd_ev | h->cc.wr_ev },
			       { .fd = h->uc.eof ? -1 : h->uc.fd,
				 .events = h->uc.rd_ev | h->uc.wr_ev },
			       { .fd = stop_fd > 0 ? stop_fd : -1, .events = POLLIN } };
	if (!p[0].events)
		p[0].events = POLLIN;
	if (!p[1].events)
		p[1].events = POLLIN;
	long left = IDLE_MS - (long)ms_since(last), wait = held_due(h, left, false);
	int r = wait > 0 ? poll(p, 3, (int)wait) : 0;
	if (r > 0 && p[2].revents) {
		set_error(h, "stopped");
		return false;
	}
	if (r == 0 && wait < left) {
		held_due(h, left, true);
		return true;
	}
	if (r == 0) {
		set_error(h, "idle for 10 minutes");
		return false;
	}
	if (r < 0 && errno != EINTR) {
		set_error(h, "poll: %s", strerror(errno));
		return false;
	}
	clock_gettime(CLOCK_MONOTONIC, last);
	return true;
}

void intercept_h2_relay(struct intercept_job *job, SSL *client, int client_fd, SSL *upstream,
			int upstream_fd)
{
	struct h2 *h = xcalloc(1, sizeof *h);
	h->job = job;
	h->cc = (struct conn){ .ssl = client, .fd = client_fd, .count = &job->bytes_in };
	h->uc = (struct conn){ .ssl = upstream, .fd = upstream_fd, .count = &job->bytes_out };
	h->c = new_session(h, true);
	h->u = new_session(h, false);
	if (h->c && h->u) {
		nghttp2_settings_entry cs[] = { { NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, MAX_STREAMS },
						{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 } };
		nghttp2_settings_entry us[] = { { NGHTTP2_SETTINGS_ENABLE_PUSH, 0 } };
		nghttp2_submit_settings(h->c, NGHTTP2_FLAG_NONE, cs, 2);
		nghttp2_submit_settings(h->u, NGHTTP2_FLAG_NONE, us, 1);
		struct timespec last;
		clock_gettime(CLOCK_MONOTONIC, &last);
		/* until the client's side ends, nothing more can move, or the
		 * wait says stop */
		while (pump(h) && !finished(h) && wait_sides(h, &last)) {
		}
	} else {
		set_error(h, "HTTP/2: out of memory");
	}
	nghttp2_session_del(h->c);
	nghttp2_session_del(h->u);
	while (h->streams) {
		struct stream *s = h->streams;
		h->streams = s->next;
		stream_free(s);
	}
	bytebuf_free(&h->cc.out);
	bytebuf_free(&h->uc.out);
	free(h);
}
