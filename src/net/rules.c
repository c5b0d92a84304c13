/* rules.c - canonical destination hosts, the allow/deny pattern language and
 * rules_match(), the one decision point for a destination name. */
#include "rules.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"

#define PATTERN_MAX 512

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* Strict dotted-decimal IPv4: four parts 0-255, no leading zeros. */
static bool parse_v4(const char *s, size_t len, uint8_t out[4])
{
	size_t i = 0;
	for (int part = 0; part < 4; part++) {
		if (part > 0) {
			if (i >= len || s[i] != '.')
				return false;
			i++;
		}
		size_t start = i;
		unsigned v = 0;
		while (i < len && is_digit(s[i]) && i - start < 3)
			v = v * 10 + (unsigned)(s[i++] - '0');
		size_t n = i - start;
		if (n == 0 || v > 255 || (n > 1 && s[start] == '0'))
			return false;
		out[part] = (uint8_t)v;
	}
	return i == len;
}

/* IPv6 text without brackets; the raw 16 bytes. */
static int parse_v6(const char *s, size_t len, uint8_t out[16], const char **reason)
{
	char buf[INET6_ADDRSTRLEN];
	if (len == 0 || len >= sizeof buf) {
		*reason = "bad IPv6 address";
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '%') {
			*reason = "IPv6 zone not allowed";
			return -1;
		}
		if (!is_hex(s[i]) && s[i] != ':' && s[i] != '.') {
			*reason = "bad IPv6 address";
			return -1;
		}
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET6, buf, out) != 1) {
		*reason = "bad IPv6 address";
		return -1;
	}
	return 0;
}

static void set_v6(struct net_host *h, const uint8_t raw[16])
{
	h->kind = NET_HOST_IPV6;
	addr_ip_from_v6(&h->ip, raw);
	if (!inet_ntop(AF_INET6, raw, h->name, sizeof h->name))
		snprintf(h->name, sizeof h->name, "::");
}

static void set_v4(struct net_host *h, const uint8_t v4[4])
{
	h->kind = NET_HOST_IPV4;
	addr_ip_from_v4(&h->ip, v4);
	snprintf(h->name, sizeof h->name, "%u.%u.%u.%u", v4[0], v4[1], v4[2], v4[3]);
}

/* The bytes of a host: letters, digits, '-', '_' and '.', each refusal
 * named (a control byte, percent-encoding, a space, non-ASCII). */
static int host_chars(const char *s, size_t len, const char **reason)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80) {
			*reason = "non-ASCII host";
			return -1;
		}
		if (c < 0x20 || c == 0x7f) {
			*reason = "control byte in host";
			return -1;
		}
		if (c == '%') {
			*reason = "percent-encoding in host";
			return -1;
		}
		if (!is_alpha((char)c) && !is_digit((char)c) && c != '-' && c != '_' && c != '.') {
			*reason = c == ' ' ? "space in host" : "bad character in host";
			return -1;
		}
	}
	return 0;
}

/* A name or dotted-quad IPv4 of exactly len bytes (no trailing dot allowed
 * here: callers strip the one they accept). nlabels (may be NULL) gets the
 * label count of a name. */
static int parse_name(struct net_host *h, const char *s, size_t len, size_t *nlabels,
		      const char **reason)
{
	if (len == 0) {
		*reason = "empty host";
		return -1;
	}
	if (host_chars(s, len, reason) < 0)
		return -1;
	if (len > NET_HOST_MAX) {
		*reason = "host longer than 253 bytes";
		return -1;
	}
	size_t labels = 0, last = 0;
	for (size_t start = 0; start <= len;) {
		size_t end = start;
		while (end < len && s[end] != '.')
			end++;
		size_t n = end - start;
		if (n == 0) {
			*reason = "empty label in host";
			return -1;
		}
		if (n > 63) {
			*reason = "label longer than 63 bytes";
			return -1;
		}
		if (s[start] == '-' || s[end - 1] == '-') {
			*reason = "label starts or ends with '-'";
			return -1;
		}
		labels++;
		last = start;
		start = end + 1;
	}
	/* A numeric last label makes the whole a number to URL parsers and to
	 * inet_aton ("127.1", "0x7f.1", "2130706433"): only dotted quads pass. */
	const char *ll = s + last;
	size_t lln = len - last;
	bool numeric = true;
	if (lln >= 2 && ll[0] == '0' && (ll[1] == 'x' || ll[1] == 'X')) {
		for (size_t i = 2; i < lln; i++)
			numeric = numeric && is_hex(ll[i]);
	} else {
		for (size_t i = 0; i < lln; i++)
			numeric = numeric && is_digit(ll[i]);
	}
	if (numeric) {
		uint8_t v4[4];
		if (!parse_v4(s, len, v4)) {
			*reason = "bad IPv4 address";
			return -1;
		}
		set_v4(h, v4);
		return 0;
	}
	h->kind = NET_HOST_NAME;
	for (size_t i = 0; i < len; i++)
		h->name[i] = lower(s[i]);
	h->name[len] = '\0';
	memset(&h->ip, 0, sizeof h->ip);
	if (nlabels)
		*nlabels = labels;
	return 0;
}

int net_host_parse(struct net_host *h, const char *s, size_t len, const char **reason)
{
	const char *dummy;
	if (!reason)
		reason = &dummy;
	memset(h, 0, sizeof *h);
	if (len == 0) {
		*reason = "empty host";
		return -1;
	}
	if (s[0] == '[') {
		uint8_t raw[16];
		if (len < 2 || s[len - 1] != ']') {
			*reason = "bad IPv6 address";
			return -1;
		}
		if (parse_v6(s + 1, len - 2, raw, reason) < 0)
			return -1;
		set_v6(h, raw);
		return 0;
	}
	if (len > 1 && s[len - 1] == '.')
		len--;
	return parse_name(h, s, len, NULL, reason);
}

void net_host_from_ip(struct net_host *h, const struct addr_ip *ip, bool v6)
{
	memset(h, 0, sizeof *h);
	uint8_t v4[4];
	if (!v6 && addr_ip_is_v4(ip, v4))
		set_v4(h, v4);
	else
		set_v6(h, ip->b);
}

/* ---- patterns ---- */

static int pattern_error(struct werr *e, const char *pattern, const char *why)
{
	char shown[84];
	size_t n = 0, i = 0;
	for (; pattern[i] && n < 80; i++) {
		unsigned char c = (unsigned char)pattern[i];
		shown[n++] = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? (char)c : '?';
	}
	if (pattern[i]) {
		memcpy(shown + n - 3, "...", 3);
	}
	shown[n] = '\0';
	return werr_set(e, 0, "bad network pattern \"%s\": %s", shown, why);
}

int net_port_parse(const char *s, size_t len, uint16_t *port)
{
	if (len == 0 || len > 5)
		return -1;
	unsigned v = 0;
	for (size_t i = 0; i < len; i++) {
		if (!is_digit(s[i]))
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

const char *net_host_text(const struct net_host *h, char out[NET_HOST_TEXT_MAX])
{
	bool v6 = h->kind == NET_HOST_IPV6;
	snprintf(out, NET_HOST_TEXT_MAX, "%s%s%s", v6 ? "[" : "", h->name, v6 ? "]" : "");
	return out;
}

const char *net_host_port(const struct net_host *h, unsigned port, char *out, size_t cap)
{
	char host[NET_HOST_TEXT_MAX];
	snprintf(out, cap, "%s:%u", net_host_text(h, host), port);
	return out;
}

/* The pattern's characters: not empty, at most PATTERN_MAX, printable
 * ASCII without spaces, a host and not a URL or a path. Its length in *len. */
static int pattern_chars(const char *pattern, size_t *len, struct werr *e)
{
	if (!pattern || !pattern[0])
		return werr_set(e, 0, "bad network pattern \"\": empty pattern");
	*len = strnlen(pattern, PATTERN_MAX + 1);
	if (*len > PATTERN_MAX)
		return pattern_error(e, pattern, "pattern too long");
	for (size_t i = 0; i < *len; i++) {
		unsigned char c = (unsigned char)pattern[i];
		if (c <= 0x20 || c >= 0x7f)
			return pattern_error(e, pattern,
					     c >= 0x80 ? "non-ASCII character (write an internationalized "
							 "name in its xn-- form, as the DNS has it)"
						       : "space or control character");
	}
	if (strstr(pattern, "://"))
		return pattern_error(e, pattern, "a pattern is a host, not a URL");
	if (strchr(pattern, '/'))
		return pattern_error(e, pattern, "'/' in pattern (ranges and paths are not patterns)");
	return 0;
}

/* A pattern's host and port, as written. */
struct pattern_parts {
	const char *host, *port;  /* port NULL: none */
	size_t hlen, plen;
	bool bracketed;           /* an IPv6 address: [v6], [v6]:port or bare v6 */
};

/* host, host:port, [v6], [v6]:port or a bare v6 (two colons or more). */
static int pattern_split(const char *pattern, size_t len, struct pattern_parts *pp,
			 struct werr *e)
{
	*pp = (struct pattern_parts){ .host = pattern, .hlen = len };
	if (pattern[0] == '[') {
		const char *close = strchr(pattern, ']');
		if (!close)
			return pattern_error(e, pattern, "missing ']'");
		pp->host = pattern + 1;
		pp->hlen = (size_t)(close - pp->host);
		pp->bracketed = true;
		if (close[1] == ':') {
			pp->port = close + 2;
			pp->plen = len - (size_t)(pp->port - pattern);
		} else if (close[1] != '\0') {
			return pattern_error(e, pattern, "junk after ']'");
		}
		return 0;
	}
	const char *c1 = strchr(pattern, ':');
	if (c1 && strchr(c1 + 1, ':')) {
		pp->bracketed = true; /* bare IPv6, no port */
	} else if (c1) {
		pp->hlen = (size_t)(c1 - pattern);
		pp->port = c1 + 1;
		pp->plen = len - pp->hlen - 1;
	}
	return 0;
}

/* The host part into h and the rule's kind: an IP address, a wildcard
 * "*.name" (two labels at least after it, never over an address), or a
 * name. */
static int pattern_host(struct net_rule *r, struct net_host *h, const struct pattern_parts *pp,
			const char *pattern, struct werr *e)
{
	const char *host = pp->host, *reason = NULL;
	size_t hlen = pp->hlen;
	if (!pp->bracketed && hlen > 2 && host[hlen - 1] == '.')
		return pattern_error(e, pattern,
				     "trailing dot (write the name without it: a host's is dropped)");
	if (pp->bracketed) {
		uint8_t raw[16];
		if (parse_v6(host, hlen, raw, &reason) < 0)
			return pattern_error(e, pattern, reason);
		set_v6(h, raw);
		r->kind = NET_RULE_IP;
	} else if (hlen == 1 && host[0] == '*') {
		return pattern_error(e, pattern, "'*' would match every host");
	} else if (hlen >= 2 && host[0] == '*' && host[1] == '.') {
		size_t labels = 0;
		if (memchr(host + 2, '*', hlen - 2))
			return pattern_error(e, pattern, "'*' only as the whole first label");
		if (parse_name(h, host + 2, hlen - 2, &labels, &reason) < 0)
			return pattern_error(e, pattern, reason);
		if (h->kind != NET_HOST_NAME)
			return pattern_error(e, pattern, "a wildcard over an IP address");
		if (labels < 2)
			return pattern_error(e, pattern,
					     "a wildcard needs at least two labels after '*.'");
		r->kind = NET_RULE_WILDCARD;
	} else {
		if (memchr(host, '*', hlen))
			return pattern_error(e, pattern, "'*' only as the whole first label");
		if (parse_name(h, host, hlen, NULL, &reason) < 0)
			return pattern_error(e, pattern, reason);
		r->kind = h->kind == NET_HOST_NAME ? NET_RULE_HOST : NET_RULE_IP;
	}
	return 0;
}

int rules_parse_pattern(struct net_rule *r, const char *pattern, struct werr *e)
{
	memset(r, 0, sizeof *r);
	size_t len = 0;
	struct pattern_parts pp;
	if (pattern_chars(pattern, &len, e) < 0 || pattern_split(pattern, len, &pp, e) < 0)
		return -1;
	if (pp.port && net_port_parse(pp.port, pp.plen, &r->port) < 0)
		return pattern_error(e, pattern, "bad port (1-65535)");
	struct net_host h;
	if (pattern_host(r, &h, &pp, pattern, e) < 0)
		return -1;
	memcpy(r->host, h.name, sizeof r->host);
	r->ip = h.ip;
	if (r->kind == NET_RULE_IP && addr_classify(&r->ip) == ADDR_UNSPECIFIED) {
		/* 0.0.0.0 and ::, or another of 0.0.0.0/8 (::2 is ::0.0.0.2) */
		uint8_t v4[4] = { 0 };
		static const struct addr_ip zero;
		bool zero_ip = addr_ip_equal(&r->ip, &zero) ||
			       (addr_ip_is_v4(&r->ip, v4) && !(v4[0] | v4[1] | v4[2] | v4[3]));
		return pattern_error(e, pattern, zero_ip ?
				     "the unspecified address is no destination (inside, "
				     "the sandbox's own loopback answers for it; a port of the host's "
				     "loopback is 127.0.0.1:PORT)" :
				     "an address of 0.0.0.0/8 (\"this network\") is no destination "
				     "(a port of the host's loopback is 127.0.0.1:PORT)");
	}

	const char *pre = r->kind == NET_RULE_WILDCARD ? "*." : "";
	bool v6 = r->kind == NET_RULE_IP && h.kind == NET_HOST_IPV6;
	if (r->port && v6)
		snprintf(r->text, sizeof r->text, "[%s]:%u", r->host, r->port);
	else if (r->port)
		snprintf(r->text, sizeof r->text, "%s%s:%u", pre, r->host, r->port);
	else
		snprintf(r->text, sizeof r->text, "%s%s", pre, r->host);
	return 0;
}

int rules_add(struct net_rules *s, enum rules_verdict list, const char *pattern, unsigned flags,
	      struct werr *e)
{
	if (list != RULES_ALLOW && list != RULES_DENY && list != RULES_ASK)
		return werr_set(e, 0, "network rule list must be allow, deny or ask");
	struct net_rule r;
	if (rules_parse_pattern(&r, pattern, e) < 0)
		return -1;
	r.allow_private = flags & RULE_ALLOW_PRIVATE;
	return rules_add_rule(s, list, &r, e);
}

int rules_add_rule(struct net_rules *s, enum rules_verdict list, const struct net_rule *rule,
		   struct werr *e)
{
	if (list != RULES_ALLOW && list != RULES_DENY && list != RULES_ASK)
		return werr_set(e, 0, "network rule list must be allow, deny or ask");
	struct net_rule r = *rule;
	r.allow_private = list != RULES_DENY && r.allow_private;
	if (r.methods[0] || r.path[0]) {
		for (size_t i = 0; i < s->nreq; i++)
			if (s->req[i].action == list && strcmp(s->req[i].r.text, r.text) == 0 &&
			    strcmp(s->req[i].r.methods, r.methods) == 0 &&
			    strcmp(s->req[i].r.path, r.path) == 0)
				return 0;
		if ((s->nreq & (s->nreq - 1)) == 0)
			s->req = xrealloc(s->req, (s->nreq ? 2 * s->nreq : 1) * sizeof *s->req);
		s->req[s->nreq++] = (struct net_req_rule){ .r = r, .action = list };
		s->nreq_ask += list == RULES_ASK;
		if (list == RULES_DENY)
			return 0;
		r.methods[0] = r.path[0] = '\0'; /* the connection goes */
		list = RULES_ALLOW;
	}
	struct net_rule **v = list == RULES_ALLOW ? &s->allow : list == RULES_DENY ? &s->deny : &s->ask;
	size_t *n = list == RULES_ALLOW ? &s->nallow : list == RULES_DENY ? &s->ndeny : &s->nask;
	for (size_t i = 0; i < *n; i++) {
		if (strcmp((*v)[i].text, r.text) == 0 && rules_program_same(&(*v)[i], &r)) {
			(*v)[i].allow_private = (*v)[i].allow_private || r.allow_private;
			return 0;
		}
	}
	if ((*n & (*n - 1)) == 0) /* 0, 1, 2, 4 ...: full, double it */
		*v = xrealloc(*v, (*n ? 2 * *n : 1) * sizeof **v);
	(*v)[(*n)++] = r;
	return 0;
}

void rules_free(struct net_rules *s)
{
	free(s->allow);
	free(s->deny);
	free(s->ask);
	free(s->req);
	memset(s, 0, sizeof *s);
}

bool rules_rule_matches(const struct net_rule *r, const struct net_host *h, uint16_t port)
{
	if (r->port && r->port != port)
		return false;
	switch (r->kind) {
	case NET_RULE_IP:
		return h->kind != NET_HOST_NAME && addr_ip_equal(&r->ip, &h->ip);
	case NET_RULE_HOST:
		return h->kind == NET_HOST_NAME && strcmp(r->host, h->name) == 0;
	case NET_RULE_WILDCARD: {
		if (h->kind != NET_HOST_NAME)
			return false;
		size_t hl = strlen(h->name), sl = strlen(r->host);
		return hl > sl + 1 && h->name[hl - sl - 1] == '.' &&
		       memcmp(h->name + hl - sl, r->host, sl) == 0;
	}
	}
	return false;
}

static unsigned specificity(const struct net_rule *r)
{
	/* a rule for one program over one for any (same host and port) */
	unsigned s = (r->port ? 2 : 0) + (r->prog.glob[0] || r->prog.sha256[0] ? 1 : 0);
	if (r->kind == NET_RULE_WILDCARD)
		return s + 4 * (unsigned)strlen(r->host);
	return s + (1u << 20);
}

static const struct net_rule *best_match(const struct net_rule *v, size_t n,
					 const struct net_host *h, uint16_t port,
					 const struct net_program *prog)
{
	const struct net_rule *best = NULL;
	for (size_t i = 0; i < n; i++)
		if (rules_rule_matches(&v[i], h, port) && rules_program_matches(&v[i], prog) &&
		    (!best || specificity(&v[i]) > specificity(best)))
			best = &v[i];
	return best;
}

enum rules_verdict rules_match(const struct net_rules *s, const char *host, uint16_t port,
			       const struct net_rule **rule)
{
	return rules_match_program(s, host, port, NULL, rule);
}

enum rules_verdict rules_match_program(const struct net_rules *s, const char *host, uint16_t port,
				       const struct net_program *prog, const struct net_rule **rule)
{
	const struct net_rule *dummy;
	if (!rule)
		rule = &dummy;
	*rule = NULL;
	if (!host)
		return RULES_DENY;
	struct net_host h;
	size_t len = strnlen(host, PATTERN_MAX + 1);
	int r;
	if (len <= PATTERN_MAX && host[0] != '[' && memchr(host, ':', len)) {
		uint8_t raw[16];
		const char *reason;
		r = parse_v6(host, len, raw, &reason);
		if (r == 0) {
			memset(&h, 0, sizeof h);
			set_v6(&h, raw);
		}
	} else {
		r = len > PATTERN_MAX ? -1 : net_host_parse(&h, host, len, NULL);
	}
	if (r < 0)
		return RULES_DENY;
	if ((*rule = best_match(s->deny, s->ndeny, &h, port, prog)))
		return RULES_DENY;
	if ((*rule = best_match(s->ask, s->nask, &h, port, prog)))
		return RULES_ASK;
	if ((*rule = best_match(s->allow, s->nallow, &h, port, prog)))
		return RULES_ALLOW;
	return RULES_UNKNOWN;
}

const struct net_rule *rules_deny_addr(const struct net_rules *s, const struct addr_ip *ip,
				       uint16_t port)
{
	for (size_t i = 0; i < s->ndeny; i++) {
		const struct net_rule *r = &s->deny[i];
		if (r->kind == NET_RULE_IP && addr_ip_equal(&r->ip, ip) && (!r->port || r->port == port))
			return r;
	}
	return NULL;
}
