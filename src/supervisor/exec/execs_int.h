/* execs_int.h - what the exec pipeline's files share (execs.c, decide.c):
 * a pending exec and its subjects (and their hashes as an event shows
 * them), the pipeline's state (struct execs: made and freed by
 * execs_setup.c, run by execs.c), and the rules' decision on one. Private
 * to src/supervisor/exec/; the pipeline's interface is execs.h. */
#pragma once
#include <errno.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "../../common/util.h"
#include "../../policy/exec_verdict.h"
#include "execs.h"
#include "hashcache.h"
#include "hashq.h"
#include "loaderid.h"

#define WRITABLE_DEVS 32
/* Scripts named as an interpreter in turn: the kernel follows five
 * interpreters (exec_binprm's depth), the last of them no script. */
#define INTERP_CHAIN_MAX 4

enum { MAIN, INTERP, PROG, NSUBJ };
enum hstate { H_NONE, H_WAIT, H_DONE, H_NOHASH };

struct subject {
	int fd;                     /* O_PATH; -1: none */
	char *resolved;             /* inside the sandbox */
	struct stat st;
	bool immutable, noexec;
	enum hstate h;
	char hex[SHA256_HEX_LEN];
	char why[160];              /* H_NOHASH: why */
	/* H_DONE, an ELF file: its code hash (elfhash.h), code_err 0; else
	 * code_err ENOEXEC (no ELF) or why not, in code_why */
	int code_err;
	char code[SHA256_HEX_LEN];
	const char *code_why;
	struct hash_job *job;
};

/* A subject's hashes for its event: NULL where it has none. */
static inline const char *hex_or_null(const struct subject *s)
{
	return s->h == H_DONE ? s->hex : NULL;
}

static inline const char *code_or_null(const struct subject *s)
{
	return s->fd >= 0 && s->h == H_DONE && s->code_err == 0 ? s->code : NULL;
}

/* Why an ELF file has no code hash; NULL: it has one, or is no ELF. */
static inline const char *code_missing(const struct subject *s)
{
	return s->fd >= 0 && s->h == H_DONE && s->code_err && s->code_err != ENOEXEC
		? (s->code_why ? s->code_why : "unreadable") : NULL;
}

struct pexec {
	struct execs *x;
	struct pexec *next;
	__u64 id;                   /* the notification */
	pid_t tid, tgid, ppid;      /* ppid: the parent, as the host numbers it */
	int threads;                /* of its process */
	int pidfd;                  /* opened for its facts, closed after its answer; -1: none */
	uint64_t path_addr;         /* where the path is in its memory */
	long inner, pinner;         /* its pid and its parent's inside */
	bool at;
	char *path, *cwd;
	struct strv argv;
	bool truncated;
	char interp[HASH_HEAD_LEN]; /* MAIN's #! line; "" none */
	bool interp_tried;
	char ipath[HASH_HEAD_LEN];  /* INTERP as the #! line before names it */
	char iline[HASH_HEAD_LEN];  /* INTERP's own #! line: a script too, not yet followed */
	struct subject chain[INTERP_CHAIN_MAX]; /* scripts named as interpreters, in turn */
	int nchain;
	bool loader;
	bool loader_tried;          /* MAIN or INTERP looked at as the loader by content */
	char *elf_interp;           /* the interpreter MAIN names (PT_INTERP), when it is
				       judged (INTERP): an ELF the agent could write */
	struct strv largv;          /* the command line of a script's interpreter (the chain's
				       last): the loader's, when it is one */
	const char *program;        /* in argv (largv): what the loader or interpreter runs */
	struct subject s[NSUBJ];
	bool answered, traced;
	struct hash_job *vjob;      /* the hash of /proc/PID/exe at the exec stop */
	pid_t now;                  /* its id at the exec stop */
	int exe;                    /* its /proc/PID/exe then (O_PATH) */
	const struct question *question; /* an `exec ask` rule's, open */
	bool asked;                 /* a human said yes */
	bool planned;               /* init's planned first exec (execs_ready) */
};

/* The pipeline's state. */
struct execs {
	int listener;
	struct audit *log;
	const struct policy_exec *rules;
	struct exec_verdict_rules lists; /* the deny and allow hashes, sorted */
	dev_t wdev[WRITABLE_DEVS];
	size_t nwdev;
	int root;                   /* the sandbox's root, O_PATH */
	int pidns;                  /* its pid namespace (-1: none, or no translation; -2: not yet) */
	pid_t init;                 /* sandbox init, as the host numbers it */
	struct hashq *q;
	struct nsread *reader;      /* opens what warden may not read (nsread.h) */
	bool code_rules;            /* some rule names a code hash (code:HEX) */
	int timer;
	bool ticking;
	struct tracer *t;
	bool tracing;               /* PTRACE_SEIZE works here */
	struct execpath *ep;
	struct pidcache *pids;      /* the parents' pids inside */
	unsigned long unwatched;    /* execs that could not have run anything else */
	struct approvals *ap;       /* who answers `exec ask` (NULL: nobody: refused) */
	struct bpfexec *kernel;     /* the rules in the kernel too (NULL: not) */
	execs_linker link;          /* the tool call an exec belongs to (NULL: none) */
	void *link_ctx;
	struct pexec *list;         /* pending: unanswered, or traced */
	struct hashcache hc;         /* hashes of files the agent cannot change */
	struct loader_id ld;        /* the loader, by its content (loaderid.h) */
	unsigned long hits, misses, verified, swapped, killed;
	/* init's planned first exec (execs_ready), until the first notification */
	char *planned;
	char *const *planned_argv;
	const char *planned_cwd;
};

/* A pending exec's resources released (execs.c). */
void pexec_free(struct pexec *p);

/* ---- the record (execrecord.c) ---- */

/* The exec event of p; why: refused, and why (NULL: allowed). false when
 * the log could not take it (the sandbox is being stopped). */
bool execs_record(struct execs *x, struct pexec *p, const char *why);

/* The exec event of what ran instead of the file checked (resolved, now:
 * its hash, or why none), refused (why) or not (NULL). */
void execs_record_swapped(struct execs *x, const struct pexec *p, const char *resolved,
			  const struct subject *now, const char *why);

void execs_alert(struct execs *x, const char *rule, const char *path, const char *action);

/* ---- the decision (decide.c) ---- */

/* Why the rules refuse p (into why), and whether a rule (rather than the
 * mounts) did; "" when allowed. */
bool execs_decide(const struct policy_exec *rules, const struct exec_verdict_rules *lists,
		  const struct pexec *p, char *why, size_t len);

/* Is subject s allowed under `exec default deny` (by its hash, or as an
 * immutable file in an `exec allow DIR`)? */
bool execs_allowed(const struct policy_exec *rules, const struct exec_verdict_rules *lists,
		   const struct subject *s);

/* Will the kernel's exec open what was checked, whatever anyone does
 * meanwhile? (execpath.h; ppidfd: a pidfd of its parent, or -1) */
struct execpath;
bool execs_cannot_change(struct execpath *ep, int root, pid_t init, const struct pexec *p,
			 int ppidfd);

/* The `exec ask` rule that asks a human about p, in words into rule, or
 * false. */
bool execs_needs_ask(const struct policy_exec *rules, const struct pexec *p, char *rule,
		     size_t len);
