/* notify.h - the supervisor's side of the seccomp user notifications: turn
 * each notified syscall into an audit event and answer it (see notify.c). */
#pragma once
#include "../audit/audit.h"
#include "../common/util.h"

struct notifier;

struct notifier *notifier_new(int listener, int diag, struct audit *log);
/* The SHA-256s (lower-case hex) of programs that must not run (`exec
 * deny`): an exec of one, of a loader given one, or of a script whose
 * interpreter is one, is refused (EACCES) with an alert; so is one whose
 * hash cannot be had while there are such rules. Copied. */
void notifier_set_exec_deny(struct notifier *n, const struct strv *deny);
/* Handle one pending notification: log it, then answer (EPERM for a
 * refused syscall, continue for an exec). 0, or -1 if the listener broke. */
int notifier_handle(struct notifier *n);
void notifier_free(struct notifier *n);
