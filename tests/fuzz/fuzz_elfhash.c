/* fuzz_elfhash.c - libFuzzer target for the code hash of ELF files
 * (src/common/elfhash.c). The input is a whole file. Invariants:
 * - it never reads out of the input, crashes or loops (ASan, the replay);
 * - it hashes, or fails with ENOEXEC, EINVAL or EOVERFLOW and a printable
 *   reason;
 * - the hash is 64 lower-case hex digits, and the same input with bytes
 *   appended has the same hash (what lies past the segments is not code);
 * Linked with replay.c it is fuzz-elfhash-replay, which replays the corpus
 * (tests/fuzz/corpus/elfhash: small ELF files, 32 and 64 bits, both byte
 * orders, truncated, with overlapping and huge segments) in `meson test`. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/common/elfhash.h"
#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char hex[SHA256_HEX_LEN], again[SHA256_HEX_LEN];
	const char *why = NULL;
	int r = elfhash_mem(data, size, hex, &why);
	if (r < 0) {
		if (errno != ENOEXEC && errno != EINVAL && errno != EOVERFLOW)
			abort();
		if (!why || !fuzz_printable(why))
			abort();
		return 0;
	}
	if (strlen(hex) != 64 || strspn(hex, "0123456789abcdef") != 64)
		abort();
	uint8_t *padded = malloc(size + 64);
	if (!padded)
		return 0;
	memcpy(padded, data, size);
	memset(padded + size, 0xa5, 64);
	if (elfhash_mem(padded, size + 64, again, &why) != 0 || strcmp(hex, again) != 0)
		abort();
	free(padded);
	return 0;
}
