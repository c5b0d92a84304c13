/* tailkey.h - the key behind the stable end of a phantom (secrets.h): 32
 * random bytes in warden's data directory, outside every sandbox, made on
 * first use. With it a secret's phantom ends the same way in every session
 * for the same value (an HMAC of the value under this key), while the rest
 * of it is new each session: clients that remember a key the user approved
 * by its last characters (Claude Code keeps the last 20 of
 * ANTHROPIC_API_KEY) keep the approval, and the end says nothing about the
 * value to anyone without the key. */
#pragma once
#include <stdbool.h>

#include "../common/err.h"

#define TAIL_KEY_LEN 32

/* The key file's path: ${XDG_DATA_HOME:-HOME/.local/share}/warden/phantom-key
 * (malloc'd), or NULL when neither is an absolute path. */
char *tail_key_path(const char *home);

/* Read the key at path, making it (mode 0600, its directory 0700) when it
 * is missing. Refused: a file that is not a regular file of ours, that
 * others may read or write, or not exactly TAIL_KEY_LEN bytes (the error
 * names it). Two sessions making it at once agree on one key. */
int tail_key_load(const char *path, unsigned char key[TAIL_KEY_LEN], struct werr *e);
