/* secrets.h - secrets by reference at run time: the real value of each
 * secret the policy binds, read on the host before the sandbox starts (the
 * host's variable NAME, a file, or what a command prints), and the phantom
 * the sandbox sees in NAME instead, shaped like the value so that clients
 * accept it and unique to the session. The values stay in the supervisor's
 * memory only and are wiped when freed; the proxy puts a value in place of
 * its phantom only toward the hosts the secret is bound to (subst.h).
 *
 * Values: at least SECRET_VALUE_MIN bytes (a shorter phantom could match
 * ordinary text), at most SECRET_VALUE_MAX, trailing CR and LF trimmed, no
 * NUL, CR or LF inside (it could not go in a header).
 *
 * Phantoms: the value's prefix (the longest leading run of segments, each
 * 1 to 6 characters of [a-z0-9] or of [A-Z0-9], or up to 12 digits,
 * followed by '-' or '_': "sk-ant-api03-", "ghp_", "github_pat_", "xoxb-",
 * at most half the value, and only when at least 20 characters of a
 * token's body follow it: none for a password or a passphrase),
 * then random characters (getrandom) of the class of the rest of the value:
 * digits when it is digits, lower-case hex when it is lower-case hex, the
 * same for upper-case hex, else [A-Za-z0-9] plus whichever of '-', '_', '.'
 * the value uses; the same length as the value. With a tail key
 * (tailkey.h), when at least 36 characters follow the prefix, the last 20
 * are not random but the same every session for the same name and value
 * (an HMAC under that key, in the same class), so that a client that knows
 * an approved key by its end keeps knowing it; the rest stays random. A
 * phantom differs from its
 * value, no phantom holds or lies inside any value or other phantom. The
 * bounds on a segment (length, one case) keep a token's random body out of
 * the prefix when it holds '-' or '_' (base64url bodies, the second part of
 * GitHub's fine-grained tokens). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/err.h"
#include "../net/rules.h"
#include "../policy/policy.h"
#include "tailkey.h"

#define SECRET_VALUE_MIN 8
#define SECRET_VALUE_MAX 65536 /* bytes read from a file or a command */

struct secret {
	const struct policy_secret *spec;  /* borrowed from the policy */
	char *value;    /* the real value: supervisor memory only, explicit_bzero'd on free */
	char *phantom;  /* what the sandbox sees in NAME */
};

struct secrets {
	struct secret *v;
	size_t n;
	size_t maxlen; /* longest phantom */
};

/* How long a command source may run (milliseconds). */
#define SECRETS_COMMAND_TIMEOUT_MS 10000

/* Read every secret of the policy and make its phantom. The policy must
 * outlive s. Errors name the secret and its origin ("secret NAME (ORIGIN):
 * ..."); s is then empty. A command runs with the host's environment, stdin
 * /dev/null, stdout captured, stderr passed through, no other descriptor,
 * signals at their defaults and none blocked, in its own process
 * group, killed with it when it outlives SECRETS_COMMAND_TIMEOUT_MS; it is
 * waited for with waitpid on its own pid (call this before anything reaps
 * every child). tail_key (TAIL_KEY_LEN bytes, or NULL): the phantoms' stable
 * ends. */
int secrets_load(struct secrets *s, const struct policy *p, const unsigned char *tail_key,
		 struct werr *e);
/* The same with command_timeout_ms for a command source instead of
 * SECRETS_COMMAND_TIMEOUT_MS (tests use shorter ones). */
int secrets_load_within(struct secrets *s, const struct policy *p, const unsigned char *tail_key,
			unsigned command_timeout_ms, struct werr *e);

/* Wipe the values, free everything; s is empty after. */
void secrets_free(struct secrets *s);

/* May this secret's value be sent to this host and port (a host pattern of
 * its spec matches, rules_rule_matches)? */
bool secret_bound(const struct secret *s, const struct net_host *h, uint16_t port);

/* The same for a connection the program prog made (NULL: unknown): a
 * secret scoped to a program (`secret ... program NAME`) is bound only
 * for that program's connections. */
bool secret_bound_for(const struct secret *s, const struct net_host *h, uint16_t port,
		      const struct net_program *prog);

/* The secret whose phantom occurs in data, or NULL. */
const struct secret *secrets_find_phantom(const struct secrets *s, const void *data, size_t len);

/* The secret whose real value occurs in data, or NULL (for checking what
 * comes back from a server, or what must never go into the sandbox). */
const struct secret *secrets_find_value(const struct secrets *s, const void *data, size_t len);

/* A phantom for this value (the rules above; not checked against other
 * secrets), malloc'd and NUL-terminated; NULL when getrandom fails. The
 * stable end needs both name and tail_key. */
char *secret_phantom_for(const char *value, size_t len, const char *name,
			 const unsigned char *tail_key);
