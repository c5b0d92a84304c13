/* fuzz_sni.c - libFuzzer target for the ClientHello reader (src/net/sni.c):
 * the input is a tunnel's first bytes. Invariants: a name found is a
 * canonical host (it reads back to itself through net_host_parse); a
 * refusal's reason is printable; bytes that do not start a TLS handshake
 * record name no host (not TLS, another record first, SSLv2's hello); a
 * prefix of an input with a verdict needs more or has that verdict (the
 * same name), never another: the proxy judges what it has so far. Linked
 * with replay.c it is fuzz-sni-replay, which replays the corpus in
 * `meson test`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/net/sni.h"
#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct net_host h, again, p;
	const char *why = NULL;
	enum sni_result r = sni_read(data, size, &h, &why);
	if (r > SNI_BAD)
		abort();
	/* bytes that do not start a handshake record: not TLS; or a TLS record
	 * of another kind (refused, or its second byte needed to tell); or
	 * SSLv2's form of a ClientHello (no name; its fourth byte needed to
	 * tell); never a name */
	if (size >= 1 && data[0] != 0x16) {
		bool other = data[0] >= 0x14 && data[0] <= 0x18, v2 = data[0] & 0x80;
		if (r == SNI_NAME || (r == SNI_BAD && !(other && size >= 2 && data[1] == 3)) ||
		    (r == SNI_NONE && !(v2 && size >= 4 && data[2] == 1 && data[3] == 3)) ||
		    (r == SNI_NEED_MORE && !((other && size < 2) || (v2 && size < 4))))
			abort();
	}
	if (r == SNI_BAD && (!why || !fuzz_printable(why)))
		abort();
	if (r == SNI_NAME) {
		size_t n = strlen(h.name);
		if (n == 0 || net_host_parse(&again, h.name, n, NULL) < 0 ||
		    strcmp(again.name, h.name) != 0)
			abort();
	}
	/* The proxy judges the bytes it has so far, however the client split
	 * its writes: every prefix needs more or has the whole's verdict (the
	 * same name), never another (all prefixes up to 1 KiB, then 256 of
	 * them spread) */
	if (r != SNI_NEED_MORE && size > 0) {
		size_t step = size <= 1024 ? 1 : size / 256;
		for (size_t k = 0; k < size; k += step) {
			enum sni_result q = sni_read(data, k, &p, &why);
			if (q != SNI_NEED_MORE && q != r)
				abort();
			if (q == SNI_NAME && strcmp(p.name, h.name) != 0)
				abort();
		}
	}
	return 0;
}
