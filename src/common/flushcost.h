/* flushcost.h - what this host charges a process for a page copied on
 * write once one of its threads has run on a second CPU: the reason the
 * supervisor keeps to one CPU (cpupin.h), measured so that it does so only
 * where that pays.
 *
 * After init's clone every page the supervisor writes is copied, and the
 * old mapping flushed from the CPUs the supervisor's threads have run on.
 * Where the kernel sends that flush only to a CPU that has the process's
 * memory loaded (bare metal, KVM), a CPU busy with another process (init)
 * costs nothing; on a paravirtualised host that interrupts every CPU of
 * the set it cost a write 70-75 us instead of 17-30 (bench/README.md,
 * "Night, 2026-12-01"), and there one CPU saves a session milliseconds of
 * CPU. Elsewhere it only keeps the setup's jobs (as root the host
 * identity's lookups) from running beside the main thread
 * (bench/README.md, "Morning, 2026-12-03").
 *
 * Asked by a session whose setup jobs compute (as root); unprivileged the
 * supervisor keeps to one CPU without asking (cpupin.h).
 *
 * The measure: in a process of its own, born on one CPU, the pages of a
 * small mapping written while a fork spins on a second CPU, first with no
 * thread of it ever run there, then after one has; the cheaper of three
 * rounds each, nanoseconds a page. Kept for the boot in warden's cache
 * directory (FLUSHCOST_FILE: "warden-flushcost 1 BOOT_ID LOCAL REMOTE\n"),
 * so a boot measures once (a few forks: a millisecond or two). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define FLUSHCOST_FILE "flushcost"

struct flushcost {
	unsigned long local_ns;  /* a page's copy, only the writer's CPU to flush */
	unsigned long remote_ns; /* the same with a second CPU in the set */
};

/* Measured now: false when it cannot be (fewer than two CPUs in the
 * caller's set, affinity refused, a fork or thread refused, the measuring
 * process not done within two seconds). The caller's CPU set is as it was
 * on return, and nothing it started is left running. */
bool flushcost_measure(struct flushcost *fc);

/* This boot's figures: from dir/FLUSHCOST_FILE when it holds this boot's
 * (read without following a symlink or waiting on a FIFO), else measured
 * and written there (dir made 0700 when missing). dir may be NULL:
 * measured, not kept. false as flushcost_measure. */
bool flushcost_get(const char *dir, struct flushcost *fc);

/* Does one CPU pay: the copy with a second CPU to flush at least twice as
 * dear as without. */
bool flushcost_pin_pays(const struct flushcost *fc);

/* The file's line for boot, and its reading: 0, or -1 when malformed or
 * of another boot. */
void flushcost_format(char *buf, size_t len, const char *boot, const struct flushcost *fc);
int flushcost_parse(const char *text, const char *boot, struct flushcost *fc);
