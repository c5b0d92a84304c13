/* cpupin.h - the supervisor on one CPU, the sandbox on all of the user's.
 *
 * Why: init is a clone of the supervisor, so from the clone on every page
 * of the supervisor's memory is shared with it, copy-on-write, and the
 * supervisor's first write to each page (some 60 of them while init builds
 * the sandbox and the command starts) copies it and flushes the old
 * mapping from the TLB of every CPU the supervisor's threads have run on
 * since it began (the kernel trims that set once a second). On a CPU
 * busy with something else, init for one, that flush is an interrupt the
 * supervisor waits for. On this project's paravirtualised VM it made such a
 * write 75 us instead of 30, and cost a session 6 ms of CPU between the two
 * processes (bench/README.md, "Night, 2026-12-01"). A supervisor whose
 * threads keep to the CPU it started on has that one CPU in its set: no
 * interrupt.
 *
 * So a session's start pins the calling thread, and with it every thread
 * made after (the setup's jobs then run in it: bgjob.h), to
 * the CPU it runs on, when the user's set has more than one; the set is
 * kept. What is not the supervisor gets the set back from it as soon as
 * each is made: init (and so the sandbox: the set without the supervisor's
 * CPU while it builds the sandbox, cpupin_apart), the network namespace's
 * maker (apart too: init waits for it, the supervisor does not), the
 * file-read helper, the stream's sender, each program warden spawns (a
 * secret's command, --task's git, the reviewer: spawn_fresh, util.h); and
 * the supervisor's two threads whose work is computing, not waiting, the
 * checkpoint's reader and the execs' hashers: a large first checkpoint or
 * a large binary's hash gains more from a second CPU than the session's
 * flushes cost once one has run there. The user's own restriction (taskset, a
 * cpuset) is what is kept and given back: warden never widens it.
 *
 * As root too, wherever. Root's sessions were kept to one CPU only where
 * a measure of this boot's flush said a second CPU made a copy at least
 * twice as dear, so that the setup's jobs (the host identity's lookups)
 * could run beside the main thread elsewhere. Those jobs now run in the
 * main thread (bgjob.h: a worker's start cost more than it overlapped), and
 * on the VM that measure called cheap, root's sessions kept to one CPU took
 * 0.4 ms less and 1.2 ms less CPU (bench/README.md, "Afternoon,
 * 2026-12-03"); the measure and its file in the cache directory are gone. */
#pragma once
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

/* Pin the calling thread to the CPU it runs on, the set it had kept (a
 * second call does nothing). Nothing when the set has one CPU or the
 * kernel refuses: the session runs as it would have. */
void cpupin_start(void);

/* The set of the one CPU cpu, and the CPU the caller runs on when set
 * holds it (-1 otherwise): cpupin_start's. */
cpu_set_t cpupin_one(int cpu);
int cpupin_current(const cpu_set_t *set);

/* Give pid, a child of the supervisor that is not the supervisor (just
 * forked or spawned), the set kept by cpupin_start. Nothing when nothing
 * was pinned; a refusal (a set-uid program, say) leaves it pinned. */
void cpupin_release(pid_t pid);

/* Sandbox init, just cloned: the kept set without the supervisor's CPU
 * (the whole set when that is its only one) while it builds the sandbox,
 * and the whole set (cpupin_widen, init itself) before it starts anything.
 * Given the whole set at once, init stayed where it was cloned often
 * enough: on the supervisor's CPU, each waiting for the other's turn while
 * the other CPU idled (0.15-0.3 ms of a session unprivileged,
 * bench/README.md, "Morning, 2026-12-03 (third session)"). Set apart
 * again at its end (pid 0: init itself, once it has told the supervisor
 * the command ended: init.c, sandbox_end): woken where the command ended,
 * it was on the supervisor's CPU in every session measured, and its exit
 * (the unmapping of its memory) ran ahead of the supervisor it had just
 * told, 0.3-0.4 ms. Nothing when nothing was pinned. */
void cpupin_apart(pid_t pid);
void cpupin_widen(void);

/* Around a clone into a new cgroup, which wakes a kernel worker on the
 * cloning CPU (the cgroup's `populated` notice): the worker preempted the
 * supervisor, and the child, still on the supervisor's one CPU, ran next,
 * for a millisecond or more (its first entry to user mode in a new address
 * space, on a paravirtualised host) while the supervisor waited, before it
 * could be set apart. Where the caller may (root: CAP_SYS_NICE), the clone
 * is made at the lowest real-time priority, which no normal task preempts,
 * the child reset to the normal one (SCHED_RESET_ON_FORK); the caller sets
 * the child apart, then cpupin_clone_end(what begin returned) puts its own
 * priority back. Nothing when nothing was pinned or the kernel refuses
 * (bench/README.md, "Evening, 2026-12-03"). */
bool cpupin_clone_begin(void);
void cpupin_clone_end(bool began);

/* The kept set into a's attributes, for a thread that computes (above).
 * Nothing when nothing was pinned. */
void cpupin_thread_attr(pthread_attr_t *a);
