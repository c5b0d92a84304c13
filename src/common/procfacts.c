/* procfacts.c - facts about a host process read from its /proc/PID/status
 * or stat (procfacts.h). */
#include "procfacts.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* /proc/HOST/NAME's text into buf (NUL-terminated); false when gone. */
static bool read_proc(pid_t host, const char *name, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)host, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

void target_status(pid_t host, long *inner, pid_t *ppid_host, pid_t *tgid, int *threads)
{
	char buf[4096];
	*inner = -1;
	if (ppid_host)
		*ppid_host = 0;
	if (tgid)
		*tgid = 0;
	if (threads)
		*threads = 0;
	if (!read_proc(host, "status", buf, sizeof buf))
		return;
	for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (ppid_host && strncmp(line, "PPid:", 5) == 0)
			*ppid_host = (pid_t)strtol(line + 5, NULL, 10);
		else if (tgid && strncmp(line, "Tgid:", 5) == 0)
			*tgid = (pid_t)strtol(line + 5, NULL, 10);
		else if (threads && strncmp(line, "Threads:", 8) == 0)
			*threads = (int)strtol(line + 8, NULL, 10);
		else if (strncmp(line, "NSpid:", 6) == 0) {
			char *end = strchr(line, '\n'), *last = line + 6;
			for (char *c = line + 6; c < (end ? end : line + strlen(line)); c++)
				if (*c == '\t' || *c == ' ')
					last = c + 1;
			*inner = strtol(last, NULL, 10);
			if (!threads)
				break; /* NSpid comes after the others but Threads */
		}
	}
}

void target_pid_info(pid_t host, long *inner, pid_t *ppid_host)
{
	target_status(host, inner, ppid_host, NULL, NULL);
}

void target_stat(pid_t host, pid_t *ppid_host, int *threads)
{
	char buf[1024];
	*ppid_host = 0;
	*threads = 0;
	if (!read_proc(host, "stat", buf, sizeof buf))
		return;
	/* "PID (COMM) S PPID ..." where COMM may hold anything, ')' too:
	 * the fields start after the last ')'; threads is the 20th field */
	char *f = strrchr(buf, ')');
	if (!f)
		return;
	f++;
	for (int field = 3; field <= 20 && f; field++) {
		f += strspn(f, " ");
		if (field == 4)
			*ppid_host = (pid_t)strtol(f, NULL, 10);
		else if (field == 20)
			*threads = (int)strtol(f, NULL, 10);
		f = strchr(f, ' ');
	}
}
