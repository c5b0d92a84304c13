/* rustup.h - rustup's proxies (~/.cargo/bin/cargo, rustc, ... : each the
 * rustup binary itself, a hard link or a symlink to it) resolved to the
 * toolchain's program they would run in the workspace, as vmshim.h does
 * for the shims of pyenv and the rest. The proxy cannot run inside (rustup
 * and its toolchains live in the hidden home), so discovery runs and
 * exposes the toolchain's directory instead, read-only; never ~/.cargo
 * (its credentials.toml) or the rest of ~/.rustup.
 *
 * The toolchain, as rustup picks it: $RUSTUP_TOOLCHAIN; else, from the
 * workspace up, a directory override (`rustup override set`, in
 * settings.toml's [overrides]) or a rust-toolchain.toml (or rust-toolchain)
 * file's channel, the nearest first; else settings.toml's
 * default_toolchain. A channel without a host ("stable", "1.75.0") takes
 * default_host_triple's. Read only; rustup never runs. Not followed: a
 * toolchain file's `path`, `+toolchain` on the command line. */
#pragma once
#include <stdbool.h>

#include "../common/err.h"
#include "vmshim.h"

/* The channel a toolchain file's text names: rust-toolchain.toml's
 * [toolchain] channel, or a legacy rust-toolchain's first word; malloc'd,
 * or NULL. */
char *rustup_file_channel(const char *text);
/* settings.toml's directory override for dir: the value of the deepest
 * [overrides] key (an absolute path) dir lies in, malloc'd, that key in
 * *key; or NULL. */
char *rustup_override(const char *settings, const char *dir, char **key);

/* Is found (the file PATH gives for cmd) one of rustup's proxies? */
bool rustup_is_proxy(const char *found, const char *cmd);

/* The toolchain's program for cmd, into *p (manager "rustup"): 1; -1 with
 * e filled when the toolchain picked is not installed or its name is none. */
int rustup_pick(const char *found, const char *cmd, const char *workspace, const char *home,
		struct vm_pick *p, struct werr *e);
