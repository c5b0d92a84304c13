/* fuzz_hashdisk.c - libFuzzer target for the exec hashes kept between
 * sessions (src/supervisor/exec/hashdisk.c: the file in warden's cache
 * directory that later sessions read). The input is a whole file, read for
 * the boot "BOOT". Invariants: the entries are all of the file's lines or
 * none (none for a file warden would not write: one file twice, more than
 * HASHDISK_MAX entries); each has a 64-digit hex SHA-256, a code hash of 64 hex digits
 * or no ELF, nanoseconds under a second and a #! line without a newline,
 * and is found again by its own file's stat; the text written back reads
 * as the same entries and writes as the same text. Linked with replay.c it
 * is fuzz-hashdisk-replay, which replays the seed corpus without clang. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/common/util.h"
#include "src/supervisor/exec/hashdisk.h"

static void check_entries(struct hashdisk *d)
{
	if (hashdisk_count(d) > HASHDISK_MAX)
		abort();
	for (size_t i = 0; i < hashdisk_count(d); i++) {
		const struct hashdisk_entry *en = hashdisk_at(d, i);
		struct hashdisk_entry got;
		if (!sha256_hex_ok(en->hex) || (en->code_err != 0 && en->code_err != ENOEXEC) ||
		    (en->code_err == 0 && !sha256_hex_ok(en->code)) || strchr(en->interp, '\n') ||
		    en->st.st_mtim.tv_nsec < 0 || en->st.st_mtim.tv_nsec >= 1000000000 ||
		    en->st.st_ctim.tv_nsec < 0 || en->st.st_ctim.tv_nsec >= 1000000000 ||
		    !hashdisk_find(d, &en->st, &got) || memcmp(got.hex, en->hex, sizeof got.hex) != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xmalloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	struct hashdisk *d = hashdisk_parse("BOOT", text);
	check_entries(d);
	char *t1 = hashdisk_text(d);
	struct hashdisk *d1 = hashdisk_parse("BOOT", t1);
	check_entries(d1);
	char *t1b = hashdisk_text(d);
	char *t2 = hashdisk_text(d1);
	if (hashdisk_count(d1) != hashdisk_count(d) || strcmp(t1b, t2) != 0)
		abort();
	free(t1b);
	free(t2);
	free(t1);
	hashdisk_close(d1);
	hashdisk_close(d);
	free(text);
	return 0;
}
