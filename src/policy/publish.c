/* publish.c - published ports (`publish [HOST_PORT:]PORT` in a profile,
 * `warden run --publish`): the text of one read (policy_publish_parse), and
 * the entry put into the policy, one per host port (policy_add_publish).
 * What serves them is src/supervisor/publish.h. */
#include "parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../net/proxy.h"

/* A port number: decimal digits only, 1 to 65535. */
static bool port_of(const char *s, size_t n, uint16_t *out)
{
	if (n == 0 || n > 5)
		return false;
	unsigned long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return false;
	*out = (uint16_t)v;
	return true;
}

const char *policy_publish_parse(const char *spec, uint16_t *host_port, uint16_t *port)
{
	const char *colon = strchr(spec, ':');
	if (colon && strchr(colon + 1, ':'))
		return "takes [HOST_PORT:]PORT (one colon at most; the host side is always "
		       "127.0.0.1 and ::1)";
	if (colon && !port_of(spec, (size_t)(colon - spec), host_port))
		return "HOST_PORT is not a port (1 to 65535)";
	const char *p = colon ? colon + 1 : spec;
	if (!port_of(p, strlen(p), port))
		return colon ? "PORT is not a port (1 to 65535)" : "not a port (1 to 65535)";
	if (!colon)
		*host_port = *port;
	if (*port == PROXY_HTTP_PORT || *port == PROXY_SOCKS_PORT)
		return "ports 3128 and 1080 inside are warden's own proxy, never published";
	return NULL;
}

/* Put spec into p: -1 with why (a sentence) when it cannot be. */
static int publish_add(struct policy *p, const char *spec, const char *origin, char *why,
		       size_t whylen)
{
	uint16_t host_port = 0, port = 0;
	const char *bad = policy_publish_parse(spec, &host_port, &port);
	if (bad) {
		snprintf(why, whylen, "%s", bad);
		return -1;
	}
	for (size_t i = 0; i < p->npublish; i++) {
		const struct policy_publish *q = &p->publish[i];
		if (q->host_port != host_port)
			continue;
		if (q->port == port)
			return 0; /* the same port published again */
		snprintf(why, whylen, "host port %u is published already, to port %u (%s); a "
			 "host port leads to one port inside", host_port, q->port, q->origin);
		return -1;
	}
	if (p->npublish >= POLICY_PUBLISH_MAX) {
		snprintf(why, whylen, "at most %d published ports", POLICY_PUBLISH_MAX);
		return -1;
	}
	p->publish = xrealloc(p->publish, (p->npublish + 1) * sizeof *p->publish);
	p->publish[p->npublish++] = (struct policy_publish){ .host_port = host_port, .port = port,
							     .origin = xstrdup(origin) };
	return 0;
}

int policy_add_publish(struct policy *p, const char *spec, const char *origin, struct werr *e)
{
	char why[512];
	if (publish_add(p, spec, origin, why, sizeof why) < 0)
		return werr_set(e, 0, "%s '%.100s': %s", origin, spec, why);
	return 0;
}

/* `publish [HOST_PORT:]PORT`. */
int pol_do_publish(struct parser *ps, const struct line *l)
{
	char why[512];
	_cleanup_free_ char *origin = xasprintf("%s:%lu", l->name, l->lineno);
	if (publish_add(ps->p, l->tok[1], origin, why, sizeof why) < 0)
		return pol_lerr(ps->e, 0, l, l->off[1], "publish '%.100s': %s", l->tok[1], why);
	return 0;
}

void policy_publish_free(struct policy *p)
{
	for (size_t i = 0; i < p->npublish; i++)
		free(p->publish[i].origin);
	free(p->publish);
	p->publish = NULL;
	p->npublish = 0;
}
