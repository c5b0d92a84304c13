/* loophint.h - a connect inside to a port of the sandbox's own loopback
 * where nothing listens inside, while a program of the host listens on the
 * host's loopback at that port: the user meant the host's (a database, a
 * dev server), which the sandbox does not reach unless a rule names it.
 * Told once per port, as a refused way out with the flag that would allow
 * it, instead of the client's bare "connection refused" (see loophint.c). */
#pragma once
#include <stdbool.h>
#include <sys/socket.h>

#define LOOPHINT_PORTS 64

struct loophint {
	unsigned short told[LOOPHINT_PORTS]; /* ports said already */
	unsigned ntold;
	/* the connect noted, looked at once it has its answer (the host's
	 * listeners are not timed through the agent's own call): port 0 none */
	int family;
	unsigned port;
	long pid, host_pid;
};

/* port (of family AF_INET or AF_INET6) on the sandbox's loopback, asked
 * of inside_diag (the sandbox's sock_diag socket; the host's side is
 * sockdiag_own's), h zeroed at first: true, once per port, when nothing
 * listens there inside and something listens on the host's loopback (or
 * all its addresses) at that port. */
bool loophint_host_only(struct loophint *h, int inside_diag, int family, unsigned port);
