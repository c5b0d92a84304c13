/* rules.h - destination names and the patterns that allow or deny them:
 * canonical host names (shared by the HTTP and SOCKS5 parsers), the pattern
 * language of `--allow-net` / `net allow` / `net deny`, and the one decision
 * point rules_match() that says ALLOW, DENY or UNKNOWN for a host and port.
 *
 * Patterns: an exact host ("example.com"), a wildcard ("*.example.com":
 * subdomains only, never the bare suffix), an IPv4 literal ("192.0.2.1") or
 * IPv6 literal ("2001:db8::1", "[2001:db8::1]"), each with an optional
 * ":port" ("[2001:db8::1]:443" for IPv6). Refused: "*", a wildcard over a bare
 * top-level domain ("*.com"), empty labels, labels over 63 bytes, names over
 * 253, a numeric top-level label that is not an IPv4 address, bad ports.
 * Matching is case-insensitive and ignores one trailing dot of the host. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/err.h"
#include "addr.h"
#include "reqpath.h"

#define NET_HOST_MAX 253 /* longest host name, without the trailing dot */

enum net_host_kind { NET_HOST_NAME, NET_HOST_IPV4, NET_HOST_IPV6 };

struct net_host {
	enum net_host_kind kind;
	/* Canonical text: lower-case name without trailing dot, dotted-quad
	 * IPv4, or compressed lower-case IPv6 without brackets. */
	char name[NET_HOST_MAX + 1];
	struct addr_ip ip; /* IPv4 and IPv6 kinds */
};

/* Canonicalise a host as a client named it (s[0..len), not NUL-terminated):
 * a DNS name (ASCII letters, digits, '-', '_'; labels 1-63 bytes not starting
 * or ending with '-'; at most 253 bytes; one trailing dot dropped), an IPv4
 * address in dotted-decimal form only (a name whose last label is numeric or
 * hex must be exactly that: "127.1", "0x7f.0.0.1", "010.0.0.1" are refused),
 * or an IPv6 address in brackets ("[::1]"; zone identifiers refused).
 * Returns 0, or -1 with *reason (static, short, ASCII). */
int net_host_parse(struct net_host *h, const char *s, size_t len, const char **reason);

/* A decimal port 1-65535 (s[0..len), digits only, at most 5): 0, or -1. */
int net_port_parse(const char *s, size_t len, uint16_t *port);

/* The host for a binary address (SOCKS5 ATYP IPv4/IPv6). IPv4-mapped IPv6
 * stays IPv6 text; matching treats it as its IPv4 address. */
void net_host_from_ip(struct net_host *h, const struct addr_ip *ip, bool v6);

/* The host as written before a port: an IPv6 literal in brackets
 * ("[::1]"), any other as it is; out, which it returns. */
#define NET_HOST_TEXT_MAX (NET_HOST_MAX + 3)
const char *net_host_text(const struct net_host *h, char out[NET_HOST_TEXT_MAX]);
/* "HOST:PORT" (net_host_text's HOST) into out, of cap bytes; out.
 * NET_HOST_PORT_MAX holds any: the host, a colon and five digits. */
#define NET_HOST_PORT_MAX (NET_HOST_TEXT_MAX + 6)
const char *net_host_port(const struct net_host *h, unsigned port, char *out, size_t cap);

enum net_rule_kind { NET_RULE_HOST, NET_RULE_WILDCARD, NET_RULE_IP };

#define NET_METHODS_MAX 80
#define NET_RULE_TEXT_MAX 272 /* "*." + 253 + ":65535", or "[v6]:65535", + NUL */

/* A rule scoped to the program that makes the connection (`net allow HOST
 * program NAME`, rules_prog.c): a glob on the executable's base name (NAME
 * without '/'), on its whole path (with '/'), or its SHA-256
 * (`sha256:HEX`). Both empty: any program. */
#define NET_PROGRAM_MAX 256
struct net_rule_prog {
	char glob[NET_PROGRAM_MAX];
	char sha256[65];               /* lower-case hex */
};

struct net_rule {
	enum net_rule_kind kind;
	/* HOST: the name; WILDCARD: the suffix without "*."; IP: the address text. */
	char host[NET_HOST_MAX + 1];
	struct addr_ip ip;             /* IP rules */
	uint16_t port;                 /* 0: any port */
	bool allow_private;            /* names it allows may resolve to private ranges */
	char text[NET_RULE_TEXT_MAX];  /* canonical pattern, for logs and reasons */
	struct net_rule_prog prog;     /* the program it is scoped to (allow, ask) */
	/* A request rule (reqrules.h): the methods it names ("GET,HEAD"; ""
	 * any) and its path glob (normalised, reqpath.h; "" any). Both ""
	 * for a host rule. */
	char methods[NET_METHODS_MAX];
	char path[REQGLOB_MAX];
};

/* Parse one pattern (NUL-terminated). Errors: "bad network pattern "P": WHY"
 * with P made printable. */
int rules_parse_pattern(struct net_rule *r, const char *pattern, struct werr *e);

enum rules_verdict { RULES_UNKNOWN = 0, RULES_ALLOW, RULES_DENY, RULES_ASK };

/* A request rule and its list (reqrules.h). */
struct net_req_rule {
	struct net_rule r;
	enum rules_verdict action;
};

struct net_rules {
	struct net_rule *allow, *deny, *ask;
	size_t nallow, ndeny, nask;
	/* request rules (methods or a path), in order; an allow or ask one's
	 * host is in the allow list too (the connection goes; its requests
	 * are decided one by one) */
	struct net_req_rule *req;
	size_t nreq, nreq_ask;
};

#define RULE_ALLOW_PRIVATE 0x1u /* flag of rules_add: the rule's names may resolve to private ranges */

/* Parse `pattern` and append it to the allow (RULES_ALLOW), deny
 * (RULES_DENY) or ask (RULES_ASK: a question to a human) list. flags: RULE_ALLOW_PRIVATE (allow lists only). A pattern
 * equal to one already in the same list is not added twice (the flags are
 * merged). */
int rules_add(struct net_rules *s, enum rules_verdict list, const char *pattern, unsigned flags,
	      struct werr *e);
/* The same for a rule parsed already (rules_parse_pattern): r->allow_private
 * says what RULE_ALLOW_PRIVATE would (and is dropped for the deny list).
 * A rule with methods or a path goes to the request rules (and, allow or
 * ask, its host to the allow list). */
int rules_add_rule(struct net_rules *s, enum rules_verdict list, const struct net_rule *r,
		   struct werr *e);
void rules_free(struct net_rules *s);

/* The decision point. host: as a client named it (canonicalised again here
 * with net_host_parse, so "Example.COM." and "example.com" are one host;
 * IPv6 with or without brackets). Deny wins over ask, ask over allow (an
 * ask rule names what needs a human's yes even where an allow rule covers
 * it); an empty allow list allows nothing. Among several matching rules of a list, the most specific
 * is reported: an exact host or IP over a wildcard, a longer wildcard suffix
 * over a shorter one, a rule with a port over one without, then the first.
 *
 * Returns RULES_DENY (a deny rule matched, or the host is not a valid host:
 * *rule is then NULL), RULES_ASK, RULES_ALLOW, or RULES_UNKNOWN (no rule matched: the
 * caller decides; *rule is NULL). rule may be NULL. A rule scoped to a
 * program never matches here (rules_match_program). */
enum rules_verdict rules_match(const struct net_rules *s, const char *host, uint16_t port,
			       const struct net_rule **rule);

/* Does one rule match this canonical host and port? */
bool rules_rule_matches(const struct net_rule *r, const struct net_host *h, uint16_t port);

/* ---- which program made a connection (rules_prog.c) ---- */

/* The program behind a connection's client socket, as the proxy's owner
 * lookup found it (proxy.h): known when unknown[0] is NUL. */
struct net_program {
	char path[NET_PROGRAM_MAX];    /* the executable as the sandbox names it */
	char sha256[65];               /* its SHA-256 in hex; "" not taken (why in sha_why) */
	char sha_why[96];
	long pid;                      /* in the sandbox's pid namespace */
	char unknown[128];             /* why the owner cannot be told; "" known */
	bool any;                      /* stands for every program: each scope admits it */
};

/* rules_match for a connection made by prog: a rule scoped to a program
 * matches only when prog is known and is that program (NULL: unknown). */
enum rules_verdict rules_match_program(const struct net_rules *s, const char *host, uint16_t port,
				       const struct net_program *prog, const struct net_rule **rule);
/* Does an allow or ask rule of s name a program (so the proxy must know a
 * connection's program before the rules decide)? */
bool rules_any_program(const struct net_rules *s);
/* Does r's program scope (none: yes) admit prog (NULL: unknown)? */
bool rules_program_matches(const struct net_rule *r, const struct net_program *prog);
/* Scope r to a program: NAME (a glob on the base name, or on the path when
 * it holds '/'), or sha256:HEX. -1 with e naming what is wrong. */
int rules_program_parse(struct net_rule *r, const char *name, struct werr *e);
/* Are a and b scoped alike? */
bool rules_program_same(const struct net_rule *a, const struct net_rule *b);
/* The rule as a profile line would say it: "PATTERN[ program NAME]". */
void rules_rule_text(const struct net_rule *r, char *out, size_t len);

/* Does a deny rule name this address (an IP rule, any port or this port)? */
const struct net_rule *rules_deny_addr(const struct net_rules *s, const struct addr_ip *ip,
				       uint16_t port);
