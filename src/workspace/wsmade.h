/* wsmade.h - the names the sandbox makes in the workspace during a
 * session, so that the workspace watch (wswatch.h) tells the agent's own
 * new secret-named file (`cp template .env`, left readable) from one the
 * host made (masked). The supervisor notes each secret name a sandboxed
 * process is about to make (its seccomp notification, notefile.c, handled
 * before the call goes on: so before inotify can report the file), by the
 * directory it is made in (device, inode) and the name; the watch, when a
 * secret name appears, asks whether the file there is one the sandbox made.
 * Every unix socket name the sandbox binds is noted too (a socket the host
 * binds in the workspace is masked, wswatch.h).
 *
 * A note stands for a file that came to its name from just before the note
 * to WSMADE_WINDOW_MS after it (its birth time for a new file, its change
 * time for one renamed or linked there): the call goes on at once, so a
 * file that came later is someone else's. The first such file found at the
 * name binds the note to that file (device, inode, birth time; change time
 * where the file system keeps no birth time), which stays the sandbox's
 * whatever its name, when judged again (a new directory walked, a rescan).
 * A file with no note is the host's: masked (fail closed). What remains: a
 * call that was noted but made nothing (it failed, or another thread
 * rewrote its path after the supervisor read it) leaves a note that covers
 * a file the host makes at that very name within the window. Bounded:
 * WSMADE_MAX notes, the oldest dropped first (its file, judged again, is
 * masked). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#define WSMADE_MAX 4096
#define WSMADE_WINDOW_MS 2000

struct wsmade;

struct wsmade *wsmade_new(void);
void wsmade_free(struct wsmade *m);
/* The sandbox is about to make name in the directory dev/dir. */
void wsmade_note(struct wsmade *m, dev_t dev, ino_t dir, const char *name);
/* Is the file at name in the directory dirfd (not followed when a
 * symlink) one the sandbox made? false when there is none, or when it
 * cannot be told. */
bool wsmade_claims(struct wsmade *m, int dirfd, const char *name);
