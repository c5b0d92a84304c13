/* execs.h - every execve/execveat in the sandbox, recorded with the hash of
 * what it runs and decided by the exec rules (`exec deny|allow|default|
 * strict` in the profile): the supervisor takes each exec notification
 * over from notify.c, resolves the file as the process would, hashes it
 * off the event loop (hashq.h) unless its hash is cached, writes the `exec`
 * event, and answers: EACCES for a refusal, else the exec continues under
 * watch (exectrace.h) so that a file swapped in after the check is caught
 * before it runs. */
#pragma once
#include <jansson.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "../../audit/audit.h"
#include "../../common/err.h"
#include "../../common/hash.h"
#include "../../common/loop.h"
#include "../../policy/policy.h"

struct execs;

struct approvals;
struct bpfexec;
/* Who says which tool call an exec belongs to (src/control/hook.h): told
 * of each exec as it is recorded (its process and parent as the host
 * numbers them, deny: why refused, or NULL), it returns the call's id for
 * the event's "tool", or NULL. */
typedef const char *(*execs_linker)(void *ctx, pid_t pid, pid_t ppid, const char *path,
				    const char *resolved, char *const *argv, size_t argc,
				    const char *deny);

/* What exec control works with, given when it is made. */
struct execs_cfg {
	struct audit *log;
	const struct policy *policy; /* its exec rules */
	/* the workspace and the writable host paths bound inside (to tell
	 * what the agent can change) */
	const char *const *writable;
	size_t nwritable;
	pid_t init;                  /* sandbox init's host pid */
	/* who answers `exec ask` rules (approval.h); NULL: such an exec is
	 * refused */
	struct approvals *approvals;
	/* the tool calls' linker and its context; NULL: no exec names a call */
	execs_linker link;
	void *link_ctx;
	/* the exec rules in the kernel too (bpfexec.h; NULL: not): each file
	 * hashed for an exec is told to it, so that the kernel need not ask */
	struct bpfexec *kernel;
	/* the sandbox's user namespace (its file; -1: none): execute-only
	 * files are hashed from a helper in it (nsread.h) */
	int userns;
	/* the hashes of files the agent cannot change kept between sessions
	 * in warden's cache directory (hashdisk_load, read while init builds
	 * the sandbox; NULL: none): taken by execs_new, written back and freed
	 * by execs_free */
	struct hashdisk *kept;
	/* the sandbox's root (O_PATH; -1: none): each exec's file is opened
	 * in it. Taken by execs_new, closed by execs_free. */
	int root;
	/* The arguments and directory of the command's first exec as init
	 * plans it (its path comes with READY: execs_ready). */
	char *const *planned_argv;
	const char *planned_cwd;
};

/* Exec control for the session's sandbox, made while init applies its
 * last layers (its listener is not made yet); it answers nothing before
 * execs_ready. NULL with e set when a rule cannot be enforced here (a
 * directory the agent can write allowed as a whole). */
struct execs *execs_new(const struct execs_cfg *cfg, struct werr *e);
/* Init ready: the seccomp listener, where the answers go, and the
 * command's first exec as init planned it (initmsg.h, exec_path; NULL:
 * none), a vfork whose memory, init's, the supervisor cannot read. The
 * first notification, from a child of init of one thread, is taken to
 * name planned with the cfg's argv in its cwd: nothing of the sandbox's
 * but warden's own code has run yet (init, and its child blocked in that
 * exec; init never execs), and a vfork's memory has no other writer while
 * the parent waits. One that needs watching to its stop is answered
 * INIT_EXEC_REFORK, unrecorded: init forks the command again, readable. */
void execs_ready(struct execs *x, int listener, const char *planned);
void execs_free(struct execs *x);

/* An exec notification. execs answers it, now or once its hashes are in;
 * it reads the process's memory itself (process_vm_readv), and refuses an
 * exec whose memory it may not read. */
void execs_begin(struct execs *x, const struct seccomp_notif *req);

/* Its sources watched by l: finished hashes, the deadline timer; -1 with
 * e naming the one l cannot take. */
int execs_watch(struct loop *l, struct execs *x, struct werr *e);
/* SIGCHLD: a watched exec may have ended. */
void execs_on_sigchld(struct execs *x);

/* What the session's execs cost and found, for session.end: the hash
 * cache's hits and misses, execs verified and swapped. */
json_t *execs_stats(const struct execs *x);

/* The SHA-256 the exec record took of the file st describes (a file the
 * agent cannot change, hashed for an exec), into hex; false when it has
 * none (connowner.h asks it for a connection's program). */
bool execs_cached_hash(struct execs *x, const struct stat *st, char hex[SHA256_HEX_LEN]);
