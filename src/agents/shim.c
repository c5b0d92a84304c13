/* shim.c - what a warden shim file holds and how one is recognised (see
 * shim.h). */
#include "shim.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/util.h"

bool shim_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64 || name[0] == '.' || name[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '.' || c == '_' || c == '+' || c == '-';
		if (!ok)
			return false;
	}
	return true;
}

bool shim_is(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	char buf[sizeof SHIM_MAGIC - 1];
	ssize_t r = pread(fd, buf, sizeof buf, 0);
	return r == (ssize_t)sizeof buf && memcmp(buf, SHIM_MAGIC, sizeof buf) == 0;
}

/* A path fit to stand between single quotes in a shell script. */
static bool quotable(const char *s)
{
	return s[0] == '/' && !strchr(s, '\'') && !strchr(s, '\n');
}

char *shim_text(const char *warden, const char *name)
{
	if (!quotable(warden) || !shim_name_ok(name))
		return NULL;
	/* warden run finds the real NAME on PATH past every shim
	 * (discover.c), so the shim never runs itself again */
	return xasprintf(SHIM_MAGIC
			 "# %s under warden: made by `warden shim install %s`;\n"
			 "# `warden shim remove %s` removes it.\n"
			 "exec '%s' run -- %s \"$@\"\n",
			 name, name, name, warden, name);
}
