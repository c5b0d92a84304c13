/* notifylimit.h - the kernel's per-user limits on inotify and fanotify
 * objects, said when one is reached: the errno these calls give for it
 * (EMFILE, ENOSPC) reads as "Too many open files" or "No space left on
 * device", which sends a user to `ulimit -n` or a full disk. What to say
 * instead names the sysctl, its value now and what else counts against
 * it. */
#pragma once
#include <stddef.h>

enum notify_limit {
	NOTIFY_INOTIFY_INSTANCES, /* inotify_init1: EMFILE */
	NOTIFY_INOTIFY_WATCHES,   /* inotify_add_watch: ENOSPC */
	NOTIFY_FANOTIFY_GROUPS,   /* fanotify_init: EMFILE */
	NOTIFY_FANOTIFY_MARKS,    /* fanotify_mark: ENOSPC */
};

/* When err, from the call kind names, is that limit reached: the
 * sentence that says so and how to raise it, written to buf (cut to len);
 * NULL for any other err, and for EMFILE when it is this process's own
 * limit of open files that is reached (strerror says that one right). */
const char *notify_limit_said(enum notify_limit kind, int err, char *buf, size_t len);
