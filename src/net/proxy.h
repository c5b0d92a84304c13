/* proxy.h - warden's egress proxy, served by the supervisor from outside the
 * sandbox: HTTP (CONNECT and absolute-form requests) and SOCKS5 on listening
 * sockets that sandbox init created inside the sandbox's network namespace;
 * and the host loopback ports (forward.h), relayed as they are.
 * The proxy owns an epoll fd that the supervisor's event loop watches. */
#pragma once
#include "../audit/audit.h"
#include "../common/err.h"
#include "forward.h"
#include "rules.h"

#define PROXY_HTTP_PORT 3128
#define PROXY_SOCKS_PORT 1080

struct proxy;

/* Take the two listening sockets (either may be -1) and the rules (borrowed,
 * must outlive the proxy). */
struct proxy *proxy_new(int http_listener, int socks_listener, const struct net_rules *rules,
			struct audit *log, struct werr *e);
/* Serve a host loopback port: take its listener (inside the sandbox) and
 * relay each connection accepted on it to fw's port on the host's loopback,
 * with a `net` event (method "tcp", via "loopback") when it ends. The rules
 * decide again at each connection (a deny rule wins). fw is copied. */
void proxy_add_forward(struct proxy *p, int listener, const struct net_forward *fw);
/* The fd to watch for readability; then call proxy_dispatch. */
int proxy_fd(const struct proxy *p);
void proxy_dispatch(struct proxy *p);
/* Close every connection (each logged) and free. NULL is fine. */
void proxy_free(struct proxy *p);
