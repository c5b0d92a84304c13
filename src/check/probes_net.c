/* probes_net.c - the network probes of `warden check`: DNS, routes off the
 * machine, the host's loopback and listeners, warden's own proxy (HTTP
 * CONNECT and SOCKS5 to destinations no rule allows), raw, packet and
 * netlink sockets. None sends a packet off this machine: a UDP connect()
 * only looks the route up, TCP only goes to the check's own listener. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/util.h"
#include "probe_groups.h"
#include "probe_util.h"

#ifndef NETLINK_ROUTE
#define NETLINK_ROUTE 0
#endif

/* ---- helpers ---------------------------------------------------------- */

/* connect() on a UDP socket looks the route up and sends nothing. ip as
 * the resolver reads it from resolv.conf: IPv4, IPv6, with a scope
 * ("fe80::1%eth0"); EINVAL for what is none of them. */
static int udp_route(const char *ip, int port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *ai = NULL;
	char serv[8];
	snprintf(serv, sizeof serv, "%d", port);
	if (getaddrinfo(ip, serv, &hints, &ai) != 0 || !ai) {
		if (ai)
			freeaddrinfo(ai);
		return EINVAL;
	}
	int s = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int err = s < 0 ? errno : connect(s, ai->ai_addr, ai->ai_addrlen) < 0 ? errno : 0;
	if (s >= 0)
		close(s);
	freeaddrinfo(ai);
	return err;
}

static void route_probe(struct probe_result *r, const char *ip, int port)
{
	int err = udp_route(ip, port);
	if (err == 0)
		allowed(r, "route to %s exists (nothing sent)", ip);
	else
		denied_errno(r, err);
}

/* A socket in /proc/net/{tcp,udp}[6] with this local port (TCP: listening). */
static bool proc_net_port(const char *file, unsigned port, bool tcp)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return false;
	char line[512];
	bool found = false;
	if (!fgets(line, sizeof line, f)) { /* header */
		fclose(f);
		return false;
	}
	while (!found && fgets(line, sizeof line, f)) {
		unsigned lport = 0, st = 0;
		if (sscanf(line, " %*d: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", &lport, &st) == 2)
			found = lport == port && (!tcp || st == 0x0A);
	}
	fclose(f);
	return found;
}

/* ---- network ---------------------------------------------------------- */

void p_dns(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	char buf[4096];
	char servers[4][64];
	size_t n = 0;
	bool conf = read_small_file("/etc/resolv.conf", buf, sizeof buf, O_NONBLOCK) >= 0;
	if (conf) {
		char *save = NULL;
		for (char *l = strtok_r(buf, "\n", &save); l && n < 4; l = strtok_r(NULL, "\n", &save))
			if (sscanf(l, " nameserver %63s", servers[n]) == 1)
				n++;
	}
	if (n == 0) { /* what the resolver falls back to */
		snprintf(servers[0], sizeof servers[0], "127.0.0.1");
		n = 1;
	}
	int err = ENETUNREACH;
	for (size_t i = 0; i < n; i++) {
		bool loop = strncmp(servers[i], "127.", 4) == 0 || strcmp(servers[i], "::1") == 0;
		if (loop) {
			/* Nothing is sent: look for a listener on port 53 in this namespace. */
			if (proc_net_port("/proc/net/udp", 53, false) || proc_net_port("/proc/net/tcp", 53, true) ||
			    proc_net_port("/proc/net/udp6", 53, false) || proc_net_port("/proc/net/tcp6", 53, true)) {
				allowed(r, "resolver %s listening", servers[i]);
				return;
			}
			err = ECONNREFUSED;
			continue;
		}
		int e = udp_route(servers[i], 53);
		if (e == 0) {
			allowed(r, "route to nameserver %s (nothing sent)", servers[i]);
			return;
		}
		err = e;
	}
	denied(r, "%s (%s)", ename(err), conf ? "no nameserver reachable" : "no resolv.conf, no local resolver");
}

/* Ask warden's proxy on the sandbox's loopback for `request` (an HTTP
 * CONNECT or a SOCKS5 exchange); held when the proxy refuses. No rule
 * allows these destinations, so the proxy neither resolves nor dials them:
 * nothing leaves the machine. */
static int proxy_conn(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = 3 };
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
		if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
			return fd;
		int err = errno;
		close(fd);
		errno = err;
	}
	return -1;
}

static void proxy_connect_probe(struct probe_result *r, const char *target)
{
	int fd = proxy_conn(3128);
	if (fd < 0) {
		denied(r, "no proxy on 127.0.0.1:3128 (%s)", ename(errno));
		return;
	}
	char req[300], resp[256];
	int n = snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target);
	ssize_t got = 0;
	if (write(fd, req, (size_t)n) == n)
		got = read(fd, resp, sizeof resp - 1);
	close(fd);
	resp[got > 0 ? got : 0] = '\0';
	char *eol = strstr(resp, "\r\n");
	if (eol)
		*eol = '\0';
	/* only a refusal is held: a proxy that says nothing within the
	 * timeout may be dialing (a slow destination, one held for a question)
	 * and was not shown to refuse */
	int status = 0;
	if (sscanf(resp, "HTTP/1.%*1[01] %3d", &status) == 1 && status >= 400 && status <= 599)
		denied(r, "proxy: %.200s", resp);
	else if (status >= 200 && status <= 299)
		allowed(r, "proxy opened a tunnel to %s", target);
	else
		allowed(r, "proxy gave no refusal for %s: %.200s", target,
			got > 0 ? resp : "no answer within 3 s (not shown refused)");
}

void p_proxy_unknown(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	proxy_connect_probe(r, "warden-check.invalid:443");
}

void p_proxy_metadata(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	proxy_connect_probe(r, "169.254.169.254:80");
}

void p_proxy_socks(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	int fd = proxy_conn(1080);
	if (fd < 0) {
		denied(r, "no SOCKS5 proxy on 127.0.0.1:1080 (%s)", ename(errno));
		return;
	}
	static const char host[] = "warden-check.invalid";
	unsigned char greet[] = { 5, 1, 0 }, req[300], resp[32];
	size_t n = 0;
	req[n++] = 5, req[n++] = 1, req[n++] = 0, req[n++] = 3, req[n++] = sizeof host - 1;
	memcpy(req + n, host, sizeof host - 1);
	n += sizeof host - 1;
	req[n++] = 1, req[n++] = 187; /* port 443 */
	ssize_t a = -1;
	if (write(fd, greet, sizeof greet) == (ssize_t)sizeof greet && read(fd, resp, 2) == 2 &&
	    write(fd, req, n) == (ssize_t)n)
		a = read(fd, resp, sizeof resp);
	close(fd);
	if (a >= 2 && resp[1] == 0)
		allowed(r, "SOCKS5 proxy connected to %s", host);
	else if (a >= 2)
		denied(r, "SOCKS5 reply 0x%02x%s", resp[1], resp[1] == 2 ? " (not allowed by ruleset)" : "");
	else /* as for CONNECT: silence is not a refusal */
		allowed(r, "SOCKS5 proxy gave no refusal for %s: no answer within 3 s (not shown "
			"refused)", host);
}

void p_route_public(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	route_probe(r, "1.1.1.1", 53);
}

void p_route_testnet(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	route_probe(r, "192.0.2.1", 53);
}

void p_route_metadata(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	route_probe(r, "169.254.169.254", 80);
}

void p_route_ipv6(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	route_probe(r, "2001:db8::1", 53);
}

void p_tcp_loopback(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (c->tcp_port <= 0) {
		denied(r, "no host listener given");
		return;
	}
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		denied_errno(r, errno);
		return;
	}
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)c->tcp_port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
		allowed(r, "connected to the host's 127.0.0.1:%d", c->tcp_port);
	else
		denied_errno(r, errno);
	close(s);
}

void p_tcp_listeners(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	if (c->tcp_port <= 0) {
		denied(r, "no host listener given");
		return;
	}
	if (proc_net_port("/proc/net/tcp", (unsigned)c->tcp_port, true))
		allowed(r, "host listener on port %d listed", c->tcp_port);
	else
		denied(r, "host listener not listed");
}

static void socket_probe(struct probe_result *r, int af, int type, int proto, const char *what)
{
	int s = socket(af, type | SOCK_CLOEXEC, proto);
	if (s < 0) {
		denied_errno(r, errno);
		return;
	}
	close(s);
	allowed(r, "%s socket created", what);
}

void p_raw_socket(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	socket_probe(r, AF_INET, SOCK_RAW, IPPROTO_ICMP, "raw ICMP");
}

void p_packet_socket(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	/* Protocol 0: receives nothing until bound. */
	socket_probe(r, AF_PACKET, SOCK_RAW, 0, "packet");
}

void p_vsock_socket(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	socket_probe(r, AF_VSOCK, SOCK_STREAM, 0, "vsock");
}

void p_netlink(const struct probe_ctx *c, const struct probe *self, struct probe_result *r)
{
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s < 0) {
		denied_errno(r, errno);
		return;
	}
	close(s);
	struct if_nameindex *ifs = if_nameindex();
	if (!ifs) {
		denied(r, "interface dump: %s", ename(errno));
		return;
	}
	char names[200] = "";
	size_t n = 0;
	for (struct if_nameindex *i = ifs; i->if_index; i++) {
		if (strcmp(i->if_name, "lo") == 0)
			continue;
		n++;
		size_t l = strlen(names);
		snprintf(names + l, sizeof names - l, " %s", i->if_name);
	}
	if_freenameindex(ifs);
	if (n)
		allowed(r, "host interfaces visible:%s", names);
	else
		denied(r, "only lo");
}
