/* shim.h - warden's command shims: a small script named after a client
 * (`claude`, `codex`) placed first on the user's PATH, so that typing the
 * name runs it under `warden run`. What a shim file holds, how one is told
 * from the client it stands in for, and where shims go. The commands that
 * install, list and remove them are cli/shim_cmd.c; discovery skips them
 * when it looks for the real client (discover.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The first two lines of every shim: a shim is a regular file that starts
 * with exactly these bytes. */
#define SHIM_MAGIC "#!/bin/sh\n# warden-shim 1\n"

/* The system-wide shims' directory (`warden shim install --system`) and
 * the profile.d snippet that puts it first on every login shell's PATH. */
#define SHIM_SYSTEM_DIR "/usr/local/lib/warden/shims"
#define SHIM_SYSTEM_PROFILE "/etc/profile.d/warden-shims.sh"

/* Is path a warden shim? (a regular file starting with SHIM_MAGIC; read
 * without following a FIFO or blocking) */
bool shim_is(const char *path);

/* The text of the shim for client `name` that runs `warden` (an absolute
 * path) as `warden run -- NAME ARGS...`; NULL when name or warden cannot be
 * written into a shell script safely. Free it. */
char *shim_text(const char *warden, const char *name);

/* May `name` be a shim's name? (a plain command name: [A-Za-z0-9._+-],
 * not starting with '.' or '-', at most 64 bytes) */
bool shim_name_ok(const char *name);
