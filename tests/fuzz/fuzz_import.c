/* fuzz_import.c - libFuzzer target for `warden import` (src/import/): the
 * TOML subset reader and the three settings readers, then the profile
 * written from what they read. The first byte picks the source (claude,
 * codex, srt), the rest is the settings file. Invariants: an error names
 * the file; the TOML reader's errors name a line and a column; whatever
 * the settings, the profile written holds only the directives import
 * writes (a source's text never starts a line of its own) and no
 * exception (`mask !`, `protect !`: import writes denies only), warden's
 * own parser accepts it
 * (over a built-in layer, with "~/" against /home/fuzz), and a `net deny`
 * the model holds for a pattern warden reads is in the compiled policy.
 * Linked with replay.c it is fuzz-import-replay, which replays files and
 * corpus directories without clang. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/import/import.h"
#include "src/import/toml.h"
#include "src/net/rules.h"
#include "src/policy/policy.h"
#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536)
		return 0;
	struct imp m = { 0 };
	m.src = (enum import_source)(data[0] % 3);
	m.home = "/home/fuzz";
	m.cwd = "/work/proj";
	strv_push(&m.files, "fuzz.settings");
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	struct werr e = { 0 };
	if (m.src == IMPORT_CODEX) {
		struct werr te = { 0 };
		json_t *j = toml_parse(text, len, "t.toml", &te);
		if (!j && strncmp(te.msg, "t.toml:", 7) != 0)
			abort();
		json_decref(j);
	}
	if (import_read(&m, "fuzz.settings", text, len, &e) < 0) {
		if (!strstr(e.msg, "fuzz.settings"))
			abort();
		imp_free(&m);
		return 0;
	}
	char *profile = import_emit(&m);
	/* only the directives import writes: nothing a source says becomes a
	 * line of its own */
	static const char *const ok[] = { "net allow ", "net deny ", "mask ", "protect ", "read-only ",
					  "read-write ", "tool deny ", "tool ask ", "tool allow " };
	for (const char *l = profile; *l; l = strchr(l, '\n') + 1) {
		if (!strchr(l, '\n'))
			abort(); /* every line ends */
		bool good = *l == '#' || *l == '\n';
		for (size_t i = 0; !good && i < sizeof ok / sizeof ok[0]; i++)
			good = strncmp(l, ok[i], strlen(ok[i])) == 0;
		if (!good)
			abort();
		/* import writes denies only: never an exception, which unmasks
		 * or makes writable what the source denied */
		if (strncmp(l, "mask !", 6) == 0 || strncmp(l, "protect !", 9) == 0)
			abort();
	}
	struct policy p = { 0 };
	struct werr pe = { 0 };
	if (policy_parse_text(&p, "imported", NULL, "/home/fuzz", profile, strlen(profile), &pe) < 0) {
		fprintf(stderr, "%s\n--- profile:\n%s\n", pe.msg, profile);
		abort(); /* warden must read what it wrote */
	}
	for (size_t i = 0; i < m.net_deny.n; i++) {
		struct net_rule r;
		struct werr re = { 0 };
		if (rules_parse_pattern(&r, m.net_deny.v[i].text, &re) < 0)
			continue;
		bool found = false;
		for (size_t k = 0; k < p.nnet; k++)
			found = found || (p.net[k].action == RULES_DENY && strcmp(p.net[k].rule.text, r.text) == 0);
		if (!found)
			abort(); /* a deny warden can write stays a deny */
	}
	policy_free(&p);
	free(profile);
	imp_free(&m);
	return 0;
}
