/* times.c - parsing and printing the times of audit logs (see times.h):
 * strict for the log's own format, lenient for command-line arguments, all
 * UTC, proleptic Gregorian. */
#include "times.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* n decimal digits at s (stops at the NUL: it is not a digit). */
static bool digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

static bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int month_days(int y, int m)
{
	static const int d[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	return m == 2 && leap(y) ? 29 : d[m - 1];
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int make_time(int Y, int M, int D, int h, int m, int s, long nsec, struct audit_time *t)
{
	if (Y < 1 || M < 1 || M > 12 || D < 1 || D > month_days(Y, M) || h > 23 || m > 59 || s > 59)
		return -1;
	t->sec = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + s;
	t->nsec = nsec;
	return 0;
}

/* ".F{1,9}" at *p (if there): the fraction as nanoseconds. */
static int fraction(const char **p, long *nsec)
{
	*nsec = 0;
	if (**p != '.')
		return 0;
	const char *s = *p + 1;
	int n = 0;
	long v = 0;
	while (s[n] >= '0' && s[n] <= '9') {
		if (n == 9)
			return -1;
		v = v * 10 + (s[n] - '0');
		n++;
	}
	if (n == 0)
		return -1;
	for (int i = n; i < 9; i++)
		v *= 10;
	*nsec = v;
	*p = s + n;
	return 0;
}

/* "YYYY-MM-DD", then 'T' (or ' ') and "HH:MM", then ":SS" and a fraction,
 * then 'Z'. `strict`: all of it, with 'T' and 'Z' (the log's own format);
 * otherwise the time, seconds and 'Z' are optional. */
static int parse_datetime(const char *s, bool strict, struct audit_time *t)
{
	int Y, M, D, h = 0, m = 0, sec = 0;
	long nsec = 0;
	if (!digits(s, 4, &Y) || s[4] != '-' || !digits(s + 5, 2, &M) || s[7] != '-' ||
	    !digits(s + 8, 2, &D))
		return -1;
	const char *p = s + 10;
	if (*p == 'T' || (!strict && *p == ' ' && p[1])) {
		if (!digits(p + 1, 2, &h) || p[3] != ':' || !digits(p + 4, 2, &m))
			return -1;
		p += 6;
		if (*p == ':') {
			if (!digits(p + 1, 2, &sec))
				return -1;
			p += 3;
			if (fraction(&p, &nsec) < 0)
				return -1;
		} else if (strict) {
			return -1;
		}
	} else if (strict) {
		return -1;
	}
	if (*p == 'Z')
		p++;
	else if (strict)
		return -1;
	if (*p)
		return -1;
	return make_time(Y, M, D, h, m, sec, nsec, t);
}

int audit_parse_ts(const char *s, struct audit_time *t)
{
	return s ? parse_datetime(s, true, t) : -1;
}

/* " ago" (spaces, then the word, as the error's example spells it), all
 * that is left of s. */
static bool ago(const char *s)
{
	if (*s != ' ')
		return false;
	while (*s == ' ')
		s++;
	return strcmp(s, "ago") == 0;
}

int audit_parse_time_arg(const char *s, const struct audit_time *now, struct audit_time *t)
{
	if (!s || !*s)
		return -1;
	if (strcmp(s, "now") == 0) {
		*t = *now;
		return 0;
	}
	const char *p = s[0] == '@' || s[0] == '-' ? s + 1 : s;
	int64_t v = 0;
	int n = 0;
	while (p[n] >= '0' && p[n] <= '9') {
		if (n == 12)
			return -1;
		v = v * 10 + (p[n] - '0');
		n++;
	}
	if (n > 0 && s[0] == '@') {
		const char *q = p + n;
		long nsec;
		if (fraction(&q, &nsec) < 0 || *q)
			return -1;
		t->sec = v;
		t->nsec = nsec;
		return 0;
	}
	if (n > 0 && p[n] && strchr("smhd", p[n]) && (!p[n + 1] || ago(p + n + 1))) {
		int64_t mult = p[n] == 's' ? 1 : p[n] == 'm' ? 60 : p[n] == 'h' ? 3600 : 86400;
		t->sec = now->sec - v * mult;
		t->nsec = now->nsec;
		return 0;
	}
	if (s[0] == '-' || s[0] == '@')
		return -1;
	return parse_datetime(s, false, t);
}

int audit_time_cmp(const struct audit_time *a, const struct audit_time *b)
{
	if (a->sec != b->sec)
		return a->sec < b->sec ? -1 : 1;
	if (a->nsec != b->nsec)
		return a->nsec < b->nsec ? -1 : 1;
	return 0;
}

void audit_format_time(const struct audit_time *t, char *buf, size_t len)
{
	time_t sec = (time_t)t->sec;
	struct tm tm;
	char base[64];
	if (!gmtime_r(&sec, &tm) || !strftime(base, sizeof base, "%Y-%m-%d %H:%M:%S", &tm)) {
		snprintf(buf, len, "@%lld", (long long)t->sec);
		return;
	}
	snprintf(buf, len, "%s.%03ld", base, t->nsec / 1000000);
}


bool audit_session_id_time(const char *id, struct audit_time *t)
{
	int Y, M, D, h, m, s;
	if (!digits(id, 4, &Y) || !digits(id + 4, 2, &M) || !digits(id + 6, 2, &D) || id[8] != 'T' ||
	    !digits(id + 9, 2, &h) || !digits(id + 11, 2, &m) || !digits(id + 13, 2, &s) || id[15] != 'Z')
		return false;
	return make_time(Y, M, D, h, m, s, 0, t) == 0;
}
