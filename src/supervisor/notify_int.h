/* notify_int.h - what the seccomp notifications' two files share: the
 * notifier itself and its pending event (notify.c: the listener, execs,
 * connects, code mapped, refusals, the answers) and the file operations it
 * records (notefile.c: `audit files`, `write ask`, the secret names the
 * sandbox makes, the reads outside the workspace). Nothing outside
 * notify.c and notefile.c includes it. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>
#include <linux/seccomp.h>

#include "../audit/audit.h"
#include "../audit/netbound.h"
#include "filebound.h"
#include "filewhy.h"
#include "loophint.h"

#define RESERVE_FDS 8
#define NOTEFILE_OPS 38 /* the file operations notefile.c knows */

/* The file operations of `audit files`: which arguments hold the paths
 * (and the directory fds they are relative to), -1 for none (a dirfd
 * without a path: the call's file is that fd, fchmod's and fchown's);
 * made: which of the two names what the call makes (1 path, 2 path2, 0
 * nothing; an open only with O_CREAT), for the workspace watch
 * (notefile.c); mode: the argument holding a mode the filter refuses
 * some values of (a set-id bit, a device node's type), -1 for none. */
struct file_op {
	const char *name, *op;
	int path, dirfd, path2, dirfd2, flags, made, mode;
};

struct notifier {
	int fd;
	int diag;                /* the sandbox's sock_diag socket (unixconn.h); -1: none */
	struct loophint loop;    /* the host's loopback ports tried inside (loophint.h) */
	bool dns_said;           /* a name lookup of a program's own recorded (dns_lookup) */
	int pidns;               /* the sandbox's pid namespace (procfacts.h); -2: not yet opened */
	struct audit *log;
	struct seccomp_notif *req;
	unsigned long syscall_events, suppressed;
	int file_nr[NOTEFILE_OPS]; /* syscall numbers of the file operations (notefile.c) */
	/* the event of the notification being handled, written before the
	 * process has its answer */
	struct event event;
	/* descriptors held in reserve, given up when the supervisor runs out
	 * (the agent can open connections to the proxy by the thousand) so that
	 * an exec can still be inspected */
	int reserve[RESERVE_FDS];
	unsigned long blind;     /* execs refused because they could not be inspected */
	struct execs *execs;     /* where exec notifications go (execs.h) */
	struct writeask *wa;     /* `write ask` (writeask.h), or NULL */
	int level;               /* file operations recorded: 0 no (`audit minimal`: only
				    asked about), 1 by default, 2 `audit files` (notify.h) */
	struct filewhy *why;     /* the walls' answer predicted (filewhy.h) */
	struct filebound bound;  /* how many are recorded one by one */
	struct netbound netb;    /* refused connections recorded one by one (netbound.h) */
	char *guarded;           /* warden's control directory (notifier_cfg.guarded) */
	char *ro_ws;             /* the read-only workspace (notifier_cfg.readonly), or NULL */
	struct wsmade *made;     /* secret names the sandbox makes (notifier_cfg.made), or NULL */
	const struct policy *pol; /* whose mask patterns say which names are secret */
	char *ws;                /* the workspace (its path inside) */
	const struct ws_plan *plan; /* its protected paths (notifier_cfg.plan), or NULL */
	bool strict;             /* `exec strict`: mmaps of noexec files recorded */
	struct bpfexec *kernel;  /* the exec rules in the kernel (NULL: not) */
	bool mask_paths;         /* a pattern names a path (needs the name's place) */
	int broken;              /* why a notification could not be received (errno) */
	struct stopper *stop;    /* kills the sandbox when the listener breaks */
};

/* ev, the event of the notification being handled, kept to be written
 * before its answer (an event whose fields could not be packed, a string
 * that is not UTF-8, is dropped, as it always was). */
void notify_later(struct notifier *n, struct event ev);

/* ---- notefile.c ---- */
/* n's syscall numbers of the file operations resolved. */
void notefile_init(struct notifier *n);
/* The file operation req is, when it goes on once recorded: NULL for a
 * call the filter refuses by its mode or flags (a set-id file or mode, a
 * device node, a whiteout: refused_mode) and for any other call. */
const struct file_op *notefile_op(const struct notifier *n, const struct seccomp_notif *req);
/* A file operation: recorded and let go on, held for a question (`write
 * ask`, answered later by writeask.c), or made by the supervisor instead
 * (git's rewrite of a protected config, cfgwrite.h: answered done); first,
 * the secret name it makes noted. */
enum notefile_fate { NOTEFILE_GO_ON, NOTEFILE_HELD, NOTEFILE_DONE };
enum notefile_fate notefile_record(struct notifier *n, const struct seccomp_notif *req,
				   const struct file_op *op);
/* A bind to a pathname unix socket (its address read through mem): its
 * name noted, whatever it is. */
void notefile_bind(struct notifier *n, const struct seccomp_notif *req, int mem);
