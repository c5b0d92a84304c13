/* proxy_load.h - what the modes of proxy_load (bench/proxy) share: the
 * clock, argument parsing, the plain TCP client (a direct connection or a
 * CONNECT tunnel through warden's proxy), and the TLS modes of proxy_tls.c. */
#ifndef WARDEN_BENCH_PROXY_LOAD_H
#define WARDEN_BENCH_PROXY_LOAD_H

#include <stddef.h>

#define CHUNK (256 * 1024)
#define HEAD_MAX 4096

/* CHUNK bytes of 'x': what the servers send, what the clients read into */
extern char buf[CHUNK];

double now_s(void);
/* s as a number in [min, max], else -1 */
long parse_long(const char *s, long min, long max);
void raise_nofile(void);
int cmp_double(const void *a, const void *b);
/* A TCP connection to host:port (a numeric address), TCP_NODELAY; -1 with
 * the reason on stderr. */
int dial(const char *host, const char *port);
int write_all(int fd, const char *p, size_t n);
/* A response head from fd (up to the blank line); its length, the bytes read
 * past it in *extra. */
int read_head(int fd, char *head, size_t cap, size_t *extra);
/* host:port directly (proxy NULL) or through a CONNECT tunnel of
 * 127.0.0.1:proxy, answered 200. */
int open_conn(const char *host, const char *port, const char *proxy);

/* The TLS modes (proxy_tls.c); the arguments as on the command line. */
int tls_serve(const char *addr, const char *port, const char *secs_s, const char *cert,
	      const char *key, const char *cc);
int tls_fetch(const char *host, const char *port, const char *bytes_s, const char *proxy,
	      const char *cafile);
int tls_latency(const char *host, const char *port, const char *conns_s, const char *reqs_s,
		const char *proxy, const char *cafile);

#endif
