/* fuzz_detectrules.c - libFuzzer target for the detection rules parser
 * (src/detect/ruleset.c: drules_parse). The input is a rules file.
 * Invariants: an error names "<fuzz>:LINE:COL: " with LINE within the
 * input's lines; a ruleset parsed is written back as text (drules_text)
 * that parses again to the same rules, conditions and rates; a detector
 * made from it takes a few events without fault. Linked with replay.c it
 * is fuzz-detectrules-replay, which replays files and corpus directories
 * without clang. */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/common/util.h"
#include "src/detect/detect.h"

static void must(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_detectrules: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ruleset rs = { 0 };
	struct werr e = { 0 };
	if (drules_parse(&rs, "<fuzz>", (const char *)data, size, &e) < 0) {
		unsigned long line = 0, col = 0;
		must(strncmp(e.msg, "<fuzz>", 6) == 0, "error without the file's name");
		if (sscanf(e.msg, "<fuzz>:%lu:%lu:", &line, &col) == 2) {
			size_t lines = 1;
			for (size_t i = 0; i < size; i++)
				lines += data[i] == '\n';
			must(line >= 1 && line <= lines + 1 && col >= 1, "error line out of the input");
		}
		drules_free(&rs);
		return 0;
	}
	char *text = drules_text(&rs);
	struct ruleset again = { 0 };
	struct werr e2 = { 0 };
	if (drules_parse(&again, "<again>", text, strlen(text), &e2) < 0) {
		fprintf(stderr, "%s\n---\n%s\n", e2.msg, text);
		must(false, "the text written back does not parse");
	}
	size_t live = 0;
	for (size_t i = 0; i < rs.nrules; i++)
		live += !rs.rules[i].disabled;
	must(again.nrules == live, "a different number of rules after the round trip");
	must(again.nrates == rs.nrates, "a different number of rates after the round trip");
	for (size_t i = 0, j = 0; i < rs.nrules; i++) {
		if (rs.rules[i].disabled)
			continue;
		const struct rule *a = &rs.rules[i], *b = &again.rules[j++];
		must(strcmp(a->name, b->name) == 0 && a->sev == b->sev && a->nsteps == b->nsteps &&
		     a->count == b->count && a->action == b->action, "a rule changed in the round trip");
		for (size_t k = 0; k < a->nsteps; k++)
			must(a->steps[k].nconds == b->steps[k].nconds, "a step changed in the round trip");
	}
	drules_free(&again);
	free(text);
	struct detect *d = detect_new(&rs, &(struct detect_env){ .workspace = "/w", .home = "/h" }, NULL);
	const char *kinds[] = { "exec", "net", "syscall", "alert", "file" };
	json_t *f = json_pack("{s:s, s:[s,s], s:i, s:s, s:s, s:s}", "path", "/proc/self/fd/3", "argv",
			      "env", "x", "bytes_out", 20000000, "host", "a.example", "name", "unshare",
			      "rule", "canary.opened");
	for (unsigned i = 0; i < 20; i++)
		detect_feed(d, kinds[i % 5], f, i + 1, (double)i);
	json_decref(f);
	detect_free(d);
	return 0;
}
