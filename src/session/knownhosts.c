/* knownhosts.c - the host keys ssh inside checks a server against
 * (knownhosts.h): the lines of the user's ~/.ssh/known_hosts that name a
 * host the profile lets the sandbox reach, and no other. Without them an
 * ssh to an allowed host (git push over ssh, with --ssh-agent) fails with
 * "Host key verification failed" in every session, or trusts the key on
 * first use where a terminal answers: both push users to turn host key
 * checking off. The other lines stay out: the list of hosts a user logs
 * into is not the agent's to read.
 *
 * A line's host patterns are as ssh writes them (sshd(8), SSH_KNOWN_HOSTS
 * FILE FORMAT): NAME or [NAME]:PORT, comma-separated, a glob (* and ?), a
 * negation (!PATTERN), or hashed, |1|SALT|HMAC (HMAC-SHA1 of NAME or
 * [NAME]:PORT keyed by SALT, both base64). A plain pattern is kept when the
 * rules allow (or ask for) its host and port; a hashed one when it is the
 * hash of a host an allow or ask rule names exactly, at the rule's port
 * (22 for a rule without one); a glob (a @cert-authority line's
 * *.example.com) when it matches such a host or a wildcard rule of the same
 * suffix. A negation keeps nothing by itself. */
/* SHA-1 through libcrypto's direct digest functions, as hash.c does SHA-256 */
#define OPENSSL_API_COMPAT 10101
#define OPENSSL_SUPPRESS_DEPRECATED
#include "knownhosts.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "../common/b64.h"
#include "../common/sbuf.h"
#include "../common/util.h"

#define KNOWN_HOSTS_MAX (4 * 1024 * 1024) /* read no more of the user's file */
#define SSH_PORT 22

/* NAME, or [NAME]:PORT for another port: how ssh names a host in the file. */
static void ssh_name(const char *host, unsigned port, char *out, size_t len)
{
	if (port && port != SSH_PORT)
		snprintf(out, len, "[%s]:%u", host, port);
	else
		snprintf(out, len, "%s", host);
}

/* The hosts the rules name exactly (allow and ask), as ssh names them; a
 * wildcard rule as *.SUFFIX (a glob line of the same suffix or wider
 * matches it). */
static void exact_names(const struct policy *pol, struct strv *out)
{
	const struct net_rules *r = &pol->net_rules;
	const struct net_rule *lists[] = { r->allow, r->ask };
	size_t ns[] = { r->nallow, r->nask };
	char name[NET_HOST_PORT_MAX]; /* [NAME]:PORT, or *.NAME */
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < ns[l]; i++) {
			const struct net_rule *x = &lists[l][i];
			if (x->kind == NET_RULE_WILDCARD)
				snprintf(name, sizeof name, "*.%s", x->host);
			else
				ssh_name(x->host, x->port, name, sizeof name);
			if (!strv_contains(out, name))
				strv_push(out, name);
		}
}

/* HMAC-SHA1 (RFC 2104) of msg keyed by key (at most one SHA-1 block), as
 * ssh hashes a known host's name; SHA-1's own rounds from libcrypto's
 * low-level interface (the EVP and HMAC layers would be linked into the
 * binary, and relocated at every start, for this one use). */
static void hmac_sha1(const unsigned char *key, size_t klen, const char *msg, size_t mlen,
		      unsigned char out[SHA_DIGEST_LENGTH])
{
	unsigned char k[SHA_CBLOCK] = { 0 }, pad[SHA_CBLOCK], inner[SHA_DIGEST_LENGTH];
	memcpy(k, key, klen);
	SHA_CTX c;
	for (size_t i = 0; i < SHA_CBLOCK; i++)
		pad[i] = k[i] ^ 0x36;
	SHA1_Init(&c);
	SHA1_Update(&c, pad, sizeof pad);
	SHA1_Update(&c, msg, mlen);
	SHA1_Final(inner, &c);
	for (size_t i = 0; i < SHA_CBLOCK; i++)
		pad[i] = k[i] ^ 0x5c;
	SHA1_Init(&c);
	SHA1_Update(&c, pad, sizeof pad);
	SHA1_Update(&c, inner, sizeof inner);
	SHA1_Final(out, &c);
}

/* Is |1|SALT|HMAC (len bytes at p) the hash of one of names? */
static bool hashed_match(const char *p, size_t len, const struct strv *names)
{
	/* (a wildcard rule's *.SUFFIX is never a hash's name: ssh hashes
	 * the names it connected to) */
	if (len < 3 || strncmp(p, "|1|", 3) != 0)
		return false;
	const char *salt = p + 3, *bar = memchr(salt, '|', len - 3);
	if (!bar)
		return false;
	unsigned char key[SHA_CBLOCK], want[SHA_DIGEST_LENGTH + 2], got[SHA_DIGEST_LENGTH];
	int kl = b64_decode(salt, (size_t)(bar - salt), key, sizeof key);
	int wl = b64_decode(bar + 1, len - (size_t)(bar + 1 - p), want, sizeof want);
	if (kl <= 0 || wl != SHA_DIGEST_LENGTH)
		return false;
	for (size_t i = 0; i < names->n; i++) {
		hmac_sha1(key, (size_t)kl, names->v[i], strlen(names->v[i]), got);
		if (memcmp(got, want, SHA_DIGEST_LENGTH) == 0)
			return true;
	}
	return false;
}

/* A plain pattern: NAME or [NAME]:PORT, a glob matched against the exact
 * names, anything else against the rules. */
static bool plain_match(const char *p, size_t len, const struct policy *pol,
			const struct strv *names)
{
	char pat[NET_HOST_MAX + 16];
	if (len >= sizeof pat)
		return false;
	memcpy(pat, p, len);
	pat[len] = '\0';
	if (strpbrk(pat, "*?")) {
		for (size_t i = 0; i < names->n; i++)
			if (fnmatch(pat, names->v[i], 0) == 0)
				return true;
		return false;
	}
	unsigned port = SSH_PORT;
	char *host = pat;
	if (pat[0] == '[') {
		char *end = strstr(pat, "]:");
		if (!end)
			return false;
		*end = '\0';
		host = pat + 1;
		port = (unsigned)strtoul(end + 2, NULL, 10);
		if (!port || port > 65535)
			return false;
	}
	enum rules_verdict v = rules_match(&pol->net_rules, host, (uint16_t)port, NULL);
	return v == RULES_ALLOW || v == RULES_ASK;
}

/* Does the line (without its newline) name an allowed host? */
static bool line_wanted(const char *line, size_t len, const struct policy *pol,
			const struct strv *names)
{
	const char *p = line, *end = line + len;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p == '#')
		return false;
	if (*p == '@') { /* @cert-authority, @revoked: the patterns follow */
		while (p < end && *p != ' ' && *p != '\t')
			p++;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
	}
	const char *hosts_end = p;
	while (hosts_end < end && *hosts_end != ' ' && *hosts_end != '\t')
		hosts_end++;
	for (const char *q = p; q < hosts_end;) {
		const char *comma = memchr(q, ',', (size_t)(hosts_end - q));
		const char *pe = comma ? comma : hosts_end;
		size_t n = (size_t)(pe - q);
		if (n && *q != '!' &&
		    (*q == '|' ? hashed_match(q, n, names) : plain_match(q, n, pol, names)))
			return true;
		q = comma ? comma + 1 : hosts_end;
	}
	return false;
}

char *knownhosts_filter(const struct policy *pol, const char *text, size_t len)
{
	_cleanup_strv_ struct strv names = { 0 };
	exact_names(pol, &names);
	struct sbuf b = { 0 };
	for (const char *l = text, *end = text + len; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = (size_t)((nl ? nl : end) - l);
		if (!memchr(l, '\0', n) && line_wanted(l, n, pol, &names)) {
			if (!b.p)
				sb_printf(&b, "%s", KNOWNHOSTS_HEAD);
			sb_put(&b, l, n);
			sb_put(&b, "\n", 1);
		}
		l = nl ? nl + 1 : end;
	}
	return b.p;
}

char *knownhosts_text(const struct policy *pol, const char *home)
{
	if (!home || !policy_net_allows_any(pol))
		return NULL;
	_cleanup_free_ char *path = xasprintf("%s/.ssh/known_hosts", home);
	/* the user's own file, never a FIFO or a device to wait on */
	size_t got = 0;
	_cleanup_free_ char *text = read_regular_at(AT_FDCWD, path, 0, KNOWN_HOSTS_MAX, &got, NULL);
	return text && got ? knownhosts_filter(pol, text, got) : NULL;
}
