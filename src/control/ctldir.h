/* ctldir.h - where the sessions' control sockets (control.h) live: a
 * runtime directory of their own, so that a session whose state directory
 * is removed while it runs (a test's temporary directory, a cleaned cache)
 * is still found by `warden status|approve|freeze|resume|kill`.
 *
 * The runtime directory is RUNTIME/warden/control, RUNTIME being
 *   - $XDG_RUNTIME_DIR when it is set, absolute, a directory of the user's
 *     and open to no one else (no write for group or others);
 *   - else, as root, /run; as another user, /run/user/UID when it is such a
 *     directory (a login's, made by systemd-logind; `runuser`, `su` without
 *     a login, cron and containers often have none).
 * Each of RUNTIME/warden and RUNTIME/warden/control is made mode 0700 when
 * missing, and refused when it is a symbolic link, not a directory, or
 * owned by someone else; one of ours open to others is made 0700.
 * When there is no runtime directory, or it is refused, the sockets are in
 * the state directory: LOGDIR/control (the fallback, where they always
 * were). Clients look in both. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct strv;

/* The runtime directory of this user's control sockets
 * (RUNTIME/warden/control, malloc'd), or NULL when there is no RUNTIME;
 * nothing is made. */
char *control_runtime_dir(void);

/* The directory a session's socket goes in (malloc'd): the runtime
 * directory, made; else LOGDIR/control (control_new makes it). Where the
 * runtime directory was refused (a symlink, another's), *why says why
 * (malloc'd; NULL: none was refused). */
char *control_dir_make(const char *logdir, char **why);

/* The directories this user's sockets may be in, those that exist and are
 * the user's (never made): the runtime directory, then the state
 * directory's fallback (logdir, or NULL: the user's default), pushed onto
 * dirs without repeats; how many. */
size_t control_dirs_existing(const char *logdir, struct strv *dirs);

/* The marker a suspended session's warden leaves beside its socket while
 * it is stopped (Ctrl-Z: jobctl.c), since a stopped warden accepts
 * nothing and, once its socket's backlog is full, cannot be reached to
 * say so: "DIR/SESSION.sock" gives "DIR/SESSION.stopped" in out (len
 * bytes); false when sock is not such a name or out is too short. */
bool ctldir_marker(const char *sock, char *out, size_t len);

/* The pid of the warden whose marker lies beside sock, when that marker
 * names a process of this start that is stopped now, else 0 (a marker
 * left by a warden that is gone is removed). */
pid_t ctldir_marked_stopped(const char *sock);
