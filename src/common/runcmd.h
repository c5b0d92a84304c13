/* runcmd.h - a command warden runs on the host and waits for (a secret's
 * command, --task's git and cp): spawned fresh (spawn_fresh, util.h) with
 * stdin /dev/null (or a file), what it prints captured up to a cap, sent to
 * an fd or passed to a function as it comes,
 * the last line of its stderr kept for an error, and a deadline after
 * which its process group is killed, so that a command that never ends (a
 * FIFO where git expects a file, a helper that waits on a prompt) ends
 * with an error instead of a hang. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

enum runcmd_stderr {
	RUNCMD_ERR_KEEP,    /* to a buffer: its last line in runcmd_out.err_line */
	RUNCMD_ERR_INHERIT, /* to warden's stderr, where the user sees it */
};

struct runcmd {
	char *const *argv;       /* argv[0] looked up in PATH */
	char *const *env;        /* NULL: warden's own environment */
	const char *dir;         /* where it runs; NULL: here */
	const char *in_path;     /* its stdin, this file; NULL: /dev/null */
	int out_fd;              /* its stdout; -1: captured into runcmd_out.out */
	void (*out_fn)(void *ctx, const char *buf, size_t n); /* with out_fd -1: its
				    stdout given to this as it comes instead, none
				    kept (out_max then unused) */
	void *out_ctx;
	enum runcmd_stderr err;
	size_t out_max;          /* captured: more than this many bytes ends it (0: no cap) */
	unsigned timeout_ms;     /* 0: no deadline, and it stays in warden's process
				    group (a ^C at the terminal reaches it); else a
				    group of its own, killed whole at the deadline */
};

enum runcmd_end {
	RUNCMD_EXITED,    /* code: its exit status */
	RUNCMD_SIGNALED,  /* code: the signal */
	RUNCMD_TIMED_OUT, /* killed at the deadline */
	RUNCMD_TOO_MUCH,  /* printed more than out_max: killed */
};

struct runcmd_out {
	enum runcmd_end end;
	int code;
	char *out;               /* captured stdout, NUL-terminated ("" when none) */
	size_t len;
	char *err_line;          /* RUNCMD_ERR_KEEP: stderr's last non-empty line, or
				    "(nothing on its stderr)" */
};

/* Run rc to its end, whichever it is (r->end). 0, or -1 with errno when it
 * could not be run or watched (r then holds nothing to free). */
int runcmd(const struct runcmd *rc, struct runcmd_out *r);
void runcmd_out_free(struct runcmd_out *r);

/* "10 s" or "250 ms", for messages. */
void runcmd_timeout_text(char *buf, size_t len, unsigned ms);
