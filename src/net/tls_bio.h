/* tls_bio.h - the filter BIOs in front of an intercepted connection's
 * sockets (intercept.c):
 *
 * - early bytes: the proxy read the start of the client's TLS handshake
 *   before it knew it would terminate it; a filter hands those bytes to
 *   OpenSSL first, then the socket's;
 * - write gathering: the records OpenSSL writes (at most 16 KiB each, one
 *   write(2) apiece without it) are held and handed to the socket together,
 *   when the buffer is full or when the owner flushes, which it must do
 *   before it waits for anything (poll) and before it closes. Reads pass
 *   through untouched. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

/* ssl on socket fd, the len bytes at early read first (early is taken,
 * freed with the SSL; len 0: SSL_set_fd). false when out of memory. */
bool tls_bio_set_fd_early(SSL *ssl, int fd, char *early, size_t len);

/* Put the write buffer (cap bytes) in front of ssl's BIO, which must be the same
 * one both ways (SSL_set_fd, or one filter chain). After the handshake. */
bool tls_wbuf_install(SSL *ssl, size_t cap);

/* Write what the buffer holds: 1 all of it, 0 some is left because the
 * socket would block (wait for POLLOUT), -1 the socket failed. 1 too when
 * ssl has no buffer. */
int tls_wbuf_flush(SSL *ssl);

/* Bytes the buffer holds (0 without a buffer). */
size_t tls_wbuf_pending(SSL *ssl);
