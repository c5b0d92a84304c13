/* names.h - the variable names a profile and the command line take
 * (names.c). */
#pragma once
#include <stdbool.h>
#include <stddef.h>


/* The n bytes at s are a variable name, [A-Za-z_][A-Za-z0-9_]*; with glob,
 * a final '*' is allowed too ("LC_*"). */
bool policy_env_name_ok(const char *s, size_t n, bool glob);

/* A variable name as `env set` and `warden run --env` take it:
 * [A-Za-z_][A-Za-z0-9_]*. */
bool policy_env_name_valid(const char *name);
