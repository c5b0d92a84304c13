/* tls_wbuf.c - the write-gathering filter BIO of tls_wbuf.h.
 *
 * A write that fits is copied in and succeeds at once. One that does not
 * first pushes what is held to the socket; if the socket takes it all there
 * is room again, else the write is retried later (BIO retry, which OpenSSL
 * reports as SSL_ERROR_WANT_WRITE and repeats with the same record). A
 * flush (BIO_CTRL_FLUSH) pushes what is held as far as the socket takes.
 * The buffer grows as bulk needs it: a connection that only ever sends a
 * request at a time holds one record's worth. */
#include "tls_wbuf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct wbuf {
	char *p;
	size_t off, len; /* held: p[off..len) */
	size_t size, cap; /* allocated; grown on demand up to cap */
};

/* Push held bytes to the next BIO: 1 all out, 0 would block, -1 failed. */
static int push(BIO *bio, struct wbuf *w)
{
	while (w->off < w->len) {
		size_t k = 0;
		if (BIO_write_ex(BIO_next(bio), w->p + w->off, w->len - w->off, &k) != 1) {
			BIO_copy_next_retry(bio);
			return BIO_should_retry(bio) ? 0 : -1;
		}
		w->off += k;
	}
	w->off = w->len = 0;
	return 1;
}

static int wbuf_write(BIO *bio, const char *in, size_t n, size_t *put)
{
	struct wbuf *w = BIO_get_data(bio);
	BIO_clear_retry_flags(bio);
	if (w->len + n > w->cap) {
		int r = push(bio, w);
		if (r < 0)
			return 0;
		if (w->off == w->len)
			w->off = w->len = 0;
		if (r == 0 && w->off) { /* make room at the end */
			memmove(w->p, w->p + w->off, w->len - w->off);
			w->len -= w->off;
			w->off = 0;
		}
		if (w->len + n > w->cap) {
			if (w->len)
				return 0; /* the socket would block: retry flags as push left them */
			/* larger than the buffer itself: straight through */
			int d = BIO_write_ex(BIO_next(bio), in, n, put);
			BIO_copy_next_retry(bio);
			return d;
		}
	}
	if (w->len + n > w->size) { /* grows only as far as bulk needs it */
		size_t size = w->size ? w->size : 16384;
		while (size < w->len + n)
			size *= 2;
		if (size > w->cap)
			size = w->cap;
		char *p = realloc(w->p, size);
		if (!p)
			return 0;
		w->p = p, w->size = size;
	}
	memcpy(w->p + w->len, in, n);
	w->len += n;
	*put = n;
	return 1;
}

static int wbuf_read(BIO *bio, char *out, size_t n, size_t *got)
{
	BIO_clear_retry_flags(bio);
	int r = BIO_read_ex(BIO_next(bio), out, n, got);
	BIO_copy_next_retry(bio);
	return r;
}

static long wbuf_ctrl(BIO *bio, int cmd, long num, void *ptr)
{
	struct wbuf *w = BIO_get_data(bio);
	if (!BIO_next(bio))
		return 0;
	switch (cmd) {
	case BIO_CTRL_FLUSH: {
		BIO_clear_retry_flags(bio);
		int r = push(bio, w);
		if (r <= 0)
			return r;
		r = (int)BIO_ctrl(BIO_next(bio), cmd, num, ptr);
		BIO_copy_next_retry(bio);
		return r;
	}
	case BIO_CTRL_WPENDING:
		return (long)(w->len - w->off) + BIO_ctrl(BIO_next(bio), cmd, num, ptr);
	default:
		return BIO_ctrl(BIO_next(bio), cmd, num, ptr);
	}
}

static int wbuf_create(BIO *bio)
{
	BIO_set_init(bio, 1);
	return 1;
}

static int wbuf_destroy(BIO *bio)
{
	struct wbuf *w = BIO_get_data(bio);
	if (w)
		free(w->p);
	free(w);
	BIO_set_data(bio, NULL);
	return 1;
}

static BIO_METHOD *wbuf_method;
static int wbuf_type;
static pthread_once_t wbuf_once = PTHREAD_ONCE_INIT;

static void wbuf_method_init(void)
{
	int type = BIO_get_new_index();
	if (type < 0)
		return;
	type |= BIO_TYPE_FILTER;
	BIO_METHOD *m = BIO_meth_new(type, "warden write gathering");
	if (m && BIO_meth_set_write_ex(m, wbuf_write) && BIO_meth_set_read_ex(m, wbuf_read) &&
	    BIO_meth_set_ctrl(m, wbuf_ctrl) && BIO_meth_set_create(m, wbuf_create) &&
	    BIO_meth_set_destroy(m, wbuf_destroy))
		wbuf_method = m, wbuf_type = type;
	else
		BIO_meth_free(m);
}

/* The buffer in ssl's write chain (OpenSSL may have put a handshake
 * buffer of its own in front of it for a while). */
static struct wbuf *wbuf_of(SSL *ssl)
{
	if (!wbuf_method)
		return NULL;
	BIO *w = BIO_find_type(SSL_get_wbio(ssl), wbuf_type);
	return w ? BIO_get_data(w) : NULL;
}

bool tls_wbuf_install(SSL *ssl, size_t cap)
{
	pthread_once(&wbuf_once, wbuf_method_init);
	BIO *r = SSL_get_rbio(ssl);
	if (!wbuf_method || !r || r != SSL_get_wbio(ssl) || cap == 0)
		return false;
	struct wbuf *w = calloc(1, sizeof *w);
	BIO *f = w ? BIO_new(wbuf_method) : NULL;
	if (!f) {
		free(w);
		return false;
	}
	w->cap = cap;
	BIO_set_data(f, w);
	/* the chain holds a reference of its own to r; SSL_set_bio with r
	 * unchanged takes f's and lets go of r as the write BIO */
	if (BIO_up_ref(r) != 1) {
		BIO_free(f);
		return false;
	}
	BIO_push(f, r);
	SSL_set_bio(ssl, r, f);
	return true;
}

int tls_wbuf_flush(SSL *ssl)
{
	if (!wbuf_of(ssl))
		return 1;
	BIO *w = SSL_get_wbio(ssl);
	if (BIO_flush(w) > 0)
		return 1;
	return BIO_should_retry(w) ? 0 : -1;
}

size_t tls_wbuf_pending(SSL *ssl)
{
	struct wbuf *w = wbuf_of(ssl);
	return w ? w->len - w->off : 0;
}
