/* paths.h - the inside's ABI: the agent's identity and home in the sandbox,
 * its hostname, and the paths warden places on the sandbox's root (its own
 * binary, the hook client and socket, the trust store). Both sides use
 * these names (init builds them, the supervisor, the hook client and the
 * checks refer to them), so they live apart from the spec (sandbox.h) for
 * whoever needs only a name. */
#pragma once

#define AGENT_UID 1000
#define AGENT_GID 1000
#define AGENT_HOME "/home/agent"
#define AGENT_USER "agent"
#define SANDBOX_HOSTNAME "warden"
#define SANDBOX_SELF_EXE "/.warden/warden"
/* The small hook client (src/hookbin), beside it. */
#define SANDBOX_HOOK_EXE "/.warden/warden-hook"
/* The hook socket (src/control/hook.h): bound by init on the root, which
 * then becomes read-only, so nothing inside can replace it. */
#define SANDBOX_HOOK_SOCK "/.warden/hook.sock"
/* The SSH agent socket (src/supervisor/sshagent_srv.h, `ssh-agent`), made
 * the same way beside it when the policy asks; SSH_AUTH_SOCK inside. */
#define SANDBOX_SSH_AGENT_SOCK "/.warden/ssh-agent.sock"
/* The trust store inside when warden terminates TLS for a bound secret: the
 * host's bundle, the CAs the user configured and the session's CA. Also
 * bound over the system bundle's usual path when the host has one. */
#define SANDBOX_CA_BUNDLE "/.warden/ca-bundle.pem"
#define SYSTEM_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
