/* fuzz_rustup.c - libFuzzer target for the reading of rustup's files
 * (src/agents/rustup.c): a toolchain file's channel, which the workspace
 * (the agent) writes, and settings.toml's directory overrides. The input
 * is a file's text, a NUL, and a directory (no NUL: the input is both).
 * Invariants: a channel is a non-empty run of the text's bytes with no
 * newline in it (nor a blank, outside TOML); an override's key is an absolute path the
 * directory lies in, and key and value are runs of the text's bytes; the
 * answers are the same twice. Linked with replay.c it is
 * fuzz-rustup-replay, which replays the seed corpus in `meson test`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/agents/rustup.h"
#include "src/common/util.h"

static bool in_text(const char *text, const char *s)
{
	return s[0] && strstr(text, s) && !strpbrk(s, "\n\r");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char *buf = xmalloc(size + 1);
	memcpy(buf, data, size);
	buf[size] = '\0';
	const char *nul = memchr(buf, '\0', size);
	const char *dir = nul ? nul + 1 : "/work/project";
	char *c = rustup_file_channel(buf), *c2 = rustup_file_channel(buf);
	if ((c == NULL) != (c2 == NULL) || (c && (strcmp(c, c2) != 0 || !in_text(buf, c))))
		abort();
	if (c && !strstr(buf, "[toolchain]") && strpbrk(c, " \t"))
		abort();
	char *key = NULL;
	char *v = rustup_override(buf, dir, &key);
	if (v && (!key || key[0] != '/' || !path_is_within(dir, key) || !strstr(buf, key) ||
		  !strstr(buf, v)))
		abort();
	free(c);
	free(c2);
	free(v);
	free(key);
	free(buf);
	return 0;
}
