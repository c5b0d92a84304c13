/* clock.h - the clocks warden measures and bounds its waits with, in the
 * units it counts in: the monotonic clock in milliseconds (deadlines,
 * durations on the record), as a timespec and in nanoseconds, the
 * milliseconds since a monotonic instant and until a deadline, and the
 * wall clock in milliseconds (when a thing happened, as the host's other
 * records say it). One definition each. */
#pragma once
#include <stdint.h>
#include <time.h>

/* Now on the monotonic clock, in milliseconds (fractional). */
static inline double mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Now on the monotonic clock, as a timespec (deadlines kept as such). */
static inline struct timespec mono_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t;
}

/* The whole milliseconds from now until deadline (monotonic), at least 0. */
static inline long ms_left(const struct timespec *deadline)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	long ms = (long)(deadline->tv_sec - t.tv_sec) * 1000 + (deadline->tv_nsec - t.tv_nsec) / 1000000;
	return ms > 0 ? ms : 0;
}

/* Now on the monotonic clock, in nanoseconds. */
static inline uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The milliseconds since t0, taken on the monotonic clock. */
static inline double ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Now on the wall clock, in whole milliseconds since the epoch. */
static inline int64_t wall_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}
