/* connect_cmd.c - `warden __connect HOST PORT`, run inside the sandbox as
 * ssh's ProxyCommand (GIT_SSH_COMMAND): open a CONNECT tunnel through
 * warden's proxy on 127.0.0.1:3128 and relay stdin/stdout through it. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/hosttext.h"
#include "../common/util.h"
#include "../net/proxy.h"
#include "cli.h"

/* A CONNECT tunnel to host:port through the proxy: its fd, or -1 with
 * the exit status in *rc (said). */
static int tunnel_open(const char *host, const char *port, int *rc)
{
	*rc = EXIT_WARDEN;
	_cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PROXY_HTTP_PORT),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		fprintf(stderr, "warden: __connect: the proxy on 127.0.0.1:%d: %s\n", PROXY_HTTP_PORT,
			strerror(errno));
		return -1;
	}
	char ht[HOST_TEXT_MAX], req[600];
	const char *h = host_text(host, ht);
	int n = snprintf(req, sizeof req, "CONNECT %s:%s HTTP/1.1\r\nHost: %s:%s\r\n\r\n", h, port,
			 h, port);
	if (write_all(fd, req, (size_t)n) < 0)
		return -1;
	/* The response head, byte by byte so nothing of the tunnel is read. */
	char head[4096];
	size_t len = 0;
	while (len < sizeof head - 1 && (len < 4 || memcmp(head + len - 4, "\r\n\r\n", 4) != 0)) {
		ssize_t r = read(fd, head + len, 1);
		if (r <= 0)
			break;
		len++;
	}
	head[len] = '\0';
	if (strncmp(head, "HTTP/1.1 200", 12) != 0 && strncmp(head, "HTTP/1.0 200", 12) != 0) {
		char *eol = strstr(head, "\r\n");
		if (eol)
			*eol = '\0';
		fprintf(stderr, "warden: __connect %s:%s: %s\n", host, port,
			len ? head : "the proxy closed the connection");
		*rc = 1;
		return -1;
	}
	return steal_fd(&fd);
}

/* stdin into the tunnel and the tunnel to stdout until the tunnel ends:
 * 0, or 1 when a side failed. */
static int relay(int fd)
{
	struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN }, { .fd = fd, .events = POLLIN } };
	bool in_open = true;
	char buf[65536];
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (in_open && p[0].revents) {
			ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
			if (r <= 0) {
				in_open = false;
				p[0].fd = -1;
				shutdown(fd, SHUT_WR);
			} else if (write_all(fd, buf, (size_t)r) < 0) {
				return 1;
			}
		}
		if (p[1].revents) {
			ssize_t r = read(fd, buf, sizeof buf);
			if (r <= 0)
				return 0;
			if (write_all(STDOUT_FILENO, buf, (size_t)r) < 0)
				return 1;
		}
	}
}

int cmd_connect(int argc, char **argv)
{
	if (argc != 3 || strlen(argv[1]) > 255 || strspn(argv[2], "0123456789") != strlen(argv[2]) ||
	    !argv[2][0] || strpbrk(argv[1], " \r\n")) {
		fputs("usage: warden __connect HOST PORT\n", stderr);
		return EXIT_WARDEN;
	}
	int rc;
	int fd = tunnel_open(argv[1], argv[2], &rc);
	return fd < 0 ? rc : relay(fd);
}
