/* program.h - what really runs when an exec names the dynamic loader (or
 * valgrind) or a common interpreter: the program the loader maps itself
 * (`ld.so ./x`, `valgrind ./x`),
 * the script given by name (`python3 x.py`, `sh x.sh`), and the #! line of
 * a script. The exec pipeline (execs.h) hashes that program too. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "../../common/util.h"
#include "hashq.h"

/* Is the file (resolved: its path) the dynamic loader run as a program? */
bool exec_is_loader(const char *resolved);

/* The program `ld.so [OPTIONS] PROGRAM` runs (in argv), or NULL. */
const char *exec_loader_program(const struct strv *argv);

/* Is the file a valgrind tool, which maps the program it is given itself? */
bool exec_is_valgrind(const char *resolved);

/* What the file (resolved: its path) run with argv really runs: the
 * program the loader or valgrind maps (*loader true), or the script a
 * common interpreter is given by name; NULL: none named. */
const char *exec_program_of(const char *resolved, const struct strv *argv, bool *loader);

/* The command line the kernel gives a script's interpreter: the #! line's
 * interpreter and its one optional argument (the rest of the line, as one
 * word), the script as the exec named it, then argv's arguments after its
 * first. Into out (appended). */
void exec_shebang_argv(const char *line, const char *script, const struct strv *argv,
		       struct strv *out);

/* The script a common interpreter (resolved: its path) is given by name in
 * argv, or NULL when none is (the code given by -c, -e, -m, stdin). */
const char *exec_script_of(const char *resolved, const struct strv *argv);

/* Did the program start with the arguments read at its exec? got: the
 * command line it runs with (/proc/PID/cmdline, len bytes, each word
 * NUL-ended); argv: what was read (truncated: cut to warden's bounds,
 * each word then a prefix, fewer of them); skip: the words the kernel put
 * before argv's second for a script (its interpreters, their arguments and
 * the scripts; argv's first is dropped then), 0 for a program. */
bool exec_argv_same(const struct strv *argv, bool truncated, size_t skip, const char *got,
		    size_t len);

/* The interpreter a #! line names (its first word) into out. */
void exec_shebang_path(const char *line, char out[HASH_HEAD_LEN]);

/* The #! line of a file's first len bytes at head into out, or "". */
void exec_shebang(const char *head, size_t len, char out[HASH_HEAD_LEN]);
