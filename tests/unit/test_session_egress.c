/* test_session_egress.c - the proxy's guard for secrets by reference
 * (src/session/egress.c, compiled into the test): where the real value may
 * go (a bound host over TLS, or on loopback in the clear) and where it may
 * not (the same host in the clear off loopback), the phantom refused
 * elsewhere and let through in a body to the bound host, Accept-Encoding
 * made identity, a response quoting the value masked back to the phantom
 * (also when the value is split across reads; in base64 and hex, to the
 * phantom's), and what the connection's event and alert get; the decoys'
 * tokens refused everywhere; a host that request rules or mcp rules name
 * inspected (its TLS terminated, no secret put in), others not, and no CA
 * without secrets or such rules. */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "check.h"
#include "src/detect/canary.h"
#include "src/net/reqrules.h"
#include "src/session/egress.h"

#define REAL "tok-live-0123456789abcdefghijklmnopqrstuv"

static struct net_host host(const char *s)
{
	struct net_host h;
	const char *why;
	if (net_host_parse(&h, s, strlen(s), &why) < 0)
		abort();
	return h;
}

int main(void)
{
	struct werr e = { 0 };
	setenv("MYTOKEN", REAL, 1);
	struct policy p;
	CHECK(policy_load(&p, NULL, "/home/u", &e) == 0);
	CHECK(policy_add_secret(&p, "MYTOKEN@api.test,127.0.0.1:4000,*.wild.test", "--secret", &e) == 0);
	struct secrets s = { 0 };
	CHECK(secrets_load(&s, &p, NULL, &e) == 0 && s.n == 1);
	struct strv cas = { 0 };
	struct egress eg;
	CHECK(egress_init(&eg, &s, NULL, NULL, NULL, &cas, &e) == 0 && eg.ca && eg.client);
	const struct proxy_guard *g = &eg.guard;
	const char *ph = s.v[0].phantom;
	char why[256];
	char *out = NULL;
	size_t outlen = 0;

	/* the bound host through TLS: the value in, Accept-Encoding identity */
	struct net_host api = host("api.test");
	bool icpt = false;
	void *c = g->open(g->ctx, &api, 443, false, &icpt);
	CHECK(c && icpt);
	char *head = xasprintf("GET /v1 HTTP/1.1\r\nHost: api.test\r\nX-Api-Key: %s\r\n"
			       "Accept-Encoding: gzip, br\r\n\r\n", ph);
	CHECK(g->head(c, head, strlen(head), &out, &outlen, why, sizeof why) == 0);
	CHECK(out && memmem(out, outlen, "X-Api-Key: " REAL "\r\n", strlen(REAL) + 13) &&
	      memmem(out, outlen, "Accept-Encoding: identity\r\n", 27) && !memmem(out, outlen, ph, strlen(ph)));
	free(out);
	free(head);
	/* a body to it may hold the phantom */
	CHECK(g->data(c, ph, strlen(ph), why, sizeof why) == 0);
	/* a response quoting the value: masked, also when split across reads */
	char r1[128];
	snprintf(r1, sizeof r1, "{\"error\": \"bad key %s\"}", REAL);
	size_t hold = g->resp(c, r1, strlen(r1));
	CHECK(hold == 0 && strstr(r1, ph) && !strstr(r1, REAL));
	char r2[128];
	snprintf(r2, sizeof r2, "xx %.10s", REAL); /* a read ending inside the value */
	size_t l2 = strlen(r2);
	hold = g->resp(c, r2, l2);
	CHECK(hold == 10);
	char r3[128];
	snprintf(r3, sizeof r3, "%.10s%s tail", REAL, &REAL[10]); /* the held bytes, then the rest */
	hold = g->resp(c, r3, strlen(r3));
	CHECK(hold == 0 && strncmp(r3, ph, strlen(ph)) == 0);
	/* and in base64 (Basic credentials the proxy encoded, echoed) and hex:
	 * the phantom's same form (src/secrets/mask.h; test_secrets_mask) */
	unsigned char up[96], b64r[160], b64p[160];
	snprintf((char *)up, sizeof up, "user:%s", REAL);
	EVP_EncodeBlock(b64r, up, (int)strlen((char *)up));
	snprintf((char *)up, sizeof up, "user:%s", ph);
	EVP_EncodeBlock(b64p, up, (int)strlen((char *)up));
	char r4[512], hexr[96] = "", hexp[96] = "";
	for (size_t i = 0; i < strlen(REAL); i++) {
		sprintf(hexr + 2 * i, "%02x", (unsigned char)REAL[i]);
		sprintf(hexp + 2 * i, "%02x", (unsigned char)ph[i]);
	}
	snprintf(r4, sizeof r4, "Authorization: Basic %s\r\nx=%s\n", b64r, hexr);
	hold = g->resp(c, r4, strlen(r4));
	char *want4 = xasprintf("Authorization: Basic %s\r\nx=%s\n", b64p, hexp);
	CHECK(hold == 0);
	CHECK_STR(r4, want4);
	free(want4);
	struct guard_end end;
	g->end(c, &end);
	CHECK(end.secrets && !end.leak_secret);
	char *js = json_dumps(end.secrets, JSON_COMPACT);
	CHECK(js && strstr(js, "{\"secret\":\"MYTOKEN\",\"header\":\"X-Api-Key\",\"count\":1}") &&
	      strstr(js, "{\"secret\":\"MYTOKEN\",\"response\":\"masked\",\"count\":4}"));
	free(js);
	json_decref(end.secrets);

	/* leaves for the bound hosts, a wildcard's subdomains included, and for
	 * no other host */
	struct net_host sub = host("a.wild.test"), bare = host("wild.test");
	SSL_CTX *lc = g->server_ctx(g->ctx, &api);
	CHECK(lc != NULL);
	SSL_CTX_free(lc);
	lc = g->server_ctx(g->ctx, &sub);
	CHECK(lc != NULL);
	SSL_CTX_free(lc);
	CHECK(g->server_ctx(g->ctx, &bare) == NULL);

	/* the bound host in the clear off loopback: never the value */
	c = g->open(g->ctx, &api, 80, true, &icpt);
	CHECK(c && !icpt);
	head = xasprintf("GET / HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer %s\r\n\r\n", ph);
	CHECK(g->head(c, head, strlen(head), &out, &outlen, why, sizeof why) < 0);
	CHECK(strstr(why, "MYTOKEN"));
	free(head);
	g->end(c, &end);
	CHECK(end.leak_secret && strcmp(end.leak_secret, "MYTOKEN") == 0 && !end.secrets);

	/* the bound loopback port in the clear: the value in */
	struct net_host lo = host("127.0.0.1");
	c = g->open(g->ctx, &lo, 4000, true, &icpt);
	CHECK(c && icpt);
	head = xasprintf("GET / HTTP/1.1\r\nHost: 127.0.0.1:4000\r\nAuthorization: Bearer %s\r\n\r\n", ph);
	CHECK(g->head(c, head, strlen(head), &out, &outlen, why, sizeof why) == 0);
	CHECK(out && memmem(out, outlen, REAL, strlen(REAL)));
	free(out);
	free(head);
	g->end(c, &end);
	json_decref(end.secrets);

	/* an unbound host: the phantom in what the client sends is refused,
	 * split across two pieces too */
	struct net_host other = host("other.test");
	c = g->open(g->ctx, &other, 443, false, &icpt);
	CHECK(c && !icpt);
	CHECK(g->data(c, "hello", 5, why, sizeof why) == 0);
	CHECK(g->data(c, ph, 12, why, sizeof why) == 0);
	CHECK(g->data(c, ph + 12, strlen(ph) - 12, why, sizeof why) < 0);
	g->end(c, &end);
	CHECK(end.leak_secret && strcmp(end.leak_where, "stream") == 0);

	egress_free(&eg);

	/* the decoys' tokens (canary.h): refused to every host, in a request
	 * line (percent-encoded too), a header, a stream, the bound host's
	 * too; reported apart from the secrets, never the token */
	struct canary_set cs;
	CHECK(canary_generate(&cs, "/home/agent", &e) == 0);
	CHECK(egress_init(&eg, &s, &cs.scan, NULL, NULL, &cas, &e) == 0);
	const char *id = cs.v[0].tokens[0], *sec = cs.v[0].tokens[1];
	c = g->open(g->ctx, &other, 80, true, &icpt);
	CHECK(c && !icpt);
	head = xasprintf("GET /?k=%s HTTP/1.1\r\nHost: other.test\r\n\r\n", id);
	CHECK(g->head(c, head, strlen(head), &out, &outlen, why, sizeof why) < 0);
	CHECK(!strstr(why, id) && !strstr(why, "canary") && !strstr(why, "decoy"));
	free(head);
	g->end(c, &end);
	CHECK(end.leak_canary && strcmp(end.leak_canary, "/home/agent/.aws/credentials") == 0 &&
	      strcmp(end.leak_canary_where, "url") == 0 && !end.leak_secret);
	/* percent-encoded in the URL */
	char enc[256];
	size_t k = 0;
	for (const char *q = sec; *q && k < sizeof enc - 4; q++)
		k += (size_t)snprintf(enc + k, sizeof enc - k, "%%%02X", (unsigned char)*q);
	c = g->open(g->ctx, &other, 80, true, &icpt);
	head = xasprintf("GET /?s=%s HTTP/1.1\r\nHost: other.test\r\n\r\n", enc);
	CHECK(g->head(c, head, strlen(head), &out, &outlen, why, sizeof why) < 0);
	free(head);
	g->end(c, &end);
	CHECK(end.leak_canary && strcmp(end.leak_canary_where, "url") == 0);
	/* a header to the bound host, through TLS: refused there too */
	c = g->open(g->ctx, &api, 443, false, &icpt);
	CHECK(c && icpt);
	head = xasprintf("GET / HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer %s\r\n\r\n",
			 cs.v[1].tokens[0]);
	CHECK(g->head(c, head, strlen(head), &out, &outlen, why, sizeof why) < 0);
	free(head);
	g->end(c, &end);
	CHECK(end.leak_canary && strcmp(end.leak_canary, "/home/agent/.config/gh/hosts.yml") == 0 &&
	      strcmp(end.leak_canary_where, "header") == 0);
	json_decref(end.secrets);
	/* a stream, split across two reads */
	c = g->open(g->ctx, &other, 443, false, &icpt);
	CHECK(g->data(c, "x", 1, why, sizeof why) == 0);
	CHECK(g->data(c, sec, 10, why, sizeof why) == 0);
	CHECK(g->data(c, sec + 10, strlen(sec) - 10, why, sizeof why) < 0);
	g->end(c, &end);
	CHECK(end.leak_canary && strcmp(end.leak_canary_where, "stream") == 0);
	egress_free(&eg);
	/* no secret, canaries only: a guard, intercepting nothing */
	struct secrets none = { 0 };
	CHECK(egress_init(&eg, &none, &cs.scan, NULL, NULL, &cas, &e) == 0 && !eg.ca && g->open);
	c = g->open(g->ctx, &api, 443, false, &icpt);
	CHECK(c && !icpt);
	CHECK(g->data(c, "hello", 5, why, sizeof why) == 0);
	CHECK(g->data(c, id, strlen(id), why, sizeof why) < 0);
	g->end(c, &end);
	CHECK(end.leak_canary && !end.secrets);
	egress_free(&eg);
	canary_free(&cs);

	/* request rules, no secret: their host's TLS terminated, no other's */
	CHECK(egress_init(&eg, &none, NULL, NULL, NULL, &cas, &e) == 0 && !eg.ca && !g->open);
	struct net_req_rule rq = { .action = RULES_DENY };
	const char *rwhy = NULL;
	CHECK(rules_parse_pattern(&rq.r, "rules.test", &e) == 0 &&
	      reqrules_methods(&rq.r, "DELETE", &rwhy) == 0);
	struct net_rules nr = { .req = &rq, .nreq = 1 };
	CHECK(egress_init(&eg, &none, NULL, &nr, NULL, &cas, &e) == 0 && eg.ca && g->open && g->server_ctx);
	struct net_host rt = host("rules.test");
	c = g->open(g->ctx, &rt, 443, false, &icpt);
	CHECK(c && icpt && !g->bound(c));
	head = xstrdup("GET / HTTP/1.1\r\nHost: rules.test\r\nAccept-Encoding: gzip\r\n\r\n");
	CHECK(g->head(c, head, strlen(head), &out, &outlen, why, sizeof why) == 0 && outlen == strlen(head) &&
	      memcmp(out, head, outlen) == 0); /* as sent: nothing put in */
	free(out);
	free(head);
	g->end(c, &end);
	CHECK(!end.secrets);
	CHECK(!g->open(g->ctx, &api, 443, false, &icpt) && !icpt); /* a tunnel */
	SSL_CTX *sc = g->server_ctx(g->ctx, &rt);
	CHECK(sc);
	SSL_CTX_free(sc);
	egress_free(&eg);
	/* an mcp rule, the same */
	struct mcp_rule mr = { 0 };
	CHECK(rules_parse_pattern(&mr.host, "mcp.test:8443", &e) == 0);
	struct mcp_rules mrs = { .v = &mr, .n = 1 };
	CHECK(egress_init(&eg, &none, NULL, NULL, &mrs, &cas, &e) == 0 && eg.ca);
	struct net_host mt = host("mcp.test");
	c = g->open(g->ctx, &mt, 8443, false, &icpt);
	CHECK(c && icpt);
	g->end(c, &end);
	CHECK(!g->open(g->ctx, &mt, 443, false, &icpt) && !icpt); /* another port */
	egress_free(&eg);

	secrets_free(&s);
	policy_free(&p);
	return check_status();
}
