/* forward.h - host loopback ports: which allow rules name one port on the
 * host's loopback, and the listening sockets each asks for inside the
 * sandbox. Sandbox init creates those listeners in the sandbox's network
 * namespace (net.c); the proxy accepts on them and relays each connection to
 * the same port on the host's loopback (proxy_add_forward).
 *
 * A loopback rule is an allow rule naming a loopback address (127.0.0.0/8,
 * ::1) or the name localhost, with a port: "127.0.0.1:4000", "[::1]:4000",
 * "localhost:4000". A loopback address without a port is an error (warden
 * forwards single ports, never the whole loopback); the proxy's own ports
 * 3128 and 1080 are errors; at most FORWARD_MAX listeners. "localhost:PORT"
 * listens on 127.0.0.1 and ::1 inside (the ::1 one only when the namespace
 * has IPv6) and dials the host's 127.0.0.1, then ::1. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "addr.h"
#include "rules.h"

#define FORWARD_MAX 16

struct net_forward {
	struct addr_ip ip;             /* listened on inside, dialled first on the host */
	uint16_t port;
	bool localhost;                /* from "localhost:PORT": dial the other family next */
	bool optional;                 /* the ::1 listener of localhost: skipped without IPv6 */
	char host[16];                 /* for the event: "127.0.0.1", "::1", "localhost" */
	char rule[NET_RULE_TEXT_MAX];  /* the rule's canonical text */
};

struct net_forwards {
	struct net_forward v[FORWARD_MAX];
	size_t n;
};

/* Add the listeners one allow rule asks for (an address and port already
 * listed are not added again). Returns 1 when the rule is a loopback rule, 0
 * when it is not (nothing added), -1 with *why (static text) when it is one
 * warden cannot serve. */
int forward_add_rule(struct net_forwards *f, const struct net_rule *r, const char **why);

/* The host addresses to dial for a forward, in order (1 or 2). */
int forward_targets(const struct net_forward *fw, struct addr_ip out[2]);
