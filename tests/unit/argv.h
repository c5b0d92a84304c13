/* argv.h - an argument vector (struct strv) written in place, for the unit
 * tests of what takes one: ARGV("sh", "-c", "x") is the strv, PARGV(...)
 * a pointer to one. */
#ifndef WARDEN_TESTS_UNIT_ARGV_H
#define WARDEN_TESTS_UNIT_ARGV_H

#include <stddef.h>

#include "src/common/util.h"

static inline struct strv argv_of(char **v)
{
	size_t n = 0;
	while (v[n])
		n++;
	return (struct strv){ .v = v, .n = n };
}

#define ARGV(...) argv_of((char *[]){ __VA_ARGS__, NULL })
#define PARGV(...) (&(struct strv[]){ ARGV(__VA_ARGS__) }[0])

#endif
