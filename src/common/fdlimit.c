/* fdlimit.c - warden's limit of open files raised, the user's kept
 * (fdlimit.h). */
#include "fdlimit.h"

#include <errno.h>
#include <stdbool.h>

static rlim_t user_soft = RLIM_INFINITY;
static bool noted;

void fdlimit_raise(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (!noted) {
		user_soft = rl.rlim_cur;
		noted = true;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

rlim_t fdlimit_user(void)
{
	return user_soft;
}

int fdlimit_check(struct werr *e)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return werr_errno(e, "the limit of open files (getrlimit)");
	if (rl.rlim_max >= FDLIMIT_MIN)
		return 0;
	return werr_set(e, 0, "the hard limit of open files is %llu here (`ulimit -Hn`), and a "
			"session needs at least %d: raise it where it is set (`nofile` in "
			"/etc/security/limits.conf, LimitNOFILE= in a systemd unit, `--ulimit "
			"nofile=%d` for a container, a parent shell's `ulimit -Hn`)",
			(unsigned long long)rl.rlim_max, FDLIMIT_MIN, FDLIMIT_MIN);
}
