/* fuzz_pack.c - libFuzzer target for the checkpoint store's pack reader
 * (src/checkpoint/pack.c: its trailer and index, which `warden diff`,
 * `warden undo` and every checkpoint read back from the store). The input
 * is a whole pack file; its name is taken as the SHA-256 of the index
 * region the trailer points at, so that the parser is reached (and once
 * with another name, which must be refused). Invariants: an accepted
 * index has exactly the trailer's count of entries, hashes strictly
 * increasing, each blob within the data region [magic, index); and it is
 * refused under any other name. Linked with replay.c it is
 * fuzz-pack-replay, which replays the seed corpus without clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/checkpoint/pack.h"
#include "src/common/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long long ioff, count;
	if (size < PACK_TRAILER_LEN ||
	    !pack_trailer_parse((const char *)data + size - PACK_TRAILER_LEN, size, &ioff, &count))
		return 0;
	if (ioff < PACK_MAGIC_LEN || ioff > size - PACK_TRAILER_LEN)
		abort();
	size_t ilen = size - PACK_TRAILER_LEN - (size_t)ioff;
	char *idx = xmalloc(ilen + 1), name[SHA256_HEX_LEN], other[SHA256_HEX_LEN];
	memcpy(idx, data + ioff, ilen);
	idx[ilen] = '\0';
	sha256_hex(idx, ilen, name);
	memcpy(other, name, sizeof other);
	other[0] = other[0] == '0' ? '1' : '0';
	struct pack_ref *v = pack_index_parse(other, idx, ilen, ioff, count, 7);
	if (v)
		abort();
	memcpy(idx, data + ioff, ilen);
	v = pack_index_parse(name, idx, ilen, ioff, count, 7);
	for (unsigned long long i = 0; v && i < count; i++) {
		if (v[i].pack != 7 || v[i].off < PACK_MAGIC_LEN || v[i].off > ioff ||
		    v[i].size > ioff - v[i].off || (i && memcmp(v[i - 1].h, v[i].h, 32) >= 0))
			abort();
	}
	free(v);
	free(idx);
	return 0;
}
