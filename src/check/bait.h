/* bait.h - the dummy bait `warden check` plants on the host for its probes
 * (a temporary workspace and files beside it, a leaked fd, listeners,
 * shared memory, environment variables, a program and a script to deny by
 * their hashes), the runner's command line that tells the probes where it
 * is, and its removal. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "../common/err.h"
#include "../common/hash.h"
#include "../common/util.h"

struct bait {
	char *base;          /* mkdtemp directory: the workspace's parent */
	char *ws;
	char *home;          /* the invoking user's home, may be NULL */
	char *other_home;    /* another user's home, may be NULL */
	char *audit_dir;     /* warden's audit log directory, may be NULL */
	char *cache_dir;     /* warden's cache directory, may be NULL */
	/* the three above as the mount table spells them (fspath.h), NULL
	 * when that is their path or cannot be told */
	char *home_fs, *audit_fs, *cache_fs;
	char *ssh_sock;
	char *ws_sock;       /* a host unix socket in the workspace */
	char *ws_dgram;      /* a host unix datagram socket in the workspace */
	char *tty;
	/* exec: a program and a script in the workspace, each with a marker of
	 * the run, whose SHA-256s the session's exec deny refuses */
	char *exec_bait, *exec_script;
	char exec_sha256[SHA256_HEX_LEN], script_sha256[SHA256_HEX_LEN];
	char token[17];
	char abstract[64];
	char posix_shm[64];
	bool posix_made;
	int leak_fd, tcp_fd, abs_fd, ssh_fd, ws_sock_fd, ws_dgram_fd, shm_id;
	int tcp_port;
	long shm_key;
	pid_t pid;
	unsigned long long start;
};

/* An empty bait, safe to remove. */
void bait_init(struct bait *b);

/* Plant every piece of bait; on failure what was made stays in b for
 * bait_remove. 0 or -1 with e set. */
int bait_create(struct bait *b, struct werr *e);

/* Remove every piece of bait; safe on a partly built one and twice. */
void bait_remove(struct bait *b);

/* Host-side bait for the session only: set in the child before it starts. */
void bait_env(const struct bait *b);

/* The SHA-256s the session must refuse to exec (the exec bait's), for
 * session_opts.exec_deny. */
void bait_exec_deny(const struct bait *b, struct strv *v);

/* The runner's command line (`exe __probe --sync ...`) naming the bait. */
void bait_runner_argv(const struct bait *b, const char *exe, struct strv *v);

/* Create a new file (exclusive, no symlink followed) holding text; 0 or -1. */
int write_file_new(const char *path, const char *text);
