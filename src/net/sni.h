/* sni.h - the name a TLS client asks for, read from the first bytes of a
 * tunnel without terminating TLS: a ClientHello parser (TLS records, the
 * handshake message across records, its server_name extension, RFC 6066)
 * whose host name goes through net_host_parse like every other name the
 * proxy reads. Pure: no I/O, no allocation. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "rules.h"

/* The longest ClientHello read, and the most of a tunnel's first bytes a
 * caller holds to find it (its records' headers besides). */
#define SNI_HELLO_MAX 16384
#define SNI_BUF_MAX (SNI_HELLO_MAX + 5 * 16)

enum sni_result {
	SNI_NEED_MORE = 0, /* a ClientHello so far: more bytes needed */
	SNI_NOT_TLS,       /* the bytes are not a TLS handshake */
	SNI_NONE,          /* a ClientHello without a host name */
	SNI_NAME,          /* a ClientHello naming *h */
	SNI_BAD,           /* a malformed ClientHello or name: *why says how */
};

/* Read d[0..n), the first bytes a client sent. SNI_NEED_MORE with
 * SNI_BUF_MAX bytes held is for the caller to refuse. why (static, short,
 * ASCII) is set for SNI_BAD. */
enum sni_result sni_read(const uint8_t *d, size_t n, struct net_host *h, const char **why);
