/* socks5.c - the SOCKS5 server handshake: greeting and CONNECT request
 * parsing, byte by byte, and the replies. */
#include "socks5.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void socks5_parser_init(struct socks5_parser *p)
{
	memset(p, 0, sizeof *p);
	p->state = SOCKS5_NEED_MORE;
}

size_t socks5_reply(uint8_t out[SOCKS5_REPLY_MAX], uint8_t code, const struct addr_ip *bound,
		    uint16_t port)
{
	uint8_t v4[4] = { 0 };
	size_t n;
	out[0] = 5;
	out[1] = code;
	out[2] = 0;
	if (!bound || addr_ip_is_v4(bound, v4)) {
		out[3] = SOCKS5_ATYP_IPV4;
		memcpy(out + 4, v4, 4);
		n = 8;
	} else {
		out[3] = SOCKS5_ATYP_IPV6;
		memcpy(out + 4, bound->b, 16);
		n = 20;
	}
	if (!bound)
		port = 0;
	out[n] = (uint8_t)(port >> 8);
	out[n + 1] = (uint8_t)port;
	return n + 2;
}

uint8_t socks5_code_for_errno(int err)
{
	switch (err) {
	case ECONNREFUSED: return SOCKS5_REFUSED;
	case ENETUNREACH: return SOCKS5_NET_UNREACHABLE;
	case EHOSTUNREACH:
	case ETIMEDOUT: return SOCKS5_HOST_UNREACHABLE;
	case EACCES:
	case EPERM: return SOCKS5_NOT_ALLOWED;
	default: return SOCKS5_GENERAL_FAILURE;
	}
}

static enum socks5_result fail(struct socks5_parser *p, uint8_t code, const char *reason)
{
	p->state = SOCKS5_ERROR;
	p->code = code;
	snprintf(p->reason, sizeof p->reason, "%s", reason);
	if (!p->greeted) {
		p->reply[0] = 5;
		p->reply[1] = SOCKS5_NO_ACCEPTABLE_METHOD;
		p->reply_len = 2;
	} else {
		p->reply_len = socks5_reply(p->reply, code, NULL, 0);
	}
	return SOCKS5_ERROR;
}

/* The greeting in buf[0..len): NEED_MORE, GREETING or ERROR. */
static enum socks5_result greeting(struct socks5_parser *p)
{
	if (p->buf[0] != 5) {
		p->state = SOCKS5_ERROR;
		p->code = 0;
		if (p->buf[0] == 4) {
			/* A SOCKS4 client reads VN 0, CD 91 (rejected) and 6 bytes. */
			memset(p->reply, 0, 8);
			p->reply[1] = 91;
			p->reply_len = 8;
			snprintf(p->reason, sizeof p->reason, "SOCKS4 is not supported, use SOCKS5");
		} else {
			p->reply_len = 0;
			snprintf(p->reason, sizeof p->reason, "not a SOCKS5 client");
		}
		return SOCKS5_ERROR;
	}
	if (p->len < 2)
		return SOCKS5_NEED_MORE;
	size_t nmethods = p->buf[1];
	if (nmethods == 0)
		return fail(p, SOCKS5_NO_ACCEPTABLE_METHOD, "no authentication method offered");
	if (p->len < 2 + nmethods)
		return SOCKS5_NEED_MORE;
	if (!memchr(p->buf + 2, 0x00, nmethods))
		return fail(p, SOCKS5_NO_ACCEPTABLE_METHOD,
			    "client requires authentication (only no-auth is offered)");
	p->greeted = true;
	p->len = 0;
	p->reply[0] = 5;
	p->reply[1] = 0;
	p->reply_len = 2;
	p->state = SOCKS5_GREETING;
	return SOCKS5_GREETING;
}

/* The length of the request in buf by its address type, or 0 with *r
 * what to answer meanwhile (more needed; a failure). */
static size_t request_length(struct socks5_parser *p, enum socks5_result *r)
{
	const uint8_t *b = p->buf;
	*r = SOCKS5_NEED_MORE;
	switch (b[3]) {
	case SOCKS5_ATYP_IPV4: return 4 + 4 + 2;
	case SOCKS5_ATYP_IPV6: return 4 + 16 + 2;
	case SOCKS5_ATYP_DOMAIN:
		if (p->len < 5)
			return 0;
		if (b[4] == 0) {
			*r = fail(p, SOCKS5_HOST_UNREACHABLE, "empty domain name");
			return 0;
		}
		return 4 + 1 + (size_t)b[4] + 2;
	default:
		*r = fail(p, SOCKS5_ATYP_UNSUPPORTED, "address type not supported");
		return 0;
	}
}

/* Why the n bytes of a domain name are not a host name (no "[v6]" or other
 * forms in a name), or NULL. */
static const char *name_bytes_why(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];
		if (c >= 0x80)
			return "non-ASCII host";
		if (c < 0x21 || c == 0x7f)
			return "space or control byte";
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return "bad character in host";
	}
	return NULL;
}

/* The whole request's destination into p->host: 0, or -1 failed (the
 * answer in *r). */
static int request_host(struct socks5_parser *p, enum socks5_result *r)
{
	const uint8_t *b = p->buf;
	struct addr_ip ip;
	if (b[3] == SOCKS5_ATYP_IPV4 || b[3] == SOCKS5_ATYP_IPV6) {
		bool v6 = b[3] == SOCKS5_ATYP_IPV6;
		if (v6)
			addr_ip_from_v6(&ip, b + 4);
		else
			addr_ip_from_v4(&ip, b + 4);
		net_host_from_ip(&p->host, &ip, v6);
		return 0;
	}
	size_t n = b[4];
	const char *why = name_bytes_why(b + 5, n);
	if (why || net_host_parse(&p->host, (const char *)b + 5, n, &why) < 0) {
		char msg[SOCKS5_REASON_MAX];
		snprintf(msg, sizeof msg, "bad domain name: %s", why);
		*r = fail(p, SOCKS5_HOST_UNREACHABLE, msg);
		return -1;
	}
	return 0;
}

/* The request in buf[0..len). */
static enum socks5_result request(struct socks5_parser *p)
{
	const uint8_t *b = p->buf;
	if (b[0] != 5)
		return fail(p, SOCKS5_GENERAL_FAILURE, "bad SOCKS version in request");
	if (p->len < 4)
		return SOCKS5_NEED_MORE;
	if (b[2] != 0)
		return fail(p, SOCKS5_GENERAL_FAILURE, "bad reserved byte in request");
	enum socks5_result r;
	size_t need = request_length(p, &r);
	if (!need)
		return r;
	if (p->len < need)
		return SOCKS5_NEED_MORE;
	/* The whole request is in: refuse what is not CONNECT only now, so a
	 * client reads the reply after sending everything. */
	if (b[1] != 1)
		return fail(p, SOCKS5_CMD_UNSUPPORTED,
			    b[1] == 2   ? "BIND is not supported, only CONNECT"
			    : b[1] == 3 ? "UDP ASSOCIATE is not supported, only CONNECT"
					: "unknown command, only CONNECT");
	p->atyp = b[3];
	if (request_host(p, &r) < 0)
		return r;
	p->port = (uint16_t)(b[need - 2] << 8 | b[need - 1]);
	if (p->port == 0)
		return fail(p, SOCKS5_HOST_UNREACHABLE, "port 0");
	p->state = SOCKS5_REQUEST;
	p->reply_len = 0;
	return SOCKS5_REQUEST;
}

enum socks5_result socks5_feed(struct socks5_parser *p, const void *data, size_t len,
			       size_t *used)
{
	const uint8_t *d = data;
	size_t i = 0;
	if (p->state == SOCKS5_REQUEST || p->state == SOCKS5_ERROR) {
		if (used)
			*used = 0;
		return p->state;
	}
	p->state = SOCKS5_NEED_MORE;
	p->reply_len = 0;
	enum socks5_result r = SOCKS5_NEED_MORE;
	while (i < len && r == SOCKS5_NEED_MORE) {
		/* buf never overflows: a greeting is at most 257 bytes and a
		 * request at most 262, and each stops growing when complete. */
		p->buf[p->len++] = d[i++];
		r = p->greeted ? request(p) : greeting(p);
	}
	if (used)
		*used = i;
	return r;
}
