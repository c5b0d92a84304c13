/* rawsys.h - system calls that touch nothing of the caller's memory but
 * their arguments: no errno (thread-local), no cancellation state, no
 * lock of libc's. They return the kernel's answer: a result, or -errno.
 *
 * For code that runs on memory it shares with a process it does not
 * stop: the file reads' helper, a clone of the supervisor that shares its
 * address space and its thread pointer (src/supervisor/fanread.c), whose
 * libc calls would write the supervisor's main thread's errno while that
 * thread runs. RAWSYS_NATIVE says the call is made here, in assembly;
 * elsewhere rawsys goes through libc's syscall(), and the caller must
 * not share memory (fanread.c then forks). */
#ifndef WARDEN_COMMON_RAWSYS_H
#define WARDEN_COMMON_RAWSYS_H

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define RAWSYS_NATIVE 1
static inline long rawsys6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define RAWSYS_NATIVE 1
static inline long rawsys6(long nr, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory", "cc");
	return x0;
}
#else
#define RAWSYS_NATIVE 0
static inline long rawsys6(long nr, long a, long b, long c, long d, long e, long f)
{
	long r = syscall(nr, a, b, c, d, e, f);
	return r < 0 ? -errno : r;
}
#endif

/* rawsys(SYS_x, args...): up to six arguments, each passed as a long */
#define RAWSYS_ARGS_(nr, a, b, c, d, e, f, ...) \
	rawsys6((long)(nr), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define rawsys(...) RAWSYS_ARGS_(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)

/* The calling process ended with status, whatever its other threads (none
 * in a helper). */
static inline __attribute__((noreturn)) void rawsys_exit(int status)
{
	for (;;)
		rawsys(SYS_exit_group, status);
}

#endif
