/* vmchild.h - a short-lived child process on its parent's memory
 * (CLONE_VM): no copy of the parent's page tables to make, none of its
 * pages copied on a write, none to unmap at the end (bench/README.md,
 * "Evening, 2026-12-02"). The supervisor's helpers that enter the
 * sandbox's namespaces run so: the file reads' helper (fanread.c) and the
 * maker of the sandbox's network namespace (launch.c).
 *
 * What makes that safe: the child's body makes rawsys's calls only
 * (src/common/rawsys.h: errno and libc's state are the parent's main
 * thread's, whose thread pointer it shares) and writes only its own stack,
 * where its argument is copied. It starts with every signal blocked, so
 * no handler of the parent's runs on it; SIGKILL ends it. Nothing in the
 * sandbox can name it (it is outside the sandbox's pid namespace) and the
 * memory is not dumpable once init is mapped (launch.c).
 *
 * Where rawsys is not native, the child is a fork (_Fork) instead, on a
 * copy of the memory: the same body, which then may not share anything. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "err.h"

struct vmchild {
	char *stack; /* its stack, mapped on first use with a guard page below,
			kept for the process's life; one child on it at a time */
	int pidfd;   /* the child's pidfd, -1: none */
};
#define VMCHILD_NONE { .stack = NULL, .pidfd = -1 }

/* fn(its copy of arg's len bytes) in a new child, which sends SIGCHLD at
 * its end and exits with fn's result; the last child on c must be reaped
 * (vmchild_reap). Returns its pid, or -1 (e set, what naming the helper). */
pid_t vmchild_start(struct vmchild *c, int (*fn)(void *), const void *arg, size_t len,
		    const char *what, struct werr *e);

/* The child's end awaited (killed first when kill): its wait status
 * (waitid's si_code and si_status as waitpid's), or -1 when there is no
 * child on c or it was reaped elsewhere. */
int vmchild_reap(struct vmchild *c, bool kill);
