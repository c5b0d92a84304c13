/* tls_bio.c - the filter BIOs of tls_bio.h. Both hold one struct fbuf.
 *
 * Early bytes: reads take from the buffer until it is empty, then from the
 * socket; its pending count (BIO_CTRL_PENDING) includes what is left.
 *
 * Write gathering: a write that fits is copied in and succeeds at once. One that does not
 * first pushes what is held to the socket; if the socket takes it all there
 * is room again, else the write is retried later (BIO retry, which OpenSSL
 * reports as SSL_ERROR_WANT_WRITE and repeats with the same record). A
 * flush (BIO_CTRL_FLUSH) pushes what is held as far as the socket takes.
 * The buffer grows as bulk needs it: a connection that only ever sends a
 * request at a time holds one record's worth. */
#include "tls_bio.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct fbuf {
	char *p;
	size_t off, len; /* held: p[off..len) */
	size_t size, cap; /* allocated; grown on demand up to cap (write gathering) */
};

/* Push held bytes to the next BIO: 1 all out, 0 would block, -1 failed. */
static int push(BIO *bio, struct fbuf *w)
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
	struct fbuf *w = BIO_get_data(bio);
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

static long wbuf_ctrl(BIO *bio, int cmd, long num, void *ptr)
{
	struct fbuf *w = BIO_get_data(bio);
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

static int pass_read(BIO *bio, char *out, size_t n, size_t *got)
{
	BIO_clear_retry_flags(bio);
	int r = BIO_read_ex(BIO_next(bio), out, n, got);
	BIO_copy_next_retry(bio);
	return r;
}

static int pass_write(BIO *bio, const char *in, size_t n, size_t *put)
{
	BIO_clear_retry_flags(bio);
	int r = BIO_write_ex(BIO_next(bio), in, n, put);
	BIO_copy_next_retry(bio);
	return r;
}

static int early_read(BIO *bio, char *out, size_t n, size_t *got)
{
	struct fbuf *x = BIO_get_data(bio);
	if (x && x->off < x->len) {
		BIO_clear_retry_flags(bio);
		size_t k = x->len - x->off < n ? x->len - x->off : n;
		memcpy(out, x->p + x->off, k);
		x->off += k;
		*got = k;
		return 1;
	}
	return pass_read(bio, out, n, got);
}

static long early_ctrl(BIO *bio, int cmd, long num, void *ptr)
{
	struct fbuf *x = BIO_get_data(bio);
	if (!BIO_next(bio))
		return 0;
	long r = BIO_ctrl(BIO_next(bio), cmd, num, ptr);
	if (cmd == BIO_CTRL_PENDING && x && x->off < x->len)
		r += (long)(x->len - x->off);
	return r;
}

static int fbuf_create(BIO *bio)
{
	BIO_set_init(bio, 1);
	return 1;
}

static int fbuf_destroy(BIO *bio)
{
	struct fbuf *w = BIO_get_data(bio);
	if (w)
		free(w->p);
	free(w);
	BIO_set_data(bio, NULL);
	return 1;
}

/* The two methods, made once; a type of its own each. */
static BIO_METHOD *early_method, *wbuf_method;
static int wbuf_type;
static pthread_once_t methods_once = PTHREAD_ONCE_INIT;

static BIO_METHOD *method(const char *name, int *type_out,
			  int (*rd)(BIO *, char *, size_t, size_t *),
			  int (*wr)(BIO *, const char *, size_t, size_t *),
			  long (*ctrl)(BIO *, int, long, void *))
{
	int type = BIO_get_new_index();
	if (type < 0)
		return NULL;
	type |= BIO_TYPE_FILTER;
	BIO_METHOD *m = BIO_meth_new(type, name);
	if (m && BIO_meth_set_read_ex(m, rd) && BIO_meth_set_write_ex(m, wr) &&
	    BIO_meth_set_ctrl(m, ctrl) && BIO_meth_set_create(m, fbuf_create) &&
	    BIO_meth_set_destroy(m, fbuf_destroy)) {
		if (type_out)
			*type_out = type;
		return m;
	}
	BIO_meth_free(m);
	return NULL;
}

static void methods_init(void)
{
	early_method = method("warden early bytes", NULL, early_read, pass_write, early_ctrl);
	wbuf_method = method("warden write gathering", &wbuf_type, pass_read, wbuf_write, wbuf_ctrl);
}

bool tls_bio_set_fd_early(SSL *ssl, int fd, char *early, size_t len)
{
	if (!len) {
		free(early);
		return SSL_set_fd(ssl, fd) == 1;
	}
	pthread_once(&methods_once, methods_init);
	BIO *sock = BIO_new_socket(fd, BIO_NOCLOSE);
	BIO *f = early_method ? BIO_new(early_method) : NULL;
	struct fbuf *x = f ? calloc(1, sizeof *x) : NULL;
	if (!sock || !f || !x) {
		BIO_free(sock);
		BIO_free(f);
		free(x);
		free(early);
		return false;
	}
	x->p = early;
	x->len = len;
	BIO_set_data(f, x);
	BIO_push(f, sock);
	SSL_set_bio(ssl, f, f);
	return true;
}

/* The buffer in ssl's write chain (OpenSSL may have put a handshake
 * buffer of its own in front of it for a while). */
static struct fbuf *wbuf_of(SSL *ssl)
{
	pthread_once(&methods_once, methods_init);
	if (!wbuf_method)
		return NULL;
	BIO *w = BIO_find_type(SSL_get_wbio(ssl), wbuf_type);
	return w ? BIO_get_data(w) : NULL;
}

bool tls_wbuf_install(SSL *ssl, size_t cap)
{
	pthread_once(&methods_once, methods_init);
	BIO *r = SSL_get_rbio(ssl);
	if (!wbuf_method || !r || r != SSL_get_wbio(ssl) || cap == 0)
		return false;
	struct fbuf *w = calloc(1, sizeof *w);
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
	struct fbuf *w = wbuf_of(ssl);
	return w ? w->len - w->off : 0;
}
