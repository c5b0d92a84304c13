/* wsmade.c - the names the sandbox makes in the workspace (wsmade.h): a
 * bounded array of notes, looked through whole (only secret names are
 * noted, and only secret names that appear are asked about). */
#include "wsmade.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "../common/clock.h"
#include "../common/util.h"

#define WSMADE_FIRST 16 /* the notes' first room, doubled up to WSMADE_MAX */

struct note {
	dev_t dev;
	ino_t dir;
	char *name;
	int64_t at_ms;  /* real time of the note (file times are real time) */
	bool bound;     /* to the file below */
	dev_t fdev;
	ino_t ino;
	int64_t born_ns;
};

/* the notes grown as they come, up to WSMADE_MAX: most sessions make
 * none, and the whole table (256 KB) was a mapping made and unmapped */
struct wsmade {
	struct note *v;
	size_t n, cap;
};

struct wsmade *wsmade_new(void)
{
	return xcalloc(1, sizeof(struct wsmade));
}

void wsmade_free(struct wsmade *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	free(m);
}

void wsmade_note(struct wsmade *m, dev_t dev, ino_t dir, const char *name)
{
	struct note *slot;
	if (m->n < WSMADE_MAX) {
		if (m->n == m->cap) {
			m->cap = m->cap ? m->cap * 2 : WSMADE_FIRST;
			m->v = xrealloc(m->v, m->cap * sizeof *m->v);
		}
		slot = &m->v[m->n++];
	} else {
		/* full: the oldest goes */
		slot = &m->v[0];
		for (size_t i = 1; i < m->n; i++)
			if (m->v[i].at_ms < slot->at_ms)
				slot = &m->v[i];
		free(slot->name);
	}
	*slot = (struct note){ .dev = dev, .dir = dir, .name = xstrdup(name), .at_ms = wall_ms() };
}

/* t (ms) just before the note (file times come from a coarse clock, a
 * tick behind the note's) or at most WSMADE_WINDOW_MS after it */
static bool in_window(const struct note *x, int64_t t)
{
	return t >= x->at_ms - 50 && t <= x->at_ms + WSMADE_WINDOW_MS;
}

bool wsmade_claims(struct wsmade *m, int dirfd, const char *name)
{
	struct statx f;
	struct stat d;
	if (!m || statx(dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_BTIME | STATX_CTIME, &f) < 0 ||
	    fstat(dirfd, &d) < 0)
		return false;
	dev_t fdev = makedev(f.stx_dev_major, f.stx_dev_minor);
	/* who it is: inode and birth (or change) time, an inode number
	 * reused for another file is another file */
	const struct statx_timestamp *b = (f.stx_mask & STATX_BTIME) ? &f.stx_btime : &f.stx_ctime;
	int64_t born_ns = b->tv_sec * 1000000000LL + b->tv_nsec;
	/* when it came to the name: born there (a new file), or its change
	 * time (a rename or a link changes it) */
	int64_t came[2] = { born_ns / 1000000,
			    f.stx_ctime.tv_sec * 1000LL + f.stx_ctime.tv_nsec / 1000000 };
	struct note *best = NULL;
	for (size_t i = 0; i < m->n; i++) {
		struct note *x = &m->v[i];
		if (x->bound) {
			if (x->fdev == fdev && x->ino == f.stx_ino && x->born_ns == born_ns)
				return true; /* the sandbox's file, judged again */
			continue;
		}
		/* file times come from a coarse clock, a tick behind the note's */
		if (x->dev != d.st_dev || x->dir != d.st_ino || strcmp(x->name, name) != 0 ||
		    !(in_window(x, came[0]) || in_window(x, came[1])))
			continue;
		if (!best || x->at_ms > best->at_ms)
			best = x;
	}
	if (!best)
		return false;
	best->bound = true;
	best->fdev = fdev;
	best->ino = f.stx_ino;
	best->born_ns = born_ns;
	return true;
}
