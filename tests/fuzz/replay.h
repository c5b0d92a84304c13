/* replay.h - the entry points every fuzz target defines: libFuzzer calls
 * them in the clang builds, replay.c's main() in the replay executables;
 * and the check the targets share. */
#ifndef WARDEN_TESTS_FUZZ_REPLAY_H
#define WARDEN_TESTS_FUZZ_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Runs one input; a broken invariant aborts. Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Optional: one-time setup before the first input, defined only by targets
 * that need it (libFuzzer and replay.c both call it when it exists). */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* For the targets' invariants: s is a non-empty line of printable ASCII
 * (what an error message or a reason shown to a user must be). */
static inline bool fuzz_printable(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

#endif
