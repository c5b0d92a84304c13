/* fuzz_manifest.c - libFuzzer target for the checkpoint manifest's parser
 * (src/checkpoint/manifest.c), the text `warden diff` and `warden undo`
 * read back from the store. Invariants: a refusal says why in printable
 * words; an accepted manifest has only relative, normalised paths (no
 * empty, "." or ".." component), in strictly increasing byte order, each
 * below a directory of the manifest, files with a 64-digit lowercase hash,
 * links with a non-empty target of their size, directories and special
 * files (a FIFO, socket or device: named, never made again) with neither
 * a size nor a target, modes within 07777; and its
 * text form, written again, parses to the same text. Linked with replay.c
 * it is fuzz-manifest-replay, which replays the seed corpus without clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/checkpoint/manifest.h"

static void check_entry(const struct manifest *m, size_t i)
{
	const struct mf_entry *e = &m->v[i];
	if (!e->path[0] || e->path[0] == '/' || path_has_dot_components(e->path) ||
	    e->path[strlen(e->path) - 1] == '/' || (e->mode & ~07777u))
		abort();
	if (i && strcmp(m->v[i - 1].path, e->path) >= 0)
		abort();
	const char *sl = strrchr(e->path, '/');
	if (sl) {
		char *parent = xasprintf("%.*s", (int)(sl - e->path), e->path);
		const struct mf_entry *p = manifest_find(m, parent);
		free(parent);
		if (!p || p->type != MF_DIR)
			abort();
	}
	switch (e->type) {
	case MF_FILE:
		if (strlen(e->hash) != 64 || strspn(e->hash, "0123456789abcdef") != 64 || e->target)
			abort();
		break;
	case MF_LINK:
		if (!e->target || !e->target[0] || strlen(e->target) != e->size)
			abort();
		break;
	case MF_DIR:
	case MF_FIFO:
	case MF_SOCK:
	case MF_CHR:
	case MF_BLK:
		if (e->size || e->target)
			abort();
		break;
	default:
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct manifest m;
	struct werr e = { 0 };
	if (manifest_parse((const char *)data, size, &m, &e) < 0) {
		if (!fuzz_printable(e.msg))
			abort();
		return 0;
	}
	for (size_t i = 0; i < m.n; i++)
		check_entry(&m, i);
	size_t len, len2;
	char *text = manifest_format(&m, &len);
	struct manifest again;
	if (manifest_parse(text, len, &again, &e) < 0)
		abort();
	char *text2 = manifest_format(&again, &len2);
	if (len2 != len || memcmp(text, text2, len) != 0)
		abort();
	free(text);
	free(text2);
	manifest_free(&again);
	manifest_free(&m);
	return 0;
}
