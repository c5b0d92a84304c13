/* intercept_io.h - one side of an intercepted connection (intercept.h): the
 * client's or the upstream's socket, with TLS on it or not, read and
 * written without blocking; each call that would block says what it waits
 * for (rd_ev / wr_ev: POLLIN or POLLOUT, as TLS may need the other), so
 * that the bridge's loop polls for exactly that. A failure names the side
 * in the job's error ("upstream: Connection reset by peer"), the first
 * reason standing. Used by the bridge's thread alone. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <openssl/ssl.h>

#include "../common/clock.h"

enum io { IO_OK, IO_AGAIN, IO_EOF, IO_ERR };

struct side {
	const char *name;     /* "client", "upstream" */
	int fd;
	SSL *ssl;
	short rd_ev, wr_ev;   /* what the last read / write that would block waits for */
	bool eof;             /* no more to read */
	bool clean;           /* ... and it ended cleanly (close_notify, or a FIN without TLS) */
	bool shut;            /* our sending side is closed */
	bool dead;            /* failed or cut: no more I/O of any kind */
	bool rd_ready;        /* a read may find bytes: poll said so, or none failed yet */
	char *error;          /* where a failure is said (the job's error), unless set already */
	size_t error_len;
};

/* Read up to cap bytes into buf (*n). IO_AGAIN at once, without a syscall,
 * when the last read would have blocked and neither poll (rd_ready) nor TLS
 * (side_holds) said there is more since. IO_EOF: closed, cleanly (clean) or
 * not; IO_ERR: failed (the error said). */
enum io side_read(struct side *s, void *buf, size_t cap, size_t *n);
/* Write up to len bytes of buf (*n written); as side_read. */
enum io side_write(struct side *s, const void *buf, size_t len, size_t *n);
/* Bytes TLS already holds for s, or a filter in front of its socket does. */
bool side_holds(struct side *s);
/* Bytes gathered for s's socket, not written yet (tls_bio.h). */
size_t side_gathered(const struct side *s);
/* Close our sending side: close_notify first when TLS is healthy (clean). */
void side_shut(struct side *s, bool clean);
/* A TLS handshake (accept: the server side), within 15 s. 0 done; -1 with
 * the reason in why ("stopped" when stop_fd said so); 1 when a server
 * handshake paused at the ClientHello (tls_alpn's hold). */
int side_handshake(struct side *s, bool accept, int stop_fd, char *why, size_t len);
/* Wait for ev on fd: 1, 0 on the timeout, -1 when stop_fd (> 0) says stop. */
int wait_fd(int fd, short ev, int timeout_ms, int stop_fd);
