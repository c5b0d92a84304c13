/* clock.h - the clocks warden measures and bounds its waits with, in the
 * units it counts in: the monotonic clock in milliseconds (deadlines,
 * durations on the record) and in nanoseconds, the milliseconds since a
 * monotonic instant, and the wall clock in milliseconds (when a thing
 * happened, as the host's other records say it). One definition each. */
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
