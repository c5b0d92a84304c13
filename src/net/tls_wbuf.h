/* tls_wbuf.h - large writes for a TLS connection in bulk: a filter BIO in
 * front of an SSL's socket that gathers the records OpenSSL writes (at most
 * 16 KiB each, one write(2) apiece without it) and hands them to the socket
 * together, when its buffer is full or when the owner flushes, which it must
 * do before it waits for anything (poll) and before it closes. Reads pass
 * through untouched. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

/* Put the buffer (cap bytes) in front of ssl's BIO, which must be the same
 * one both ways (SSL_set_fd, or one filter chain). After the handshake. */
bool tls_wbuf_install(SSL *ssl, size_t cap);

/* Write what the buffer holds: 1 all of it, 0 some is left because the
 * socket would block (wait for POLLOUT), -1 the socket failed. 1 too when
 * ssl has no buffer. */
int tls_wbuf_flush(SSL *ssl);

/* Bytes the buffer holds (0 without a buffer). */
size_t tls_wbuf_pending(SSL *ssl);
