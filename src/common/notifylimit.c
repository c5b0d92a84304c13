/* notifylimit.c - which of the kernel's inotify and fanotify limits a
 * refused call reached, said with its sysctl (notifylimit.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "notifylimit.h"
#include "util.h"

static const struct {
	int err;
	const char *sysctl; /* under /proc/sys/, dots for slashes */
	const char *what;
	const char *suggest;
} limits[] = {
	[NOTIFY_INOTIFY_INSTANCES] = { EMFILE, "fs.inotify.max_user_instances",
				       "inotify instances", "1024" },
	[NOTIFY_INOTIFY_WATCHES] = { ENOSPC, "fs.inotify.max_user_watches", "inotify watches",
				     "524288" },
	[NOTIFY_FANOTIFY_GROUPS] = { EMFILE, "fs.fanotify.max_user_groups", "fanotify groups",
				     "1024" },
	[NOTIFY_FANOTIFY_MARKS] = { ENOSPC, "fs.fanotify.max_user_marks", "fanotify marks",
				    "1048576" },
};

const char *notify_limit_said(enum notify_limit kind, int err, char *buf, size_t len)
{
	if ((size_t)kind >= sizeof limits / sizeof limits[0] || err != limits[kind].err)
		return NULL;
	if (err == EMFILE) {
		/* the same errno for the process's own limit of descriptors:
		 * one more that opens says it is not that one */
		int probe = open("/", O_PATH | O_CLOEXEC);
		if (probe < 0 && errno == EMFILE)
			return NULL;
		if (probe >= 0)
			close(probe);
	}
	char path[64], now[32] = "";
	snprintf(path, sizeof path, "/proc/sys/%s", limits[kind].sysctl);
	for (char *p = path + strlen("/proc/sys/"); *p; p++)
		if (*p == '.')
			*p = '/';
	if (read_small_file(path, now, sizeof now, O_NONBLOCK) > 0)
		now[strcspn(now, "\n")] = '\0';
	snprintf(buf, len,
		 "the kernel's limit of %s for your user is reached (sysctl %s%s%s%s; every "
		 "program of your user counts against it: editors, IDEs, file watchers): raise "
		 "it, e.g. `sysctl -w %s=%s`, and keep it in a file under /etc/sysctl.d/",
		 limits[kind].what, limits[kind].sysctl, now[0] ? ", " : "", now,
		 now[0] ? " here" : "", limits[kind].sysctl, limits[kind].suggest);
	return buf;
}
