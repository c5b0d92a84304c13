/* replay.h - the entry points every fuzz target defines: libFuzzer calls
 * them in the clang builds, replay.c's main() in the replay executables. */
#ifndef WARDEN_TESTS_FUZZ_REPLAY_H
#define WARDEN_TESTS_FUZZ_REPLAY_H

#include <stddef.h>
#include <stdint.h>

/* Runs one input; a broken invariant aborts. Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Optional: one-time setup before the first input, defined only by targets
 * that need it (libFuzzer and replay.c both call it when it exists). */
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif
