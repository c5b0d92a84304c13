/* limit.c - the values of `limit KIND VALUE`: parsing them from a profile
 * and writing them back the way a profile writes them (policy show, notes,
 * events, doctor).
 *
 *   pids N        processes and threads, 2 to 4194304 (the kernel's PID_MAX_LIMIT)
 *   memory SIZE   at least 16M; or N% (1 to 100) of the memory warden may give
 *                 (worked out per session, src/sandbox/limits.h)
 *   tmp SIZE      at least 1M
 *   home SIZE     at least 1M
 *   log SIZE      at least 1M: the session's audit log
 *   cpu N         CPUs, with up to three decimals (1.5), 0.01 to 4096
 *   any KIND      unlimited
 *
 * SIZE is a number (decimals allowed: 1.5G) with an optional unit K, M, G or
 * T in either case, powers of 1024; without a unit it counts bytes. Sizes
 * are capped at 1P. */
#include "policy.h"

#include <stdio.h>
#include <string.h>

#define PIDS_MAX 4194304ULL
#define SIZE_MAX_BYTES (1ULL << 50)
#define CPU_MAX_MILLI 4096000ULL

static const char *const names[LIMIT_KINDS] = {
	[LIMIT_PIDS] = "pids", [LIMIT_MEMORY] = "memory", [LIMIT_CPU] = "cpu",
	[LIMIT_TMP] = "tmp", [LIMIT_HOME] = "home", [LIMIT_LOG] = "log",
};

const char *policy_limit_name(enum policy_limit_kind k)
{
	return (unsigned)k < LIMIT_KINDS ? names[k] : "?";
}

bool policy_limit_explicit(const struct policy_limit *l)
{
	return l->origin && strncmp(l->origin, "builtin:", 8) != 0;
}

/* "DIGITS[.DIGITS]": the integer part and the fraction in thousandths (up
 * to three decimals); false when text is anything else or too large. The
 * rest of text (a unit) is left in *end. */
static bool decimal(const char *text, unsigned long long *whole, unsigned *milli, const char **end)
{
	const char *s = text;
	*whole = 0;
	*milli = 0;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (*whole > (SIZE_MAX_BYTES * 1024) / 10)
			return false;
		*whole = *whole * 10 + (unsigned)(*s - '0');
	}
	if (*s == '.') {
		s++;
		unsigned scale = 100, n = 0;
		for (; *s >= '0' && *s <= '9'; s++, n++) {
			if (n == 3)
				return false;
			*milli += (unsigned)(*s - '0') * scale;
			scale /= 10;
		}
		if (n == 0)
			return false;
	}
	*end = s;
	return true;
}

static const char *parse_size(const char *text, unsigned long long min, const char *min_text,
			      unsigned long long *v)
{
	unsigned long long whole;
	unsigned milli;
	const char *unit;
	static const char bad[] = "not a size (a number with an optional unit K, M, G or T: "
				  "512M, 1.5G; or unlimited)";
	if (!decimal(text, &whole, &milli, &unit))
		return bad;
	unsigned shift = 0;
	if (*unit) {
		const char *units = "KMGT", *u = strchr(units, *unit & ~0x20);
		if (!u || !*u || unit[1])
			return bad;
		shift = 10 * (unsigned)(u - units + 1);
	}
	if (shift == 0 && milli)
		return "not a size (without a unit it counts bytes, with no decimals)";
	if (whole > SIZE_MAX_BYTES >> shift)
		return "larger than 1P";
	unsigned long long bytes = (whole << shift) + (((unsigned long long)milli << shift) / 1000);
	if (bytes > SIZE_MAX_BYTES)
		return "larger than 1P";
	if (bytes < min)
		return min_text;
	*v = bytes;
	return NULL;
}

const char *policy_limit_parse(enum policy_limit_kind k, const char *text, unsigned long long *v)
{
	if (strcmp(text, "unlimited") == 0) {
		*v = 0;
		return NULL;
	}
	unsigned long long whole;
	unsigned milli;
	const char *end;
	switch (k) {
	case LIMIT_PIDS:
		if (!decimal(text, &whole, &milli, &end) || milli || *end || strchr(text, '.'))
			return "not a number of processes (2 to 4194304, or unlimited)";
		if (whole < 2 || whole > PIDS_MAX)
			return "out of range (2 to 4194304, or unlimited)";
		*v = whole;
		return NULL;
	case LIMIT_CPU:
		if (!decimal(text, &whole, &milli, &end) || *end)
			return "not a number of CPUs (up to three decimals: 0.5, 2, 1.25; or unlimited)";
		if (whole > CPU_MAX_MILLI / 1000 || whole * 1000 + milli > CPU_MAX_MILLI ||
		    whole * 1000 + milli < 10)
			return "out of range (0.01 to 4096 CPUs, or unlimited)";
		*v = whole * 1000 + milli;
		return NULL;
	case LIMIT_MEMORY:
		return parse_size(text, 16ULL << 20, "below the minimum 16M", v);
	case LIMIT_TMP:
	case LIMIT_HOME:
	case LIMIT_LOG:
		return parse_size(text, 1ULL << 20, "below the minimum 1M", v);
	case LIMIT_KINDS:
		break;
	}
	return "unknown kind";
}

int policy_limit_parse_share(const char *text, unsigned *percent, const char **why)
{
	size_t n = strlen(text);
	if (!n || text[n - 1] != '%')
		return 0;
	unsigned v = 0;
	size_t i = 0;
	for (; i + 1 < n && text[i] >= '0' && text[i] <= '9' && v <= 100; i++)
		v = v * 10 + (unsigned)(text[i] - '0');
	if (i + 1 != n || i == 0 || v < 1 || v > 100) {
		*why = "not a share of the memory (a whole percentage from 1% to 100%)";
		return -1;
	}
	*percent = v;
	return 1;
}

void policy_limit_text(enum policy_limit_kind k, const struct policy_limit *l, char *buf, size_t len)
{
	if (l->percent)
		snprintf(buf, len, "%u%%", l->percent);
	else
		policy_limit_format(k, l->value, buf, len);
}

void policy_limit_format(enum policy_limit_kind k, unsigned long long v, char *buf, size_t len)
{
	if (v == 0) {
		snprintf(buf, len, "unlimited");
	} else if (k == LIMIT_PIDS) {
		snprintf(buf, len, "%llu", v);
	} else if (k == LIMIT_CPU) {
		char frac[8];
		snprintf(frac, sizeof frac, ".%03llu", v % 1000);
		size_t n = strlen(frac);
		while (n > 1 && frac[n - 1] == '0')
			frac[--n] = '\0';
		snprintf(buf, len, "%llu%s", v / 1000, n > 1 ? frac : "");
	} else {
		static const char units[] = "TGMK";
		for (unsigned i = 0; i < 4; i++) {
			unsigned shift = 10 * (4 - i);
			if ((v & ((1ULL << shift) - 1)) == 0) {
				snprintf(buf, len, "%llu%c", v >> shift, units[i]);
				return;
			}
		}
		snprintf(buf, len, "%llu", v);
	}
}
