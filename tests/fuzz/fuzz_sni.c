/* fuzz_sni.c - libFuzzer target for the ClientHello reader (src/net/sni.c):
 * the input is a tunnel's first bytes. Invariants: a name found is a
 * canonical host (it reads back to itself through net_host_parse); a
 * refusal's reason is printable; bytes that do not start a TLS handshake
 * record are SNI_NOT_TLS; a prefix of an input with a verdict (a name, none)
 * needs more or has that verdict, never another name. Linked with replay.c
 * it is fuzz-sni-replay, which replays the corpus in `meson test`. */
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
	if (size >= 1 && data[0] != 0x16 && r != SNI_NOT_TLS)
		abort();
	if (r == SNI_BAD && (!why || !fuzz_printable(why)))
		abort();
	if (r == SNI_NAME) {
		size_t n = strlen(h.name);
		if (n == 0 || net_host_parse(&again, h.name, n, NULL) < 0 ||
		    strcmp(again.name, h.name) != 0)
			abort();
	}
	if ((r == SNI_NAME || r == SNI_NONE) && size > 0) {
		enum sni_result q = sni_read(data, size - 1, &p, &why);
		if (q != SNI_NEED_MORE && q != r)
			abort();
		if (q == SNI_NAME && strcmp(p.name, h.name) != 0)
			abort();
	}
	return 0;
}
