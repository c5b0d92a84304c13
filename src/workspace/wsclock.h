/* wsclock.h - how far the wall clock was set back while a session ran.
 * The sweep tells what changed during the session by an inode's ctime
 * against the plan's start (sweep.c): the kernel stamps ctime from the
 * wall clock, which an administrator, NTP or a resumed laptop can set
 * back, and a file changed after such a step then looks older than the
 * start. A timer that the kernel cancels whenever the clock is set
 * (TFD_TIMER_CANCEL_ON_SET) tells each step; the wall clock's distance
 * from the boot clock, read at the start and after each step, tells how
 * far back it went at most; the sweep counts changes from that much
 * earlier. Slewing (adjtime) never moves the wall clock back and is no
 * step. Two steps closer together than the loop reads the first are seen
 * as one (what the clock was between them is not known). */
#pragma once
#include <stdint.h>
#include <time.h>

#include "../common/err.h"
#include "../common/loop.h"

struct wsclock;

/* The clock watched from now on; NULL with e filled when the timer cannot
 * be had (too many open files). */
struct wsclock *wsclock_new(struct werr *e);
/* Read the timer: a step since the last read is measured and the timer
 * armed again. The loop calls it when the timer is ready; the sweep calls
 * it once more for a step after the loop. */
void wsclock_update(struct wsclock *c);
/* The most the wall clock was set back since wsclock_new, in nanoseconds
 * (0 if never; also 0 for NULL); and how many steps it took. */
int64_t wsclock_back_ns(const struct wsclock *c);
unsigned wsclock_steps(const struct wsclock *c);
/* t moved back by what the clock was set back (wsclock_back_ns). */
struct timespec wsclock_earlier(const struct wsclock *c, struct timespec t);
/* Its timer read by the loop as the session runs. */
int wsclock_watch(struct loop *l, struct wsclock *c, struct werr *e);
void wsclock_free(struct wsclock *c);
