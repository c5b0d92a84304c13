/* test_secrets.c - unit tests of secrets_load (src/secrets/secrets.c): the
 * value from the host's variable, a file (trailing newlines trimmed; a FIFO,
 * a directory, an empty or oversized file refused, without hanging) or a
 * command (stdin /dev/null, no descriptor of the caller's, a non-zero exit, a signal, no output, too much
 * output, a command not found, a time-out that kills the whole process
 * group), values refused for NUL, CR, LF or fewer than 8 bytes, each error
 * naming the secret and its origin; the phantoms' shape (prefix, length,
 * character class) and uniqueness; with a tail key, the stable end (the
 * same last 20 characters in every load of the same name and value, the
 * rest still random; another key, name or value, another end; too short a
 * value, no stable end); the tail key file (made 0600 on first use, read
 * back the same, refused when others may read it, when short, when a
 * FIFO); secret_bound over host patterns and
 * ports; secrets_find_phantom and secrets_find_value. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/policy/policy.h"
#include "src/secrets/secrets.h"
#include "src/secrets/tailkey.h"
#include "check.h"
#include "files.h"

static struct policy pol;

/* The policy of this profile text (fails the test when it does not parse). */
static void policy_of(const char *text)
{
	struct werr e = { 0 };
	policy_free(&pol);
	memset(&pol, 0, sizeof pol);
	if (policy_parse_text(&pol, "t.profile", NULL, "/home/u", text, strlen(text), &e) < 0) {
		fprintf(stderr, "profile: %s\n", e.msg);
		exit(2);
	}
}

/* How long load() lets a command source run (test_command lowers it). */
static unsigned command_timeout_ms = SECRETS_COMMAND_TIMEOUT_MS;

/* Load the profile's secrets: 0 with s filled, or -1 with e. */
static int load(const char *text, struct secrets *s, struct werr *e)
{
	policy_of(text);
	memset(e, 0, sizeof *e);
	return secrets_load_within(s, &pol, NULL, command_timeout_ms, e);
}

#define EXPECT_LOAD_ERR(text_, msg_, err_)                                              \
	do {                                                                         \
		struct secrets s_;                                                   \
		struct werr e_;                                                      \
		CHECK(load((text_), &s_, &e_) < 0);                                  \
		CHECK_STR(e_.msg, (msg_));                                           \
		CHECK(e_.errnum == (err_));                                          \
		CHECK(s_.n == 0 && s_.v == NULL);                                    \
	} while (0)

static bool all_in(const char *s, size_t n, const char *set)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(set, s[i]))
			return false;
	return true;
}

#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/* The phantom of value keeps exactly `prefix`, has the value's length, and
 * its other characters come from `set`. */
static void expect_phantom_n(int line, const char *value, const char *prefix, const char *set)
{
	size_t n = strlen(value), pl = strlen(prefix);
	char *ph = secret_phantom_for(value, n, NULL, NULL);
	checks++;
	if (!ph || strlen(ph) != n || strncmp(ph, prefix, pl) != 0 || !all_in(ph + pl, n - pl, set) ||
	    strcmp(ph, value) == 0) {
		fprintf(stderr, "%s:%d: phantom of '%s': '%s' (expected prefix '%s', then [%s])\n",
			__FILE__, line, value, ph ? ph : "(null)", prefix, set);
		failures++;
	}
	/* the prefix is exactly that: the next character is random, so over a
	 * few tries it differs from the value's */
	bool differs = n == pl;
	for (int t = 0; t < 20 && !differs; t++) {
		char *p2 = secret_phantom_for(value, n, NULL, NULL);
		differs = p2 && p2[pl] != value[pl];
		free(p2);
	}
	if (!differs)
		fprintf(stderr, "  the prefix of %s is longer than %s\n", value, prefix);
	CHECK(differs);
	free(ph);
}
#define EXPECT_PHANTOM(v, prefix, set) expect_phantom_n(__LINE__, (v), (prefix), (set))

static void test_phantom_shape(void)
{
	EXPECT_PHANTOM("sk-ant-api03-Zx9_Qw-ErTyUiOp12345678901234567890abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX",
		       "sk-ant-api03-", ALNUM "-_");
	EXPECT_PHANTOM("ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "ghp_", ALNUM);
	/* the 22-character second segment is the token's, not a prefix */
	EXPECT_PHANTOM("github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijk",
		       "github_pat_", ALNUM "_");
	EXPECT_PHANTOM("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-123456789012-",
		       ALNUM "-");
	EXPECT_PHANTOM("sk-proj-abc.def.ghi.jkl.mno.pq1", "sk-proj-", ALNUM ".");
	/* at most half the value, and only before a token's body (20
	 * characters or more, two kinds of them) */
	EXPECT_PHANTOM("abcd_efgh", "", ALNUM "_");
	EXPECT_PHANTOM("ab_cdefgh", "", ALNUM "_");
	EXPECT_PHANTOM("ab_cdefghijklmnopqrstuvwxyz0123", "ab_", ALNUM);
	EXPECT_PHANTOM("abcdefghijklmnopqrstuvwxyz", "", ALNUM);
	/* a password or a passphrase keeps nothing of itself: none of it is
	 * a vendor's mark (words longer than 6, punctuation, one kind) */
	EXPECT_PHANTOM("correct-horse-battery-staple", "", ALNUM "-");
	EXPECT_PHANTOM("correct-horse-battery-staple-lemon-river-ocean", "", ALNUM "-");
	EXPECT_PHANTOM("admin_2024_Winter-Sunshine!", "", ALNUM "-_");
	EXPECT_PHANTOM("admin_2024_WinterSunshine99", "", ALNUM "_");
	/* character classes */
	EXPECT_PHANTOM("12345678901234", "", "0123456789");
	EXPECT_PHANTOM("key-0123456789", "", ALNUM "-");
	EXPECT_PHANTOM("key-0123456789abcdefXYZ0123", "key-", ALNUM);
	EXPECT_PHANTOM("deadbeef0123456789abcdef", "", "0123456789abcdef");
	EXPECT_PHANTOM("DEADBEEF0123456789ABCDEF", "", "0123456789ABCDEF");
	EXPECT_PHANTOM("tok_Ab+/Cd==Ef+/Gh==Ij+/Kl==", "tok_", ALNUM); /* no '+', '/' or '=' */
	EXPECT_PHANTOM("p\xc3\xa4ssw\xc3\xb6rd-long", "", ALNUM "-");

	/* every draw of a digits-only value differs (10^14 of them) */
	char *a = secret_phantom_for("12345678901234", 14, NULL, NULL), *b = secret_phantom_for("12345678901234", 14, NULL, NULL);
	CHECK(a && b && strcmp(a, b) != 0);
	free(a);
	free(b);
}

static void test_stable_tail(void)
{
	unsigned char k1[TAIL_KEY_LEN], k2[TAIL_KEY_LEN];
	memset(k1, 1, sizeof k1);
	memset(k2, 2, sizeof k2);
	const char *v = "sk-ant-api03-REALrealREALrealREALrealREALrealREALrealREALrealREALrealREALrealREALreal0123456789AA";
	size_t n = strlen(v);
	char *a = secret_phantom_for(v, n, "ANTHROPIC_API_KEY", k1);
	char *b = secret_phantom_for(v, n, "ANTHROPIC_API_KEY", k1);
	char *c = secret_phantom_for(v, n, "ANTHROPIC_API_KEY", k2);
	char *d = secret_phantom_for(v, n, "OTHER", k1);
	char *w = secret_phantom_for("sk-ant-api03-REALrealREALrealREALrealREALrealREALrealREALrealREALrealREALrealREALreal0123456789AB", n, "ANTHROPIC_API_KEY", k1);
	CHECK(a && b && c && d && w);
	if (a && b && c && d && w) {
		/* same key, name and value: the same end, another body */
		CHECK(strlen(a) == n && strncmp(a, "sk-ant-api03-", 13) == 0);
		CHECK(strcmp(a + n - 20, b + n - 20) == 0);
		CHECK(strcmp(a, b) != 0);
		CHECK(all_in(a + 13, n - 13, ALNUM));
		/* the end is not the value's */
		CHECK(strcmp(a + n - 20, v + n - 20) != 0);
		/* another key, name or value: another end */
		CHECK(strcmp(a + n - 20, c + n - 20) != 0);
		CHECK(strcmp(a + n - 20, d + n - 20) != 0);
		CHECK(strcmp(a + n - 20, w + n - 20) != 0);
	}
	free(a), free(b), free(c), free(d), free(w);
	/* fewer than 36 characters after the prefix: random to the end */
	bool same = true;
	for (int t = 0; t < 5 && same; t++) {
		a = secret_phantom_for("ghp_0123456789abcdefghijklmnopqrstuvwxy", 39, "GH", k1);
		b = secret_phantom_for("ghp_0123456789abcdefghijklmnopqrstuvwxy", 39, "GH", k1);
		same = a && b && strcmp(a + 19, b + 19) == 0;
		free(a), free(b);
	}
	CHECK(!same);
	/* the class of the value holds in the end too */
	a = secret_phantom_for("0123456789012345678901234567890123456789", 40, "NUM", k1);
	CHECK(a && all_in(a, 40, "0123456789"));
	free(a);

	/* secrets_load passes the key on: two loads, one end */
	policy_of("secret T_TAIL host api.test\n");
	setenv("T_TAIL", v, 1);
	struct secrets s1, s2;
	struct werr e = { 0 };
	CHECK(secrets_load(&s1, &pol, k1, &e) == 0 && secrets_load(&s2, &pol, k1, &e) == 0);
	CHECK(s1.n == 1 && s2.n == 1 && strcmp(s1.v[0].phantom + n - 20, s2.v[0].phantom + n - 20) == 0 &&
	      strcmp(s1.v[0].phantom, s2.v[0].phantom) != 0);
	secrets_free(&s1);
	secrets_free(&s2);
}

static void test_tail_key_file(void)
{
	char *path = xasprintf("%s/data/warden/phantom-key", tmpdir);
	unsigned char k1[TAIL_KEY_LEN], k2[TAIL_KEY_LEN];
	struct werr e = { 0 };
	CHECK(tail_key_load(path, k1, &e) == 0);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_size == TAIL_KEY_LEN);
	CHECK(tail_key_load(path, k2, &e) == 0 && memcmp(k1, k2, sizeof k1) == 0);
	/* others may read it: refused, named */
	chmod(path, 0644);
	CHECK(tail_key_load(path, k2, &e) < 0 && strstr(e.msg, "others may read or write it") &&
	      strstr(e.msg, path));
	/* short */
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0 && write(fd, "abc", 3) == 3);
	close(fd);
	CHECK(tail_key_load(path, k2, &e) < 0 && strstr(e.msg, "3 bytes, not 32"));
	/* a FIFO: refused at once, never a hang */
	unlink(path);
	CHECK(mkfifo(path, 0600) == 0);
	alarm(10);
	CHECK(tail_key_load(path, k2, &e) < 0 && strstr(e.msg, "not a regular file"));
	alarm(0);
	unlink(path);
	/* made again when gone: a new key */
	CHECK(tail_key_load(path, k2, &e) == 0 && memcmp(k1, k2, sizeof k1) != 0);
	char *home = xasprintf("%s/home", tmpdir);
	unsetenv("XDG_DATA_HOME");
	char *p2 = tail_key_path(home);
	char *want = xasprintf("%s/home/.local/share/warden/phantom-key", tmpdir);
	CHECK_STR(p2, want);
	free(p2), free(want), free(home), free(path);
}

static void test_env(void)
{
	struct secrets s;
	struct werr e;
	setenv("T_ANTHROPIC", "sk-ant-api03-REALrealREALrealREALrealREALrealREALrealREALrealREAL", 1);
	setenv("T_GH", "ghp_REALrealREALrealREALrealREALrealREAL", 1);
	CHECK(load("secret T_ANTHROPIC host api.anthropic.com\n"
		   "secret T_GH host github.com *.github.com\n", &s, &e) == 0);
	CHECK(s.n == 2);
	if (s.n == 2) {
		CHECK(s.v[0].spec == &pol.secrets[0] && s.v[1].spec == &pol.secrets[1]);
		CHECK_STR(s.v[0].value, getenv("T_ANTHROPIC"));
		CHECK_STR(s.v[1].value, getenv("T_GH"));
		CHECK(strlen(s.v[0].phantom) == strlen(s.v[0].value));
		CHECK(strncmp(s.v[0].phantom, "sk-ant-api03-", 13) == 0);
		CHECK(strcmp(s.v[0].phantom, s.v[0].value) != 0);
		CHECK(strncmp(s.v[1].phantom, "ghp_", 4) == 0);
		CHECK(s.maxlen == strlen(s.v[0].phantom));
		CHECK(!strstr(s.v[0].phantom, "REAL") && !strstr(s.v[1].phantom, "REALreal"));

		CHECK(secrets_find_phantom(&s, s.v[1].phantom, strlen(s.v[1].phantom)) == &s.v[1]);
		char buf[256];
		snprintf(buf, sizeof buf, "x-api-key: %s\r\n", s.v[0].phantom);
		CHECK(secrets_find_phantom(&s, buf, strlen(buf)) == &s.v[0]);
		CHECK(secrets_find_phantom(&s, buf, 20) == NULL);
		CHECK(secrets_find_value(&s, buf, strlen(buf)) == NULL);
		snprintf(buf, sizeof buf, "token %s.", s.v[1].value);
		CHECK(secrets_find_value(&s, buf, strlen(buf)) == &s.v[1]);
		CHECK(secrets_find_phantom(&s, buf, strlen(buf)) == NULL);
		CHECK(secrets_find_phantom(&s, "", 0) == NULL);
	}
	secrets_free(&s);
	CHECK(s.n == 0 && s.v == NULL);
	secrets_free(&s);

	/* Two secrets with one value: two phantoms. */
	setenv("T_SAME1", "same-value-0123456789", 1);
	setenv("T_SAME2", "same-value-0123456789", 1);
	CHECK(load("secret T_SAME1 host a.test\nsecret T_SAME2 host a.test\n", &s, &e) == 0);
	CHECK(s.n == 2 && strcmp(s.v[0].phantom, s.v[1].phantom) != 0);
	secrets_free(&s);

	/* No secrets: nothing to do. */
	CHECK(load("", &s, &e) == 0);
	CHECK(s.n == 0 && s.maxlen == 0);
	secrets_free(&s);

	unsetenv("T_UNSET");
	EXPECT_LOAD_ERR("secret T_UNSET host a.test\n",
			"secret T_UNSET (t.profile:1): the variable T_UNSET is not set", 0);
	setenv("T_EMPTY", "", 1);
	EXPECT_LOAD_ERR("\nsecret T_EMPTY host a.test\n",
			"secret T_EMPTY (t.profile:2): the variable T_EMPTY is empty", 0);
	setenv("T_SHORT", "1234567", 1);
	EXPECT_LOAD_ERR("secret T_SHORT host a.test\n",
			"secret T_SHORT (t.profile:1): the value is shorter than 8 bytes: its phantom could match ordinary text", 0);
	setenv("T_SHORT", "1234567\n", 1);
	EXPECT_LOAD_ERR("secret T_SHORT host a.test\n",
			"secret T_SHORT (t.profile:1): the value is shorter than 8 bytes: its phantom could match ordinary text", 0);
	setenv("T_LF", "abcdefgh\nX-Evil: 1", 1);
	EXPECT_LOAD_ERR("secret T_LF host a.test\n",
			"secret T_LF (t.profile:1): the value holds a NUL, CR or LF byte: it could not go in a header", 0);
	setenv("T_CR", "abcdefgh\rijkl", 1);
	EXPECT_LOAD_ERR("secret T_CR host a.test\n",
			"secret T_CR (t.profile:1): the value holds a NUL, CR or LF byte: it could not go in a header", 0);
	/* One failure empties everything loaded before it. */
	EXPECT_LOAD_ERR("secret T_GH host github.com\nsecret T_UNSET host a.test\n",
			"secret T_UNSET (t.profile:2): the variable T_UNSET is not set", 0);
	/* The origin of --secret. */
	struct werr pe;
	policy_of("");
	CHECK(policy_add_secret(&pol, "T_UNSET@a.test", NULL, &pe) == 0);
	CHECK(secrets_load(&s, &pol, NULL, &e) < 0);
	CHECK_STR(e.msg, "secret T_UNSET (--secret): the variable T_UNSET is not set");
}

static void test_file(void)
{
	struct secrets s;
	struct werr e;
	char *path = xasprintf("%s/key", tmpdir), *text;

	spit(path, "file-value-0123456789\n\r\n\n", 25);
	text = xasprintf("secret F host a.test file %s\n", path);
	CHECK(load(text, &s, &e) == 0);
	CHECK(s.n == 1 && strcmp(s.v[0].value, "file-value-0123456789") == 0);
	secrets_free(&s);

	/* exactly 64 KiB is fine, one byte more is not */
	char *big = xmalloc(65537);
	memset(big, 'k', 65537);
	spit(path, big, 65536);
	CHECK(load(text, &s, &e) == 0);
	CHECK(s.n == 1 && strlen(s.v[0].value) == 65536 && s.maxlen == 65536);
	secrets_free(&s);
	spit(path, big, 65537);
	char *msg = xasprintf("secret F (t.profile:1): %s is larger than 64 KiB", path);
	EXPECT_LOAD_ERR(text, msg, 0);
	free(msg);
	free(big);

	spit(path, "\n\n", 2);
	EXPECT_LOAD_ERR(text, "secret F (t.profile:1): the file is empty", 0);
	spit(path, "", 0);
	EXPECT_LOAD_ERR(text, "secret F (t.profile:1): the file is empty", 0);
	spit(path, "abcdefgh\0ijkl\n", 14);
	EXPECT_LOAD_ERR(text, "secret F (t.profile:1): the value holds a NUL, CR or LF byte: it could not go in a header", 0);
	spit(path, "line-one-xyz\nline-two-xyz\n", 26);
	EXPECT_LOAD_ERR(text, "secret F (t.profile:1): the value holds a NUL, CR or LF byte: it could not go in a header", 0);
	free(text);

	/* not there, a directory, a FIFO (refused at once, never opened) */
	char *missing = xasprintf("%s/missing", tmpdir);
	text = xasprintf("secret F host a.test file %s\n", missing);
	msg = xasprintf("secret F (t.profile:1): cannot read %s", missing);
	EXPECT_LOAD_ERR(text, msg, ENOENT);
	free(text);
	free(msg);
	free(missing);
	text = xasprintf("secret F host a.test file %s\n", tmpdir);
	msg = xasprintf("secret F (t.profile:1): %s is not a regular file", tmpdir);
	EXPECT_LOAD_ERR(text, msg, 0);
	free(text);
	free(msg);
	char *fifo = xasprintf("%s/fifo", tmpdir);
	CHECK(mkfifo(fifo, 0600) == 0);
	text = xasprintf("secret F host a.test file %s\n", fifo);
	msg = xasprintf("secret F (t.profile:1): %s is not a regular file", fifo);
	alarm(10); /* a hang fails the test instead of blocking it */
	EXPECT_LOAD_ERR(text, msg, 0);
	alarm(0);
	free(text);
	free(msg);
	free(fifo);
	text = xstrdup("secret F host a.test file /dev/null\n");
	EXPECT_LOAD_ERR(text, "secret F (t.profile:1): /dev/null is not a regular file", 0);
	free(text);
	free(path);
}

static long long ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_command(void)
{
	struct secrets s;
	struct werr e;
	/* stdout captured and trimmed; stdin is /dev/null (cat ends at once) */
	char *text = xasprintf("secret C host a.test command %s/tests/unit/secret-cmd.sh ok\n", SRCDIR);
	CHECK(load(text, &s, &e) == 0);
	if (s.n == 1)
		CHECK_STR(s.v[0].value, "cmd-value-0123456789");
	else
		fprintf(stderr, "  %s\n", e.msg);
	secrets_free(&s);
	free(text);
	/* a descriptor of the caller's, even one without O_CLOEXEC, stays out */
	int leak = open("/dev/null", O_RDONLY);
	CHECK(leak > 2);
	text = xasprintf("secret C host a.test command %s/tests/unit/secret-cmd.sh fds %d\n", SRCDIR, leak);
	CHECK(load(text, &s, &e) == 0);
	if (s.n == 1)
		CHECK_STR(s.v[0].value, "fds-value-0123");
	else
		fprintf(stderr, "  %s\n", e.msg);
	secrets_free(&s);
	free(text);
	close(leak);

	static const struct {
		const char *arg, *msg;
	} bad[] = {
		{ "fail", "exited with status 3" },
		{ "empty", "=the command's output is empty" },
		{ "newlines", "=the command's output is empty" },
		{ "signal", "was killed by signal 9" },
		{ "huge", "printed more than 64 KiB" },
		{ "short", "=the value is shorter than 8 bytes: its phantom could match ordinary text" },
	};
	char *cmd = xasprintf("%s/tests/unit/secret-cmd.sh", SRCDIR);
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		text = xasprintf("secret C host a.test command %s %s\n", cmd, bad[i].arg);
		/* "=TEXT": the message as is; else "command 'CMD' TEXT" */
		const char *m = bad[i].msg;
		char *want = m[0] == '=' ? xstrdup(m + 1) : xasprintf("command '%s' %s", cmd, m);
		char *msg = xasprintf("secret C (t.profile:1): %s", want);
		EXPECT_LOAD_ERR(text, msg, 0);
		free(text);
		free(want);
		free(msg);
	}

	/* not found */
	EXPECT_LOAD_ERR("secret C host a.test command /nonexistent/warden-cmd x\n",
			"secret C (t.profile:1): cannot run command '/nonexistent/warden-cmd'", ENOENT);

	/* A command that hangs is killed with its process group when the time
	 * is up: the background child that would write the marker dies too. */
	char *mark = xasprintf("%s/marker", tmpdir);
	command_timeout_ms = 300;
	text = xasprintf("secret C host a.test command %s hang %s\n", cmd, mark);
	char *msg = xasprintf("secret C (t.profile:1): command '%s' timed out after 300 ms", cmd);
	long long t0 = ms_now();
	EXPECT_LOAD_ERR(text, msg, 0);
	long long took = ms_now() - t0;
	CHECK(took >= 290 && took < 3000);
	free(msg);
	usleep(1500 * 1000);
	CHECK(access(mark, F_OK) < 0);
	command_timeout_ms = 2000;
	msg = xasprintf("secret C (t.profile:1): command '%s' timed out after 2 s", cmd);
	EXPECT_LOAD_ERR(text, msg, 0);
	free(msg);
	free(text);
	/* the bound also holds when the command closes stdout and lingers */
	command_timeout_ms = 300;
	text = xasprintf("secret C host a.test command %s linger\n", cmd);
	msg = xasprintf("secret C (t.profile:1): command '%s' timed out after 300 ms", cmd);
	EXPECT_LOAD_ERR(text, msg, 0);
	free(msg);
	free(text);
	command_timeout_ms = SECRETS_COMMAND_TIMEOUT_MS;
	free(mark);
	free(cmd);
}

static void test_bound(void)
{
	struct secrets s;
	struct werr e;
	setenv("T_B", "bound-value-0123456789", 1);
	CHECK(load("secret T_B host api.example.com:443 *.wild.test 192.0.2.1 [::1]:8080\n", &s, &e) == 0);
	static const struct {
		const char *host;
		uint16_t port;
		bool bound;
	} cases[] = {
		{ "api.example.com", 443, true },   { "API.Example.COM.", 443, true },
		{ "api.example.com", 8443, false }, { "example.com", 443, false },
		{ "x.api.example.com", 443, false }, { "a.wild.test", 1, true },
		{ "a.b.wild.test", 443, true },     { "wild.test", 443, false },
		{ "evilwild.test", 443, false },    { "192.0.2.1", 80, true },
		{ "192.0.2.2", 80, false },         { "[::1]", 8080, true },
		{ "[::1]", 8081, false },           { "localhost", 8080, false },
	};
	for (size_t i = 0; s.n == 1 && i < ARRAY_LEN(cases); i++) {
		struct net_host h;
		CHECK(net_host_parse(&h, cases[i].host, strlen(cases[i].host), NULL) == 0);
		if (secret_bound(&s.v[0], &h, cases[i].port) != cases[i].bound) {
			fprintf(stderr, "%s:%d: secret_bound(%s, %u) != %d\n", __FILE__, __LINE__,
				cases[i].host, cases[i].port, cases[i].bound);
			failures++;
		}
		checks++;
	}
	secrets_free(&s);
}

int main(void)
{
	signal(SIGALRM, SIG_DFL);
	tmpdir_make("warden-test-secrets");
	test_phantom_shape();
	test_stable_tail();
	test_tail_key_file();
	test_env();
	test_file();
	test_command();
	test_bound();
	policy_free(&pol);
	tmpdir_remove();
	return check_status_counted("secrets");
}
