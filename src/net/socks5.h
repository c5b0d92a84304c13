/* socks5.h - the server side of a SOCKS5 handshake (RFC 1928): an incremental
 * parser for the greeting (no-auth only) and the request (CONNECT only; IPv4,
 * domain name, IPv6), and the reply builders. Pure: no I/O, no allocation.
 *
 * Use: socks5_parser_init(), then socks5_feed() with each chunk from the
 * client. SOCKS5_GREETING: send p->reply (05 00) and keep feeding the rest.
 * SOCKS5_REQUEST: p->host and p->port are the destination; decide, connect,
 * answer with socks5_reply(). SOCKS5_ERROR: send p->reply when p->reply_len
 * is not 0, then close. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules.h"

#define SOCKS5_REPLY_MAX 22    /* VER REP RSV ATYP + 16 + 2 */
#define SOCKS5_REQUEST_MAX 262 /* VER CMD RSV ATYP LEN + 255 + 2 */
#define SOCKS5_REASON_MAX 80

enum socks5_result { SOCKS5_NEED_MORE = 0, SOCKS5_GREETING, SOCKS5_REQUEST, SOCKS5_ERROR };

/* Reply codes (REP). */
enum {
	SOCKS5_SUCCEEDED = 0x00,
	SOCKS5_GENERAL_FAILURE = 0x01,
	SOCKS5_NOT_ALLOWED = 0x02,          /* connection not allowed by ruleset */
	SOCKS5_NET_UNREACHABLE = 0x03,
	SOCKS5_HOST_UNREACHABLE = 0x04,
	SOCKS5_REFUSED = 0x05,
	SOCKS5_TTL_EXPIRED = 0x06,
	SOCKS5_CMD_UNSUPPORTED = 0x07,
	SOCKS5_ATYP_UNSUPPORTED = 0x08,
};

#define SOCKS5_NO_ACCEPTABLE_METHOD 0xFF

enum { SOCKS5_ATYP_IPV4 = 1, SOCKS5_ATYP_DOMAIN = 3, SOCKS5_ATYP_IPV6 = 4 };

struct socks5_parser {
	enum socks5_result state;
	/* For the client, after SOCKS5_GREETING (05 00) and SOCKS5_ERROR (05 FF
	 * for a greeting, 05 REP 00 01 0.0.0.0:0 for a request; empty when the
	 * client does not speak SOCKS5 at all). */
	uint8_t reply[SOCKS5_REPLY_MAX];
	size_t reply_len;
	/* SOCKS5_ERROR: REP sent (or SOCKS5_NO_ACCEPTABLE_METHOD, or 0 with no
	 * reply) and a short ASCII reason for the log. */
	uint8_t code;
	char reason[SOCKS5_REASON_MAX];
	/* SOCKS5_REQUEST */
	uint8_t atyp;
	struct net_host host;
	uint16_t port;

	/* internal */
	bool greeted;
	size_t len;
	uint8_t buf[SOCKS5_REQUEST_MAX];
};

void socks5_parser_init(struct socks5_parser *p);

/* Feed the next len bytes. *used (may be NULL) receives how many the
 * handshake took: after SOCKS5_GREETING feed the rest again; after
 * SOCKS5_REQUEST the rest is early tunnel data (a client may send before the
 * reply). After SOCKS5_REQUEST or SOCKS5_ERROR the parser takes nothing more
 * and returns the same result. */
enum socks5_result socks5_feed(struct socks5_parser *p, const void *data, size_t len,
			       size_t *used);

/* A reply to a request: VER 5, REP code, BND.ADDR/BND.PORT from bound (an
 * IPv4 address, mapped or not, as ATYP 1, any other as ATYP 4) and port, or
 * 0.0.0.0:0 when bound is NULL. Returns the length (10 or 22). */
size_t socks5_reply(uint8_t out[SOCKS5_REPLY_MAX], uint8_t code, const struct addr_ip *bound,
		    uint16_t port);

/* The REP for a failed connect(2) errno: ECONNREFUSED 0x05, ENETUNREACH 0x03,
 * EHOSTUNREACH/ETIMEDOUT 0x04, EACCES/EPERM 0x02, others 0x01. */
uint8_t socks5_code_for_errno(int err);
