/* fuzz_reqpath.c - libFuzzer target for the request path normaliser and
 * the glob match of method/path rules (src/net/reqpath.c). The input is a
 * path, or a glob and a path split at the first NUL. Invariants: a
 * normalised path starts with '/', holds no empty, "." or ".." segment, no
 * backslash and no control byte, and matches itself as a glob when it has
 * no '*'; "**" matches every normalised path; a refusal's reason is
 * printable; the match terminates (it is linear in the path). Linked with
 * replay.c it is fuzz-reqpath-replay, which replays the corpus in
 * `meson test`. */
#include <stdlib.h>
#include <string.h>

#include "src/net/reqpath.h"
#include "replay.h"

static void check_normal(const char *p)
{
	if (p[0] != '/')
		abort();
	for (const char *s = p; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f || c == '\\')
			abort();
		if (c == '/' && s[1] == '/')
			abort();
		if (c == '/' && s[1] == '.' && (s[2] == '/' || !s[2] ||
						 (s[2] == '.' && (s[3] == '/' || !s[3]))))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data, *why = NULL;
	const char *nul = memchr(in, '\0', size);
	char out[REQPATH_MAX], glob[REQGLOB_MAX];
	if (!nul) {
		if (reqpath_normalise(in, size, false, out, sizeof out, &why) < 0) {
			if (!why || !fuzz_printable(why))
				abort();
			return 0;
		}
		check_normal(out);
		if (!strchr(out, '*') && strlen(out) < REQGLOB_MAX && !reqpath_match(out, out))
			abort();
		if (!reqpath_match("**", out))
			abort();
		return 0;
	}
	size_t gl = (size_t)(nul - in);
	if (reqpath_normalise(in, gl, true, glob, sizeof glob, &why) < 0)
		return 0;
	check_normal(glob);
	if (reqpath_normalise(nul + 1, size - gl - 1, false, out, sizeof out, &why) < 0)
		return 0;
	(void)reqpath_match(glob, out);
	return 0;
}
