/* program.h - what really runs when an exec names the dynamic loader or a
 * common interpreter: the program the loader maps itself (`ld.so ./x`),
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

/* The command line the kernel gives a script's interpreter: the #! line's
 * interpreter and its one optional argument (the rest of the line, as one
 * word), the script as the exec named it, then argv's arguments after its
 * first. Into out (appended). */
void exec_shebang_argv(const char *line, const char *script, const struct strv *argv,
		       struct strv *out);

/* The script a common interpreter (resolved: its path) is given by name in
 * argv, or NULL when none is (the code given by -c, -e, -m, stdin). */
const char *exec_script_of(const char *resolved, const struct strv *argv);

/* The #! line of a file's first len bytes at head into out, or "". */
void exec_shebang(const char *head, size_t len, char out[HASH_HEAD_LEN]);
