/* sysnr.h - a system call's number by its name, for the calls newer than
 * the libseccomp warden builds with (Debian 12's 2.5.4 knows none past
 * Linux 6.6's fchmodat2): the xattr calls' *at forms (Linux 6.13), so that
 * the filter that hands them to the supervisor (src/sandbox/seccomp.c)
 * and the supervisor that records them (src/supervisor/notefile.c) name
 * the same calls. The numbers are the generic table's, the same on x86_64
 * and aarch64; elsewhere, and for any other name libseccomp does not know,
 * a negative number (no such call here). */
#ifndef WARDEN_COMMON_SYSNR_H
#define WARDEN_COMMON_SYSNR_H

#include <seccomp.h>
#include <string.h>

static inline int sysnr(const char *name)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr >= 0)
		return nr;
#if defined(__x86_64__) || defined(__aarch64__)
	static const struct {
		const char *name;
		int nr;
	} newer[] = { { "setxattrat", 463 }, { "removexattrat", 466 } };
	for (size_t i = 0; i < sizeof newer / sizeof newer[0]; i++)
		if (strcmp(name, newer[i].name) == 0)
			return newer[i].nr;
#endif
	return nr;
}

#endif
