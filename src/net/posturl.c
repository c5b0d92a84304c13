/* posturl.c - what a POST's URL and its response's status line are
 * (post.h): plain parsing, in warden's binary, where a webhook's or an
 * OTLP stream's URL is checked when the profile is read; the POST itself,
 * with its TLS, is in the TLS module (post.c, tlsmod.h). */
#include "post.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int post_url_parse(const char *url, struct post_url *u, struct werr *e)
{
	*u = (struct post_url){ 0 };
	const char *p;
	if (strncmp(url, "http://", 7) == 0) {
		p = url + 7;
	} else if (strncmp(url, "https://", 8) == 0) {
		p = url + 8;
		u->tls = true;
	} else {
		return werr_set(e, EINVAL, "not an http:// or https:// URL");
	}
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
			return werr_set(e, EINVAL, "a URL holds printable ASCII only");
	size_t alen = strcspn(p, "/?#");
	const char *rest = p + alen;
	if (memchr(p, '@', alen))
		return werr_set(e, EINVAL, "user:password@ in the URL is not supported");
	/* host, then :port (after the bracket of an IPv6 address) */
	const char *close = alen && p[0] == '[' ? memchr(p, ']', alen) : NULL;
	const char *colon = memchr(close ? close : p, ':', alen - (size_t)((close ? close : p) - p));
	size_t hlen = colon ? (size_t)(colon - p) : alen;
	const char *why = NULL;
	if (hlen == 0 || net_host_parse(&u->host, p, hlen, &why) < 0)
		return werr_set(e, EINVAL, "the URL's host: %s", why ? why : "empty");
	u->port = u->tls ? 443 : 80;
	if (colon && net_port_parse(colon + 1, alen - hlen - 1, &u->port) < 0)
		return werr_set(e, EINVAL, "the URL's port is not a number from 1 to 65535");
	snprintf(u->port_s, sizeof u->port_s, "%u", (unsigned)u->port);
	bool dflt = u->port == (u->tls ? 443 : 80);
	char host[NET_HOST_TEXT_MAX];
	snprintf(u->authority, sizeof u->authority, "%s%s%s", net_host_text(&u->host, host),
		 dflt ? "" : ":", dflt ? "" : u->port_s);
	size_t tlen = strcspn(rest, "#");
	if (tlen + 2 > sizeof u->target)
		return werr_set(e, EINVAL, "the URL is too long");
	snprintf(u->target, sizeof u->target, "%s%.*s", rest[0] == '/' ? "" : "/", (int)tlen, rest);
	return 0;
}
int post_status(const char *buf, size_t len)
{
	static const char v[] = "HTTP/1.";
	size_t vl = sizeof v - 1;
	if (memcmp(buf, v, len < vl ? len : vl) != 0)
		return -1;
	const char *nl = memchr(buf, '\n', len);
	if (!nl)
		return 0;
	size_t l = (size_t)(nl - buf);
	/* "HTTP/1.x NNN" at least, then a space or the line's end */
	if (l < vl + 5 || buf[vl] < '0' || buf[vl] > '9' || buf[vl + 1] != ' ')
		return -1;
	const char *c = buf + vl + 2;
	for (int i = 0; i < 3; i++)
		if (c[i] < '0' || c[i] > '9')
			return -1;
	if (c + 3 < nl && c[3] != ' ' && c[3] != '\r')
		return -1;
	int s = (c[0] - '0') * 100 + (c[1] - '0') * 10 + (c[2] - '0');
	return s >= 100 ? s : -1;
}
