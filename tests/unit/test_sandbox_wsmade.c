/* test_sandbox_wsmade.c - unit tests of the record of the names the
 * sandbox makes in the workspace (src/workspace/wsmade.c), in a temporary
 * directory: a noted name claims the file made there after the note, and
 * keeps it (judged again); a file with no note, one that was there before
 * the note, or a new file at a noted name once the note is bound, is not
 * claimed; a rename to a noted name is claimed (its change time); the
 * oldest note goes when the record is full. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/workspace/wsmade.h"
#include "check.h"

static void make(int dir, const char *name)
{
	int fd = openat(dir, name, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

static void note(struct wsmade *m, int dir, const char *name)
{
	struct stat st;
	CHECK(fstat(dir, &st) == 0);
	wsmade_note(m, st.st_dev, st.st_ino, name);
}

static void pause_ms(long ms)
{
	struct timespec t = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
	nanosleep(&t, NULL);
}

int main(void)
{
	char tmpl[] = "/tmp/wsmade-XXXXXX";
	CHECK(mkdtemp(tmpl) != NULL);
	int dir = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dir >= 0);
	struct wsmade *m = wsmade_new();

	/* the agent's own: noted, then made */
	note(m, dir, ".env");
	make(dir, ".env");
	CHECK(wsmade_claims(m, dir, ".env"));
	CHECK(wsmade_claims(m, dir, ".env")); /* bound: judged again */
	/* the host's: no note */
	make(dir, ".env.production");
	CHECK(!wsmade_claims(m, dir, ".env.production"));
	/* nothing there */
	CHECK(!wsmade_claims(m, dir, "missing.key"));
	/* a new file at the agent's name, once its note is bound: the host's */
	CHECK(unlinkat(dir, ".env", 0) == 0);
	pause_ms(5);
	make(dir, ".env");
	CHECK(!wsmade_claims(m, dir, ".env"));
	/* a file there before the note is not the note's */
	make(dir, "old.pem");
	pause_ms(200);
	note(m, dir, "old.pem");
	CHECK(!wsmade_claims(m, dir, "old.pem"));
	/* a note names a directory: the same name elsewhere is not it */
	CHECK(mkdirat(dir, "sub", 0700) == 0);
	int sub = openat(dir, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(sub >= 0);
	note(m, dir, "server.key");
	make(sub, "server.key");
	CHECK(!wsmade_claims(m, sub, "server.key"));
	/* renamed by the agent to a noted name: claimed */
	make(dir, "draft");
	pause_ms(200);
	note(m, dir, ".env.local");
	CHECK(renameat(dir, "draft", dir, ".env.local") == 0);
	CHECK(wsmade_claims(m, dir, ".env.local"));
	/* full: the oldest note goes */
	note(m, dir, "first.key");
	char name[32];
	for (int i = 0; i < WSMADE_MAX; i++) {
		snprintf(name, sizeof name, "n%d.key", i);
		note(m, dir, name);
	}
	make(dir, "first.key");
	CHECK(!wsmade_claims(m, dir, "first.key"));
	make(dir, "n0.key");
	CHECK(wsmade_claims(m, dir, "n0.key"));
	CHECK(wsmade_claims(NULL, dir, "n0.key") == false);
	wsmade_free(m);
	close(sub);
	close(dir);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpl);
	CHECK(system(cmd) == 0);
	return check_status_counted("sandbox_wsmade");
}
