/* execs_int.h - what the exec pipeline's files share (execs.c, decide.c):
 * a pending exec, its subjects and the pipeline's state. Private to
 * src/supervisor/exec/; the pipeline's interface is execs.h. */
#pragma once
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "../../common/util.h"
#include "../../policy/exec_verdict.h"
#include "execs.h"
#include "hashq.h"

#define HASH_CACHE 1024
#define WRITABLE_DEVS 32

enum { MAIN, INTERP, PROG, NSUBJ };
enum hstate { H_NONE, H_WAIT, H_DONE, H_NOHASH };

struct cache_entry {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	char hex[SHA256_HEX_LEN];
	char interp[HASH_HEAD_LEN]; /* the #! line, "" for none */
};

struct subject {
	int fd;                     /* O_PATH; -1: none */
	char *resolved;             /* inside the sandbox */
	struct stat st;
	bool immutable, noexec;
	enum hstate h;
	char hex[SHA256_HEX_LEN];
	char why[160];              /* H_NOHASH: why */
	struct hash_job *job;
};

struct pexec {
	struct execs *x;
	struct pexec *next;
	__u64 id;                   /* the notification */
	pid_t tid, tgid, ppid;      /* ppid: the parent, as the host numbers it */
	int threads;                /* of its process */
	uint64_t path_addr;         /* where the path is in its memory */
	long inner, pinner;
	pid_t pppid;                /* the parent's parent, and */
	int pthreads;               /* the parent's threads (its status read once) */
	bool at;
	char *path, *cwd;
	struct strv argv;
	bool truncated;
	char interp[HASH_HEAD_LEN]; /* MAIN's #! line; "" none */
	bool interp_tried;
	bool nested;                /* the interpreter is a script too */
	bool loader;
	const char *program;        /* in argv: what the loader or interpreter runs */
	struct subject s[NSUBJ];
	bool answered, traced;
	struct hash_job *vjob;      /* the hash of /proc/PID/exe at the exec stop */
	pid_t now;                  /* its id at the exec stop */
	int exe;                    /* its /proc/PID/exe then (O_PATH) */
	const struct question *question; /* an `exec ask` rule's, open */
	bool asked;                 /* a human said yes */
};

struct execs {
	int listener;
	struct audit *log;
	const struct policy_exec *rules;
	struct exec_verdict_rules lists; /* the deny and allow hashes, sorted */
	dev_t wdev[WRITABLE_DEVS];
	size_t nwdev;
	int root;                   /* the sandbox's root, O_PATH */
	pid_t init;                 /* sandbox init, as the host numbers it */
	struct hashq *q;
	int timer;
	bool ticking;
	struct tracer *t;
	bool tracing;               /* PTRACE_SEIZE works here */
	struct execpath *ep;
	unsigned long unwatched;    /* execs that could not have run anything else */
	struct approvals *ap;       /* who answers `exec ask` (NULL: nobody: refused) */
	struct bpfexec *kernel;     /* the rules in the kernel too (NULL: not) */
	execs_linker link;          /* the tool call an exec belongs to (NULL: none) */
	void *link_ctx;
	struct pexec *list;         /* pending: unanswered, or traced */
	struct cache_entry cache[HASH_CACHE];
	size_t ncache, next;
	unsigned long hits, misses, verified, swapped, killed;
};

/* ---- the decision (decide.c) ---- */

/* Why the rules refuse p (into why), and whether a rule (rather than the
 * mounts) did; "" when allowed. */
bool execs_decide(const struct execs *x, const struct pexec *p, char *why, size_t len);

/* Is subject s allowed under `exec default deny` (by its hash, or as an
 * immutable file in an `exec allow DIR`)? */
bool execs_allowed(const struct execs *x, const struct subject *s);

/* Will the kernel's exec open what was checked, whatever anyone does
 * meanwhile? (execpath.h) */
bool execs_cannot_change(struct execs *x, const struct pexec *p);

/* The `exec ask` rule that asks a human about p, in words into rule, or
 * false. */
bool execs_needs_ask(const struct execs *x, const struct pexec *p, char *rule, size_t len);
