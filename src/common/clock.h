/* clock.h - the clocks warden measures and bounds its waits with, in the
 * units it counts in: the monotonic clock in milliseconds (deadlines,
 * durations on the record), as a timespec and in nanoseconds, the
 * milliseconds since a monotonic instant and until a deadline, and the
 * wall clock in milliseconds (when a thing happened, as the host's other
 * records say it), and a time's UTC calendar fields. One definition each. */
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

/* The deadline ms from now on the monotonic clock, as a timespec. */
static inline struct timespec mono_after_ms(unsigned ms)
{
	struct timespec t = mono_now();
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
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

/* The UTC calendar fields of t, seconds since the epoch: computed here, as
 * the log's stamps need them, because glibc's gmtime_r reads the local
 * time zone's file first (some seven system calls a session has no use
 * for). The days counted from 0000-03-01, in 400-year eras of 146,097
 * days, each era's years starting in March (so a leap day ends one). */
struct utc_fields {
	int year, mon, day; /* mon 1-12, day 1-31 */
	int hour, min, sec;
};
static inline struct utc_fields utc_fields_of(int64_t t)
{
	int64_t days = t / 86400, rem = t % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	days += 719468; /* 1970-01-01 is day 719,468 from 0000-03-01 */
	int64_t era = (days >= 0 ? days : days - 146096) / 146097;
	int64_t doe = days - era * 146097;                                   /* 0-146096 */
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0-399 */
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* 0-365 */
	int64_t mp = (5 * doy + 2) / 153;                                    /* 0 = March */
	struct utc_fields u = {
		.day = (int)(doy - (153 * mp + 2) / 5 + 1),
		.mon = (int)(mp < 10 ? mp + 3 : mp - 9),
		.hour = (int)(rem / 3600), .min = (int)(rem / 60 % 60), .sec = (int)(rem % 60),
	};
	u.year = (int)(yoe + era * 400 + (u.mon <= 2));
	return u;
}
