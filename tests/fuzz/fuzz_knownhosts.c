/* fuzz_knownhosts.c - libFuzzer target for the choice of the user's
 * known_hosts lines that go into the sandbox (src/session/knownhosts.c).
 * The input is the file's text, under a policy that allows a host by name,
 * a host loopback port, and a wildcard. Invariants: the output is empty
 * or KNOWNHOSTS_HEAD and then whole lines of the input, in the input's
 * order, none holding a NUL; the same twice. Linked with replay.c it is
 * fuzz-knownhosts-replay, which replays the seed corpus in `meson test`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/common/util.h"
#include "src/policy/policy.h"
#include "src/session/knownhosts.h"

static struct policy pol;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	static const char *const allow[] = { "git.example.com", "127.0.0.1:2222", "*.example.org" };
	struct werr e = { 0 };
	for (size_t i = 0; i < ARRAY_LEN(allow); i++)
		if (rules_add(&pol.net_rules, RULES_ALLOW, allow[i], 0, &e) < 0)
			abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	const char *text = (const char *)data;
	char *out = knownhosts_filter(&pol, text, size), *again = knownhosts_filter(&pol, text, size);
	if ((out == NULL) != (again == NULL) || (out && strcmp(out, again) != 0))
		abort();
	if (out) {
		size_t head = strlen(KNOWNHOSTS_HEAD);
		if (strncmp(out, KNOWNHOSTS_HEAD, head) != 0)
			abort();
		/* each line kept is the next of the input's lines that equals it */
		const char *in = text, *in_end = text + size;
		for (const char *l = out + head; *l;) {
			const char *nl = strchr(l, '\n');
			if (!nl)
				abort();
			size_t n = (size_t)(nl - l);
			bool found = false;
			while (in < in_end && !found) {
				const char *inl = memchr(in, '\n', (size_t)(in_end - in));
				size_t m = (size_t)((inl ? inl : in_end) - in);
				found = m == n && memcmp(in, l, n) == 0;
				in = inl ? inl + 1 : in_end;
			}
			if (!found)
				abort();
			l = nl + 1;
		}
	}
	free(out);
	free(again);
	return 0;
}
