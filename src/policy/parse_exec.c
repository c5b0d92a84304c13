/* parse_exec.c - the profile's `exec` directive: which programs may run,
 * by content (a file's SHA-256 taken when the profile is read, sha256:HEX,
 * hashes:FILE, the code hash of a program's loaded segments as code:HEX or
 * code:FILE, a directory for allow), strict mode, and the limits of
 * hashing (src/policy/exec_rules.h; decided by src/supervisor/exec/execs.h). */
#include "parse.h"
#include "exec_rules.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Whether the FILE a target names is not there: nothing there, or a
 * component on its way not a directory (a dangling symlink too). A file
 * there that cannot be read (EACCES on its way, a FIFO, a device) is not:
 * its hash fails, and the profile with it. */
static bool exec_file_missing(const char *full)
{
	struct stat st;
	return stat(full, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
}

/* `exec deny|allow|ask FILE` (or code:FILE) naming no file on this
 * machine, as a profile shared between machines may: there is nothing to
 * hash, so the line decides nothing here, which is said (a note) where
 * the profile was an error. Nothing is loosened now: a program that is not
 * there cannot run by that name, a deny of nothing denies nothing and an
 * allow or an ask of nothing allows nothing (under `exec default deny`
 * what is not allowed stays refused). Later is another matter for an
 * allow: FILE made by the agent would be hashed and allowed by the next
 * session, so it is kept (exec.absent) for the session to refuse where
 * the agent can write. */
static int exec_missing(struct parser *ps, const struct line *l, const char *d, const char *full)
{
	bool deny = strcmp(d, "exec deny") == 0;
	if (strcmp(d, "exec allow") == 0 && !strv_contains(&ps->p->exec.absent, full))
		strv_push(&ps->p->exec.absent, full);
	pol_note(ps, l, "%s %s: no such file here, so this line %s nothing on this machine%s", d, full,
		 deny ? "denies" : strcmp(d, "exec allow") == 0 ? "allows" : "asks about",
		 deny ? "; `exec deny sha256:HEX` (its `sha256sum`) denies the program by its content "
			"on any machine" : "");
	return 0;
}

/* `code:HEX` or `code:FILE` (its code hash now, when the profile is
 * read) into hashes as "code:" and the lower-case digits: the program's
 * loaded segments (src/common/elfhash.h), whatever is appended to it or
 * stripped from it. */
static int exec_code_target(struct parser *ps, const struct line *l, const char *d,
			    struct strv *hashes)
{
	const char *t = l->tok[2] + 5;
	size_t off = l->off[2];
	char key[5 + SHA256_HEX_LEN] = "code:";
	if (strcmp(d, "exec ask") == 0)
		return pol_lerr(ps->e, 0, l, off, "%s: a code hash asks nothing (name the file, or its "
				"sha256:HEX)", d);
	if (t[0] && strspn(t, "0123456789abcdefABCDEF") == strlen(t) && !exec_hex_valid(t))
		return pol_lerr(ps->e, 0, l, off, "%s: 'code:%.200s' is not a code hash (64 hex digits, "
				"as an exec event's code_sha256) nor a file", d, t);
	if (exec_hex_valid(t)) {
		for (size_t i = 0; i < 64; i++)
			key[5 + i] = (char)tolower((unsigned char)t[i]);
		key[69] = '\0';
		return pol_push_unique(ps, l, hashes, key);
	}
	_cleanup_free_ char *full = NULL;
	if (pol_expand_path(ps, l, off, d, t, &full) < 0)
		return -1;
	if (exec_file_missing(full))
		return exec_missing(ps, l, d, full);
	char hex[SHA256_HEX_LEN], code[SHA256_HEX_LEN];
	unsigned long long max = ps->p->exec.hash_max_size ? ps->p->exec.hash_max_size
							    : POLICY_EXEC_HASH_MAX_SIZE;
	if (exec_hash_path_code(full, max, hex, code) < 0)
		return pol_lerr(ps->e, errno == EFBIG ? 0 : errno, l, off, "%s: cannot hash %s%s", d,
				full, errno == EFBIG ? " (larger than the hash limit; `exec hash-limit` "
				"before this line raises it)" : errno == EINVAL ? " (not a regular file)" : "");
	if (!code[0])
		return pol_lerr(ps->e, 0, l, off, "%s: code:%s is not an ELF program whose loaded "
				"segments can be hashed (name it by its file, or sha256:HEX)", d, full);
	snprintf(key, sizeof key, "code:%s", code);
	return pol_push_unique(ps, l, hashes, key);
}

/* TARGET of `exec deny|allow TARGET` into hashes: a file (its SHA-256
 * now, when the profile is read; its real path into paths), `sha256:HEX`,
 * `code:HEX` or `code:FILE` (a code hash, src/common/elfhash.h), or
 * `hashes:FILE` (a list as sha256sum writes it). With dirs (allow), a
 * directory is taken as a whole into dirs instead. */
static int exec_target(struct parser *ps, const struct line *l, const char *d,
		       struct strv *hashes, struct strv *paths, struct strv *dirs)
{
	const char *t = l->tok[2];
	size_t off = l->off[2];
	if (strncmp(t, "sha256:", 7) == 0) {
		if (!exec_hex_valid(t + 7))
			return pol_lerr(ps->e, 0, l, off, "%s: '%.200s' is not a SHA-256 (64 hex digits)", d, t);
		char hex[SHA256_HEX_LEN];
		for (size_t i = 0; i < 64; i++)
			hex[i] = (char)tolower((unsigned char)t[7 + i]);
		hex[64] = '\0';
		return pol_push_unique(ps, l, hashes, hex);
	}
	if (strncmp(t, "code:", 5) == 0)
		return exec_code_target(ps, l, d, hashes);
	bool list = strncmp(t, "hashes:", 7) == 0;
	_cleanup_free_ char *full = NULL;
	if (pol_expand_path(ps, l, off, d, list ? t + 7 : t, &full) < 0)
		return -1;
	/* a list of hashes stays an error: it is what the line denies on
	 * every machine */
	if (!list && exec_file_missing(full))
		return exec_missing(ps, l, d, full);
	if (!strv_contains(&ps->p->inputs, full))
		strv_push(&ps->p->inputs, full);
	if (list) {
		unsigned long bad = 0;
		if (exec_read_hashes(full, hashes, &bad) < 0)
			return bad ? pol_lerr(ps->e, 0, l, off, "%s: %s:%lu: not a SHA-256 (64 hex digits)",
					      d, full, bad)
				   : errno == EINVAL ? pol_lerr(ps->e, 0, l, off, "%s: cannot read %s: not a "
								"regular file", d, full)
				   : errno == EFBIG ? pol_lerr(ps->e, 0, l, off, "%s: cannot read %s: larger "
							       "than %u MiB", d, full, EXEC_HASHES_MAX >> 20)
				   : pol_lerr(ps->e, errno, l, off, "%s: cannot read %s", d, full);
		return 0;
	}
	struct stat st;
	if (dirs && stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (strcmp(full, "/") == 0)
			return pol_lerr(ps->e, 0, l, off, "%s: '/' as a whole would allow everything; name "
					"the directories (/usr, ...)", d);
		return pol_push_unique(ps, l, dirs, full);
	}
	char hex[SHA256_HEX_LEN];
	unsigned long long max = ps->p->exec.hash_max_size ? ps->p->exec.hash_max_size
							    : POLICY_EXEC_HASH_MAX_SIZE;
	if (exec_hash_path(full, max, hex) < 0) {
		if (errno == EFBIG)
			return pol_lerr(ps->e, 0, l, off, "%s: %s is larger than the hash limit (%llu MiB; "
					"`exec hash-limit` before this line raises it)", d, full, max >> 20);
		return pol_lerr(ps->e, errno, l, off, "%s: cannot hash %s%s", d, full,
				errno == EINVAL ? " (not a regular file)" : "");
	}
	if (paths) {
		_cleanup_free_ char *real = realpath(full, NULL);
		if (real && pol_push_unique(ps, l, paths, real) < 0)
			return -1;
	}
	return pol_push_unique(ps, l, hashes, hex);
}

/* `exec allow-writable PATH`: absolute ("~/" expanded) or relative to the
 * workspace, normalised. */
static int exec_writable(struct parser *ps, const struct line *l)
{
	const char *d = "exec allow-writable", *t = l->tok[2];
	size_t off = l->off[2];
	_cleanup_free_ char *full = NULL;
	if (t[0] == '/' || t[0] == '~') {
		if (pol_expand_path(ps, l, off, d, t, &full) < 0)
			return -1;
		if (strcmp(full, "/") == 0)
			return pol_lerr(ps->e, 0, l, off, "%s: '/' is not a writable path", d);
	} else {
		full = xstrdup(t);
		pol_strip_trailing_slashes(full, 0);
		if (!full[0] || path_has_dot_components(full))
			return pol_lerr(ps->e, 0, l, off,
					"%s: '.', '..' and empty components are not allowed: '%.200s'", d, t);
	}
	return pol_push_unique(ps, l, &ps->p->exec.allow_writable, full);
}

/* `exec ask argv WORD...` */
static int exec_ask_argv(struct parser *ps, const struct line *l)
{
	char pat[1024];
	if (l->ntok < 4)
		return pol_lerr(ps->e, 0, l, l->len, "exec ask argv: missing the words (a program's name, "
				"then its arguments: git push *)");
	if (!pol_rest_of_line(l, 3, pat, sizeof pat))
		return pol_lerr(ps->e, 0, l, l->off[3], "exec ask argv: the pattern is too long (max 1023)");
	return pol_push_unique(ps, l, &ps->p->exec.ask_argv, pat);
}

/* `exec hash-limit SIZE SECONDS` */
static int exec_hash_limit(struct parser *ps, const struct line *l)
{
	if (pol_want_tokens(ps, l, 4, "exec hash-limit") < 0)
		return -1;
	unsigned long long size;
	const char *why = policy_limit_parse(LIMIT_TMP, l->tok[2], &size);
	if (why)
		return pol_lerr(ps->e, 0, l, l->off[2], "exec hash-limit: '%.200s' is %s", l->tok[2], why);
	if (size == 0)
		return pol_lerr(ps->e, 0, l, l->off[2], "exec hash-limit: a size is needed, not unlimited "
				"(a file read without end would hold its exec for the whole time limit)");
	char *end;
	errno = 0;
	double secs = strtod(l->tok[3], &end);
	if (errno || *end || !(secs >= 0.001 && secs <= 3600))
		return pol_lerr(ps->e, 0, l, l->off[3],
				"exec hash-limit: '%.200s' is not a number of seconds (0.001 to 3600)", l->tok[3]);
	ps->p->exec.hash_max_size = size;
	ps->p->exec.hash_timeout_ms = (unsigned)(secs * 1000 + 0.5);
	return 0;
}

/* `exec deny TARGET | allow TARGET | default allow|deny | strict |
 * allow-writable PATH | hash-limit SIZE SECONDS | kernel auto|on|off` */
int pol_do_exec(struct parser *ps, const struct line *l)
{
	static const char expected[] =
		"deny, allow, ask, default, strict, allow-writable, hash-limit or kernel";
	if (l->ntok < 2)
		return pol_lerr(ps->e, 0, l, l->len, "exec: missing argument (%s)", expected);
	const char *w = l->tok[1];
	struct policy_exec *x = &ps->p->exec;
	if (strcmp(w, "deny") == 0) {
		if (pol_want_tokens(ps, l, 3, "exec deny") < 0)
			return -1;
		return exec_target(ps, l, "exec deny", &x->deny, &x->deny_paths, NULL);
	}
	if (strcmp(w, "allow") == 0) {
		if (pol_want_tokens(ps, l, 3, "exec allow") < 0)
			return -1;
		return exec_target(ps, l, "exec allow", &x->allow, NULL, &x->allow_dirs);
	}
	if (strcmp(w, "ask") == 0) {
		if (l->ntok >= 3 && strcmp(l->tok[2], "argv") == 0)
			return exec_ask_argv(ps, l);
		if (pol_want_tokens(ps, l, 3, "exec ask") < 0)
			return -1;
		return exec_target(ps, l, "exec ask", &x->ask, NULL, NULL);
	}
	if (strcmp(w, "default") == 0) {
		if (pol_want_tokens(ps, l, 3, "exec default") < 0)
			return -1;
		if (strcmp(l->tok[2], "deny") != 0 && strcmp(l->tok[2], "allow") != 0)
			return pol_lerr(ps->e, 0, l, l->off[2],
					"exec default: '%.200s' (expected allow or deny)", l->tok[2]);
		x->default_deny = l->tok[2][0] == 'd';
		return 0;
	}
	if (strcmp(w, "strict") == 0) {
		if (pol_want_tokens(ps, l, 2, "exec strict") < 0)
			return -1;
		x->strict = true;
		return 0;
	}
	if (strcmp(w, "allow-writable") == 0) {
		if (pol_want_tokens(ps, l, 3, "exec allow-writable") < 0)
			return -1;
		return exec_writable(ps, l);
	}
	if (strcmp(w, "hash-limit") == 0)
		return exec_hash_limit(ps, l);
	if (strcmp(w, "kernel") == 0) {
		static const char *const modes[] = { "auto", "on", "off" };
		if (pol_want_tokens(ps, l, 3, "exec kernel") < 0)
			return -1;
		for (size_t i = 0; i < ARRAY_LEN(modes); i++)
			if (strcmp(l->tok[2], modes[i]) == 0) {
				x->kernel = (enum policy_exec_kernel)i;
				return 0;
			}
		return pol_lerr(ps->e, 0, l, l->off[2], "exec kernel: '%.200s' (expected auto, on or off)",
				l->tok[2]);
	}
	return pol_lerr(ps->e, 0, l, l->off[1], "exec: unknown rule '%.200s' (expected %s)", w, expected);
}
