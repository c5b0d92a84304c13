/* fuzz_profile.c - libFuzzer target for the profile parser
 * (policy_parse_text, then policy_to_json and policy_digest on what it
 * built, a check that its compiled rule set holds the declared rules (a
 * request rule in the request list, with its connection let go), and
 * that every secret has a valid name, hosts none too wide, a source, and
 * a name that no environment list passes or sets; every limit set by a
 * line that says where, and written back in a form that parses to the
 * same value; exec rules that hold only hashes, clean paths and limits in
 * range).
 * Linked with replay.c it is fuzz-profile-replay, which replays a seed
 * corpus without clang.
 *
 * Includes resolve against a scratch directory holding a few fixed profiles
 * (ok.profile, self.profile, a.profile <-> b.profile) so inputs can reach
 * the include and loop paths; LLVMFuzzerInitialize makes it once. "~/"
 * expands against /home/fuzz. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/policy/policy.h"
#include "replay.h"

static char incdir[] = "/tmp/warden-fuzz-XXXXXX";
static bool have_incdir;

static const struct {
	const char *name, *text;
} inc_files[] = {
	{ "ok.profile", "mask *.ok\nprotect ok/\nenv pass OK_*\nread-only ~/ok\n" },
	{ "self.profile", "include self.profile\n" },
	{ "a.profile", "mask a\ninclude b.profile\n" },
	{ "b.profile", "mask b\ninclude a.profile\n" },
	{ "default.profile", "include default\n" },
};

static void teardown(void)
{
	if (have_incdir) {
		for (size_t i = 0; i < ARRAY_LEN(inc_files); i++) {
			char path[sizeof incdir + 64];
			snprintf(path, sizeof path, "%s/%s", incdir, inc_files[i].name);
			unlink(path);
		}
		rmdir(incdir);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	atexit(teardown);
	if (!mkdtemp(incdir))
		return 0; /* includes of files are then refused: still a valid run */
	for (size_t i = 0; i < ARRAY_LEN(inc_files); i++) {
		char path[sizeof incdir + 64];
		snprintf(path, sizeof path, "%s/%s", incdir, inc_files[i].name);
		FILE *f = fopen(path, "we");
		if (!f)
			continue;
		fputs(inc_files[i].text, f);
		fclose(f);
	}
	have_incdir = true;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy p = { 0 };
	struct werr e = { 0 };
	int r = policy_parse_text(&p, "fuzz", have_incdir ? incdir : NULL, "/home/fuzz",
				  (const char *)data, size, &e);
	if (r < 0 && e.msg[0] == '\0')
		abort(); /* every error says what went wrong */

	/* Whatever was built must be encodable: invalid UTF-8 reaching the JSON
	 * would drop entries from the digest. */
	json_t *j = policy_to_json(&p);
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	if (!s)
		abort();
	free(s);
	json_decref(j);
	char digest[65];
	policy_digest(&p, digest);
	for (size_t i = 0; i < p.npaths; i++)
		if (p.paths[i].path[0] != '/' || path_has_dot_components(p.paths[i].path))
			abort();
	/* The compiled rule set holds every declared rule (equal patterns of a
	 * list merged) and nothing else. A request rule (methods, a path) is
	 * in the request list as declared; one that is no deny lets the
	 * connection go, an allow of its pattern. */
	size_t nallow = 0;
	for (size_t i = 0; i < p.nnet; i++) {
		const struct net_rules *set = &p.net_rules;
		const struct net_rule *d = &p.net[i].rule;
		enum rules_verdict a = p.net[i].action;
		if (d->methods[0] || d->path[0]) {
			size_t k = 0;
			while (k < set->nreq &&
			       (set->req[k].action != a || strcmp(set->req[k].r.text, d->text) != 0 ||
				strcmp(set->req[k].r.methods, d->methods) != 0 ||
				strcmp(set->req[k].r.path, d->path) != 0))
				k++;
			if (k == set->nreq)
				abort();
			if (a == RULES_DENY)
				continue;
			a = RULES_ALLOW;
		}
		const struct net_rule *v = a == RULES_DENY ? set->deny : a == RULES_ASK ? set->ask : set->allow;
		size_t n = a == RULES_DENY ? set->ndeny : a == RULES_ASK ? set->nask : set->nallow, k = 0;
		while (k < n && strcmp(v[k].text, p.net[i].rule.text) != 0)
			k++;
		if (k == n || (p.net[i].rule.allow_private && !v[k].allow_private))
			abort();
		nallow += a != RULES_DENY;
	}
	if (p.net_rules.nallow + p.net_rules.ndeny + p.net_rules.nask > p.nnet ||
	    policy_net_allows_any(&p) != (nallow > 0 || p.net_default_ask))
		abort();
	for (size_t i = 0; i < p.nsecrets; i++) {
		const struct policy_secret *sc = &p.secrets[i];
		if (!policy_env_name_valid(sc->name) || sc->nhosts == 0 || !sc->origin ||
		    policy_secret_find(&p, sc->name) != sc || strv_contains(&p.env_pass, sc->name))
			abort();
		for (size_t k = 0; k < sc->nhosts; k++)
			if (policy_secret_host_refused(&sc->hosts[k]))
				abort();
		if ((sc->source == SECRET_FROM_FILE) != (sc->file != NULL) ||
		    (sc->source == SECRET_FROM_COMMAND) != (sc->argv.n > 0))
			abort();
		if (sc->file && (sc->file[0] != '/' || path_has_dot_components(sc->file)))
			abort();
		size_t n = strlen(sc->name);
		for (size_t k = 0; k < p.env_set.n; k++)
			if (strncmp(p.env_set.v[k], sc->name, n) == 0 && p.env_set.v[k][n] == '=')
				abort();
	}
	for (int k = 0; k < LIMIT_KINDS; k++) {
		const struct policy_limit *l = &p.limits[k];
		char text[32];
		unsigned long long again = 1;
		if ((l->value || l->percent) && !l->origin)
			abort();
		if (l->percent) { /* a share: memory only, 1-100%, written back the same */
			unsigned pct = 0;
			const char *why = NULL;
			policy_limit_text(k, l, text, sizeof text);
			if (k != LIMIT_MEMORY || l->value || l->percent > 100 ||
			    policy_limit_parse_share(text, &pct, &why) != 1 || pct != l->percent)
				abort();
			continue;
		}
		policy_limit_format(k, l->value, text, sizeof text);
		if (policy_limit_parse(k, text, &again) || again != l->value)
			abort();
	}
	/* Exec rules: only SHA-256s in lower-case hex, each once; directories
	 * absolute and normalised; writable paths relative or absolute,
	 * without '..'; a time limit in range whenever one was set. */
	const struct strv *hashes[] = { &p.exec.deny, &p.exec.allow };
	for (size_t h = 0; h < 2; h++)
		for (size_t i = 0; i < hashes[h]->n; i++) {
			const char *x = hashes[h]->v[i];
			if (strlen(x) != 64 || strspn(x, "0123456789abcdef") != 64)
				abort();
			for (size_t k = 0; k < i; k++)
				if (strcmp(hashes[h]->v[k], x) == 0)
					abort();
		}
	for (size_t i = 0; i < p.exec.allow_dirs.n; i++)
		if (p.exec.allow_dirs.v[i][0] != '/' || path_has_dot_components(p.exec.allow_dirs.v[i]) ||
		    strcmp(p.exec.allow_dirs.v[i], "/") == 0)
			abort();
	for (size_t i = 0; i < p.exec.allow_writable.n; i++)
		if (!p.exec.allow_writable.v[i][0] || path_has_dot_components(p.exec.allow_writable.v[i]))
			abort();
	if (p.exec.hash_timeout_ms > 3600000 || (p.exec.hash_timeout_ms && !p.exec.hash_max_size))
		abort();
	policy_free(&p);
	return 0;
}
