/* pidmap.h - the detector's map of the sandbox's processes to their
 * parents, as the exec events say (pid and ppid inside the sandbox's pid
 * namespace), for the rules with `scope tree`: open addressing in a fixed
 * table, the oldest overwritten when full. */
#pragma once
#include <stdbool.h>

#define PIDS_MAX 8192
struct pidmap {
	long pid[PIDS_MAX], ppid[PIDS_MAX];
};

/* pid's parent is ppid (a pid <= 0 or ppid < 0: nothing noted). */
void pid_note(struct pidmap *m, long pid, long ppid);
/* pid is root or below it (at most 64 generations up). */
bool pid_below(const struct pidmap *m, long pid, long root);
