/* reqpath.h - the path of an HTTP request as method/path rules read it
 * (`net allow HOST [METHOD,...] [PATH-GLOB]`): one normaliser for the rule's
 * glob and the request's target alike, and the glob match.
 *
 * Normalisation, the same for both:
 *   - the query ('?' and what follows) is dropped: rules match the path only
 *     (a rule's glob may not hold '?');
 *   - it must start with '/' (a request for "*", OPTIONS, has no path: it
 *     matches no rule's glob);
 *   - percent-escapes are decoded once, except that an encoded slash (%2F),
 *     dot (%2E) or backslash (%5C), an escape of a control byte, and a bad
 *     escape are refused, as are a raw backslash and a raw control byte
 *     (refused, not decoded: a server that decodes %2F into a separator, or
 *     one that does not, would each read a path other than the one matched);
 *   - empty segments are dropped (duplicate slashes collapsed), "." segments
 *     removed and ".." segments take the one before them away (".." at the
 *     root stays at the root); a trailing slash stays.
 * The result is what a rule's glob is matched with; what goes upstream is
 * the request as the client sent it.
 *
 * Globs: '*' matches any run of bytes within one segment (no '/'), '**' any
 * run, '/' included; every other byte matches itself, case-sensitively. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define REQPATH_MAX 2048 /* a normalised path, NUL included */
#define REQGLOB_MAX 256  /* a rule's glob, NUL included */

/* Normalise s[0..len) into out (cap bytes, NUL-terminated). glob: a rule's
 * glob ('*' kept; a '?' refused). Returns 0, or -1 with *why (static,
 * short, ASCII: "encoded slash", "does not start with '/'", ...). */
int reqpath_normalise(const char *s, size_t len, bool glob, char *out, size_t cap,
		      const char **why);

/* Does the normalised path match the normalised glob? */
bool reqpath_match(const char *glob, const char *path);
