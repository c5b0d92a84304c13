/* knownhosts.h - the sandbox's ~/.ssh/known_hosts: the user's host keys
 * for the hosts the profile lets the sandbox reach (see knownhosts.c), a
 * seed file init writes there (homeseed.h), so that ssh inside checks a
 * server's key as ssh outside does, with no question and no
 * StrictHostKeyChecking=no. */
#pragma once
#include <stddef.h>

#include "../policy/policy.h"

/* The lines of HOME/.ssh/known_hosts naming a host the policy's rules
 * allow or ask for (malloc'd, with a comment line first), or NULL: nothing
 * goes out, no such file (or not a regular one, or over 4 MiB), no line
 * kept. */
char *knownhosts_text(const struct policy *pol, const char *home);

/* The first line of what knownhosts_filter gives (a comment). */
#define KNOWNHOSTS_HEAD "# written by warden: the lines of your ~/.ssh/known_hosts for the " \
			"hosts this session may reach\n"

/* The same for the file's text (len bytes, any bytes: a line holding a NUL
 * is left out): each line kept whole, in order, after KNOWNHOSTS_HEAD. */
char *knownhosts_filter(const struct policy *pol, const char *text, size_t len);
