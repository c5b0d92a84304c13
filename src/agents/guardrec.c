/* guardrec.c - the settings warden checked, shared by the sessions of one
 * agent state directory (guardrec.h): a directory of warden's own in the
 * state directory, beside what the sandbox binds (only the agent's entries,
 * .claude and .claude.json, are bound: this one is out of the agent's
 * reach), holding each checked file's text (named by agent_guard.record)
 * and one marker file per live session, each held under flock by its session. A marker nobody
 * holds is a session that ended without checking what its agent changed.
 * Everything in it is opened beneath the state directory, never through a
 * link, under the directory's own flock. */
#include "guardrec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/util.h"

#define REC_DIR ".warden-guard"

/* Each marker: held by a live session (r->live), or left by one that ended
 * without its check (r->dead: removed). */
static void scan_markers(struct guardrec *r)
{
	_cleanup_close_ int d = openat(r->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = d >= 0 ? fdopendir(d) : NULL;
	if (!dir)
		return;
	d = -1;
	struct dirent *de;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "live-", 5) != 0)
			continue;
		_cleanup_close_ int m = open_beneath(r->dfd, de->d_name, O_RDONLY | O_NONBLOCK, 0);
		if (m < 0)
			continue;
		if (flock(m, LOCK_EX | LOCK_NB) == 0) {
			r->dead = true;
			unlinkat(r->dfd, de->d_name, 0);
		} else {
			r->live = true;
		}
	}
	closedir(dir);
}

int guardrec_open(int statedir, struct guardrec *r, struct werr *e)
{
	*r = (struct guardrec){ .dfd = -1 };
	if (mkdirat(statedir, REC_DIR, 0700) < 0 && errno != EEXIST)
		return werr_errno(e, "making %s in the agent's state", REC_DIR);
	r->dfd = open_beneath(statedir, REC_DIR, O_RDONLY | O_DIRECTORY, 0);
	struct stat st;
	if (r->dfd < 0 || fstat(r->dfd, &st) < 0)
		return werr_errno(e, "%s in the agent's state", REC_DIR);
	if (st.st_uid != geteuid() || (st.st_mode & 0077))
		return werr_set(e, 0, "%s in the agent's state is not the user's own, or others may "
				"write it (`warden state reset` starts afresh)", REC_DIR);
	if (flock(r->dfd, LOCK_EX) < 0)
		return werr_errno(e, "locking %s in the agent's state", REC_DIR);
	scan_markers(r);
	return 0;
}

char *guardrec_read(struct guardrec *r, const char *name)
{
	size_t len;
	return read_regular_at(r->dfd, name, O_NOFOLLOW, GUARDREC_MAX, &len, NULL);
}

int guardrec_write(struct guardrec *r, const char *name, const char *text)
{
	return replace_beneath(r->dfd, name, text);
}

int guardrec_enter(struct guardrec *r, char **marker)
{
	unsigned char rnd[8];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return -1;
	char name[32];
	snprintf(name, sizeof name, "live-%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
		 rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]);
	int fd = open_beneath(r->dfd, name, O_RDONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX) < 0) {
		close(fd);
		unlinkat(r->dfd, name, 0);
		return -1;
	}
	*marker = xstrdup(name);
	return fd;
}

void guardrec_leave(int statedir, const char *marker)
{
	_cleanup_close_ int d = open_beneath(statedir, REC_DIR, O_RDONLY | O_DIRECTORY, 0);
	if (d < 0 || flock(d, LOCK_EX) < 0)
		return;
	unlinkat(d, marker, 0);
}

void guardrec_close(struct guardrec *r)
{
	if (r->dfd >= 0)
		close(r->dfd); /* its flock with it */
	*r = (struct guardrec){ .dfd = -1 };
}
