/* test_check_fspath.c - unit tests of a host path as the mount table spells
 * it (src/check/fspath.c, what `warden check` hands its mount table probe):
 * a path under /proc lies on proc's device at the path within it, its links
 * resolved, and a path not there yet where its nearest ancestor is (unless
 * the rest needs resolving); relative and NULL paths give nothing; the text form
 * reads back, and text that is not that form (no length, a length past the
 * end, a path that is not absolute) is refused; a mount's root below the
 * path gives the rest, and one beside it (a longer name), on another device
 * or above it gives none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "src/check/fspath.h"
#include "src/common/util.h"
#include "check.h"

static void of_proc(void)
{
	struct fspath f;
	CHECK(fspath_of("/proc/self/status", &f));
	_cleanup_free_ char *within = xasprintf("/%d/status", (int)getpid());
	_cleanup_free_ char *real = xasprintf("/proc/%d/status", (int)getpid());
	CHECK_STR(f.within, within);
	CHECK_STR(f.real, real);
	struct stat st;
	CHECK(stat("/proc/self/status", &st) == 0);
	CHECK(f.maj == major(st.st_dev) && f.min == minor(st.st_dev));
	CHECK(fspath_of("/proc", &f));
	CHECK_STR(f.within, "/");
	CHECK_STR(f.real, "/proc");
	CHECK(!fspath_of("proc/self", &f));
	/* what does not exist yet lies where its nearest ancestor does */
	CHECK(fspath_of("/proc/self/no-such/entry", &f));
	_cleanup_free_ char *missing = xasprintf("/%d/no-such/entry", (int)getpid());
	CHECK_STR(f.within, missing);
	CHECK(!fspath_of("/proc/self/no-such/..", &f));
	CHECK(!fspath_of("/proc/self/no-such/.", &f));
	CHECK(!fspath_of("/proc/self/no-such/", &f));
	CHECK(!fspath_of("/proc/self/status/x", &f)); /* ENOTDIR: not a place to be */
	CHECK(!fspath_of(NULL, &f));
}

static void text(void)
{
	struct fspath f = { .maj = 8, .min = 17 }, g;
	strcpy(f.within, "/user");
	strcpy(f.real, "/home/user");
	_cleanup_free_ char *s = fspath_format(&f);
	CHECK_STR(s, "8:17:5:/user/home/user");
	CHECK(fspath_parse(s, &g));
	CHECK(g.maj == 8 && g.min == 17);
	CHECK_STR(g.within, "/user");
	CHECK_STR(g.real, "/home/user");
	CHECK(fspath_parse("0:39:1://x", &g));
	CHECK_STR(g.within, "/");
	CHECK_STR(g.real, "/x");
	const char *bad[] = { "", "8:17", "8:17:/user", "8:17:0:/user", "8:17:5:/user",
			      "8:17:9:/user/home", "8:17:2:/ab", "8:17:1:u/home", "x:17:1://x",
			      "8:17:-1://x" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (fspath_parse(bad[i], &g)) {
			fprintf(stderr, "parsed: %s\n", bad[i]);
			CHECK(!"bad text parsed");
		}
	CHECK(!fspath_parse(NULL, &g));
}

static void below(void)
{
	struct fspath f = { .maj = 8, .min = 17 };
	strcpy(f.within, "/user");
	CHECK_STR(fspath_below(&f, 8, 17, "/user"), "");
	CHECK_STR(fspath_below(&f, 8, 17, "/user/sub"), "/sub");
	CHECK(!fspath_below(&f, 8, 17, "/username"));
	CHECK(!fspath_below(&f, 8, 17, "/"));
	CHECK(!fspath_below(&f, 8, 18, "/user/sub"));
	strcpy(f.within, "/");
	CHECK_STR(fspath_below(&f, 8, 17, "/"), "");
	CHECK_STR(fspath_below(&f, 8, 17, "/x/y"), "/x/y");
}

int main(void)
{
	of_proc();
	text();
	below();
	return check_status_counted("check_fspath");
}
