/* proxy_load.c - the proxy benchmark's client and server (bench/proxy), one
 * binary so the same code measures the direct path and the path through
 * warden's proxy. The server runs on the host; the client runs on the host
 * (direct) or inside `warden run` (through the proxy, PROXY = 3128 there).
 *
 *   proxy_load serve ADDR PORT SECONDS [CC]
 *       a single-threaded TCP server (poll): "GET /bytes/N" gets an HTTP
 *       response with N bytes of body; a connection that sends nothing is
 *       held open until its client closes. Prints "LISTENING PORT", exits
 *       after SECONDS. CC names the TCP congestion control of its sockets
 *       (TCP_CONGESTION; default: the host's).
 *   proxy_load fetch HOST PORT BYTES [PROXY]
 *       one connection (through a CONNECT tunnel of 127.0.0.1:PROXY when
 *       given), one GET /bytes/BYTES, the body read to the end. Prints
 *       "FETCH bytes B seconds S mbps M" (MB/s = 10^6 bytes per second).
 *   proxy_load latency HOST PORT N [PROXY]
 *       N times: connect (and CONNECT, read the proxy's answer) then close.
 *       Prints "LATENCY median_us M p90_us P".
 *   proxy_load hold HOST PORT N PROXY SECONDS RELEASE
 *       prints "START", waits a second, opens N CONNECT tunnels and keeps
 *       them, prints "HELD n" (fewer when one fails, with the reason on
 *       stderr), then waits until the file RELEASE exists or SECONDS pass.
 *   proxy_load tls-serve | tls-fetch | tls-latency ...
 *       the same over TLS (proxy_tls.c): an HTTPS server with keep-alive,
 *       and clients that measure warden's TLS interception against a tunnel.
 *
 * Exit status 0 on success, 1 on failure, 2 on usage errors. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "proxy_load.h"

char buf[CHUNK];

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long parse_long(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	return v;
}

void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ---- client ------------------------------------------------------------ */

int dial(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST }, *ai;
	int fd, r, one = 1;

	if ((r = getaddrinfo(host, port, &hints, &ai)) != 0) {
		fprintf(stderr, "proxy_load: %s: %s\n", host, gai_strerror(r));
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		fprintf(stderr, "proxy_load: connect %s port %s: %s\n", host, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

/* Read a response head (up to the blank line) into head; returns its length
 * and leaves any bytes after it in *extra. */
int read_head(int fd, char *head, size_t cap, size_t *extra)
{
	size_t len = 0;

	while (len < cap - 1) {
		ssize_t n = read(fd, head + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "proxy_load: %s before the end of the response head\n",
				n == 0 ? "end of stream" : strerror(errno));
			return -1;
		}
		len += (size_t)n;
		head[len] = '\0';
		char *end = strstr(head, "\r\n\r\n");
		if (end) {
			size_t hl = (size_t)(end + 4 - head);
			*extra = len - hl;
			return (int)hl;
		}
	}
	fprintf(stderr, "proxy_load: response head too long\n");
	return -1;
}

int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A connection to host:port, directly or through a CONNECT tunnel. */
int open_conn(const char *host, const char *port, const char *proxy)
{
	char head[HEAD_MAX], req[512];
	size_t extra;
	int fd;

	if (!proxy)
		return dial(host, port);
	if ((fd = dial("127.0.0.1", proxy)) < 0)
		return -1;
	int n = snprintf(req, sizeof req, "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", host, port,
			 host, port);
	if (write_all(fd, req, (size_t)n) < 0 || read_head(fd, head, sizeof head, &extra) < 0) {
		close(fd);
		return -1;
	}
	if (strncmp(head, "HTTP/1.1 200", 12) != 0 && strncmp(head, "HTTP/1.0 200", 12) != 0) {
		char *eol = strstr(head, "\r\n");
		if (eol)
			*eol = '\0';
		fprintf(stderr, "proxy_load: CONNECT %s:%s: %s\n", host, port, head);
		close(fd);
		return -1;
	}
	return fd;
}

static int cmd_fetch(const char *host, const char *port, const char *bytes_s, const char *proxy)
{
	long long want = atoll(bytes_s), got = 0;
	char head[HEAD_MAX], req[256];
	size_t extra;

	if (want <= 0) {
		fprintf(stderr, "proxy_load: BYTES must be positive\n");
		return 2;
	}
	double t0 = now_s();
	int fd = open_conn(host, port, proxy);
	if (fd < 0)
		return 1;
	int n = snprintf(req, sizeof req, "GET /bytes/%lld HTTP/1.1\r\nHost: %s\r\n\r\n", want, host);
	if (write_all(fd, req, (size_t)n) < 0 || read_head(fd, head, sizeof head, &extra) < 0) {
		close(fd);
		return 1;
	}
	got = (long long)extra;
	while (got < want) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			fprintf(stderr, "proxy_load: body ended after %lld of %lld bytes\n", got, want);
			close(fd);
			return 1;
		}
		got += r;
	}
	double dt = now_s() - t0;
	close(fd);
	printf("FETCH bytes %lld seconds %.6f mbps %.1f\n", got, dt, (double)got / dt / 1e6);
	return 0;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int cmd_latency(const char *host, const char *port, const char *n_s, const char *proxy)
{
	long n = parse_long(n_s, 1, 1000000);

	if (n < 0) {
		fprintf(stderr, "proxy_load: N must be a positive number\n");
		return 2;
	}
	double *t = calloc((size_t)n, sizeof *t);
	if (!t)
		return 1;
	for (long i = 0; i < n; i++) {
		double t0 = now_s();
		int fd = open_conn(host, port, proxy);
		if (fd < 0) {
			free(t);
			return 1;
		}
		t[i] = (now_s() - t0) * 1e6;
		close(fd);
	}
	qsort(t, (size_t)n, sizeof *t, cmp_double);
	double median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
	long p90 = (n * 9 + 9) / 10 - 1;
	printf("LATENCY median_us %.1f p90_us %.1f\n", median, t[p90]);
	free(t);
	return 0;
}

static int cmd_hold(const char *host, const char *port, const char *n_s, const char *proxy,
		    const char *secs_s, const char *release)
{
	long n = parse_long(n_s, 1, 100000), secs = parse_long(secs_s, 1, 86400), held = 0;
	struct stat st;

	if (n < 0 || secs < 0) {
		fprintf(stderr, "proxy_load: hold: bad N or SECONDS\n");
		return 2;
	}
	raise_nofile();
	int *fds = calloc((size_t)n, sizeof *fds);
	if (!fds)
		return 1;
	printf("START\n");
	fflush(stdout);
	sleep(1);
	for (; held < n; held++) {
		if ((fds[held] = open_conn(host, port, proxy)) < 0) {
			fprintf(stderr, "proxy_load: hold: tunnel %ld failed\n", held + 1);
			break;
		}
	}
	printf("HELD %ld\n", held);
	fflush(stdout);
	double end = now_s() + (double)secs;
	while (now_s() < end && stat(release, &st) != 0)
		usleep(50000);
	for (long i = 0; i < held; i++)
		close(fds[i]);
	free(fds);
	return held == n ? 0 : 1;
}

/* ---- server ------------------------------------------------------------ */

struct sconn {
	int fd;
	size_t hlen;           /* request head bytes read */
	char head[512];
	long long left;        /* body bytes still to send; -1: not responding yet */
	size_t hdr_off, hdr_len;
	char hdr[128];
};

static int cmd_serve(const char *addr, const char *port, const char *secs_s, const char *cc)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICHOST }, *ai;
	long secs = parse_long(secs_s, 1, 86400);
	int lfd, one = 1, r;

	if (secs < 0) {
		fprintf(stderr, "proxy_load: serve: bad SECONDS\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	if ((r = getaddrinfo(addr, port, &hints, &ai)) != 0) {
		fprintf(stderr, "proxy_load: %s: %s\n", addr, gai_strerror(r));
		return 1;
	}
	lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(lfd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(lfd, 4096) < 0) {
		perror("proxy_load: serve");
		return 1;
	}
	/* accepted sockets inherit the listener's */
	if (cc && setsockopt(lfd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) < 0) {
		fprintf(stderr, "proxy_load: serve: congestion control %s: %s\n", cc, strerror(errno));
		return 1;
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char pbuf[NI_MAXSERV];
	getsockname(lfd, (struct sockaddr *)&ss, &sl);
	getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, pbuf, sizeof pbuf, NI_NUMERICSERV);
	printf("LISTENING %s\n", pbuf);
	fflush(stdout);

	size_t cap = 8192, nc = 0;
	struct sconn *cs = calloc(cap, sizeof *cs);
	struct pollfd *pf = calloc(cap + 1, sizeof *pf);
	int rc = 0;
	if (!cs || !pf) {
		free(cs);
		free(pf);
		return 1;
	}
	double end = now_s() + (double)secs;
	while (now_s() < end) {
		pf[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (size_t i = 0; i < nc; i++)
			pf[i + 1] = (struct pollfd){ .fd = cs[i].fd,
						     .events = cs[i].left >= 0 ? POLLOUT : POLLIN };
		if (poll(pf, nc + 1, 500) < 0) {
			if (errno == EINTR)
				continue;
			perror("proxy_load: poll");
			rc = 1;
			break;
		}
		for (size_t i = nc; i-- > 0;) {
			struct sconn *c = &cs[i];
			short re = pf[i + 1].revents;
			bool done = false;
			if (!re)
				continue;
			if (c->left < 0) {
				ssize_t n = read(c->fd, c->head + c->hlen, sizeof c->head - 1 - c->hlen);
				if (n <= 0) {
					done = n == 0 || (errno != EAGAIN && errno != EINTR);
				} else {
					c->hlen += (size_t)n;
					c->head[c->hlen] = '\0';
					if (strstr(c->head, "\r\n\r\n")) {
						long long want = 0;
						if (sscanf(c->head, "GET /bytes/%lld", &want) != 1 || want < 0)
							want = 0;
						c->left = want;
						c->hdr_len = (size_t)snprintf(c->hdr, sizeof c->hdr,
							"HTTP/1.1 200 OK\r\nContent-Length: %lld\r\nConnection: close\r\n\r\n",
							want);
						c->hdr_off = 0;
					} else if (c->hlen >= sizeof c->head - 1) {
						done = true;
					}
				}
			} else {
				ssize_t w;
				if (c->hdr_off < c->hdr_len) {
					w = send(c->fd, c->hdr + c->hdr_off, c->hdr_len - c->hdr_off, MSG_NOSIGNAL);
					if (w > 0)
						c->hdr_off += (size_t)w;
				} else {
					size_t k = c->left < (long long)sizeof buf ? (size_t)c->left : sizeof buf;
					w = k ? send(c->fd, buf, k, MSG_NOSIGNAL) : 0;
					if (w > 0)
						c->left -= w;
				}
				if (w < 0 && errno != EAGAIN && errno != EINTR)
					done = true;
				if (c->hdr_off == c->hdr_len && c->left == 0)
					done = true;
			}
			if (done) {
				close(c->fd);
				cs[i] = cs[--nc];
			}
		}
		if (pf[0].revents & POLLIN) {
			for (;;) {
				int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (fd < 0)
					break;
				if (nc == cap) {
					close(fd);
					continue;
				}
				cs[nc++] = (struct sconn){ .fd = fd, .left = -1 };
			}
		}
	}
	for (size_t i = 0; i < nc; i++)
		close(cs[i].fd);
	close(lfd);
	free(cs);
	free(pf);
	return rc;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	memset(buf, 'x', sizeof buf);
	if (!strcmp(cmd, "serve") && (argc == 5 || argc == 6))
		return cmd_serve(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : NULL);
	if (!strcmp(cmd, "fetch") && (argc == 5 || argc == 6))
		return cmd_fetch(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : NULL);
	if (!strcmp(cmd, "latency") && (argc == 5 || argc == 6))
		return cmd_latency(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : NULL);
	if (!strcmp(cmd, "hold") && argc == 8)
		return cmd_hold(argv[2], argv[3], argv[4], argv[5], argv[6], argv[7]);
	if (!strcmp(cmd, "tls-serve") && (argc == 7 || argc == 8))
		return tls_serve(argv[2], argv[3], argv[4], argv[5], argv[6], argc == 8 ? argv[7] : NULL);
	if (!strcmp(cmd, "tls-fetch") && argc == 7)
		return tls_fetch(argv[2], argv[3], argv[4], argv[5], argv[6]);
	if (!strcmp(cmd, "tls-latency") && argc == 8)
		return tls_latency(argv[2], argv[3], argv[4], argv[5], argv[6], argv[7]);
	fprintf(stderr, "usage: proxy_load serve ADDR PORT SECONDS [CC]\n"
			"       proxy_load fetch HOST PORT BYTES [PROXY]\n"
			"       proxy_load latency HOST PORT N [PROXY]\n"
			"       proxy_load hold HOST PORT N PROXY SECONDS RELEASE\n"
			"       proxy_load tls-serve ADDR PORT SECONDS CERT KEY [CC]\n"
			"       proxy_load tls-fetch HOST PORT BYTES PROXY|- CAFILE\n"
			"       proxy_load tls-latency HOST PORT CONNS REQS PROXY|- CAFILE\n");
	return 2;
}
