/* test_workspace_gitident.c - unit tests of the git identity written into
 * the sandbox's ~/.gitconfig (src/workspace/gitident.c): git's wildmatch
 * as includeIf takes it (src/common/wildmatch.c); user.name, user.email
 * and init.defaultBranch (alone too) from the global files, the last one
 * read winning, includes read where they stand, includeIf's gitdir (also
 * through a .git file and for a repository not made yet), gitdir/i and
 * onbranch judged for the workspace, hasconfig:remote.*.url
 * against the remote URLs of the system's, the global and the repository's
 * files (a worktree's from its common directory; the repository's own
 * includes not followed), a URL a conditional include brings in refused
 * as git refuses it; ~/.gitconfig read after $XDG_CONFIG_HOME's; nothing
 * else of the configuration in the text (a credential helper, a URL
 * rewrite); SSH signing carried with the agent offering the key, as the
 * public key's text (from a .pub path, a private key's path with its .pub
 * beside it, a literal), and otherwise a note and no signing setting
 * (OpenPGP, X.509, no agent, a key not offered, unreadable or not a
 * public key); values quoted so that git reads them back as they were; none
 * from a configuration git refuses (a bad line, includes in a loop), a
 * FIFO where a file was expected read as nothing, without a hang. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/common/wildmatch.h"
#include "src/workspace/gitconfig.h"
#include "src/workspace/gitident.h"
#include "check.h"
#include "files.h"

static void put(const char *rel, const char *text)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", tmpdir, rel);
	spit(p, text, strlen(text));
}

static char *ws_path(const char *rel) { return xasprintf("%s/%s", tmpdir, rel); }

static void test_wildmatch(void)
{
	CHECK(wildmatch("/home/u/work/**", "/home/u/work/p/.git", false));
	CHECK(wildmatch("**/p/.git", "/a/b/p/.git", false));
	CHECK(!wildmatch("**/p/.git", "/a/b/xp/.git", false));
	CHECK(wildmatch("/home/u/*/.git", "/home/u/a/.git", false));
	CHECK(!wildmatch("/home/u/*/.git", "/home/u/a/b/.git", false));
	CHECK(wildmatch("/a/**/b", "/a/b", false));
	CHECK(wildmatch("/a/**/b", "/a/x/y/b", false));
	CHECK(!wildmatch("/a/?", "/a//", false));
	CHECK(wildmatch("/a/[xy]z", "/a/yz", false));
	CHECK(!wildmatch("/a/[!xy]z", "/a/yz", false));
	CHECK(wildmatch("/a/[unclosed", "/a/[unclosed", false));
	CHECK(wildmatch("/a/[[:digit:]x]z", "/a/7z", false));
	CHECK(!wildmatch("/a/[[:digit:]x]z", "/a/yz", false));
	CHECK(wildmatch("/Home/U/**", "/home/u/p/.git", true));
	CHECK(!wildmatch("/Home/U/**", "/home/u/p/.git", false));
	CHECK(wildmatch("feat/**", "feat/x/y", false));
	/* "**" not between slashes is one star, as in git */
	CHECK(wildmatch("/a/x**", "/a/xyz", false));
	CHECK(!wildmatch("/a/x**", "/a/x/yz", false));
	/* a pattern of many stars against a long text ends, unmatched */
	CHECK(!wildmatch("*a*a*a*a*a*a*a*a*a*a*a*a*b",
				  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false));
}

/* What the text sets, read back with warden's own reader of git's syntax. */
struct back {
	char *name, *email, *init;
	size_t n;
};

static void back_found(void *ctx, enum gitcfg_kind kind, const char *cond, const char *value)
{
	struct back *b = ctx;
	b->n++;
	if (kind == GITCFG_USER_NAME) {
		free(b->name);
		b->name = xstrdup(value);
	} else if (kind == GITCFG_USER_EMAIL) {
		free(b->email);
		b->email = xstrdup(value);
	} else if (kind == GITCFG_INIT_BRANCH) {
		free(b->init);
		b->init = xstrdup(value);
	}
}

static struct back read_back(const char *text)
{
	struct back b = { 0 };
	CHECK(text && gitcfg_scan(text, strlen(text), back_found, &b) == 0);
	return b;
}

static void back_free(struct back *b)
{
	free(b->name);
	free(b->email);
	free(b->init);
}

/* The directory rel made under tmpdir; its path (malloc'd). */
static char *mk(const char *rel)
{
	char *p = ws_path(rel);
	mkdir(p, 0755);
	return p;
}

/* The text for workspace ws sets email want (NULL: none) and name
 * (NULL: none). */
static void identity_is(const char *ws, const char *name, const char *email)
{
	_cleanup_free_ char *t = gitident_text(ws, NULL);
	struct back b = read_back(t);
	CHECK(name ? b.name && strcmp(b.name, name) == 0 : b.name == NULL);
	CHECK_STR(b.email, email);
	back_free(&b);
}

static void test_identity(void)
{
	put(".gitconfig", "[user]\n\tname = Global Name\n\temail = global@example.invalid\n"
			  "[init]\n\tdefaultBranch = trunk\n[credential]\n\thelper = store\n[url \"https://tok@example.invalid/\"]\n"
			  "\tinsteadOf = https://example.invalid/\n"
			  "[include]\n\tpath = extra.inc\n"
			  "[includeIf \"gitdir:work/\"]\n\tpath = work.inc\n"
			  "[includeIf \"onbranch:feat/\"]\n\tpath = feat.inc\n"
			  "[includeIf \"hasconfig:remote.*.url:https://**\"]\n\tpath = has.inc\n");
	put("extra.inc", "[user]\n\tname = \"Extra \\\"Quoted\\\" \\\\ Name\"\n");
	put("work.inc", "[user]\n\temail = work@example.invalid\n");
	put("feat.inc", "[user]\n\temail = feat@example.invalid\n");
	put("has.inc", "[user]\n\temail = has@example.invalid\n");
	_cleanup_free_ char *home = xstrdup(tmpdir);
	setenv("HOME", home, 1);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("GIT_CONFIG_GLOBAL");

	/* no repository yet, outside work/: the global values, the include's name */
	_cleanup_free_ char *other = ws_path("other");
	mkdir(other, 0755);
	_cleanup_free_ char *t1 = gitident_text(other, NULL);
	struct back b = read_back(t1);
	CHECK_STR(b.name, "Extra \"Quoted\" \\ Name");
	CHECK_STR(b.email, "global@example.invalid");
	CHECK_STR(b.init, "trunk");
	CHECK(b.n == 3);
	CHECK(t1 && !strstr(t1, "helper") && !strstr(t1, "tok@") && !strstr(t1, "insteadOf"));
	back_free(&b);

	/* a repository under work/ (a .git not made yet counts as the one the
	 * session may make): gitdir:work/ holds */
	const char *quoted = "Extra \"Quoted\" \\ Name";
	free(mk("work"));
	_cleanup_free_ char *proj = mk("work/proj");
	identity_is(proj, quoted, "work@example.invalid");

	/* on a branch feat/...: onbranch:feat/ holds too, read after work.inc */
	free(mk("work/proj/.git"));
	put("work/proj/.git/HEAD", "ref: refs/heads/feat/x\n");
	identity_is(proj, quoted, "feat@example.invalid");

	/* a worktree elsewhere whose .git file points under work/ */
	_cleanup_free_ char *wt = mk("wt");
	_cleanup_free_ char *gitfile = xasprintf("gitdir: %s/work/proj/.git\n", tmpdir);
	put("wt/.git", gitfile);
	identity_is(wt, quoted, "feat@example.invalid");

	/* $GIT_CONFIG_GLOBAL: that file only */
	put("only.cfg", "[user]\n\temail = only@example.invalid\n");
	_cleanup_free_ char *only = ws_path("only.cfg");
	setenv("GIT_CONFIG_GLOBAL", only, 1);
	identity_is(other, NULL, "only@example.invalid");
	unsetenv("GIT_CONFIG_GLOBAL");
}

static void test_order(void)
{
	_cleanup_free_ char *other = ws_path("other");
	_cleanup_free_ char *xdg = mk("xdg");
	free(mk("xdg/git"));
	put("xdg/git/config", "[user]\n\temail = xdg@example.invalid\n\tname = X\n");
	put(".gitconfig", "[user]\n\temail = home@example.invalid\n");
	setenv("XDG_CONFIG_HOME", xdg, 1);
	/* git reads $XDG_CONFIG_HOME/git/config, then ~/.gitconfig */
	identity_is(other, "X", "home@example.invalid");
	unsetenv("XDG_CONFIG_HOME");
}

static void test_hasconfig(void)
{
	put(".gitconfig", "[user]\n\temail = global@example.invalid\n"
			  "[includeIf \"hasconfig:remote.*.url:https://work.example/**\"]\n"
			  "\tpath = work.inc\n");
	put("work.inc", "[user]\n\temail = work@example.invalid\n");
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	_cleanup_free_ char *hc = mk("hc");
	free(mk("hc/.git"));
	/* no remote: the condition does not hold */
	identity_is(hc, NULL, "global@example.invalid");
	/* the repository's remote matches */
	put("hc/.git/config", "[core]\n\tbare = false\n[remote \"origin\"]\n"
			      "\turl = https://work.example/org/r.git\n");
	identity_is(hc, NULL, "work@example.invalid");
	/* the same host in scp's form does not match https:// */
	put("hc/.git/config", "[remote \"origin\"]\n\turl = git@work.example:org/r.git\n");
	identity_is(hc, NULL, "global@example.invalid");
	/* a worktree: the common directory's configuration */
	put("hc/.git/config", "[remote \"up\"]\n\turl = https://work.example/a/b\n");
	free(mk("hc/.git/worktrees"));
	free(mk("hc/.git/worktrees/w"));
	put("hc/.git/worktrees/w/commondir", "../..\n");
	_cleanup_free_ char *wt = mk("wt2");
	_cleanup_free_ char *gitfile = xasprintf("gitdir: %s/hc/.git/worktrees/w\n", tmpdir);
	put("wt2/.git", gitfile);
	identity_is(wt, NULL, "work@example.invalid");
	/* the repository's own includes are not followed for its remotes */
	_cleanup_free_ char *inc = xasprintf("[include]\n\tpath = %s/urls.inc\n", tmpdir);
	put("hc/.git/config", inc);
	put("urls.inc", "[remote \"o\"]\n\turl = https://work.example/x\n");
	identity_is(hc, NULL, "global@example.invalid");
	/* ... the global file's are, and the system's file counts */
	put("hc/.git/config", "[core]\n\tbare = false\n");
	put(".gitconfig", "[user]\n\temail = global@example.invalid\n"
			  "[includeIf \"hasconfig:remote.*.url:https://work.example/**\"]\n"
			  "\tpath = work.inc\n[include]\n\tpath = urls.inc\n");
	identity_is(hc, NULL, "work@example.invalid");
	put(".gitconfig", "[user]\n\temail = global@example.invalid\n"
			  "[includeIf \"hasconfig:remote.*.url:https://work.example/**\"]\n"
			  "\tpath = work.inc\n");
	identity_is(hc, NULL, "global@example.invalid");
	_cleanup_free_ char *sys = ws_path("urls.inc");
	setenv("GIT_CONFIG_SYSTEM", sys, 1);
	unsetenv("GIT_CONFIG_NOSYSTEM");
	identity_is(hc, NULL, "work@example.invalid");
	unsetenv("GIT_CONFIG_SYSTEM");
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	/* a URL in a file an includeIf brings in: git dies reading them */
	put("hc/.git/config", "[remote \"origin\"]\n\turl = https://work.example/r\n");
	put("work.inc", "[user]\n\temail = work@example.invalid\n[remote \"z\"]\n\turl = https://z/\n");
	_cleanup_free_ char *t1 = gitident_text(hc, NULL);
	CHECK(t1 == NULL);
	put("work.inc", "[user]\n\temail = work@example.invalid\n");
	_cleanup_free_ char *gi = xasprintf("[user]\n\temail = global@example.invalid\n"
					    "[includeIf \"hasconfig:remote.*.url:https://work.example/**\"]\n"
					    "\tpath = work.inc\n[includeIf \"gitdir:%s/hc/\"]\n\tpath = g.inc\n",
					    tmpdir);
	put(".gitconfig", gi);
	put("g.inc", "[remote \"g\"]\n\turl = https://g/\n");
	_cleanup_free_ char *t2 = gitident_text(hc, NULL);
	CHECK(t2 == NULL);
	/* ... and not when that include's condition does not hold */
	_cleanup_free_ char *other = ws_path("other");
	identity_is(other, NULL, "global@example.invalid");
	put("g.inc", "[core]\n\tbare = false\n");
	identity_is(hc, NULL, "work@example.invalid");
	/* a remote URL without a value is passed over */
	put("hc/.git/config", "[remote \"b\"]\n\turl\n");
	identity_is(hc, NULL, "global@example.invalid");
	unsetenv("GIT_CONFIG_NOSYSTEM");
}

static void test_none(void)
{
	_cleanup_free_ char *other = ws_path("other");
	/* init.defaultBranch alone: a file with that, and no [user] */
	put(".gitconfig", "[init]\n\tdefaultbranch = main\n");
	_cleanup_free_ char *t0 = gitident_text(other, NULL);
	struct back b = read_back(t0);
	CHECK_STR(b.init, "main");
	CHECK(b.n == 1 && t0 && !strstr(t0, "[user]"));
	back_free(&b);
	/* nothing set */
	put(".gitconfig", "[core]\n\teditor = vi\n");
	_cleanup_free_ char *t1 = gitident_text(other, NULL);
	CHECK(t1 == NULL);
	/* a line git refuses, after the identity: git refuses it all */
	put(".gitconfig", "[user]\n\tname = N\n[bad\n");
	_cleanup_free_ char *t2 = gitident_text(other, NULL);
	CHECK(t2 == NULL);
	/* includes in a loop: git stops ("exceeded maximum include depth") */
	put(".gitconfig", "[user]\n\tname = N\n[include]\n\tpath = .gitconfig\n");
	_cleanup_free_ char *t3 = gitident_text(other, NULL);
	CHECK(t3 == NULL);
	/* a FIFO where the file was expected: read as nothing, at once */
	_cleanup_free_ char *cfg = ws_path(".gitconfig");
	unlink(cfg);
	CHECK(mkfifo(cfg, 0600) == 0);
	_cleanup_free_ char *t4 = gitident_text(other, NULL);
	CHECK(t4 == NULL);
	unlink(cfg);
}

#define PUB "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHh/d29THA/8KeCPIGZtc10qrMPs1UNv1dVdKQ3WP66B"
#define PUB_FP "SHA256:y3KffGsOfmM66LGB0E2SvneO5sJcw9LVgCcJaZd8XXY"

/* The global file holds cfg; the agent (NULL: none) offers keys. The
 * text, and sign's note in *note (malloc'd, or NULL). */
static char *signed_text(const char *cfg, const struct strv *keys, struct gitsign *sign)
{
	put(".gitconfig", cfg);
	_cleanup_free_ char *ws = ws_path("other");
	mkdir(ws, 0755);
	*sign = (struct gitsign){ .agent_keys = keys };
	return gitident_text(ws, sign);
}

/* user.signingKey set to key, SSH signing of commits: with the key
 * offered, carried as key::PUB (a note when not: why, naming want). */
static void key_carried(const char *key, const char *want)
{
	struct strv keys = { 0 };
	strv_push(&keys, PUB_FP);
	_cleanup_free_ char *cfg = xasprintf("[user]\n\tname = N\n\tsigningKey = %s\n[gpg]\n\tformat = ssh\n"
					     "[commit]\n\tgpgSign\n", key);
	struct gitsign sign;
	_cleanup_free_ char *t = signed_text(cfg, &keys, &sign);
	if (!want) {
		CHECK(t && strstr(t, "signingKey = \"key::" PUB "\"\n") && strstr(t, "[commit]\n\tgpgSign = true\n"));
		CHECK(t && !strstr(t, "[tag]") && !strstr(t, tmpdir));
		CHECK_STR(sign.key_fp, PUB_FP);
		CHECK(sign.commit && !sign.tag && !sign.note);
	} else {
		CHECK(t && !strstr(t, "signingKey") && !strstr(t, "gpgSign") && !strstr(t, "[gpg]"));
		CHECK(!sign.key_fp && sign.note && strstr(sign.note, want));
		CHECK(sign.note && strncmp(sign.note, "commits inside will not be signed: ", 35) == 0);
	}
	gitsign_free(&sign);
	strv_free(&keys);
}

static void test_signing(void)
{
	put("k.pub", PUB " comment\n");
	put("priv.pub", PUB "\n");
	put("priv", "-----BEGIN OPENSSH PRIVATE KEY-----\nnot read\n");
	put("lonely", "-----BEGIN OPENSSH PRIVATE KEY-----\nnot read\n");
	put("bad.pub", "-----BEGIN OPENSSH PRIVATE KEY-----\n");
	/* a blob of another type than the line names */
	put("mixed.pub", "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIHh/d29THA/8KeCPIGZtc10qrMPs1UNv1dVdKQ3WP66B\n");
	_cleanup_free_ char *home = xstrdup(tmpdir);
	setenv("HOME", home, 1);
	unsetenv("XDG_CONFIG_HOME");
	unsetenv("GIT_CONFIG_GLOBAL");
	_cleanup_free_ char *pub = ws_path("k.pub"), *priv = ws_path("priv"), *lonely = ws_path("lonely");
	key_carried(pub, NULL);
	key_carried("~/k.pub", NULL);
	key_carried(priv, NULL);           /* the .pub beside it */
	key_carried("key::" PUB, NULL);
	key_carried(PUB " c", NULL);       /* git's older literal */
	key_carried(lonely, "a private key file, and there is no");
	_cleanup_free_ char *bad = ws_path("bad.pub"), *mixed = ws_path("mixed.pub");
	key_carried(bad, "is not an SSH public key");
	key_carried(mixed, "is not an SSH public key");
	key_carried("relative.pub", "not a path from / or ~/");
	key_carried("key::ssh-ed25519 AAAA", "is not an SSH public key");

	struct strv keys = { 0 }, other = { 0 };
	strv_push(&keys, PUB_FP);
	strv_push(&other, "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
	struct gitsign sign;
	/* the key the agent does not offer; no agent; no key at all */
	_cleanup_free_ char *cfg = xasprintf("[user]\n\tsigningKey = %s\n[gpg]\n\tformat = ssh\n"
					     "[commit]\n\tgpgSign = yes\n[tag]\n\tgpgSign = 1\n", pub);
	_cleanup_free_ char *t1 = signed_text(cfg, &other, &sign);
	CHECK(t1 == NULL && sign.note && strstr(sign.note, "commits and tags inside will not be signed: "
						"the session's SSH agent does not offer your signing key " PUB_FP));
	gitsign_free(&sign);
	_cleanup_free_ char *t2 = signed_text(cfg, NULL, &sign);
	CHECK(t2 == NULL && sign.note && strstr(sign.note, "--ssh-agent"));
	gitsign_free(&sign);
	_cleanup_free_ char *t3 = signed_text("[gpg]\n\tformat = ssh\n[tag]\n\tgpgSign = on\n", &keys, &sign);
	CHECK(t3 == NULL && sign.note && strstr(sign.note, "tags inside will not be signed: no user.signingKey"));
	gitsign_free(&sign);
	/* OpenPGP and X.509: said, nothing set */
	_cleanup_free_ char *t4 = signed_text("[user]\n\tname = N\n\tsigningKey = ABCD\n[commit]\n\tgpgSign = true\n",
					      &keys, &sign);
	CHECK(t4 && !strstr(t4, "gpgSign") && !strstr(t4, "ABCD"));
	CHECK(sign.note && strstr(sign.note, "OpenPGP signing (gpg.format unset) needs a GnuPG agent"));
	gitsign_free(&sign);
	_cleanup_free_ char *t5 = signed_text("[gpg]\n\tformat = x509\n[commit]\n\tgpgSign = true\n", &keys, &sign);
	CHECK(t5 == NULL && sign.note && strstr(sign.note, "X.509 signing (gpg.format=x509)"));
	gitsign_free(&sign);
	/* signing off on the host: the key carried for `git commit -S`, nothing said */
	_cleanup_free_ char *cfg6 = xasprintf("[user]\n\tsigningKey = %s\n[gpg]\n\tformat = ssh\n"
					      "[commit]\n\tgpgSign = false\n", pub);
	_cleanup_free_ char *t6 = signed_text(cfg6, &keys, &sign);
	CHECK(t6 && strstr(t6, "key::" PUB) && !strstr(t6, "gpgSign"));
	CHECK(!sign.note && sign.key_fp && !sign.commit && !sign.tag);
	gitsign_free(&sign);
	_cleanup_free_ char *t7 = signed_text("[commit]\n\tgpgSign = false\n[tag]\n\tgpgSign = 0\n", &keys, &sign);
	CHECK(t7 == NULL && !sign.note && !sign.key_fp);
	gitsign_free(&sign);
	strv_free(&keys);
	strv_free(&other);
}

int main(void)
{
	tmpdir_make("warden-gitident");
	test_wildmatch();
	test_identity();
	test_order();
	test_hasconfig();
	test_none();
	test_signing();
	tmpdir_remove();
	return check_status_counted("gitident");
}
