/* test_supervisor_cfgwrite.c - unit tests of the judgement of git's
 * rewrite of a protected repository config (src/supervisor/cfgwrite.c):
 * the identity and a branch's upstream toward a remote the config names
 * may change; every other setting must come back the same, in the same
 * order; values git would take differently from their text (a URL as an
 * upstream, control characters), texts git refuses and texts with a NUL
 * are refused; what was changed is said. */
#include <stdbool.h>
#include <string.h>

#include "src/supervisor/cfgwrite.h"
#include "check.h"

static const char base[] = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
			   "[remote \"origin\"]\n\turl = /srv/r.git\n"
			   "\tfetch = +refs/heads/*:refs/remotes/origin/*\n";

static char what[CFGWRITE_WHAT_MAX];

/* base, then more, judged */
static bool after(const char *more)
{
	char text[4096];
	snprintf(text, sizeof text, "%s%s", base, more);
	return cfgwrite_judge(base, strlen(base), text, strlen(text), what);
}

static bool between(const char *old, const char *new)
{
	return cfgwrite_judge(old, strlen(old), new, strlen(new), what);
}

static void test_allowed(void)
{
	CHECK(after(""));
	CHECK_STR(what, "unchanged");
	CHECK(after("[user]\n\temail = a@example.invalid\n\tname = A Person\n"));
	CHECK_STR(what, "user.email=a@example.invalid, user.name=A Person");
	CHECK(after("[branch \"feat\"]\n\tremote = origin\n\tmerge = refs/heads/feat\n"));
	CHECK_STR(what, "branch.feat.remote=origin, branch.feat.merge=refs/heads/feat");
	CHECK(after("[branch \"a.b/c\"]\n\tpushRemote = .\n\trebase = merges\n"
		    "\tdescription = two\\nlines\n"));
	/* removed: a branch deleted */
	char with[1024];
	snprintf(with, sizeof with, "%s[branch \"old\"]\n\tremote = origin\n", base);
	CHECK(between(with, base));
	CHECK_STR(what, "-branch.old.remote");
	/* the other settings' text may change, not what git reads of it */
	CHECK(between(base, "[core]\n\trepositoryformatversion = \"0\"\n\tbare = false # c\n"
			    "[remote \"origin\"]\n\turl = /srv/r.git\n"
			    "\tfetch = +refs/heads/*:refs/remotes/origin/*\n[user]\n\tname = b\n"));
}

static void test_refused(void)
{
	CHECK(!after("[core]\n\thooksPath = /tmp/h\n"));
	CHECK(strstr(what, "core.hookspath set") != NULL);
	CHECK(!after("[alias]\n\tx = !sh\n"));
	CHECK(!after("[include]\n\tpath = /tmp/x\n"));
	CHECK(!after("[core]\n\tfsmonitor = touch /tmp/x\n"));
	CHECK(!after("[remote \"evil\"]\n\turl = https://example.invalid/r.git\n"));
	/* [branch] itself, not a branch's */
	CHECK(!after("[branch]\n\tautoSetupMerge = always\n"));
	/* an upstream that is a URL, or a remote the config does not name */
	CHECK(!after("[branch \"feat\"]\n\tremote = https://example.invalid/r.git\n"));
	CHECK(strstr(what, "not a value warden writes") != NULL);
	CHECK(!after("[branch \"feat\"]\n\tremote = upstream\n"));
	CHECK(!after("[branch \"feat\"]\n\tpushremote = -oProxyCommand\n"));
	CHECK(!after("[branch \"feat\"]\n\tmerge = main\n"));
	CHECK(!after("[branch \"feat\"]\n\trebase = interactive\n"));
	CHECK(!after("[branch \"feat\"]\n\tremote\n"));
	CHECK(!after("[user]\n\tname = a\\tb\n"));
	/* an other setting removed, moved or changed */
	CHECK(!between(base, "[core]\n\tbare = false\n\trepositoryformatversion = 0\n"
			     "[remote \"origin\"]\n\turl = /srv/r.git\n"
			     "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"));
	CHECK(!between(base, "[core]\n\trepositoryformatversion = 0\n"));
	CHECK(strstr(what, "removed") != NULL);
	CHECK(!between(base, "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
			     "[remote \"origin\"]\n\turl = /srv/r.git\n"
			     "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"));
	/* a key moved into a branch's section by a header git reads so */
	CHECK(!after("[branch \"x\"] hooksPath = /tmp/h\n"));
	/* text git refuses, and a NUL (git stops reading there) */
	CHECK(!after("[user\n\tname = a\n"));
	CHECK(strstr(what, "not git configuration") != NULL);
	char nul[1024];
	size_t n = (size_t)snprintf(nul, sizeof nul, "%s[user]\n\tname = a\n", base);
	nul[n++] = '\0';
	n += (size_t)snprintf(nul + n, sizeof nul - n, "[core]\n\thooksPath = /tmp/h\n");
	CHECK(!cfgwrite_judge(base, strlen(base), nul, n, what));
}

int main(void)
{
	test_allowed();
	test_refused();
	return check_status();
}
