/* selflimits.c - warden's own resource limits raised, the user's kept
 * (selflimits.h). */
#include "selflimits.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

static struct user_limits user = { RLIM_INFINITY, RLIM_INFINITY };
static bool noted;

static void raise_stack(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_STACK, &rl) < 0 || rl.rlim_cur >= SELFLIMITS_STACK_MIN)
		return;
	rlim_t want = rl.rlim_max < SELFLIMITS_STACK ? rl.rlim_max : SELFLIMITS_STACK;
	if (want <= rl.rlim_cur)
		return;
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_STACK, &rl) < 0)
		return;
	/* the threads' stacks were sized by the limit at start */
	pthread_attr_t a;
	if (pthread_getattr_default_np(&a) == 0) {
		pthread_attr_setstacksize(&a, want);
		pthread_setattr_default_np(&a);
		pthread_attr_destroy(&a);
	}
}

void selflimits_raise(void)
{
	struct rlimit rl;
	if (!noted) {
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
			user.nofile = rl.rlim_cur;
		if (getrlimit(RLIMIT_STACK, &rl) == 0)
			user.stack = rl.rlim_cur;
		noted = true;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	raise_stack();
}

struct user_limits selflimits_user(void)
{
	return user;
}

static void give_back(int which, rlim_t soft)
{
	struct rlimit rl;
	if (soft && soft != RLIM_INFINITY && getrlimit(which, &rl) == 0 && soft < rl.rlim_cur) {
		rl.rlim_cur = soft;
		setrlimit(which, &rl);
	}
}

void selflimits_give_back(const struct user_limits *u)
{
	give_back(RLIMIT_NOFILE, u->nofile);
	give_back(RLIMIT_STACK, u->stack);
}

size_t selflimits_conns(unsigned fds_per_conn, unsigned shares, size_t ceiling)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return ceiling;
	if (!shares)
		shares = 1;
	rlim_t per = (rlim_t)fds_per_conn * shares;
	rlim_t n = rl.rlim_cur > SELFLIMITS_FD_RESERVE + 16 * per
		   ? (rl.rlim_cur - SELFLIMITS_FD_RESERVE) / per : 16;
	return n < ceiling ? (size_t)n : ceiling;
}

int selflimits_check(struct werr *e)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return werr_errno(e, "the limit of open files (getrlimit)");
	if (rl.rlim_max < SELFLIMITS_NOFILE_MIN)
		return werr_set(e, 0, "the hard limit of open files is %llu here (`ulimit -Hn`), and a "
				"session needs at least %d: raise it where it is set (`nofile` in "
				"/etc/security/limits.conf, LimitNOFILE= in a systemd unit, `--ulimit "
				"nofile=%d` for a container, a parent shell's `ulimit -Hn`)",
				(unsigned long long)rl.rlim_max, SELFLIMITS_NOFILE_MIN,
				SELFLIMITS_NOFILE_MIN);
	if (getrlimit(RLIMIT_STACK, &rl) < 0)
		return werr_errno(e, "the limit of the stack (getrlimit)");
	if (rl.rlim_cur < SELFLIMITS_STACK_MIN)
		return werr_set(e, 0, "the limit of the stack is %llu KiB here (`ulimit -s`; hard "
				"limit %llu KiB), and warden needs %d KiB: raise it where it is set "
				"(`stack` in /etc/security/limits.conf, LimitSTACK= in a systemd unit, "
				"a parent shell's `ulimit -Hs`)", (unsigned long long)rl.rlim_cur / 1024,
				(unsigned long long)rl.rlim_max / 1024, SELFLIMITS_STACK_MIN / 1024);
	return 0;
}
