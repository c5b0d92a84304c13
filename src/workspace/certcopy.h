/* certcopy.h - a *.pem in the workspace that holds certificates and nothing
 * secret: what of it the sandbox may read. A certificate is public, and a
 * masked certificate bundle breaks what reads it: Python's certifi in a
 * virtual environment (requests, httpx, pip's own copy), grpcio's roots.pem.
 * Such a file is bound into the sandbox as a read-only copy made at the
 * start that holds its certificates alone, each re-encoded from its DER:
 * nothing else of the file (comments, text between blocks) reaches the
 * sandbox. A file with any other PEM block in it (a private key, a request,
 * parameters), a line of dashes that is not a certificate's BEGIN or END,
 * a block whose DER is not a certificate's outer shape, headers inside a
 * block, no certificate at all, or more than CERTCOPY_MAX bytes stays
 * masked whole. Parsed by hand with libcrypto's base64 alone: the ASN.1
 * code of OpenSSL would grow every session's relocations (meson.build). */
#pragma once
#include <stddef.h>

#define CERTCOPY_MAX (1u << 20)        /* a file, at most */
#define CERTCOPY_TOTAL (8u << 20)      /* all copies of a session, at most */

/* The copy of the PEM text buf[0..n): malloc'd, *len its length (no NUL
 * counted, one written after it); NULL when the file must stay masked. */
char *certcopy_parse(const char *buf, size_t n, size_t *len);
/* The same of the regular file name in dirfd, opened without following a
 * symlink and without blocking (a FIFO is no regular file: NULL). */
char *certcopy_read(int dirfd, const char *name, size_t *len);
