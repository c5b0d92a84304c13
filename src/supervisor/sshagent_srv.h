/* sshagent_srv.h - the SSH agent inside (`warden run --ssh-agent`, the
 * profile's `ssh-agent`): a unix socket at SANDBOX_SSH_AGENT_SOCK, bound by
 * sandbox init in the sandbox's network namespace (as the hook socket is,
 * so the sandbox may connect to it: unixconn.h), SSH_AUTH_SOCK pointing at
 * it, served here by the supervisor, which speaks the agent protocol
 * (src/net/sshagent.h) to the user's own agent on the host (its
 * SSH_AUTH_SOCK, one connection there per client inside).
 *
 * What passes: the list of keys, with only the keys the policy names; a
 * signature with one of those keys; OpenSSH's session-bind extension
 * (which tells the host agent, and the log, the server's key). Everything
 * else (adding or removing keys, locking, other extensions, a signature
 * with another key) is answered SSH_AGENT_FAILURE here and never reaches
 * the host agent. No private key crosses: the host agent signs. Each
 * signature, and each refusal, is an `ssh` event; with `ssh-agent ask` a
 * human allows each signature first (approval.h, kind ssh, the key's
 * fingerprint the subject).
 *
 * Bounded and never blocking: 16 clients at once, a message of
 * SSHAG_MSG_MAX either way, and a host agent that does not answer within
 * 5 seconds is a failure for the client (its connection to the host agent
 * closed), never a stuck supervisor. */
#pragma once
#include "../audit/audit.h"
#include "../common/loop.h"
#include "../control/approval.h"
#include "../policy/policy.h"

struct sshagent_srv;

struct sshagent_srv_cfg {
	int listener;               /* taken */
	const char *upstream;       /* the host agent's socket (copied) */
	const struct policy_ssh_agent *pol;
	struct audit *log;
	struct approvals *ap;       /* who answers `ssh-agent ask`; NULL: a signature
				       that would ask is refused */
	unsigned timeout_ms;        /* the host agent's answer; 0: 5000 */
};

/* NULL with e filled (the timer, the epoll instance). */
struct sshagent_srv *sshagent_srv_new(const struct sshagent_srv_cfg *c, struct werr *e);
/* Close the clients (their questions withdrawn), the host connections and
 * the listener. */
void sshagent_srv_free(struct sshagent_srv *s);
/* Its fds (one epoll instance) watched by l; -1 with e naming it. */
int sshagent_srv_watch(struct loop *l, struct sshagent_srv *s, struct werr *e);

/* Before the session: is path (the user's SSH_AUTH_SOCK; NULL: unset) a
 * socket of the user's own, with an agent answering on it within
 * timeout_ms, holding at least one of the keys named (each key named it
 * does not hold is said in a note)? 0, or -1 with e saying which, in words
 * naming --ssh-agent and the profile line. offered (when not NULL): the
 * fingerprints ("SHA256:...") of the keys it holds that the session
 * offers inside, added. */
int sshagent_host_check(const char *path, const struct strv *keys, unsigned timeout_ms,
			struct strv *offered, struct werr *e);
