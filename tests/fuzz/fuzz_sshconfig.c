/* fuzz_sshconfig.c - libFuzzer target for the user's ~/.ssh/config hosts
 * carried into the sandbox's (src/session/sshconfig.c). Invariants: the
 * output is NULL or lines each of which is `Host PATTERNS` or a tab and one
 * of HostName, Port, User or `ProxyCommand none`, with no quote, no NUL and
 * no blank inside a value, a Port a number of 1-65535; the same twice.
 * Linked with replay.c it is fuzz-sshconfig-replay, which replays the
 * seed corpus in `meson test`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/session/sshconfig.h"

static void check_line(const char *l, size_t n)
{
	if (memchr(l, '"', n) || memchr(l, '\'', n) || memchr(l, '\r', n))
		abort();
	if (n > 5 && memcmp(l, "Host ", 5) == 0)
		return;
	if (n == 18 && memcmp(l, "\tProxyCommand none", 18) == 0)
		return;
	static const char *const keys[] = { "\tHostName ", "\tPort ", "\tUser " };
	for (size_t i = 0; i < 3; i++) {
		size_t k = strlen(keys[i]);
		if (n > k && memcmp(l, keys[i], k) == 0) {
			if (memchr(l + k, ' ', n - k) || memchr(l + k, '\t', n - k))
				abort();
			if (i == 1) {
				long p = strtol(l + k, NULL, 10);
				if (p < 1 || p > 65535)
					abort();
			}
			return;
		}
	}
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	const char *text = (const char *)data;
	char *out = sshconfig_aliases(text, size), *again = sshconfig_aliases(text, size);
	if ((out == NULL) != (again == NULL) || (out && strcmp(out, again) != 0))
		abort();
	for (const char *l = out; l && *l;) {
		const char *nl = strchr(l, '\n');
		if (!nl)
			abort();
		check_line(l, (size_t)(nl - l));
		l = nl + 1;
	}
	free(out);
	free(again);
	return 0;
}
