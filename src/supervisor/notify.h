/* notify.h - the supervisor's side of the seccomp user notifications: turn
 * each notified syscall into an audit event and answer it (see notify.c). */
#pragma once
#include "../audit/audit.h"
#include "../common/util.h"

struct notifier;

struct notifier *notifier_new(int listener, int diag, struct audit *log);
struct execs;
/* Where exec notifications go (execs.h): recorded, decided and answered
 * there. Without it an exec is let through unrecorded. */
void notifier_set_execs(struct notifier *n, struct execs *x);
/* Handle one pending notification: log it, then answer (EPERM for a
 * refused syscall, continue for an exec). 0, or -1 if the listener broke. */
int notifier_handle(struct notifier *n);
void notifier_free(struct notifier *n);
