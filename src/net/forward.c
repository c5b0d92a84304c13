/* forward.c - which allow rules are host loopback ports, and what each one
 * listens on inside (see forward.h). */
#include "forward.h"

#include <stdio.h>
#include <string.h>

#include "proxy.h"

static const uint8_t V4_LOOPBACK[4] = { 127, 0, 0, 1 };
static const uint8_t V6_LOOPBACK[16] = { [15] = 1 };

static int add(struct net_forwards *f, const struct addr_ip *ip, uint16_t port, bool localhost,
	       bool optional, const char *host, const char *rule, const char **why)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->v[i].port == port && addr_ip_equal(&f->v[i].ip, ip))
			return 1;
	if (f->n >= FORWARD_MAX) {
		*why = "too many host loopback ports (at most 16 listeners; localhost:PORT takes two)";
		return -1;
	}
	struct net_forward *w = &f->v[f->n++];
	memset(w, 0, sizeof *w);
	w->ip = *ip;
	w->port = port;
	w->localhost = localhost;
	w->optional = optional;
	snprintf(w->host, sizeof w->host, "%s", host);
	snprintf(w->rule, sizeof w->rule, "%s", rule);
	return 1;
}

int forward_add_rule(struct net_forwards *f, const struct net_rule *r, const char **why)
{
	bool localhost = r->kind == NET_RULE_HOST && strcmp(r->host, "localhost") == 0;
	bool loopback_ip = r->kind == NET_RULE_IP && addr_classify(&r->ip) == ADDR_LOOPBACK;
	if (!loopback_ip && !(localhost && r->port))
		return 0; /* "localhost" without a port stays a name rule (it forwards nothing) */
	if (!r->port) {
		*why = "a rule for the host's loopback needs a port: warden forwards single "
		       "ports of the host's loopback, never all of them (write ADDRESS:PORT)";
		return -1;
	}
	if (r->port == PROXY_HTTP_PORT || r->port == PROXY_SOCKS_PORT) {
		*why = "ports 3128 and 1080 on the sandbox's loopback are warden's own proxy";
		return -1;
	}
	struct addr_ip v4, v6;
	addr_ip_from_v4(&v4, V4_LOOPBACK);
	addr_ip_from_v6(&v6, V6_LOOPBACK);
	if (localhost) {
		if (add(f, &v4, r->port, true, false, "localhost", r->text, why) < 0 ||
		    add(f, &v6, r->port, true, true, "localhost", r->text, why) < 0)
			return -1;
		return 1;
	}
	char text[ADDR_TEXT_MAX];
	if (!addr_ip_is_v4(&r->ip, NULL) && !addr_ip_equal(&r->ip, &v6)) {
		*why = "not a loopback address warden can forward (use 127.0.0.1:PORT or [::1]:PORT)";
		return -1;
	}
	return add(f, &r->ip, r->port, false, false, addr_ip_text(&r->ip, text), r->text, why);
}

int forward_targets(const struct net_forward *fw, struct addr_ip out[2])
{
	out[0] = fw->ip;
	if (!fw->localhost)
		return 1;
	if (addr_ip_is_v4(&fw->ip, NULL))
		addr_ip_from_v6(&out[1], V6_LOOPBACK);
	else
		addr_ip_from_v4(&out[1], V4_LOOPBACK);
	return 2;
}
