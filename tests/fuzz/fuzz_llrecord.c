/* fuzz_llrecord.c - libFuzzer target for the kernel's Landlock audit records
 * as text (src/audit/llrecord.c). The input is records one per line, each
 * line's first byte choosing its type (ACCESS, DOMAIN, SYSCALL, EOE); they
 * are parsed, gathered as one event and turned into a warden event.
 * Invariants: every field's key is non-empty and has no '=' or blank, every
 * value's length is within the record's, the event's fields (when made)
 * serialise as JSON, and a kind is only ever file, net or signal. Linked with
 * replay.c it is fuzz-llrecord-replay, which replays the seed corpus without
 * clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "src/audit/llrecord.h"
#include "replay.h"

static const int types[4] = { KAUDIT_LANDLOCK_ACCESS, KAUDIT_LANDLOCK_DOMAIN, KAUDIT_SYSCALL,
			      KAUDIT_EOE };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct llev ev = { 0 };
	const char *p = (const char *)data, *end = p + size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = (size_t)((nl ? nl : end) - p);
		if (len >= 1) {
			int type = types[(unsigned char)p[0] % 4];
			struct llrec *r = malloc(sizeof *r);
			if (llrec_parse(type, p + 1, len - 1, r) == 0) {
				for (size_t i = 0; i < r->n; i++) {
					const char *k = r->f[i].key;
					if (!k[0] || strpbrk(k, "= ") || r->f[i].len > len)
						abort();
				}
				if (!ev.serial)
					ev.serial = r->serial;
				llev_add(&ev, r);
			} else {
				free(r);
			}
		}
		p += len + 1;
	}
	struct event e = llev_event(&ev, 7, ev.naccess % 2 ? "openat" : NULL, -1);
	if (e.fields) {
		const char *k = e.kind;
		if (strcmp(k, "file") && strcmp(k, "net") && strcmp(k, "signal"))
			abort();
		char *s = json_dumps(e.fields, JSON_COMPACT);
		if (!s)
			abort();
		free(s);
	}
	event_discard(&e);
	llev_clear(&ev);
	return 0;
}
