/* asktext.h - the words of an `exec ask` question: the subject an answer
 * is bound to, which names one argv exactly, and the summary a human
 * reads, which shows where it was shortened and by how much. */
#pragma once
#include <stdbool.h>

#include "../../common/util.h"

/* The quoted argv of a subject, whole, up to this; a longer one is named
 * by its hash (and its start). */
#define ASKTEXT_SUBJECT_ARGV_MAX 2048
/* The quoted argv of a summary, whole, up to this; a longer one is shown
 * by its start and its end. */
#define ASKTEXT_SUMMARY_HEAD 1024
#define ASKTEXT_SUMMARY_TAIL 768

/* argv as shell words joined by a space: a word of letters, digits and
 * _%+=:,./- as it is, any other (the empty one too) in single quotes, a
 * quote in it written '\''. One text for one argv, and back. Malloc'd. */
char *exec_argv_quoted(const struct strv *argv);

/* The subject of an exec's question (malloc'd): "sha256:HEX ARGV @ CWD",
 * ARGV and CWD quoted as exec_argv_quoted does; hex NULL: "unknown".
 * When the quoted argv is longer than ASKTEXT_SUBJECT_ARGV_MAX, or was
 * cut when read (truncated), "sha256:HEX [argv sha256:AHEX, N bytes in M
 * words] START... @ CWD", AHEX the hash of the argv's words each ended by
 * a NUL (with ", cut at warden's bounds" when truncated: what was read). */
char *exec_ask_subject(const char *hex, const struct strv *argv, bool truncated, const char *cwd);

/* The summary: "run ARGV (in CWD VIA)", ARGV quoted (path when argv is
 * empty); a longer one than the head and the tail is shown as its start,
 * " [... N bytes not shown ...] " and its end; truncated says that warden
 * did not read all of it and that a yes covers this exec only. */
char *exec_ask_summary(const char *path, const struct strv *argv, bool truncated, const char *cwd,
		       const char *via);
