/* answer.h - the reply to one seccomp notification, shared by every
 * handler that answers one (notify.c, exec/execs.c, writeask.c,
 * exec/bpfexec.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Answer notification id on the seccomp listener: the call refused with
 * error (an errno) when not 0, else let go on (cont), else done with the
 * result val. A process that died meanwhile (ENOENT) needs no answer. */
void notify_answer(int listener, uint64_t id, int error, bool cont, long long val);
