/* wsclock.c - how far the wall clock was set back while a session ran
 * (wsclock.h): a timer on the wall clock the kernel cancels when the clock
 * is set, and the wall clock's distance from the boot clock before and
 * after each step. */
#include "wsclock.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "../common/util.h"

struct wsclock {
	int fd;           /* the timer, cancelled by a step of the wall clock */
	int64_t off0;     /* the wall clock less the boot clock at the start, ns */
	int64_t back;     /* the most it was set back since, ns */
	unsigned steps;
};

/* The wall clock less the boot clock (which counts suspend too, as the
 * wall clock does): constant but for steps and slewing. */
static int64_t offset_ns(void)
{
	struct timespec b, r;
	clock_gettime(CLOCK_BOOTTIME, &b);
	clock_gettime(CLOCK_REALTIME, &r);
	return ((int64_t)r.tv_sec - b.tv_sec) * 1000000000LL + (r.tv_nsec - b.tv_nsec);
}

/* Armed far in the future: it never fires, it is only ever cancelled. */
static int arm(int fd)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct itimerspec far = { .it_value = { .tv_sec = now.tv_sec + 100LL * 365 * 86400 } };
	return timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &far, NULL);
}

struct wsclock *wsclock_new(struct werr *e)
{
	int fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0 || arm(fd) < 0) {
		werr_errno(e, "a timer for the wall clock's steps (the sweep's test of what "
			   "changed during the session needs it)");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	struct wsclock *c = xcalloc(1, sizeof *c);
	/* armed first, then measured: a step between the two is seen */
	*c = (struct wsclock){ .fd = fd, .off0 = offset_ns() };
	return c;
}

void wsclock_update(struct wsclock *c)
{
	uint64_t n;
	if (!c || c->fd < 0 || read(c->fd, &n, sizeof n) >= 0 || errno != ECANCELED)
		return;
	/* armed again before the measure, for the same reason */
	if (arm(c->fd) < 0) {
		close(c->fd);
		c->fd = -1;
	}
	c->steps++;
	int64_t back = c->off0 - offset_ns();
	if (back > c->back)
		c->back = back;
}

int64_t wsclock_back_ns(const struct wsclock *c)
{
	return c ? c->back : 0;
}

unsigned wsclock_steps(const struct wsclock *c)
{
	return c ? c->steps : 0;
}

struct timespec wsclock_earlier(const struct wsclock *c, struct timespec t)
{
	int64_t ns = (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec - wsclock_back_ns(c);
	return (struct timespec){ .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };
}

static void on_ready(struct loop *l, const struct source *src, uint32_t events)
{
	(void)l;
	(void)events;
	wsclock_update(src->ctx);
}

int wsclock_watch(struct loop *l, struct wsclock *c, struct werr *e)
{
	return loop_add(l, "the wall clock's steps", c->fd, on_ready, c, e);
}

void wsclock_free(struct wsclock *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}
