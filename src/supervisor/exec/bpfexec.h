/* bpfexec.h - the exec rules enforced in the kernel (the privileged tier):
 * the BPF LSM program of src/bpf/exec_lsm.bpf.c loaded and attached for
 * one session, its cgroup registered, and the program's requests served.
 *
 * The kernel cannot hash a file, so warden is the oracle and the kernel the
 * enforcer: an exec, or a file mapped executable (mmap, mprotect), by a
 * task of the session's cgroup goes ahead only on a verdict for that file
 * (its device and inode, while its ctime stays). A file without one is
 * sent up; a thread of this module (not the supervisor's loop: the task
 * waits in the kernel meanwhile) opens the file as the task sees it,
 * hashes it and decides with the session's exec rules as execs.h does for
 * a program: a denied hash, an unhashable file while deny rules exist, a
 * file `exec default deny` does not allow. What the kernel refuses becomes
 * an `exec` event in the session's log (written by the loop's thread:
 * bpfexec_watch, bpfexec_on_refusals).
 *
 * That wait in the kernel spins, so few tasks may wait at once: the
 * seccomp filter also hands the supervisor each mmap of a file with
 * PROT_EXEC and each mprotect adding it (notify.c), and the file's verdict
 * is put in the kernel's map before the call goes on (bpfexec_premap):
 * the kernel finds it there, and its wait is left a backstop for what the
 * filter cannot see. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../../audit/audit.h"
#include "../../common/err.h"
#include "../../common/loop.h"
#include "../../policy/policy.h"

struct bpfexec;

/* Can in-kernel exec enforcement run here? Built in, root, the kernel
 * takes and runs BPF LSM programs (loaded, attached and checked on a
 * cgroup of its own made for the probe). false with why ("needs root",
 * "this kernel refuses BPF LSM programs ..."). For `warden doctor`, beside
 * the kernel feature probe (src/sandbox/features.h). In bpfprobe.c. */
bool bpfexec_probe(char *why, size_t len);

/* Load and attach the program for the session whose processes are in the
 * cgroup v2 directory cgroup (NULL: none was made), check that the kernel
 * enforces it (a process of that cgroup must be refused a file denied for
 * the check), and start serving its requests with p's exec rules.
 * NULL with e set when it cannot: *unavailable true when this host does
 * not offer it (not built, not root, no cgroup v2, the kernel refuses or
 * does not run BPF LSM programs: e says which), false for a failure where
 * it should have worked. */
struct bpfexec *bpfexec_new(const struct policy *p, const char *cgroup, bool *unavailable,
			    struct werr *e);
void bpfexec_free(struct bpfexec *b);

/* Is process pid in the session's cgroup (where the kernel enforces)? */
bool bpfexec_holds(const struct bpfexec *b, pid_t pid);

/* A verdict learned elsewhere (execs.h hashed the file for an exec): st as
 * fstat gave it, hex its SHA-256, code its code hash (elfhash.h; NULL:
 * none), immutable and resolved as execs.h found
 * them; decided with the same rules and told the kernel, so that it need
 * not ask. Thread-safe. */
void bpfexec_learn(struct bpfexec *b, const struct stat *st, const char *hex, const char *code,
		   bool immutable, const char *resolved);

/* Files about to be mapped executable, seen by the supervisor's loop in a
 * seccomp notification (listener: the session's, for the answers; copied).
 * bpfexec_premap: the file open at fd (O_PATH, taken) in process pid;
 * true when its verdict was known and is in the kernel's map now, false
 * when this module's thread works it out (hashing, off the loop).
 * bpfexec_answer_after: the thread lets notification id go on once the
 * files handed to it before have their verdicts. */
int bpfexec_set_listener(struct bpfexec *b, int listener);
bool bpfexec_premap(struct bpfexec *b, pid_t pid, int fd);
void bpfexec_answer_after(struct bpfexec *b, uint64_t id);

/* Write the `exec` events of what the kernel refused to log. */
void bpfexec_on_refusals(struct bpfexec *b, struct audit *log);
/* The refusals watched by l (readable when the kernel refused something:
 * bpfexec_on_refusals, to log); -1 with e naming them when l cannot take
 * their fd. */
int bpfexec_watch(struct loop *l, struct bpfexec *b, struct audit *log, struct werr *e);

/* For session.end: requests served, verdicts, refusals, the wait's times. */
json_t *bpfexec_stats(const struct bpfexec *b);
