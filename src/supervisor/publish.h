/* publish.h - published ports (`publish [HOST_PORT:]PORT`, `warden run
 * --publish`): a connection to the host's 127.0.0.1:HOST_PORT (and
 * [::1]:HOST_PORT when the host has IPv6 loopback) reaches PORT on the
 * sandbox's loopback, whichever address the server inside bound
 * (127.0.0.1, 0.0.0.0, ::, ::1): 127.0.0.1 is dialled inside, then ::1 when
 * nothing answers there. Only the host's loopback listens, never another
 * interface; TCP only.
 *
 * The supervisor binds the host's listeners before the sandbox is made
 * (publish_new: a port in use stops the session before the command ever
 * runs), then, once init is ready, starts the dialer (publish_dial.h) for
 * sockets inside and serves: each accepted connection dialled inside
 * without blocking (a server not listening yet: the host's client gets a
 * reset at once; no answer within 15 s, a backlog full dropping the SYNs:
 * the same), then its bytes relayed both ways as they are (HTTP,
 * WebSocket, any long-lived stream), each direction's end passed on as a
 * half-close. When it ends, one `net` event
 * (direction "inbound", the ports, the peer, the bytes each way). Past a
 * cap of connections at once, sized from the open-file limit, a client is
 * reset at once, and an alert (publish.connection-cap) says so. The
 * publisher owns an epoll fd of its own (its listeners and connections),
 * one source of the supervisor's loop. */
#pragma once
#include "../audit/audit.h"
#include "../common/err.h"
#include "../common/loop.h"
#include "../policy/policy.h"

struct publish;

/* Bind the listeners of pol's published ports on the host's loopback: the
 * publisher, or NULL with e naming the port and where it was published
 * (the flag or the profile line) when one cannot be had. pol and log are
 * borrowed and must outlive it. */
struct publish *publish_new(const struct policy *pol, struct audit *log, struct werr *e);
/* Start the dialer into the sandbox's namespaces: userns (its file) and
 * any socket of the sandbox's network namespace (its namespace is taken
 * from it); both borrowed. -1 with e filled. */
int publish_start(struct publish *p, int userns, int sock_inside, struct werr *e);
/* Its epoll fd watched by l; -1 with e naming it when l cannot take it. */
int publish_watch(struct loop *l, struct publish *p, struct werr *e);
/* Close every connection (each logged) and stop the dialer; the
 * listeners stay until publish_free. NULL is fine. */
void publish_end(struct publish *p);
void publish_free(struct publish *p);
void publish_freep(struct publish **p);
