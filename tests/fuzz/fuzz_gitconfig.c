/* fuzz_gitconfig.c - libFuzzer target for the git configuration reader
 * (src/workspace/gitconfig.c: gitcfg_scan), which finds core.hooksPath,
 * the include directives (with includeIf's condition), the user's
 * identity, init.defaultBranch, remote URLs and the signing settings in
 * the files the host's git reads. The input is a
 * whole configuration file. Invariants: the scan returns 0 or -1, reports
 * the same settings twice, each value no longer than the input; and each
 * value written back in git's syntax (quoted, escaped, under a header of
 * its kind) is read back as exactly that value and kind, alone. Linked
 * with replay.c it is fuzz-gitconfig-replay, which replays the seed corpus
 * without clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"
#include "src/common/util.h"
#include "src/workspace/gitconfig.h"

struct seen {
	struct strv values;
	char kinds[4096];
	size_t n;
};

static void found(void *ctx, enum gitcfg_kind kind, const char *cond, const char *value)
{
	struct seen *s = ctx;
	/* a condition for includeIf, and only there; never longer than the input */
	if ((kind == GITCFG_INCLUDE_IF) != (cond != NULL) || (cond && !*cond))
		abort();
	strv_push(&s->values, value);
	if (s->n < sizeof s->kinds)
		s->kinds[s->n] = (char)kind;
	s->n++;
}

/* value in git's syntax, as the value of a setting of that kind. */
static char *written(enum gitcfg_kind kind, const char *value)
{
	static const char *const head[] = {
		[GITCFG_HOOKS_PATH] = "[core]\n\thooksPath = \"",
		[GITCFG_INCLUDE] = "[include]\n\tpath = \"",
		[GITCFG_INCLUDE_IF] = "[includeIf \"gitdir:~/x/\"]\n\tpath = \"",
		[GITCFG_USER_NAME] = "[user]\n\tname = \"",
		[GITCFG_USER_EMAIL] = "[User]\n\tEmail = \"",
		[GITCFG_REMOTE_URL] = "[Remote \"o\"]\n\tURL = \"",
		[GITCFG_INIT_BRANCH] = "[init]\n\tdefaultbranch = \"",
		[GITCFG_GPG_FORMAT] = "[GPG]\n\tformat = \"",
		[GITCFG_SIGNING_KEY] = "[user]\n\tsigningKey = \"",
		[GITCFG_COMMIT_SIGN] = "[commit]\n\tgpgsign = \"",
		[GITCFG_TAG_SIGN] = "[tag]\n\tgpgSign = \"",
	};
	size_t n = strlen(value);
	char *out = xmalloc(strlen(head[kind]) + 2 * n + 4), *o = out;
	o = stpcpy(o, head[kind]);
	for (const char *p = value; *p; p++) {
		char c = *p;
		if (c == '\n' || c == '\t' || c == '\b' || c == '"' || c == '\\') {
			*o++ = '\\';
			c = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\b' ? 'b' : c;
		}
		*o++ = c;
	}
	strcpy(o, "\"\n");
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct seen a = { 0 }, b = { 0 };
	int ra = gitcfg_scan(text, size, found, &a);
	int rb = gitcfg_scan(text, size, found, &b);
	if ((ra != 0 && ra != -1) || ra != rb || a.n != b.n || a.values.n != a.n)
		abort();
	for (size_t i = 0; i < a.n; i++) {
		if (strcmp(a.values.v[i], b.values.v[i]) != 0 || strlen(a.values.v[i]) > size)
			abort();
		if (i >= sizeof a.kinds || a.kinds[i] != b.kinds[i])
			continue;
		enum gitcfg_kind kind = (enum gitcfg_kind)a.kinds[i];
		char *again = written(kind, a.values.v[i]);
		struct seen c = { 0 };
		if (gitcfg_scan(again, strlen(again), found, &c) != 0 || c.n != 1 ||
		    c.kinds[0] != (char)kind || strcmp(c.values.v[0], a.values.v[i]) != 0)
			abort();
		strv_free(&c.values);
		free(again);
	}
	strv_free(&a.values);
	strv_free(&b.values);
	return 0;
}
