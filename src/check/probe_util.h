/* probe_util.h - what the probe group files share (internal to src/check):
 * how a probe states its result (allowed/denied with a detail), and the few
 * helpers more than one group uses. A helper only one group needs stays
 * static in that group's file. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "probes.h"

/* The name of an errno value ("EPERM"), "E?" if unknown. */
const char *ename(int err);

__attribute__((format(printf, 3, 4)))
void probe_result_set(struct probe_result *r, bool allowed, const char *fmt, ...);

#define allowed(r, ...) probe_result_set((r), true, __VA_ARGS__)
#define denied(r, ...) probe_result_set((r), false, __VA_ARGS__)

void denied_errno(struct probe_result *r, int err);

/* "major:minor" of d into dev. */
void set_dev(char dev[32], dev_t d);

/* rel with "{t}" replaced by token (malloc'ed). */
char *expand_token(const char *rel, const char *token);

/* The host path of the probe's verify entry i (malloc'ed; NULL: base unknown). */
char *vpath(const struct probe_ctx *c, const struct probe *self, int i);

/* open() and close() only: never read a real user's file. 0 or errno. */
int open_only(const char *path);

/* The first path that opens makes the probe allowed; otherwise the most
 * telling errno (anything but ENOENT first). NULL entries are skipped. */
/* Try each path (NULL ones skipped) with try_one, which returns 0 or an
 * errno: the first that works makes the probe allowed ("VERB PATH");
 * otherwise it is denied with the most telling errno (anything but ENOENT
 * first), named with its path when several were tried or always_name. */
void first_of(struct probe_result *r, char **paths, size_t n, const char *verb,
	      int (*try_one)(const char *path, void *ctx), void *ctx, bool always_name);
void open_any(struct probe_result *r, char **paths, size_t n);

/* One path to open (malloc'ed, freed here): allowed when it opens. */
void one_path(struct probe_result *r, char *path);

/* The start time of a process (clock ticks since boot), from /proc. */
bool proc_starttime(pid_t pid, unsigned long long *out);

/* The device of the file at path (not followed) into dev, if it exists. */
void lstat_dev(const char *path, char dev[32]);

/* ---- forked children (process and exec probes) ------------------------- */

/* For a result a probe has no use for (a child's write to its parent). */
static inline void ignore_result(ssize_t x) { (void)x; }

/* Fork with a close-on-exec pipe from child to parent. In the child, *wfd
 * is its end; in the parent, *rfd is the other. -1 with errno. */
pid_t fork_with_pipe(int *rfd, int *wfd);

/* The parent's side: the one int the child wrote, if it did, and the child
 * reaped (its wait status in *status). Returns the bytes read. */
ssize_t child_report(int rfd, pid_t pid, int *err, int *status);
