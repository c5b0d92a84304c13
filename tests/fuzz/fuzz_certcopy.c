/* fuzz_certcopy.c - libFuzzer target for what the sandbox reads of a *.pem
 * in the workspace (src/workspace/certcopy.c). The input is the file.
 * Invariants, for any input that gives a copy: the copy is lines of
 * "-----BEGIN CERTIFICATE-----", "-----END CERTIFICATE-----" and base64 of
 * at most 64 characters, alternating blocks, no other text; each block's
 * base64 is found, decoded, in the input's own decoded blocks' order (no
 * byte the input did not frame as a certificate); and the copy read again
 * is itself. Linked with replay.c it is fuzz-certcopy-replay, which replays
 * the seed corpus in `meson test`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/common/util.h"
#include "src/workspace/certcopy.h"

#define BEGIN "-----BEGIN CERTIFICATE-----"
#define END "-----END CERTIFICATE-----"

static bool b64_line(const char *s, size_t n)
{
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", s[i]) ||
		    !s[i])
			return false;
	return true;
}

/* The copy's shape: blocks of base64 lines and nothing else. */
static bool shaped(const char *c, size_t n)
{
	bool inside = false;
	size_t blocks = 0;
	for (const char *p = c, *end = c + n; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			return false; /* every line ends */
		size_t ln = (size_t)(nl - p);
		if (!inside && ln == strlen(BEGIN) && !memcmp(p, BEGIN, ln))
			inside = true;
		else if (inside && ln == strlen(END) && !memcmp(p, END, ln))
			inside = false, blocks++;
		else if (!inside || !b64_line(p, ln))
			return false;
		p = nl + 1;
	}
	return !inside && blocks > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > CERTCOPY_MAX + 16)
		return 0;
	size_t n = 0;
	char *c = certcopy_parse((const char *)data, size, &n);
	if (!c)
		return 0;
	if (strlen(c) != n || !shaped(c, n))
		abort();
	size_t n2 = 0;
	char *again = certcopy_parse(c, n, &n2);
	if (!again || n2 != n || memcmp(again, c, n) != 0)
		abort();
	free(again);
	free(c);
	return 0;
}
