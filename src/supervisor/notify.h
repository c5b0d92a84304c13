/* notify.h - the supervisor's side of the seccomp user notifications: turn
 * each notified syscall into an audit event and answer it (see notify.c). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "../audit/audit.h"
#include "../common/loop.h"
#include "../common/util.h"

struct notifier;

struct execs;
struct bpfexec;
struct writeask;
struct wsmade;
struct filewhy_cfg;
struct policy;
struct stopper;
/* What the notifier works with, given when it is made. */
struct notifier_cfg {
	int listener;            /* the seccomp listener */
	int diag;                /* the sandbox's sock_diag socket (unixconn.h); -1: none */
	struct audit *log;
	/* Where exec notifications go (execs.h): recorded, decided and
	 * answered there. NULL: an exec is let through unrecorded. */
	struct execs *execs;
	/* Code mapped from files (notified for `exec strict`: strict, or for
	 * the exec rules in the kernel: kernel, bpfexec.h, NULL when not):
	 * strict's mmaps of noexec files recorded and refused; kernel's files
	 * given their verdicts in the kernel before the call goes on. */
	bool strict;
	struct bpfexec *kernel;
	/* File operations (notified unless `audit minimal`, and with `write
	 * ask`): recorded with the walls' answer predicted (why, filewhy.h;
	 * NULL: none predicted) by audit_level (0 `audit minimal`: not, 1
	 * `audit default`: the refused ones and the allowed ones but writes to
	 * /dev and /proc, 2 `audit files`: all, under a wider bound), held for
	 * a question when wa's globs name them (wa NULL: none). */
	int audit_level;
	const struct filewhy_cfg *why;
	struct writeask *wa;
	/* The workspace watch's record of the names the sandbox makes
	 * (wsmade.h): each secret name (pol's mask patterns) that an open with
	 * O_CREAT, a rename, a link, a symlink or a mkdir is about to make is
	 * noted there before the call goes on. workspace (its path inside) is
	 * copied. made NULL: none noted. */
	struct wsmade *made;
	const struct policy *pol;
	const char *workspace;
	/* The workspace's protected paths (its plan, kept for the session):
	 * git's rename of config.lock over a repository's protected config
	 * is judged, and made by the supervisor when it changes only what git
	 * may change for the sandbox (cfgwrite.h). NULL: refused as any
	 * write to a protected path. */
	const struct ws_plan *plan;
	/* A read-only workspace (its path inside; NULL: none): a write there
	 * that a read-only mount refuses is recorded as a refused `file` event
	 * (decision "deny"), whatever `audit files` says. Copied. */
	const char *readonly;
	/* warden's control directory on the host (control.h): a connect to a
	 * pathname socket within it, however spelled, is an `alert` (rule
	 * control.inside): the agent looking for the way to answer its own
	 * questions. The connect itself goes on as any other (nothing is there
	 * inside). Copied; NULL: none. */
	const char *guarded;
	/* What kills the sandbox when the listener breaks (stop.h): a
	 * notification that cannot be received would stay pending, and the
	 * process that made it wait for ever. */
	struct stopper *stop;
};
/* Can the notifications be received here (libseccomp's probes of the
 * kernel, made once a process)? -1 with e saying what to change when not.
 * The supervisor asks while init builds the sandbox, off the way from its
 * READY to the command's first exec. */
int notify_supported(struct werr *e);
/* NULL with e filled when the notifications cannot be received here
 * (libseccomp's probes of the kernel refused: a filter outside warden's)
 * or their buffers cannot be had. */
struct notifier *notifier_new(const struct notifier_cfg *cfg, struct werr *e);
/* The seccomp listener watched by l: each notification logged, then
 * answered (EPERM for a refused syscall, continue for an exec); -1 with e
 * naming it when l cannot take it. */
int notifier_watch(struct loop *l, struct notifier *n, struct werr *e);
void notifier_free(struct notifier *n);
/* The file reads' helper's socket (fanread.h) watched by l: each read it
 * reports recorded (notefile.c); -1 with e when l cannot take it. */
int notifier_reads_watch(struct loop *l, struct notifier *n, int sock, struct werr *e);
