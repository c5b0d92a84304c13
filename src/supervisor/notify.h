/* notify.h - the supervisor's side of the seccomp user notifications: turn
 * each notified syscall into an audit event and answer it (see notify.c). */
#pragma once
#include "../audit/audit.h"

struct notifier;

struct notifier *notifier_new(int listener, int diag, struct audit *log);
/* Handle one pending notification: log it, then answer (EPERM for a
 * refused syscall, continue for an exec). 0, or -1 if the listener broke. */
int notifier_handle(struct notifier *n);
void notifier_free(struct notifier *n);
