/* probes.h - the probe table behind `warden check` and the probe runner
 * (`warden __probe`), which runs every probe in order, inside the sandbox or
 * outside it (--compare), and prints one JSON line per probe. The table is
 * shared by both sides: the runner executes it, the check takes expectations
 * and the host paths to verify from it (never from the runner's output). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum probe_group {
	G_VISIBILITY,
	G_WRITE,
	G_PROCESS,
	G_INHERITED,
	G_IPC,
	G_NETWORK,
	G_EXEC,
	G__COUNT,
};

enum probe_expect {
	EXPECT_DENIED,  /* the sandbox must refuse it */
	EXPECT_ALLOWED, /* sanity: the sandbox must still allow it */
	EXPECT_RECORD,  /* only recorded for now; always held */
};

/* What the check verifies on the host after a write probe, before the
 * runner cleans up. Paths are templates relative to a base directory;
 * "{t}" stands for the run's token. */
enum verify_kind {
	V_NONE,
	V_NOFILE, /* no file (anything but a directory) may appear at the path */
	V_BAIT,   /* the bait file at the path must be intact (same content, regular) */
	V_FILE,   /* sanity: the probe's file must appear, holding the token */
};

enum verify_base {
	VB_WS,   /* the temporary workspace */
	VB_OUT,  /* its parent, the bait directory outside the workspace */
	VB_HOME, /* the invoking user's home */
	VB_AUDIT, /* warden's audit log directory on the host */
	VB_CACHE, /* warden's cache directory on the host */
};

/* The base directories verify paths are relative to (NULL: unknown). */
struct probe_bases {
	const char *ws, *out, *home, *audit, *cache;
};

struct probe_verify {
	enum verify_kind kind;
	enum verify_base base;
	const char *rel;
};

#define PROBE_MAX_VERIFY 2

/* What the runner knows: the host context passed by the check. */
struct probe_ctx {
	const char *ws;          /* the workspace (also the runner's cwd) */
	const char *out;         /* the workspace's parent: bait outside it */
	const char *home;        /* the invoking user's real home (may be NULL) */
	const char *other_home;  /* another user's home (may be NULL) */
	const char *audit_dir;   /* warden's audit log directory on the host (may be NULL) */
	const char *cache_dir;   /* warden's cache directory (the cached /etc), may be NULL */
	/* the same three as the mount table spells them (fspath_format's
	 * text, fspath.h), when that differs from the path; NULL otherwise */
	const char *home_fs, *audit_fs, *cache_fs;
	const char *token;       /* unique token for the names probes create */
	const char *abstract;    /* host abstract unix socket name (without '@') */
	const char *ssh_sock;    /* host unix socket posing as an ssh agent */
	const char *ws_sock;     /* host unix socket in the workspace */
	const char *ws_dgram;    /* host unix datagram socket in the workspace */
	const char *posix_shm;   /* name of a host POSIX shm object (/dev/shm) */
	const char *tty;         /* the user's terminal, may be NULL */
	const char *exec_bait;   /* a program the session's exec deny refuses (NULL: none) */
	const char *exec_script; /* a #!/bin/sh script it refuses (NULL: none) */
	int leak_fd;             /* an fd the check leaked on purpose, -1: none */
	int tcp_port;            /* host TCP listener on 127.0.0.1 */
	long shm_key;            /* host SysV shm segment */
	int shm_id;
	pid_t host_pid;          /* the check process */
	unsigned long long host_start; /* its start time (clock ticks since boot) */
	unsigned host_uid;       /* the invoking user */
	int start_fds[16];       /* fds above 2 open when the runner started */
	int nstart_fds;
};

struct probe_result {
	bool allowed;
	char detail[320];
	/* write probes: device of the file system the write landed on ("" if none) */
	char dev[32];
};

struct probe;
typedef void probe_fn(const struct probe_ctx *c, const struct probe *self, struct probe_result *r);
typedef void probe_cleanup_fn(const struct probe_ctx *c, const struct probe *self);

struct probe {
	const char *name;
	enum probe_group group;
	enum probe_expect expect;
	const char *what;                 /* one line: the attempt */
	probe_fn *run;
	probe_cleanup_fn *cleanup;        /* after host verification; may be NULL */
	struct probe_verify verify[PROBE_MAX_VERIFY];
};

extern const struct probe probe_table[];
extern const size_t probe_count;

const char *probe_group_name(enum probe_group g);
const char *probe_expect_name(enum probe_expect x);
bool probe_has_verify(const struct probe *p);

/* The file name of a verify target: rel with "{t}" replaced by token.
 * Returns a malloc'ed absolute path, or NULL when the base is unknown.
 * (In probe_util.c, beside expand_token, which the probes use too.) */
char *probe_verify_path(const struct probe_verify *v, const struct probe_bases *b,
			const char *token);

/* The content the check writes into a bait file (rel as in the table). */
const char *probe_bait_content(const char *rel, char *buf, size_t len);

/* `warden __probe [OPTIONS]`: the runner; --only NAME runs the probes whose
 * name matches NAME (a glob). JSON Lines on stdout:
 *   {"runner":"start","probes":N,...}
 *   {"probe":NAME,"observed":"allowed"|"denied","detail":TEXT[,"dev":"M:m"]}
 *   {"runner":"end"}
 * With --sync, after a probe that has host verification it reads one byte
 * from stdin (the check's go-ahead) before cleaning up. */
int probe_main(int argc, char **argv);
