/* pidmap.c - the detector's map of processes to their parents
 * (pidmap.h). */
#include "pidmap.h"

#include <stddef.h>

static size_t pid_slot(const struct pidmap *m, long pid)
{
	size_t i = (size_t)pid * 2654435761u % PIDS_MAX;
	for (size_t k = 0; k < PIDS_MAX; k++, i = (i + 1) % PIDS_MAX)
		if (m->pid[i] == pid || m->pid[i] == 0)
			return i;
	return (size_t)pid % PIDS_MAX; /* full: overwrite */
}

void pid_note(struct pidmap *m, long pid, long ppid)
{
	if (pid <= 0 || ppid < 0)
		return;
	size_t i = pid_slot(m, pid);
	m->pid[i] = pid;
	m->ppid[i] = ppid;
}

bool pid_below(const struct pidmap *m, long pid, long root)
{
	for (int gen = 0; gen < 64 && pid > 0; gen++) {
		if (pid == root)
			return true;
		size_t i = pid_slot(m, pid);
		if (m->pid[i] != pid)
			return false;
		pid = m->ppid[i];
	}
	return false;
}
