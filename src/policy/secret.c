/* secret.c - the policy's secrets by reference: which host patterns may
 * receive a secret, binding one (the later declaration of a NAME replaces
 * the earlier, and NAME leaves the environment lists), and `--secret
 * NAME[@HOST,...]` from the command line. The profile directive is parsed in
 * parser.c; the values are read in src/secrets/.
 *
 * A secret's host is one registrable domain at most. rules_parse_pattern
 * already refuses "*" and a wildcard over a single label ("*.com"); here a
 * wildcard is also refused over
 *   - a two-label public suffix made of a common second-level label (ac, co,
 *     com, edu, go, gov, mil, ne, net, or, org) over a two-letter country
 *     code: "*.co.uk", "*.com.au", "*.ac.jp", "*.or.kr";
 *   - a handful of shared hosting domains where anyone can have a name and
 *     read what it receives: "*.github.io", "*.herokuapp.com", ... (the list
 *     below).
 * The lists are small on purpose: without the Public Suffix List this is a
 * guard against the common mistakes, not a registry. */
#include "policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SECRETS 4096
#define MAX_SECRET_HOSTS 64

static const char *const second_level[] = {
	"ac", "co", "com", "edu", "go", "gov", "mil", "ne", "net", "or", "org",
};

static const char *const shared_hosting[] = {
	"amazonaws.com", "appspot.com",    "azurewebsites.net", "blogspot.com",
	"cloudfront.net", "firebaseapp.com", "github.io",       "githubusercontent.com",
	"gitlab.io",      "herokuapp.com",  "netlify.app",       "ngrok-free.app",
	"ngrok.io",       "pages.dev",      "vercel.app",        "web.app",
	"workers.dev",
};

static bool is_lower_alpha(char c) { return c >= 'a' && c <= 'z'; }

bool policy_wildcard_public_suffix(const struct net_rule *r)
{
	if (r->kind != NET_RULE_WILDCARD)
		return false;
	const char *suffix = r->host, *dot = strchr(suffix, '.');
	if (!dot || strchr(dot + 1, '.'))
		return false; /* one label (refused by the pattern's parser), or three or more */
	const char *cc = dot + 1;
	if (strlen(cc) != 2 || !is_lower_alpha(cc[0]) || !is_lower_alpha(cc[1]))
		return false;
	size_t n = (size_t)(dot - suffix);
	for (size_t i = 0; i < ARRAY_LEN(second_level); i++)
		if (strlen(second_level[i]) == n && memcmp(suffix, second_level[i], n) == 0)
			return true;
	return false;
}

const char *policy_secret_host_refused(const struct net_rule *r)
{
	if (r->kind != NET_RULE_WILDCARD)
		return NULL;
	const char *suffix = r->host;
	if (!strchr(suffix, '.') || !suffix[0])
		return "a wildcard over a top-level domain";
	for (size_t i = 0; i < ARRAY_LEN(shared_hosting); i++)
		if (strcmp(suffix, shared_hosting[i]) == 0)
			return "a wildcard over a shared hosting domain where anyone can have a name";
	return policy_wildcard_public_suffix(r) ? "a wildcard over a public suffix" : NULL;
}

const struct policy_secret *policy_secret_find(const struct policy *p, const char *name)
{
	for (size_t i = 0; i < p->nsecrets; i++)
		if (strcmp(p->secrets[i].name, name) == 0)
			return &p->secrets[i];
	return NULL;
}

void policy_secret_clear(struct policy_secret *s)
{
	free(s->name);
	free(s->hosts);
	free(s->file);
	strv_free(&s->argv);
	free(s->origin);
	memset(s, 0, sizeof *s);
}

/* Remove "NAME=..." from env_set. */
static void env_set_drop(struct strv *set, const char *name)
{
	size_t n = strlen(name), j = 0;
	for (size_t i = 0; i < set->n; i++) {
		if (strncmp(set->v[i], name, n) == 0 && set->v[i][n] == '=')
			free(set->v[i]);
		else
			set->v[j++] = set->v[i];
	}
	set->n = j;
	if (set->v)
		set->v[j] = NULL;
}

void policy_secret_bind(struct policy *p, struct policy_secret *s)
{
	strv_remove(&p->env_pass, s->name);
	env_set_drop(&p->env_set, s->name);
	for (size_t i = 0; i < p->nsecrets; i++) {
		if (strcmp(p->secrets[i].name, s->name) == 0) {
			policy_secret_clear(&p->secrets[i]);
			p->secrets[i] = *s;
			memset(s, 0, sizeof *s);
			return;
		}
	}
	if ((p->nsecrets & (p->nsecrets - 1)) == 0) /* 0, 1, 2, 4 ...: full, double it */
		p->secrets = xrealloc(p->secrets, (p->nsecrets ? 2 * p->nsecrets : 1) * sizeof *p->secrets);
	p->secrets[p->nsecrets++] = *s;
	memset(s, 0, sizeof *s);
}

bool policy_secret_add_host(struct policy_secret *s, const struct net_rule *r)
{
	for (size_t i = 0; i < s->nhosts; i++)
		if (strcmp(s->hosts[i].text, r->text) == 0)
			return true;
	if (s->nhosts >= MAX_SECRET_HOSTS)
		return false;
	s->hosts = xrealloc(s->hosts, (s->nhosts + 1) * sizeof *s->hosts);
	s->hosts[s->nhosts] = *r;
	s->hosts[s->nhosts].allow_private = false;
	s->nhosts++;
	return true;
}

/* s made printable for a message: at most 80 bytes, '?' for anything but
 * printable ASCII. */
static void shown(char out[84], const char *s, size_t len)
{
	size_t n = 0, i = 0;
	for (; i < len && n < 80; i++) {
		unsigned char c = (unsigned char)s[i];
		out[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (i < len)
		memcpy(out + n - 3, "...", 3);
	out[n] = '\0';
}

/* Errors: "WHO: invalid variable name 'N'", "WHO NAME: bad network pattern
 * ...", "WHO NAME: "P" is wider than one registrable domain (WHY)", "WHO
 * NAME: no host: ...". */
int policy_add_secret(struct policy *p, const char *spec, const char *origin, struct werr *e)
{
	const char *who = origin && origin[0] ? origin : "--secret";
	if (!spec)
		spec = "";
	const char *at = strchr(spec, '@');
	size_t nlen = at ? (size_t)(at - spec) : strlen(spec);
	char name[84];
	shown(name, spec, nlen);
	_cleanup_free_ char *nm = strndup(spec, nlen);
	if (!nm)
		abort();
	if (!policy_env_name_valid(nm))
		return werr_set(e, 0, "%s: invalid variable name '%s' (expected NAME@HOST[,HOST...])", who,
				name);

	struct policy_secret s = { .source = SECRET_FROM_ENV };
	if (!at) {
		const struct policy_secret *had = policy_secret_find(p, nm);
		if (!had)
			return werr_set(e, 0,
					"%s %s: which hosts may receive it? --secret %s@HOST[,HOST...] (no profile binds %s)",
					who, nm, nm, nm);
		for (size_t i = 0; i < had->nhosts; i++)
			policy_secret_add_host(&s, &had->hosts[i]);
	} else {
		const char *h = at + 1;
		for (;;) {
			const char *end = strchrnul(h, ',');
			_cleanup_free_ char *pat = strndup(h, (size_t)(end - h));
			if (!pat)
				abort();
			struct net_rule r;
			struct werr pe = { 0 };
			const char *why;
			if (rules_parse_pattern(&r, pat, &pe) < 0) {
				policy_secret_clear(&s);
				return werr_set(e, 0, "%s %s: %s", who, nm, pe.msg);
			}
			if ((why = policy_secret_host_refused(&r))) {
				policy_secret_clear(&s);
				return werr_set(e, 0, "%s %s: \"%s\" is wider than one registrable domain (%s)",
						who, nm, r.text, why);
			}
			if (!policy_secret_add_host(&s, &r)) {
				policy_secret_clear(&s);
				return werr_set(e, 0, "%s %s: too many hosts (max %d)", who, nm,
						MAX_SECRET_HOSTS);
			}
			if (!*end)
				break;
			h = end + 1;
		}
	}
	if (!policy_secret_find(p, nm) && p->nsecrets >= MAX_SECRETS) {
		policy_secret_clear(&s);
		return werr_set(e, 0, "%s: too many secrets (max %d)", who, MAX_SECRETS);
	}
	s.name = steal_ptr(&nm);
	s.origin = xstrdup(who);
	policy_secret_bind(p, &s);
	return 0;
}
