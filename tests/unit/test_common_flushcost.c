/* test_common_flushcost.c - unit tests of src/common/flushcost.h, which
 * decides whether a session's supervisor keeps to one CPU: the kept line
 * read strictly (this boot's only, malformed ones refused), the rule,
 * a measure that gives figures, leaves the caller's CPU set and no child
 * behind and says false on one CPU, and the boot's figures kept and
 * reused: a line of this boot is taken as it is, another boot's or a FIFO
 * in its place measured again without a hang. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/common/flushcost.h"
#include "src/common/util.h"
#include "check.h"

#define BOOT "8798c1da-acbd-4f77-bd0c-0748b385495b"

static void test_parse(void)
{
	struct flushcost fc = { 0 };
	char line[160];
	flushcost_format(line, sizeof line, BOOT, &(struct flushcost){ 1674, 5767 });
	CHECK_STR(line, "warden-flushcost 1 " BOOT " 1674 5767\n");
	CHECK(flushcost_parse(line, BOOT, &fc) == 0);
	CHECK(fc.local_ns == 1674 && fc.remote_ns == 5767);
	static const char *bad[] = {
		"",
		"warden-flushcost 1 " BOOT " 1674 5767",        /* no newline */
		"warden-flushcost 1 " BOOT " 1674 5767\nx",     /* more after it */
		"warden-flushcost 2 " BOOT " 1674 5767\n",      /* another format */
		"warden-flushcost 1 0000-other-boot 1674 5767\n",
		"warden-flushcost 1 " BOOT " 0 5767\n",         /* a figure of nothing */
		"warden-flushcost 1 " BOOT " -1 5767\n",
		"warden-flushcost 1 " BOOT " 1674  5767\n",
		"warden-flushcost 1 " BOOT " 1674 9999999999999\n", /* too long */
		"warden-flushcost 1 " BOOT " 1674\n",
		"warden-flushcost 1 " BOOT "x 1674 5767\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		fc = (struct flushcost){ 7, 7 };
		CHECK(flushcost_parse(bad[i], BOOT, &fc) == -1);
		CHECK(fc.local_ns == 7 && fc.remote_ns == 7);
	}
	CHECK(flushcost_parse(line, "", &fc) == -1);
}

static void test_rule(void)
{
	CHECK(flushcost_pin_pays(&(struct flushcost){ 20000, 72000 })); /* the PVM host's */
	CHECK(flushcost_pin_pays(&(struct flushcost){ 1000, 2000 }));
	CHECK(!flushcost_pin_pays(&(struct flushcost){ 1000, 1999 }));
	CHECK(!flushcost_pin_pays(&(struct flushcost){ 1700, 1800 })); /* Firecracker's */
}

static void test_measure(void)
{
	cpu_set_t before, after;
	CHECK(sched_getaffinity(0, sizeof before, &before) == 0);
	struct flushcost fc;
	if (CPU_COUNT(&before) >= 2) {
		CHECK(flushcost_measure(&fc));
		/* a page's copy takes more than a nanosecond and less than a
		 * millisecond anywhere this runs */
		CHECK(fc.local_ns > 1 && fc.local_ns < 1000000);
		CHECK(fc.remote_ns > 1 && fc.remote_ns < 1000000);
		CHECK(sched_getaffinity(0, sizeof after, &after) == 0 && CPU_EQUAL(&before, &after));
		errno = 0;
		CHECK(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD);
	} else {
		fprintf(stderr, "test_measure: one CPU here, the two-CPU checks skipped\n");
	}
	/* one CPU in the set: nothing to measure */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
	CHECK(!flushcost_measure(&fc));
	CHECK(sched_setaffinity(0, sizeof before, &before) == 0);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_kept(void)
{
	cpu_set_t set;
	char boot[64];
	if (sched_getaffinity(0, sizeof set, &set) < 0 || CPU_COUNT(&set) < 2 ||
	    !kernel_boot_id(boot, sizeof boot)) {
		fprintf(stderr, "test_kept: one CPU or no boot id here, skipped\n");
		return;
	}
	char dir[] = "/tmp/flushcost.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char sub[64], path[96], line[160];
	snprintf(sub, sizeof sub, "%s/cache", dir);
	snprintf(path, sizeof path, "%s/" FLUSHCOST_FILE, sub);
	/* measured and written, the directory made */
	struct flushcost fc, kept;
	CHECK(flushcost_get(sub, &fc));
	_cleanup_free_ char *text = read_text_file(path);
	CHECK(text && flushcost_parse(text, boot, &kept) == 0 && kept.local_ns == fc.local_ns &&
	      kept.remote_ns == fc.remote_ns);
	struct stat st;
	CHECK(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0700);
	/* this boot's line taken as it is: figures no measure gives */
	flushcost_format(line, sizeof line, boot, &(struct flushcost){ 1, 2 });
	write_text(path, line);
	CHECK(flushcost_get(sub, &fc) && fc.local_ns == 1 && fc.remote_ns == 2);
	/* another boot's measured again, and replaced */
	flushcost_format(line, sizeof line, "another-boot", &(struct flushcost){ 1, 2 });
	write_text(path, line);
	CHECK(flushcost_get(sub, &fc) && fc.local_ns > 1);
	free(text);
	text = read_text_file(path);
	CHECK(text && flushcost_parse(text, boot, &kept) == 0 && kept.local_ns == fc.local_ns);
	/* a FIFO in its place: no wait on it, measured, replaced by a file */
	CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
	time_t t0 = time(NULL);
	CHECK(flushcost_get(sub, &fc) && fc.local_ns > 1);
	CHECK(time(NULL) - t0 < 5);
	CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode));
	/* no directory: measured, not kept */
	CHECK(flushcost_get(NULL, &fc) && fc.local_ns > 1);
	unlink(path);
	rmdir(sub);
	rmdir(dir);
}

int main(void)
{
	test_parse();
	test_rule();
	test_measure();
	test_kept();
	printf("%d checks\n", checks);
	return check_status();
}
