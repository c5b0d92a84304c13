/* sshagent_host.c - the user's SSH agent checked before a session that
 * asks for it (sshagent_srv.h: sshagent_host_check): SSH_AUTH_SOCK set, a
 * socket the user owns, an agent answering its list within the bound, and
 * the keys the policy names among those it holds (and those it offers,
 * for the signing key of the sandbox's git: gitsign.h). */
#include "sshagent_srv.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../common/clock.h"
#include "../common/util.h"
#include "../net/sshagent.h"

#define WHO "--ssh-agent (or the profile's ssh-agent line)"

/* Wait for fd to be ready (events) until end: 1, 0 at the deadline, -1. */
static int wait_fd(int fd, short events, const struct timespec *end)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int r = poll(&p, 1, (int)ms_left(end));
		if (r < 0 && errno == EINTR)
			continue;
		return r;
	}
}

/* The agent's answer to REQUEST_IDENTITIES into *buf (malloc'd, the
 * frame's length first), or -1 with e filled. */
static int ask_list(int fd, const char *path, unsigned timeout_ms, uint8_t **buf, size_t *len,
		    struct werr *e)
{
	static const uint8_t req[] = { 0, 0, 0, 1, SSHAG_REQUEST_IDENTITIES };
	struct timespec end = mono_after_ms(timeout_ms);
	if (send(fd, req, sizeof req, MSG_NOSIGNAL) != (ssize_t)sizeof req)
		return werr_errno(e, WHO ": the SSH agent at %s (SSH_AUTH_SOCK)", path);
	size_t cap = 4096, n = 0;
	uint8_t *b = xmalloc(cap);
	for (;;) {
		const uint8_t *msg;
		size_t mlen, used;
		int f = sshagent_frame(b, n, &msg, &mlen, &used);
		if (f > 0) {
			*buf = b;
			*len = n;
			return 0;
		}
		int w = f < 0 ? -1 : wait_fd(fd, POLLIN, &end);
		ssize_t r = w > 0 ? recv(fd, b + n, cap - n, MSG_DONTWAIT) : -1;
		if (r <= 0 && !(r < 0 && errno == EINTR)) {
			free(b);
			if (w == 0)
				return werr_set(e, ETIMEDOUT, WHO ": the SSH agent at %s (SSH_AUTH_SOCK) "
						"did not answer within %u ms", path, timeout_ms);
			return werr_set(e, EPROTO, WHO ": the SSH agent at %s (SSH_AUTH_SOCK) did not "
					"answer its list of keys", path);
		}
		if (r > 0)
			n += (size_t)r;
		if (n == cap)
			b = xrealloc(b, cap *= 2);
	}
}

static int open_agent(const char *path, struct werr *e)
{
	if (!path || !*path)
		return werr_set(e, 0, WHO ": SSH_AUTH_SOCK is not set: no SSH agent of yours runs "
				"on the host (start one: eval \"$(ssh-agent)\"; ssh-add)");
	struct stat st;
	if (stat(path, &st) < 0)
		return werr_errno(e, WHO ": SSH_AUTH_SOCK names %s, which is not there (is your SSH "
				  "agent running?)", path);
	if (!S_ISSOCK(st.st_mode))
		return werr_set(e, 0, WHO ": SSH_AUTH_SOCK names %s, which is not a socket", path);
	if (st.st_uid != getuid())
		return werr_set(e, 0, WHO ": SSH_AUTH_SOCK names %s, a socket of uid %lu, not yours "
				"(uid %lu): warden talks only to your own agent", path,
				(unsigned long)st.st_uid, (unsigned long)getuid());
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof a.sun_path)
		return werr_set(e, ENAMETOOLONG, WHO ": SSH_AUTH_SOCK: %s", path);
	memcpy(a.sun_path, path, strlen(path) + 1);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
		return werr_errno(e, WHO ": the SSH agent at %s (SSH_AUTH_SOCK) cannot be reached "
				  "(is it running?)", path);
	return steal_fd(&fd);
}

int sshagent_host_check(const char *path, const struct strv *keys, unsigned timeout_ms,
			struct strv *offered, struct werr *e)
{
	_cleanup_close_ int fd = open_agent(path, e);
	if (fd < 0)
		return -1;
	_cleanup_free_ uint8_t *buf = NULL;
	size_t len = 0;
	if (ask_list(fd, path, timeout_ms ? timeout_ms : 5000, &buf, &len, e) < 0)
		return -1;
	_cleanup_free_ struct sshagent_key *k = xcalloc(SSHAG_KEYS_MAX, sizeof *k);
	const uint8_t *msg = NULL;
	size_t mlen = 0, used;
	sshagent_frame(buf, len, &msg, &mlen, &used); /* complete: ask_list saw it */
	int n = sshagent_parse_ids(msg, mlen, k, SSHAG_KEYS_MAX);
	if (n < 0)
		return werr_set(e, EPROTO, WHO ": the SSH agent at %s (SSH_AUTH_SOCK) answered a "
				"list warden cannot read", path);
	for (int j = 0; offered && j < n; j++)
		if (sshagent_selected(keys, &k[j]))
			strv_push(offered, k[j].fp);
	bool any = false;
	for (size_t i = 0; keys && i < keys->n; i++) {
		struct strv one = { .v = &keys->v[i], .n = 1 };
		bool held = false;
		for (int j = 0; j < n && !held; j++)
			held = sshagent_selected(&one, &k[j]);
		any = any || held;
		if (!held)
			wnote("ssh-agent: your agent holds no key %s (ssh-add -l lists them)", keys->v[i]);
	}
	if (keys && keys->n && !any)
		return werr_set(e, 0, WHO ": your SSH agent holds none of the keys named (ssh-add -l "
				"lists them, by fingerprint and comment)");
	return 0;
}
