/* packidx.h - the object ids a git pack's index (*.idx) lists, read as git
 * reads them (version 2: "\377tOc", 2, 256 fan-out words, the ids; version 1:
 * the fan-out, then an offset and an id each) and within the index's bounds:
 * a hostile index is refused, never read past its end. */
#pragma once
#include <stddef.h>

#define PACKIDX_SHA1 20   /* an id's bytes in a SHA-1 repository */
#define PACKIDX_SHA256 32 /* and in a SHA-256 one */

/* Called with each id as lower-case hex (2 * hashsz digits, NUL-ended). */
typedef void (*packidx_fn)(void *ctx, const char *hex);

/* The ids of the index buf (len bytes) whose ids are hashsz bytes
 * (PACKIDX_SHA1 or PACKIDX_SHA256), each to fn in order: their count, or
 * -1 with *why saying what git would refuse in it (fn then called for
 * none). */
long packidx_ids(const unsigned char *buf, size_t len, size_t hashsz, packidx_fn fn, void *ctx,
		 const char **why);
