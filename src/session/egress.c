/* egress.c - secrets by reference at the proxy (egress.h): the guard the
 * proxy asks about each connection. Toward a host a secret is bound to, over
 * TLS warden terminated (or in the clear on the host's loopback), each
 * request head gets the real value in place of the phantom (a phantom in
 * the URL is refused; one in a body stays as it is). A phantom anywhere
 * else (another host's headers or body, a tunnel's clear bytes) ends the
 * request and is reported for an alert. What an intercepted host answers is
 * masked before the sandbox reads it: a real value quoted back, as it is or
 * in hex or base64, becomes its phantom again (src/secrets/mask.h).
 *
 * open and end run on the proxy's thread; head and data on the thread that
 * carries the connection. A guard is one connection's: nothing in it is
 * shared but the secrets and the TLS contexts, which are read-only once the
 * session runs (the session CA's leaf cache is filled on the proxy's
 * thread only).
 *
 * The decoys' tokens (canary credentials, src/detect/canary.h) are phantoms
 * bound to no host: one in a request line (percent-decoded too), a header or
 * anything the client sends that the proxy sees is refused on every
 * connection and reported apart from the secrets (a `canary.token` alert).
 *
 * A host that request rules or mcp rules name is inspected: its TLS is
 * terminated with the session CA too, secret or not, so that warden sees
 * its requests and the rules apply (the rule itself asks for it). */
#include "egress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../net/addr.h"
#include "../net/reqrules.h"
#include "../net/tls.h"
#include "../secrets/mask.h"
#include "../secrets/subst.h"

struct guard {
	struct egress *eg;
	struct net_host host;
	uint16_t port;
	bool may_put;              /* TLS warden terminated, or the host's loopback */
	bool bound;                /* a secret is bound to host:port */
	struct secrets mine;       /* those bound for this connection's program (copies) */
	bool intercepted;
	struct phantom_scan scan;
	struct phantom_scan cscan;     /* the decoys' tokens */
	const char *canary_path, *canary_where;
	json_t *hits;
	bool masked;               /* a response quoted a value back */
	const char *leak_secret, *leak_where;
};

static bool is_loopback(const struct net_host *h)
{
	if (h->kind == NET_HOST_NAME)
		return strcmp(h->name, "localhost") == 0;
	return addr_classify(&h->ip) == ADDR_LOOPBACK;
}

static void *g_open_for(void *ctx, const struct net_host *h, uint16_t port, bool clear,
			const struct net_program *prog, bool *intercept);

static void *g_open(void *ctx, const struct net_host *h, uint16_t port, bool clear,
		    bool *intercept)
{
	return g_open_for(ctx, h, port, clear, NULL, intercept);
}

/* The secrets of eg bound for prog's connections (shallow copies: the
 * values stay eg's), those scoped to another program left out. */
static void mine_for(struct guard *g, const struct net_program *prog)
{
	const struct secrets *all = g->eg->secrets;
	g->mine = (struct secrets){ .v = xcalloc(all->n ? all->n : 1, sizeof *all->v),
				    .maxlen = all->maxlen };
	for (size_t i = 0; i < all->n; i++) {
		const struct net_rule *h0 = all->v[i].spec ? all->v[i].spec->hosts : NULL;
		if (!h0 || rules_program_matches(h0, prog))
			g->mine.v[g->mine.n++] = all->v[i];
	}
}

static void *g_open_for(void *ctx, const struct net_host *h, uint16_t port, bool clear,
			const struct net_program *prog, bool *intercept)
{
	struct egress *eg = ctx;
	*intercept = false;
	static const struct secrets none;
	bool inspected = eg->ca && egress_inspects(eg, h, port);
	if (!eg->secrets->n && !(eg->canaries && eg->canaries->n) && !inspected)
		return NULL;
	struct guard *g = xcalloc(1, sizeof *g);
	g->eg = eg;
	g->host = *h;
	g->port = port;
	for (size_t i = 0; i < eg->secrets->n && !g->bound; i++)
		g->bound = secret_bound_for(&eg->secrets->v[i], h, port, prog);
	mine_for(g, prog);
	/* Put a real value in only where no one else reads it: over TLS
	 * warden verified upstream, or on the host's own loopback. */
	g->may_put = g->bound && (!clear || is_loopback(h));
	/* inspected: terminated for its rules, a secret put in or not */
	*intercept = g->may_put || inspected;
	g->intercepted = *intercept;
	g->hits = json_array();
	scan_init(&g->scan, eg->secrets);
	scan_init(&g->cscan, eg->canaries ? eg->canaries : &none);
	return g;
}

/* One of set's tokens in buf, as it is or percent-decoded (a URL's, a
 * form's: either case of hex digits). */
static const struct secret *token_in(const struct secrets *set, const char *buf, size_t len)
{
	if (!set || !set->n || !len)
		return NULL;
	const struct secret *s = secrets_find_phantom(set, buf, len);
	if (s || !memchr(buf, '%', len))
		return s;
	_cleanup_free_ char *d = xmalloc(len);
	return secrets_find_phantom(set, d, pct_decode(buf, len, d));
}

/* A decoy's token in buf, as it is or percent-decoded. */
static const struct secret *canary_in(const struct guard *g, const char *buf, size_t len)
{
	return token_in(g->eg->canaries, buf, len);
}

/* The reason says a credential, not a decoy: the client reads it. */
static void canary_leak(struct guard *g, const struct secret *s, const char *where, char *why,
			size_t whylen)
{
	if (!g->canary_path) {
		g->canary_path = s->spec->name;
		g->canary_where = where;
	}
	char hp[NET_HOST_PORT_MAX];
	snprintf(why, whylen, "a credential that may be sent nowhere, in the %s of a request to "
		 "%s: refused", where, net_host_port(&g->host, g->port, hp, sizeof hp));
}

static void leak(struct guard *g, const struct secret *s, const char *where, char *why,
		 size_t whylen)
{
	if (!g->leak_secret) {
		g->leak_secret = s->spec->name;
		g->leak_where = where;
	}
	char hp[NET_HOST_PORT_MAX];
	snprintf(why, whylen, "the phantom of secret %s in the %s of a request to %s, which it "
		 "is not bound to that way: refused", s->spec->name, where,
		 net_host_port(&g->host, g->port, hp, sizeof hp));
}

/* Count one more of {"secret": name, key: val} for the event: one entry
 * each, however many requests a connection carries. */
static void hit_add(struct guard *g, const char *name, const char *key, const char *val,
		    unsigned n)
{
	size_t i;
	json_t *h;
	json_array_foreach(g->hits, i, h) {
		if (strcmp(json_string_value(json_object_get(h, "secret")), name) == 0 &&
		    json_string_value(json_object_get(h, key)) &&
		    strcmp(json_string_value(json_object_get(h, key)), val) == 0) {
			json_int_t c = json_integer_value(json_object_get(h, "count"));
			json_object_set_new(h, "count", json_integer(c + n));
			return;
		}
	}
	json_array_append_new(g->hits, json_pack("{s:s, s:s, s:I}", "secret", name, key, val,
						 "count", (json_int_t)n));
}

static void on_masked(void *gp, const struct secret *s, unsigned n)
{
	struct guard *g = gp;
	hit_add(g, s->spec->name, "response", "masked", n);
	g->masked = true;
}

/* A response from the bound host that quotes a real value back (an error
 * message repeating a header, a server that reflects its request), as it
 * is, in hex or in base64 (Basic credentials warden encoded itself): it
 * becomes the phantom's same form before the sandbox reads it
 * (src/secrets/mask.h). Returns the bytes at the end that may begin one,
 * to wait for what follows. */
static size_t g_resp(void *gp, char *buf, size_t len)
{
	struct guard *g = gp;
	return mask_apply(&g->eg->mask, buf, len, on_masked, g);
}

/* Ask the bound host for an uncompressed response, so that g_resp reads
 * what the sandbox will: Accept-Encoding becomes identity. */
static void identity_encoding(char **head, size_t *len)
{
	static const char name[] = "\r\naccept-encoding:";
	size_t nl = sizeof name - 1;
	for (size_t i = 0; i + nl <= *len; i++) {
		if (strncasecmp(*head + i, name, nl) != 0)
			continue;
		char *v = *head + i + nl;
		char *end = memmem(v, *len - (size_t)(v - *head), "\r\n", 2);
		if (!end)
			return;
		static const char id[] = " identity";
		size_t before = (size_t)(v - *head), after = *len - (size_t)(end - *head);
		char *n = xmalloc(before + sizeof id - 1 + after);
		memcpy(n, *head, before);
		memcpy(n + before, id, sizeof id - 1);
		memcpy(n + before + sizeof id - 1, end, after);
		free(*head);
		*head = n;
		*len = before + sizeof id - 1 + after;
		return;
	}
}

static int g_head(void *gp, const char *head, size_t len, char **out, size_t *outlen, char *why,
		  size_t whylen)
{
	struct guard *g = gp;
	struct subst_result r = { 0 };
	const char *eol = memmem(head, len, "\r\n", 2);
	size_t l1 = eol ? (size_t)(eol - head) : len;
	const char *where = "url";
	const struct secret *k = canary_in(g, head, l1);
	if (!k) {
		k = canary_in(g, head + l1, len - l1);
		where = "header";
	}
	if (k) {
		canary_leak(g, k, where, why, whylen);
		return -1;
	}
	if (!g->may_put) {
		/* in the clear to a host no secret may go to in the clear */
		const struct secret *s = secrets_find_phantom(g->eg->secrets, head, len);
		if (s) {
			leak(g, s, "header", why, whylen);
			return -1;
		}
		*out = xmalloc(len ? len : 1);
		memcpy(*out, head, len);
		*outlen = len;
		return 0;
	}
	if (subst_head(&g->mine, &g->host, g->port, head, len, out, outlen, &r) < 0) {
		leak(g, r.leak, r.leak_where ? r.leak_where : "head", why, whylen);
		return -1;
	}
	for (size_t i = 0; i < r.nhits; i++)
		hit_add(g, r.hits[i].secret->spec->name, "header", r.hits[i].header, 1);
	identity_encoding(out, outlen);
	return 0;
}

static int g_data(void *gp, const void *data, size_t len, char *why, size_t whylen)
{
	struct guard *g = gp;
	/* percent-encoded too, within one read (a query string in a stream) */
	const struct secret *k = scan_feed(&g->cscan, data, len);
	if (!k && len && memchr(data, '%', len))
		k = canary_in(g, data, len);
	if (k) {
		canary_leak(g, k, g->intercepted ? "body" : "stream", why, whylen);
		return -1;
	}
	/* A body to the host the secret is bound to may hold the phantom: an
	 * agent's conversation does once a tool printed its environment. It
	 * stays a phantom there, worth nothing: only headers carry the value. */
	if (g->may_put)
		return 0;
	const struct secret *s = scan_feed(&g->scan, data, len);
	if (!s && len && memchr(data, '%', len))
		s = token_in(g->eg->secrets, data, len); /* percent-encoded, within one read */
	if (!s)
		return 0;
	leak(g, s, g->intercepted ? "body" : "stream", why, whylen);
	return -1;
}

static void g_end(void *gp, struct guard_end *out)
{
	struct guard *g = gp;
	*out = (struct guard_end){ .secrets = json_array_size(g->hits) ? json_incref(g->hits) : NULL,
				   .leak_secret = g->leak_secret, .leak_where = g->leak_where,
				   .leak_canary = g->canary_path,
				   .leak_canary_where = g->canary_where };
	json_decref(g->hits);
	free(g->mine.v);
	scan_free(&g->scan);
	scan_free(&g->cscan);
	free(g);
}

static bool g_bound(void *gp)
{
	const struct guard *g = gp;
	return g->may_put;
}

/* A reference the caller frees. */
static struct ssl_ctx_st *g_server_ctx(void *ctx, const struct net_host *h)
{
	struct egress *eg = ctx;
	struct werr e = { 0 };
	SSL_CTX *c = tls_server_ctx(eg->ca, h, &e);
	if (!c)
		werr_print(&e);
	return c;
}

bool egress_inspects(const struct egress *eg, const struct net_host *h, uint16_t port)
{
	return (eg->rules && eg->rules->nreq && reqrules_names(eg->rules, h, port)) ||
	       mcp_rules_cover(eg->mcp, h, port);
}

bool egress_any_inspected(const struct net_rules *rules, const struct mcp_rules *mcp)
{
	return (rules && rules->nreq) || (mcp && mcp->n);
}

/* A rule's host as tls.h's name constraints take it ("*.suffix" for a
 * wildcard); false: none. */
static bool ca_host(struct net_host *out, const struct net_rule *r)
{
	const char *why = NULL;
	if (r->kind == NET_RULE_IP) {
		net_host_from_ip(out, &r->ip, !addr_ip_is_v4(&r->ip, (uint8_t[4]){ 0 }));
		return true;
	}
	if (r->kind == NET_RULE_WILDCARD) {
		*out = (struct net_host){ .kind = NET_HOST_NAME };
		return snprintf(out->name, sizeof out->name, "*.%s", r->host) < (int)sizeof out->name;
	}
	return net_host_parse(out, r->host, strlen(r->host), &why) == 0;
}

/* The hosts the session CA may sign for: the secrets', then those the
 * rules inspect; *k of them. */
static struct net_host *ca_hosts(const struct egress *eg, size_t *k)
{
	const struct secrets *s = eg->secrets;
	size_t nreq = eg->rules ? eg->rules->nreq : 0, nmcp = eg->mcp ? eg->mcp->n : 0;
	size_t n = nreq + nmcp;
	for (size_t i = 0; i < s->n; i++)
		n += s->v[i].spec->nhosts;
	struct net_host *hosts = xcalloc(n ? n : 1, sizeof *hosts);
	*k = 0;
	for (size_t i = 0; i < s->n; i++)
		for (size_t j = 0; j < s->v[i].spec->nhosts; j++)
			*k += ca_host(&hosts[*k], &s->v[i].spec->hosts[j]);
	for (size_t i = 0; i < nreq; i++)
		*k += ca_host(&hosts[*k], &eg->rules->req[i].r);
	for (size_t i = 0; i < nmcp; i++)
		*k += ca_host(&hosts[*k], &eg->mcp->v[i].host);
	return hosts;
}

/* Is a secret of s scoped to a program (mine_for's rule)? */
static bool any_scoped(const struct secrets *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct net_rule *h0 = s->v[i].spec ? s->v[i].spec->hosts : NULL;
		if (h0 && (h0->prog.glob[0] || h0->prog.sha256[0]))
			return true;
	}
	return false;
}

int egress_init(struct egress *eg, const struct secrets *s, const struct secrets *canaries,
		const struct net_rules *rules, const struct mcp_rules *mcp,
		const struct strv *user_cas, struct werr *e)
{
	*eg = (struct egress){ .secrets = s, .canaries = canaries, .rules = rules, .mcp = mcp };
	if (!s->n && !egress_any_inspected(rules, mcp)) {
		/* the decoys' tokens only: watched, never intercepted (nothing is
		 * bound anywhere, so open never asks for it) */
		if (canaries && canaries->n)
			eg->guard = (struct proxy_guard){ .ctx = eg, .open = g_open, .open_for = g_open_for, .head = g_head,
							  .data = g_data, .end = g_end };
		return 0;
	}
	/* the CA may sign for the hosts the secrets are bound to and those
	 * the rules inspect, no other */
	size_t k = 0;
	struct net_host *hosts = ca_hosts(eg, &k);
	eg->ca = tls_ca_new(hosts, k, e);
	free(hosts);
	if (!eg->ca)
		return -1;
	_cleanup_free_ const char **files = xcalloc(user_cas->n + 1, sizeof *files);
	for (size_t i = 0; i < user_cas->n; i++)
		files[i] = user_cas->v[i];
	eg->client = tls_client_ctx(files, e);
	if (!eg->client)
		return -1;
	mask_init(&eg->mask, s);
	eg->guard = (struct proxy_guard){ .ctx = eg, .open = g_open, .open_for = g_open_for, .head = g_head, .data = g_data,
					  .resp = g_resp, .end = g_end, .bound = g_bound, .server_ctx = g_server_ctx,
					  .client_ctx = eg->client, .by_program = any_scoped(s) };
	return 0;
}

void egress_free(struct egress *eg)
{
	if (eg->client)
		tls_ctx_free(eg->client);
	if (eg->ca)
		tls_ca_free(eg->ca);
	mask_free(&eg->mask);
	*eg = (struct egress){ 0 };
}
