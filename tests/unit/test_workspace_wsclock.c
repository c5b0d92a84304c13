/* test_workspace_wsclock.c - the sweep when the wall clock is set back
 * during a session (src/workspace/wsclock.c, sweep.c): a file changed
 * while the clock is behind has a ctime older than the start, and must
 * still count as changed. Sets the host's clock (root only, CAP_SYS_TIME;
 * skipped otherwise): 300 ms back and forward again at once, each step
 * relative (ADJ_SETOFFSET), so the clock ends where it would have been.
 * Run alone (is_parallel false): no other test sees the steps. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <unistd.h>

#include "src/policy/policy.h"
#include "src/workspace/plan.h"
#include "src/workspace/wsclock.h"
#include "check.h"
#include "profile.h"

#define STEP_MS 300

static char tmpdir[] = "/tmp/warden-test-wsclock-XXXXXX";

/* The wall clock moved by ms (negative: back); 0, or -1 with errno. */
static int step_clock(long ms)
{
	long ns = ms * 1000000L;
	struct timex tx = { .modes = ADJ_SETOFFSET | ADJ_NANO };
	tx.time.tv_sec = ns / 1000000000L;
	tx.time.tv_usec = ns % 1000000000L;
	if (tx.time.tv_usec < 0) {
		tx.time.tv_sec--;
		tx.time.tv_usec += 1000000000L;
	}
	return clock_adjtime(CLOCK_REALTIME, &tx) < 0 ? -1 : 0;
}

static char *at(const char *name) { return xasprintf("%s/%s", tmpdir, name); }

static void set_mode(const char *name, mode_t mode)
{
	_cleanup_free_ char *p = at(name);
	if (chmod(p, mode) < 0) {
		fprintf(stderr, "chmod %s: %s\n", p, strerror(errno));
		exit(2);
	}
}

static mode_t mode_of(const char *name)
{
	_cleanup_free_ char *p = at(name);
	struct stat st;
	return stat(p, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

/* prog setuid after the sweep, and kept (setuid since well before the
 * start, by more than the step) with its bit: the clock set back by
 * STEP_MS after the start, prog's bit set while it is behind; the loop
 * reads the timer (loop_read) before the clock goes forward again, or
 * the sweep finds it behind still. */
static void round_with_step(const struct policy *pol, bool loop_read)
{
	set_mode("prog", 0755);
	set_mode("kept", 04755);
	usleep((STEP_MS + 100) * 1000);
	struct werr e = { 0 };
	struct ws_plan plan = { .lock_fd = -1, .ws_fd = -1 };
	CHECK(workspace_plan(tmpdir, pol, &plan, &e) == 0);
	usleep(20 * 1000);
	if (step_clock(-STEP_MS) < 0) {
		fprintf(stderr, "setting the clock back: %s\n", strerror(errno));
		exit(2);
	}
	set_mode("prog", 04755);
	struct ws_sweep sw = { 0 };
	if (loop_read) {
		wsclock_update(plan.clock); /* the loop's read */
		if (step_clock(STEP_MS) < 0)
			fprintf(stderr, "THE CLOCK IS %d ms BEHIND: setting it forward: %s\n", STEP_MS,
				strerror(errno));
		CHECK(workspace_sweep(tmpdir, &plan, "C1", &sw, &e) == 0);
		CHECK(wsclock_steps(plan.clock) == 2);
	} else {
		CHECK(workspace_sweep(tmpdir, &plan, "C2", &sw, &e) == 0);
		if (step_clock(STEP_MS) < 0)
			fprintf(stderr, "THE CLOCK IS %d ms BEHIND: setting it forward: %s\n", STEP_MS,
				strerror(errno));
		CHECK(wsclock_steps(plan.clock) == 1);
	}
	int64_t back = wsclock_back_ns(plan.clock);
	if (back < (STEP_MS - 5) * 1000000LL || back > (STEP_MS + 50) * 1000000LL)
		fprintf(stderr, "  the clock went back %lld ns, not some %d ms\n", (long long)back,
			STEP_MS);
	CHECK(back >= (STEP_MS - 5) * 1000000LL && back <= (STEP_MS + 50) * 1000000LL);
	if (mode_of("prog") != 0755)
		fprintf(stderr, "  prog, made setuid while the clock was behind, kept mode %o\n",
			(unsigned)mode_of("prog"));
	CHECK(mode_of("prog") == 0755);
	CHECK(mode_of("kept") == 04755);
	ws_sweep_free(&sw);
	workspace_cleanup(&plan);
}

/* No step: nothing counted, the start unmoved. */
static void test_no_step(void)
{
	struct werr e = { 0 };
	struct wsclock *c = wsclock_new(&e);
	CHECK(c != NULL);
	wsclock_update(c);
	CHECK(wsclock_steps(c) == 0 && wsclock_back_ns(c) == 0);
	struct timespec t = { .tv_sec = 100, .tv_nsec = 5 };
	struct timespec u = wsclock_earlier(c, t);
	CHECK(u.tv_sec == 100 && u.tv_nsec == 5);
	wsclock_free(c);
	u = wsclock_earlier(NULL, t);
	CHECK(u.tv_sec == 100 && u.tv_nsec == 5);
}

int main(void)
{
	test_no_step();
	struct timex tx = { 0 };
	if (geteuid() != 0 || adjtimex(&tx) < 0) {
		printf("skipped: setting the clock needs root (CAP_SYS_TIME)\n");
		return failures ? 1 : 77;
	}
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	_cleanup_free_ char *prog = at("prog"), *kept = at("kept");
	if (close(open(prog, O_CREAT | O_WRONLY | O_CLOEXEC, 0755)) < 0 ||
	    close(open(kept, O_CREAT | O_WRONLY | O_CLOEXEC, 0755)) < 0) {
		perror("creating the files");
		return 2;
	}
	struct policy pol;
	load_profile(&pol, "");
	round_with_step(&pol, true);
	round_with_step(&pol, false);
	policy_free(&pol);
	_cleanup_free_ char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_status_counted("workspace_wsclock");
}
