/* test_checkpoint.c - unit tests of the workspace checkpoints
 * (src/checkpoint/): the manifest's text form both ways with hostile names
 * (and byte for byte what printf's formats wrote),
 * the parser refusing hostile manifests (paths that climb out or are
 * absolute, entries out of order, repeated or under no directory, bad
 * hashes, modes and escapes), the store (refused when a symlink, open to
 * others or not writable, blobs stored once, a manifest that does not match its hash not
 * trusted, retention and the removal of what nothing references,
 * retention reading its own workspace's references through their index), a
 * snapshot restored byte for byte over a damaged tree, the comparison of
 * two manifests (a file's or symlink's mtime alone a change, a directory's
 * not) and mtimes set back by a restore, the unified diff of two texts, and
 * the entry the snapshot and the review make of what they find (a symlink
 * replaced meanwhile), and
 * the small files of a directory read on two threads. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "src/checkpoint/changes.h"
#include "src/checkpoint/manifest.h"
#include "src/checkpoint/prefetch.h"
#include "src/checkpoint/restore.h"
#include "src/checkpoint/review.h"
#include "src/checkpoint/snapshot.h"
#include "src/checkpoint/store.h"
#include "src/common/sbuf.h"
#include "check.h"
#include "files.h"

#define H1 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_manifest_roundtrip(void)
{
	struct manifest m = { .root_mode = 0750 };
	strv_push(&m.exclude, "node modules");
	const char *names[] = { "a b", "dir", "dir/x%y", "dir/\nnl", "z\x7f\x01\xff" };
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		struct mf_entry en = { .path = (char *)names[i], .type = MF_FILE, .mode = 04755,
				       .size = 3, .mtime_sec = -5, .mtime_nsec = 7 };
		memcpy(en.hash, H1, sizeof en.hash);
		if (strcmp(names[i], "dir") == 0) {
			en.type = MF_DIR;
			en.size = 0;
			en.hash[0] = '\0';
		}
		if (strcmp(names[i], "a b") == 0) {
			en.type = MF_LINK;
			en.target = "../t a\nrget";
			en.size = strlen(en.target);
			en.hash[0] = '\0';
		}
		manifest_add(&m, &en);
	}
	manifest_sort(&m);
	size_t len;
	char *text = manifest_format(&m, &len);
	CHECK(strlen(text) == len);
	CHECK(strstr(text, "exclude node%20modules\n") != NULL);
	CHECK(strstr(text, "dir/x%25y") != NULL && strstr(text, "dir/%0Anl") != NULL);
	struct manifest b;
	struct werr e = { 0 };
	CHECK(manifest_parse(text, len, &b, &e) == 0);
	CHECK(b.n == m.n && b.root_mode == 0750);
	CHECK(b.exclude.n == 1 && strcmp(b.exclude.v[0], "node modules") == 0);
	for (size_t i = 0; i < b.n && i < m.n; i++) {
		CHECK_STR(b.v[i].path, m.v[i].path);
		CHECK(mf_same_content(&b.v[i], &m.v[i]));
		CHECK(b.v[i].mtime_sec == -5 && b.v[i].mtime_nsec == 7);
	}
	CHECK(manifest_find(&b, "dir/\nnl") != NULL && manifest_find(&b, "nope") == NULL);
	size_t len2;
	char *again = manifest_format(&b, &len2);
	CHECK(len2 == len && memcmp(again, text, len) == 0);
	free(again);
	free(text);
	manifest_free(&b);
	manifest_free(&m);
}

/* The text form is written without printf (a line per file): the same
 * bytes printf's formats gave, at the edges of every number. */
static void test_manifest_format_exact(void)
{
	static const long long secs[] = { LLONG_MIN, -5, -1, 0, 1, 1700000000, LLONG_MAX };
	static const long nsecs[] = { 0, 7, 999999999, -3 };
	static const unsigned long long sizes[] = { 0, 9, 10, 4096, ULLONG_MAX };
	static const mode_t modes[] = { 0, 01, 0644, 04755, 07777 };
	struct manifest m = { .root_mode = 0700 };
	struct sbuf want = { 0 };
	sb_printf(&want, "warden-manifest 2\nroot 0700\n");
	for (size_t i = 0; i < ARRAY_LEN(secs) * ARRAY_LEN(nsecs); i++) {
		char path[32];
		snprintf(path, sizeof path, "f%03zu %%", i);
		struct mf_entry en = { .path = path, .type = i % 3 ? MF_FILE : MF_LINK,
				       .mode = modes[i % ARRAY_LEN(modes)],
				       .size = sizes[i % ARRAY_LEN(sizes)],
				       .mtime_sec = secs[i % ARRAY_LEN(secs)],
				       .mtime_nsec = nsecs[i / ARRAY_LEN(secs)], .target = "t\x01" };
		memcpy(en.hash, H1, sizeof en.hash);
		manifest_add(&m, &en);
		sb_printf(&want, "%c %04o %llu %lld.%09ld %s f%03zu%%20%%25", en.type,
			  (unsigned)en.mode, en.size, en.mtime_sec, en.mtime_nsec,
			  en.type == MF_FILE ? H1 : "-", i);
		sb_printf(&want, "%s\n", en.type == MF_LINK ? " t%01" : "");
	}
	size_t len;
	char *text = manifest_format(&m, &len);
	CHECK(len == want.n);
	CHECK_STR(text, want.p);
	free(text);
	free(want.p);
	manifest_free(&m);
	for (size_t i = 0; i < ARRAY_LEN(secs); i++) {
		struct sbuf b = { 0 };
		char ref[64];
		sb_put_ll(&b, secs[i], 9);
		snprintf(ref, sizeof ref, "%09lld", secs[i]);
		CHECK_STR(b.p, ref);
		b.n = 0;
		sb_put_ull(&b, (unsigned long long)secs[i]);
		snprintf(ref, sizeof ref, "%llu", (unsigned long long)secs[i]);
		CHECK_STR(b.p, ref);
		for (size_t k = 0; k < ARRAY_LEN(nsecs); k++) {
			b.n = 0;
			sb_put_time(&b, secs[i], nsecs[k]); /* the metadata cache's times */
			snprintf(ref, sizeof ref, "%lld.%09ld", secs[i], nsecs[k]);
			CHECK_STR(b.p, ref);
		}
		free(b.p);
	}
}

#define HEAD "warden-manifest 2\nroot 0755\n"
#define F(path) "f 0644 1 0.000000000 " H1 " " path "\n"
#define D(path) "d 0755 0 0.000000000 - " path "\n"

static void expect_bad(int line, const char *text, size_t len, const char *why)
{
	struct manifest m;
	struct werr e = { 0 };
	checks++;
	if (manifest_parse(text, len, &m, &e) == 0) {
		fprintf(stderr, "%s:%d: hostile manifest accepted\n", __FILE__, line);
		failures++;
		manifest_free(&m);
	} else if (!strstr(e.msg, why)) {
		fprintf(stderr, "%s:%d: refused with '%s', expected '%s'\n", __FILE__, line, e.msg, why);
		failures++;
	}
}
#define BAD(text, why) expect_bad(__LINE__, (text), sizeof(text) - 1, (why))

static void test_manifest_hostile(void)
{
	BAD("", "truncated");
	BAD("warden-manifest 3\nroot 0755\n", "not a warden manifest");
	BAD("warden-manifest 1\n", "truncated");
	BAD("warden-manifest 1\nroot 0755", "no newline");
	BAD(HEAD F("/etc/passwd"), "absolute");
	BAD(HEAD F("../out"), "component");
	BAD(HEAD D("a") F("a/../../out"), "component");
	BAD(HEAD F("./a"), "component");
	BAD(HEAD D("a") F("a//b"), "component");
	BAD(HEAD D("a") F("a/"), "component");
	BAD(HEAD F("%2Fetc"), "absolute");
	BAD(HEAD F("a%00b"), "bad path");
	BAD(HEAD F("a%zzb"), "bad path");
	BAD(HEAD F("a%2"), "bad path");
	BAD(HEAD F("b") F("a"), "out of order");
	BAD(HEAD F("a") F("a"), "out of order");
	BAD(HEAD F("a/b"), "parent");
	BAD(HEAD F("a") F("a/b"), "parent");
	BAD(HEAD "l 0777 1 0.000000000 - a b\nf 0644 1 0.000000000 " H1 " a/x\n", "parent");
	BAD(HEAD "f 0644 1 0.000000000 " "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"
	    " a\n", "hash");
	BAD(HEAD "f 0644 1 0.000000000 abc a\n", "hash");
	BAD(HEAD "d 0755 0 0.000000000 " H1 " a\n", "not a file");
	BAD(HEAD "d 0755 5 0.000000000 - a\n", "a directory, FIFO, socket or device with a size");
	BAD(HEAD "p 0644 5 0.000000000 - a\n", "with a size");
	BAD(HEAD "s 0755 0 0.000000000 " H1 " a\n", "not a file");
	BAD(HEAD "p 0644 0 0.000000000 - a\np 0644 0 0.000000000 - a/b\n", "parent");
	BAD(HEAD "f 10000 1 0.000000000 " H1 " a\n", "bad mode");
	BAD(HEAD "f 0648 1 0.000000000 " H1 " a\n", "bad mode");
	BAD(HEAD "f 0644 -1 0.000000000 " H1 " a\n", "bad size");
	BAD(HEAD "f 0644 99999999999999999999 0.000000000 " H1 " a\n", "bad size");
	BAD(HEAD "f 0644 1 0.5 " H1 " a\n", "bad mtime");
	BAD(HEAD "l 0777 3 0.000000000 - a xy\n", "size");
	BAD(HEAD "l 0777 1 0.000000000 - a\n", "fields");
	BAD(HEAD "f 0644 1 0.000000000 " H1 " a extra\n", "fields");
	BAD(HEAD "x 0644 1 0.000000000 - a\n", "unknown entry type");
	BAD(HEAD "f  0644 1 0.000000000 " H1 " a\n", "empty field");
	BAD(HEAD "f 0644 1 0.000000000 " H1 " a b\tc\n", "fields");
	BAD(HEAD F("a") "exclude x\n", "exclude");
	BAD("warden-manifest 1\nroot 0755\0\n", "NUL");
	BAD(HEAD "f 0644 1 0.000000000 " H1 " a\tb\n", "bad path");
	/* and what is fine */
	static const char ok[] = HEAD "exclude node_modules\n" D("a") F("a-b") D("a/b") F("a/b/c") F("ab")
		"b 0600 0 0.000000000 - b\nc 0600 0 0.000000000 - c\np 0644 0 0.000000000 - p\n"
		"s 0755 0 0.000000000 - s\n";
	struct manifest m;
	struct werr e = { 0 };
	CHECK(manifest_parse(ok, sizeof ok - 1, &m, &e) == 0);
	CHECK(m.n == 9);
	CHECK(m.n == 9 && m.v[7].type == MF_FIFO && mf_special(m.v[8].type));
	size_t len;
	char *again = manifest_format(&m, &len);
	CHECK(len == sizeof ok - 1 && memcmp(again, ok, len) == 0);
	free(again);
	manifest_free(&m);
}

static void write_at(const char *rel, const char *text, mode_t mode)
{
	char *p = xasprintf("%s/%s", tmpdir, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	CHECK(chmod(p, mode) == 0);
	free(p);
}

static char *at(const char *rel)
{
	return xasprintf("%s/%s", tmpdir, rel);
}

static void test_store_refusals(void)
{
	struct store st;
	struct werr e = { 0 };
	char *real = at("real"), *link = at("link");
	CHECK(mkdir(real, 0700) == 0 && symlink(real, link) == 0);
	CHECK(store_open(&st, link, true, &e) < 0);
	CHECK(strstr(e.msg, "is a symbolic link") != NULL);
	store_close(&st);
	CHECK(chmod(real, 0770) == 0);
	CHECK(store_open(&st, real, true, &e) < 0);
	CHECK(strstr(e.msg, "writable by others") != NULL);
	store_close(&st);
	free(real);
	free(link);
}

/* A store whose tmp/ cannot be written is refused at open, before a
 * snapshot: by its mode, or (as root, whom no mode stops) by a read-only
 * bind mount of it, in a mount namespace of a child's own. */
static void test_store_unwritable(void)
{
	struct store st;
	struct werr e = { 0 };
	char *sp = at("rostore"), *tmp = at("rostore/tmp");
	CHECK(store_open(&st, sp, true, &e) == 0);
	store_close(&st);
	if (geteuid() != 0) {
		CHECK(chmod(tmp, 0500) == 0);
		e = (struct werr){ 0 };
		CHECK(store_open(&st, sp, true, &e) < 0 && strstr(e.msg, "is not writable") &&
		      e.errnum == EACCES);
		store_close(&st);
		CHECK(chmod(tmp, 0700) == 0);
	} else {
		pid_t pid = fork();
		if (pid == 0) {
			if (unshare(CLONE_NEWNS) < 0 ||
			    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
			    mount(tmp, tmp, NULL, MS_BIND, NULL) < 0 ||
			    mount(NULL, tmp, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
				_exit(2);
			e = (struct werr){ 0 };
			int r = store_open(&st, sp, true, &e);
			_exit(r < 0 && strstr(e.msg, "is not writable") && e.errnum == EROFS ? 0 : 1);
		}
		int status = -1;
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	/* writable again: opened */
	e = (struct werr){ 0 };
	CHECK(store_open(&st, sp, true, &e) == 0);
	store_close(&st);
	free(sp);
	free(tmp);
}

static void tree_make(void)
{
	char *ws = at("ws"), *d = at("ws/d"), *l = at("ws/d/l");
	CHECK(mkdir(ws, 0755) == 0 && mkdir(d, 0750) == 0);
	write_at("ws/a", "alpha\n", 0644);
	write_at("ws/d/x", "x\n", 04711);
	write_at("ws/same1", "same\n", 0644);
	write_at("ws/same2", "same\n", 0600);
	CHECK(symlink("../a", l) == 0);
	free(ws);
	free(d);
	free(l);
}

static int count_blobs(void)
{
	char *cmd = xasprintf("find '%s/store/blobs' -type f | wc -l", tmpdir);
	FILE *f = popen(cmd, "r");
	int n = -1;
	if (f && fscanf(f, "%d", &n) != 1)
		n = -1;
	if (f)
		pclose(f);
	free(cmd);
	return n;
}

static void test_snapshot_restore(void)
{
	tree_make();
	struct store st;
	struct werr e = { 0 };
	char *sp = at("store"), *ws = at("ws");
	CHECK(store_open(&st, sp, true, &e) == 0);
	st.small_max = 0; /* loose blobs here; packs: test_store_packs */
	int wsfd = open(ws, O_RDONLY | O_DIRECTORY);
	struct strv ex = { 0 };
	struct snap_opts o = { .st = &st, .store_blobs = true, .ws = ws, .exclude = &ex };
	struct snap_result r0;
	CHECK(snapshot_take_dir(wsfd, &o, &r0, &e) == 0);
	CHECK(r0.m.n == 6 && r0.files == 4);
	CHECK(strlen(r0.hash) == 64);
	CHECK(count_blobs() == 3); /* same1 and same2 share one */
	const struct mf_entry *x = manifest_find(&r0.m, "d/x");
	CHECK(x && x->mode == 04711);

	/* the manifest comes back only when it matches its hash */
	struct manifest back;
	CHECK(store_get_manifest(&st, r0.hash, &back, &e) == 0);
	CHECK(back.n == r0.m.n);
	manifest_free(&back);
	CHECK(store_get_manifest(&st, "../../etc/passwd", &back, &e) < 0);

	/* damage: a file rewritten, one removed, one added, a directory
	 * closed, the link pointed elsewhere, a file replaced by a directory */
	write_at("ws/a", "ALPHA\n", 0600);
	char *p = at("ws/same1");
	CHECK(unlink(p) == 0 && mkdir(p, 0700) == 0);
	free(p);
	write_at("ws/new", "new\n", 0644);
	p = at("ws/d/l");
	CHECK(unlink(p) == 0 && symlink("/etc/passwd", p) == 0);
	free(p);
	p = at("ws/d");
	CHECK(chmod(p, 0) == 0);
	free(p);
	CHECK(fchmod(wsfd, 0500) == 0);

	struct snap_result r1;
	CHECK(snapshot_take_dir(wsfd, &o, &r1, &e) == 0);
	CHECK(r1.m.root_mode == 0500);
	struct changes ch;
	changes_compute(&r0.m, &r1.m, &ch);
	CHECK(ch.root_mode);
	CHECK(ch.n == 5); /* a modified, d mode, d/l modified, new added, same1 type */
	changes_free(&ch);

	mode_t restore;
	int rootfd = snapshot_open_root(wsfd, &restore, &e);
	CHECK(rootfd >= 0);
	CHECK(restore_tree(rootfd, &st, &r1.m, &r0.m, &e) == 0);
	close(rootfd);
	struct snap_result r2;
	CHECK(snapshot_take_dir(wsfd, &o, &r2, &e) == 0);
	changes_compute(&r0.m, &r2.m, &ch);
	CHECK(ch.n == 0 && !ch.root_mode);
	changes_free(&ch);
	CHECK(strcmp(r2.hash, r0.hash) == 0); /* mtimes too */

	/* retention: five sessions, keep 2; what nothing references goes */
	CHECK(store_ref(&st, "s1", "start", r0.hash, ws, &e) == 0);
	CHECK(store_ref(&st, "s2", "start", r1.hash, ws, &e) == 0);
	CHECK(store_ref(&st, "s3", "start", r2.hash, ws, &e) == 0);
	CHECK(store_ref(&st, "s4", "start", r2.hash, ws, &e) == 0);
	CHECK(store_ref(&st, "s5", "start", r2.hash, ws, &e) == 0);
	CHECK(store_ref(&st, "../x", "start", r2.hash, ws, &e) < 0);
	/* a reference read back (a killed --review session's end: leftover.h) */
	{
		char got[SHA256_HEX_LEN] = "";
		CHECK(store_ref_read(&st, "s2", "start", got) == 0 && strcmp(got, r1.hash) == 0);
		CHECK(store_ref_read(&st, "s9", "start", got) < 0 && errno == ENOENT);
		CHECK(store_ref_read(&st, "../s2", "start", got) < 0 && errno == EINVAL);
		write_at("store/refs/s8.end", "not a hash\n", 0600);
		CHECK(store_ref_read(&st, "s8", "end", got) < 0 && errno == EINVAL);
		char *bad = xasprintf("%s/refs/s8.end", sp);
		unlink(bad);
		free(bad);
	}
	CHECK(store_prune(&st, ws, "s5", 2, 30, &e) == 3);
	/* retention runs at most once an interval a workspace: due the first
	 * time, not again at once, due again once the stamp is old, and each
	 * workspace has its own */
	{
		CHECK(store_prune_due(&st, ws, 300));
		CHECK(!store_prune_due(&st, ws, 300));
		CHECK(store_prune_due(&st, "/another/workspace", 300));
		char wsum[SHA256_HEX_LEN];
		sha256_hex(ws, strlen(ws), wsum);
		char *stamp = xasprintf("%s/pruned/%s", sp, wsum);
		struct timespec old[2] = { { .tv_sec = time(NULL) - 400 }, { .tv_sec = time(NULL) - 400 } };
		CHECK(utimensat(AT_FDCWD, stamp, old, 0) == 0);
		free(stamp);
		CHECK(store_prune_due(&st, ws, 300));
		CHECK(!store_prune_due(&st, ws, 300));
	}
	char *rp = xasprintf("%s/refs/s2.start", sp);
	CHECK(access(rp, F_OK) < 0);
	free(rp);
	/* r1's blobs ("ALPHA", "new") went with it; r0's content is r2's */
	CHECK(count_blobs() == 3);
	CHECK(store_has_blob(&st, manifest_find(&r2.m, "a")->hash));

	/* a blob changed in the store is refused as it is written back, and
	 * the file it would replace stays as it is */
	{
		write_at("ws/a", "ALPHA again\n", 0644);
		struct snap_result r3;
		CHECK(snapshot_take_dir(wsfd, &o, &r3, &e) == 0);
		const char *ha = manifest_find(&r0.m, "a")->hash;
		char *bp = xasprintf("%s/blobs/%.2s/%s", sp, ha, ha + 2);
		CHECK(chmod(bp, 0600) == 0);
		FILE *bf = fopen(bp, "w");
		CHECK(bf && fputs("forge\n", bf) >= 0);
		if (bf)
			fclose(bf);
		int fd = snapshot_open_root(wsfd, &restore, &e);
		CHECK(restore_tree(fd, &st, &r3.m, &r0.m, &e) < 0);
		CHECK(strstr(e.msg, "does not match its hash") != NULL);
		close(fd);
		char *ap = at("ws/a");
		FILE *af = fopen(ap, "r");
		char got[32] = "";
		CHECK(af && fgets(got, sizeof got, af));
		if (af)
			fclose(af);
		CHECK_STR(got, "ALPHA again\n");
		free(ap);
		/* the right bytes back in the store */
		bf = fopen(bp, "w");
		CHECK(bf && fputs("alpha\n", bf) >= 0);
		if (bf)
			fclose(bf);
		free(bp);
		snap_result_free(&r3);
	}

	/* a stored manifest changed afterwards is not trusted (and what
	 * references it keeps everything: retention does not guess) */
	char *mp = xasprintf("%s/manifests/%s", sp, r0.hash);
	CHECK(chmod(mp, 0600) == 0);
	FILE *f = fopen(mp, "a");
	CHECK(f && fputs(F("zzz"), f) >= 0);
	if (f)
		fclose(f);
	CHECK(store_get_manifest(&st, r0.hash, &back, &e) < 0);
	CHECK(strstr(e.msg, "does not match its hash") != NULL);
	free(mp);

	snap_result_free(&r0);
	snap_result_free(&r1);
	snap_result_free(&r2);
	close(wsfd);
	store_close(&st);
	free(sp);
	free(ws);
}

static int count_in(const char *rel)
{
	char *cmd = xasprintf("find '%s/%s' -type f | wc -l", tmpdir, rel);
	FILE *f = popen(cmd, "r");
	int n = -1;
	if (f && fscanf(f, "%d", &n) != 1)
		n = -1;
	if (f)
		pclose(f);
	free(cmd);
	return n;
}

/* Overwrite the first copy of what in the file at rel with with (as long). */
static bool patch_file(const char *rel, const char *what, const char *with)
{
	char *p = at(rel);
	bool ok = false;
	if (chmod(p, 0600) == 0) {
		FILE *f = fopen(p, "r+");
		char buf[1 << 16];
		size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
		char *hit = n ? memmem(buf, n, what, strlen(what)) : NULL;
		ok = hit && fseek(f, hit - buf, SEEK_SET) == 0 && fputs(with, f) >= 0;
		if (f)
			fclose(f);
	}
	free(p);
	return ok;
}

/* Small files packed: one pack for the tree, the large file loose; read
 * back and restored from the pack; a pack's byte changed or a loose blob
 * replaced by a FIFO refused before anything is written (no wait); packs
 * rewritten without what nothing references any more. */
/* FIFOs: one the manifest names is recorded (never opened) and removed by
 * a restore; one it does not (made after the tree was recorded) in the way
 * of a directory is removed for it. */
static void test_restore_special(void)
{
	struct store st;
	struct werr e = { 0 };
	char *sp = at("xstore"), *ws = at("xws"), *d = at("xws/d"), *f = at("xws/d/f");
	char *fifo = at("xws/fifo");
	CHECK(mkdir(ws, 0755) == 0 && mkdir(d, 0755) == 0);
	write_at("xws/d/f", "f\n", 0644);
	CHECK(store_open(&st, sp, true, &e) == 0);
	int wsfd = open(ws, O_RDONLY | O_DIRECTORY);
	struct snap_opts o = { .st = &st, .store_blobs = true, .ws = ws };
	struct snap_result r0, r1;
	CHECK(snapshot_take_dir(wsfd, &o, &r0, &e) == 0);
	CHECK(unlink(f) == 0 && rmdir(d) == 0 && mkfifo(fifo, 0600) == 0);
	CHECK(snapshot_take_dir(wsfd, &o, &r1, &e) == 0);
	const struct mf_entry *en = manifest_find(&r1.m, "fifo");
	CHECK(en && en->type == MF_FIFO && en->mode == 0600 && en->size == 0);
	CHECK(mkfifo(d, 0600) == 0); /* not in r1 */
	mode_t restore;
	int fd = snapshot_open_root(wsfd, &restore, &e);
	CHECK(restore_tree(fd, &st, &r1.m, &r0.m, &e) == 0);
	close(fd);
	struct stat s;
	CHECK(lstat(d, &s) == 0 && S_ISDIR(s.st_mode) && lstat(f, &s) == 0 && S_ISREG(s.st_mode));
	CHECK(lstat(fifo, &s) < 0 && errno == ENOENT);
	close(wsfd);
	snap_result_free(&r0);
	snap_result_free(&r1);
	store_close(&st);
	free(sp);
	free(ws);
	free(d);
	free(f);
	free(fifo);
}

/* A manifest of version 1 (written before special files were named)
 * knows nothing of them: against it a FIFO in the tree is no change, so an
 * undo to it leaves the FIFO where it is; against version 2 it is one. */
static void test_changes_old_manifest(void)
{
	static const char v1[] = "warden-manifest 1\nroot 0755\n"
				 "f 0644 2 1.000000000 " H1 " a\n";
	static const char v2[] = "warden-manifest 2\nroot 0755\n"
				 "f 0644 2 1.000000000 " H1 " a\n";
	static const char now[] = "warden-manifest 2\nroot 0755\n"
				  "f 0644 2 1.000000000 " H1 " a\n"
				  "p 0600 0 1.000000000 - fifo\n";
	struct manifest m1, m2, mn;
	struct werr e = { 0 };
	CHECK(manifest_parse(v1, sizeof v1 - 1, &m1, &e) == 0 && m1.specials_unknown);
	CHECK(manifest_parse(v2, sizeof v2 - 1, &m2, &e) == 0 && !m2.specials_unknown);
	CHECK(manifest_parse(now, sizeof now - 1, &mn, &e) == 0);
	struct changes ch;
	changes_compute(&mn, &m1, &ch);
	CHECK(ch.n == 0);
	changes_free(&ch);
	changes_compute(&mn, &m2, &ch);
	CHECK(ch.n == 1 && ch.v[0].kind == CH_REMOVED);
	changes_free(&ch);
	manifest_free(&m1);
	manifest_free(&m2);
	manifest_free(&mn);
}

/* A file's or symlink's mtime alone is a change (against a version 1
 * manifest too: both versions record mtimes), said in UTC; with a mode,
 * one line says both. A directory's mtime is none (every entry made or
 * removed in it moves it), nor a FIFO's (what passes through it does). */
static void test_changes_mtime(void)
{
	static const char was[] = "warden-manifest 1\nroot 0755\n"
				  "d 0755 0 5.000000000 - d\n"
				  "f 0644 2 1.000000000 " H1 " d/a\n"
				  "f 0644 2 1.000000000 " H1 " d/b\n"
				  "f 0644 2 1.000000000 " H1 " d/c\n"
				  "l 0777 3 1.000000000 - d/l d/a\n";
	static const char now[] = "warden-manifest 2\nroot 0755\n"
				  "d 0755 0 9.000000000 - d\n"
				  "f 0644 2 936835200.500000000 " H1 " d/a\n"
				  "f 0600 2 2.000000000 " H1 " d/b\n"
				  "f 0644 2 1.000000000 " H1 " d/c\n"
				  "l 0777 3 7.000000000 - d/l d/a\n"
				  "p 0600 0 1.000000000 - d/p\n";
	static const char later[] = "warden-manifest 2\nroot 0755\n"
				    "d 0755 0 9.000000000 - d\n"
				    "f 0644 2 936835200.500000000 " H1 " d/a\n"
				    "f 0600 2 2.000000000 " H1 " d/b\n"
				    "f 0644 2 1.000000000 " H1 " d/c\n"
				    "l 0777 3 7.000000000 - d/l d/a\n"
				    "p 0600 0 8.000000000 - d/p\n";
	struct manifest mw, mn, ml;
	struct werr e = { 0 };
	CHECK(manifest_parse(was, sizeof was - 1, &mw, &e) == 0);
	CHECK(manifest_parse(now, sizeof now - 1, &mn, &e) == 0);
	CHECK(manifest_parse(later, sizeof later - 1, &ml, &e) == 0);
	struct changes ch;
	changes_compute(&mw, &mn, &ch);
	CHECK(ch.n == 3 && !ch.root_mode);
	CHECK(ch.n == 3 && ch.v[0].kind == CH_MTIME && strcmp(ch.v[0].a->path, "d/a") == 0 &&
	      ch.v[1].kind == CH_MODE && ch.v[2].kind == CH_MTIME &&
	      strcmp(ch.v[2].a->path, "d/l") == 0);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	changes_print(f, &ch, &mw, &mn);
	fclose(f);
	CHECK_STR(out, "  mtime     d/a (1970-01-01 00:00:01.000000000 -> "
		       "1999-09-09 00:00:00.500000000 UTC)\n"
		       "  mode      d/b (0644 -> 0600; mtime 1970-01-01 00:00:01 -> "
		       "1970-01-01 00:00:02 UTC)\n"
		       "  mtime     d/l (1970-01-01 00:00:01 -> 1970-01-01 00:00:07 UTC) -> d/a\n");
	free(out);
	changes_free(&ch);
	/* a FIFO's mtime and a directory's: nothing */
	changes_compute(&mn, &ml, &ch);
	CHECK(ch.n == 0);
	changes_free(&ch);
	manifest_free(&mw);
	manifest_free(&mn);
	manifest_free(&ml);
}

/* A tree whose files and symlink were only backdated or forward-dated, and
 * one directory's too: restore_tree sets every mtime back, reading no
 * content (restore_verify has nothing to check). */
static void test_restore_mtime(void)
{
	struct store st;
	struct werr e = { 0 };
	char *sp = at("tstore"), *ws = at("tws"), *d = at("tws/d"), *a = at("tws/d/a");
	char *l = at("tws/l");
	CHECK(mkdir(ws, 0755) == 0 && mkdir(d, 0755) == 0);
	write_at("tws/d/a", "a\n", 0644);
	CHECK(symlink("d/a", l) == 0);
	struct timespec t2020[2] = { { 1580608922, 0 }, { 1580608922, 250 } };
	struct timespec t1999[2] = { { 936835200, 0 }, { 936835200, 0 } };
	CHECK(utimensat(AT_FDCWD, a, t2020, 0) == 0 &&
	      utimensat(AT_FDCWD, l, t2020, AT_SYMLINK_NOFOLLOW) == 0 &&
	      utimensat(AT_FDCWD, d, t2020, 0) == 0);
	CHECK(store_open(&st, sp, true, &e) == 0);
	int wsfd = open(ws, O_RDONLY | O_DIRECTORY);
	struct snap_opts o = { .st = &st, .store_blobs = true, .ws = ws };
	struct snap_result r0, r1, r2;
	CHECK(snapshot_take_dir(wsfd, &o, &r0, &e) == 0);
	CHECK(utimensat(AT_FDCWD, a, t1999, 0) == 0 &&
	      utimensat(AT_FDCWD, l, t1999, AT_SYMLINK_NOFOLLOW) == 0 &&
	      utimensat(AT_FDCWD, d, t1999, 0) == 0);
	CHECK(snapshot_take_dir(wsfd, &o, &r1, &e) == 0);
	struct changes ch;
	changes_compute(&r1.m, &r0.m, &ch);
	CHECK(ch.n == 2 && ch.v[0].kind == CH_MTIME && ch.v[1].kind == CH_MTIME);
	CHECK(restore_verify(&st, &ch, &e) == 0);
	changes_free(&ch);
	mode_t restore;
	int fd = snapshot_open_root(wsfd, &restore, &e);
	CHECK(restore_tree(fd, &st, &r1.m, &r0.m, &e) == 0);
	close(fd);
	struct stat s;
	CHECK(lstat(a, &s) == 0 && s.st_mtim.tv_sec == 1580608922 && s.st_mtim.tv_nsec == 250);
	CHECK(lstat(l, &s) == 0 && s.st_mtim.tv_sec == 1580608922 && s.st_mtim.tv_nsec == 250);
	CHECK(lstat(d, &s) == 0 && s.st_mtim.tv_sec == 1580608922 && s.st_mtim.tv_nsec == 250);
	CHECK(snapshot_take_dir(wsfd, &o, &r2, &e) == 0);
	CHECK(strcmp(r2.hash, r0.hash) == 0);
	close(wsfd);
	snap_result_free(&r0);
	snap_result_free(&r1);
	snap_result_free(&r2);
	store_close(&st);
	free(sp);
	free(ws);
	free(d);
	free(a);
	free(l);
}

static void test_store_packs(void)
{
	struct store st;
	struct werr e = { 0 };
	char *sp = at("pstore"), *ws = at("pws");
	CHECK(mkdir(ws, 0755) == 0);
	write_at("pws/one", "one-one-one\n", 0644);
	write_at("pws/two", "two-two-two\n", 0644);
	write_at("pws/dup", "one-one-one\n", 0644);
	char big[STORE_SMALL_MAX + 100];
	memset(big, 'b', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	write_at("pws/big", big, 0644);
	CHECK(store_open(&st, sp, true, &e) == 0);
	int wsfd = open(ws, O_RDONLY | O_DIRECTORY);
	struct snap_opts o = { .st = &st, .store_blobs = true, .ws = ws };
	struct snap_result r0, r1;
	char *p;
	CHECK(snapshot_take_dir(wsfd, &o, &r0, &e) == 0);
	CHECK(count_in("pstore/packs") == 1 && count_in("pstore/blobs") == 1);
	const struct mf_entry *one = manifest_find(&r0.m, "one"), *two = manifest_find(&r0.m, "two");
	const struct mf_entry *bg = manifest_find(&r0.m, "big");
	CHECK(one && two && bg && store_has_blob(&st, one->hash));
	char *got = store_blob_read(&st, one->hash, one->size, &e);
	CHECK(got && strcmp(got, "one-one-one\n") == 0);
	free(got);
	CHECK(store_blob_read(&st, one->hash, one->size + 1, &e) == NULL);

	/* restored from the pack */
	write_at("pws/one", "changed\n", 0644);
	p = at("pws/two");
	CHECK(unlink(p) == 0);
	free(p);
	CHECK(snapshot_take_dir(wsfd, &o, &r1, &e) == 0);
	CHECK(count_in("pstore/packs") == 2);
	mode_t restore;
	int fd = snapshot_open_root(wsfd, &restore, &e);
	CHECK(restore_tree(fd, &st, &r1.m, &r0.m, &e) == 0);
	close(fd);
	char text[64] = "";
	p = at("pws/one");
	FILE *f = fopen(p, "r");
	CHECK(f && fgets(text, sizeof text, f));
	if (f)
		fclose(f);
	free(p);
	CHECK_STR(text, "one-one-one\n");

	/* a byte of a pack changed: refused when checked, before a write */
	struct changes ch;
	changes_compute(&r0.m, &r1.m, &ch);
	CHECK(restore_verify(&st, &ch, &e) == 0);
	char *pk = xasprintf("find '%s' -name '*.pack' -exec grep -l changed {} + > '%s/pk'", sp,
			     tmpdir);
	CHECK(system(pk) == 0);
	free(pk);
	char pname[200] = "", rel[300];
	p = at("pk");
	f = fopen(p, "r");
	CHECK(f && fgets(pname, sizeof pname, f));
	if (f)
		fclose(f);
	free(p);
	pname[strcspn(pname, "\n")] = '\0';
	snprintf(rel, sizeof rel, "pstore/packs/%s", strrchr(pname, '/') ? strrchr(pname, '/') + 1 : "");
	CHECK(patch_file(rel, "changed", "CHANGED"));
	CHECK(restore_verify(&st, &ch, &e) < 0 && strstr(e.msg, "does not match its hash") &&
	      strstr(e.msg, "one"));
	CHECK(patch_file(rel, "CHANGED", "changed"));
	changes_free(&ch);

	/* a loose blob replaced by a FIFO: refused, not opened */
	char *bp = xasprintf("%s/blobs/%.2s/%s", sp, bg->hash, bg->hash + 2);
	CHECK(chmod(bp, 0600) == 0 && unlink(bp) == 0 && mkfifo(bp, 0600) == 0);
	CHECK(store_blob_verify(&st, bg->hash, bg->size, &e) < 0 &&
	      strstr(e.msg, "not a regular file"));
	CHECK(store_blob_read(&st, bg->hash, bg->size, &e) == NULL);
	CHECK(unlink(bp) == 0);
	free(bp);

	/* r0's reference dropped: its packs rewritten without "two", which
	 * nothing names any more ("one-one-one" stays: r1's dup) */
	CHECK(store_ref(&st, "p1", "start", r0.hash, ws, &e) == 0);
	CHECK(store_ref(&st, "p2", "start", r1.hash, ws, &e) == 0);
	CHECK(store_prune(&st, ws, "p2", 1, 30, &e) == 1);
	CHECK(count_in("pstore/packs") == 1);
	got = store_blob_read(&st, one->hash, one->size, &e);
	CHECK(got && strcmp(got, "one-one-one\n") == 0);
	free(got);
	const struct mf_entry *one1 = manifest_find(&r1.m, "one");
	got = store_blob_read(&st, one1->hash, one1->size, &e);
	CHECK(got && strcmp(got, "changed\n") == 0);
	free(got);
	CHECK(!store_has_blob(&st, two->hash));
	snap_result_free(&r0);
	snap_result_free(&r1);
	close(wsfd);
	store_close(&st);
	free(sp);
	free(ws);
}

/* An overlay's upper directory read over a checkpoint: a file rewritten, a
 * whiteout, an opaque directory, a new .git and a setuid file. */
static void test_review(void)
{
	struct store st;
	struct werr e = { 0 };
	char *sp = at("rstore"), *ws = at("rws"), *up = at("rup");
	CHECK(mkdir(ws, 0755) == 0 && mkdir(up, 0755) == 0);
	write_at("rws/a", "a\n", 0644);
	write_at("rws/gone", "gone\n", 0644);
	char *p = at("rws/d");
	CHECK(mkdir(p, 0755) == 0);
	free(p);
	write_at("rws/d/old", "old\n", 0644);
	CHECK(store_open(&st, sp, true, &e) == 0);
	int wsfd = open(ws, O_RDONLY | O_DIRECTORY);
	struct snap_opts o = { .st = &st, .store_blobs = true, .ws = ws };
	struct snap_result start;
	CHECK(snapshot_take_dir(wsfd, &o, &start, &e) == 0);

	write_at("rup/a", "A\n", 0644);
	p = at("rup/gone");
	bool whiteout = mknod(p, S_IFCHR | 0, makedev(0, 0)) == 0;
	free(p);
	p = at("rup/d");
	CHECK(mkdir(p, 0700) == 0);
	bool opaque = setxattr(p, "user.overlay.opaque", "y", 1, 0) == 0;
	free(p);
	write_at("rup/d/new", "new\n", 0644);
	p = at("rup/.git");
	CHECK(mkdir(p, 0755) == 0);
	free(p);
	write_at("rup/.git/config", "[core]\n", 0644);
	write_at("rup/suid", "s\n", 04755);
	int ufd = open(up, O_RDONLY | O_DIRECTORY);
	struct review_result r;
	CHECK(review_collect(&st, &start.m, ufd, NULL, &r, &e) == 0);
	const struct mf_entry *en = manifest_find(&r.m, "a");
	CHECK(en && strcmp(en->hash, manifest_find(&start.m, "a")->hash) != 0);
	if (whiteout)
		CHECK(!manifest_find(&r.m, "gone"));
	if (opaque)
		CHECK(!manifest_find(&r.m, "d/old"));
	CHECK(manifest_find(&r.m, "d/new") && manifest_find(&r.m, "d")->mode == 0700);
	CHECK(!manifest_find(&r.m, ".git") && !manifest_find(&r.m, ".git/config"));
	CHECK(r.dropped.n == 1 && strcmp(r.dropped.v[0], ".git") == 0);
	en = manifest_find(&r.m, "suid");
	CHECK(en && en->mode == 0755);
	CHECK(r.cleared.n == 1);
	CHECK(r.m.root_mode == 0755);
	struct manifest back;
	CHECK(store_get_manifest(&st, r.hash, &back, &e) == 0);
	CHECK(back.n == r.m.n);
	manifest_free(&back);
	review_result_free(&r);
	snap_result_free(&start);
	close(ufd);
	close(wsfd);
	store_close(&st);
	free(sp);
	free(ws);
	free(up);
}

static void mkdir_at(const char *rel, mode_t mode)
{
	char *p = at(rel);
	CHECK(mkdir(p, mode) == 0);
	free(p);
}

/* test_review_git's upper directory: what the session wrote */
static void review_git_upper(void)
{
	const char *udirs[] = { "gup/.git", "gup/.git/objects", "gup/.git/objects/ab",
				"gup/.git/objects/cd", "gup/.git/objects/info", "gup/.git/refs",
				"gup/.git/refs/heads", "gup/.git/modules", "gup/.git/modules/sm",
				"gup/.git/modules/sm/objects", "gup/.git/modules/x",
				"gup/.git/rebase-merge", "gup/sub", "gup/fake", "gup/fake/objects",
				"gup/fake/refs", "gup/old", "gup/old/objects", "gup/old/refs" };
	for (size_t i = 0; i < ARRAY_LEN(udirs); i++)
		mkdir_at(udirs[i], 0755);
	char *p = at("gup/.git/info");
	CHECK(mkdir(p, 0700) == 0);
	free(p);
	write_at("gup/.git/info/exclude", "x\n", 0644);
	write_at("gup/.git/config", "[core]\n\tfsmonitor = x\n", 0644);
	write_at("gup/.git/index", "index\n", 0644);
	write_at("gup/.git/objects/cd/ef02", "new blob\n", 0444);
	write_at("gup/.git/objects/ab/cdef01", "forged\n", 0444);
	write_at("gup/.git/objects/info/alternates", "/elsewhere\n", 0644);
	write_at("gup/.git/refs/heads/main", "2222\n", 0644);
	write_at("gup/.git/modules/sm/config", "[core]\n\thooksPath = x\n", 0644);
	write_at("gup/.git/modules/sm/objects/new", "sm blob\n", 0444);
	write_at("gup/.git/modules/x/HEAD", "x\n", 0644);
	write_at("gup/.git/rebase-merge/git-rebase-todo", "exec id\n", 0644);
	p = at("gup/.git/refs/heads/lnk");
	CHECK(symlink("../../x", p) == 0);
	free(p);
	write_at("gup/sub/.git", "gitdir: /elsewhere\n", 0644);
	write_at("gup/fake/HEAD", "ref: refs/heads/main\n", 0644);
	write_at("gup/fake/config", "[core]\n", 0644);
	write_at("gup/old/HEAD", "ref: refs/heads/main\n", 0644);
}

/* Inside a git directory there at start, only git's data is written: a
 * new commit's objects, refs, logs and index kept; a changed config and a
 * changed .git file set back to the start's; a new modules/, rebase-merge/,
 * alternates, a symlink and a forged loose object left out; a directory
 * whose mode alone changed set back, what is below it judged on its own; a
 * bare-repository lookalike made outside .git left out whole, and its
 * parts made in a directory there at start. */
static void test_review_git(void)
{
	struct store st;
	struct werr e = { 0 };
	char *sp = at("gstore"), *ws = at("gws"), *up = at("gup");
	CHECK(mkdir(ws, 0755) == 0 && mkdir(up, 0755) == 0);
	const char *dirs[] = { "gws/.git", "gws/.git/objects", "gws/.git/objects/ab",
			       "gws/.git/refs", "gws/.git/refs/heads", "gws/.git/info",
			       "gws/sub", "gws/old", "gws/.git/modules",
			       "gws/.git/modules/sm", "gws/.git/modules/sm/objects",
			       "gws/.git/modules/sm/refs" };
	for (size_t i = 0; i < ARRAY_LEN(dirs); i++)
		mkdir_at(dirs[i], 0755);
	write_at("gws/.git/HEAD", "ref: refs/heads/main\n", 0644);
	write_at("gws/.git/config", "[core]\n", 0644);
	write_at("gws/.git/objects/ab/cdef01", "blob\n", 0444);
	write_at("gws/.git/refs/heads/main", "1111\n", 0644);
	write_at("gws/.git/modules/sm/HEAD", "ref: refs/heads/main\n", 0644);
	write_at("gws/.git/modules/sm/config", "[core]\n", 0644);
	write_at("gws/sub/.git", "gitdir: ../.git/modules/sm\n", 0644);
	write_at("gws/old/objects", "not a directory\n", 0644);
	CHECK(store_open(&st, sp, true, &e) == 0);
	int wsfd = open(ws, O_RDONLY | O_DIRECTORY);
	struct snap_opts o = { .st = &st, .store_blobs = true, .ws = ws };
	struct snap_result start;
	CHECK(snapshot_take_dir(wsfd, &o, &start, &e) == 0);

	review_git_upper();
	int ufd = open(up, O_RDONLY | O_DIRECTORY);
	struct review_result r;
	CHECK(review_collect(&st, &start.m, ufd, NULL, &r, &e) == 0);
	/* git's data: written */
	CHECK(manifest_find(&r.m, ".git/index"));
	CHECK(manifest_find(&r.m, ".git/objects/cd/ef02"));
	CHECK(manifest_find(&r.m, ".git/modules/sm/objects/new"));
	const struct mf_entry *en = manifest_find(&r.m, ".git/refs/heads/main"),
			      *was = manifest_find(&start.m, ".git/refs/heads/main");
	CHECK(en && strcmp(en->hash, was->hash) != 0);
	/* the start's, where a change is left out */
	const char *same[] = { ".git/config", ".git/objects/ab/cdef01", ".git/modules/sm/config",
			       "sub/.git", ".git/info" };
	for (size_t i = 0; i < ARRAY_LEN(same); i++) {
		en = manifest_find(&r.m, same[i]);
		was = manifest_find(&start.m, same[i]);
		CHECK(en && was && mf_same_content(en, was));
	}
	/* left out: new, nothing in its place */
	const char *gone[] = { ".git/info/exclude", ".git/objects/info/alternates",
			       ".git/modules/x", ".git/rebase-merge", ".git/refs/heads/lnk",
			       "fake", "fake/config", "old/HEAD", "old/refs" };
	for (size_t i = 0; i < ARRAY_LEN(gone); i++)
		CHECK(!manifest_find(&r.m, gone[i]));
	/* a part of the lookalike made in old/ that was there at start, of
	 * another type: set back */
	en = manifest_find(&r.m, "old/objects");
	CHECK(en && en->type == MF_FILE);
	/* each said once, at its top */
	const char *said[] = { ".git/config", ".git/info/exclude", ".git/modules/sm/config",
			       ".git/modules/x", ".git/objects/ab/cdef01",
			       ".git/objects/info/alternates", ".git/rebase-merge",
			       ".git/refs/heads/lnk", "fake", "old/HEAD", "old/objects", "old/refs",
			       "sub/.git" };
	CHECK(r.dropped.n == ARRAY_LEN(said));
	for (size_t i = 0; i < ARRAY_LEN(said) && i < r.dropped.n; i++)
		CHECK(strcmp(r.dropped.v[i], said[i]) == 0);
	bool mode_said = false;
	for (size_t i = 0; i < r.drops.n; i++)
		mode_said |= r.drops.v[i].mode_only && strcmp(r.drops.v[i].path, ".git/info") == 0;
	CHECK(mode_said);
	review_result_free(&r);
	snap_result_free(&start);
	close(ufd);
	close(wsfd);
	store_close(&st);
	free(sp);
	free(ws);
	free(up);
}

static void test_excluded(void)
{
	struct strv ex = { 0 };
	strv_push(&ex, "node_modules");
	strv_push(&ex, "build/*.o");
	CHECK(snapshot_excluded(&ex, "a/node_modules", "node_modules"));
	CHECK(snapshot_excluded(&ex, "build/x.o", "x.o"));
	CHECK(!snapshot_excluded(&ex, "src/build/x.o", "x.o"));
	CHECK(!snapshot_excluded(&ex, "node_modules2", "node_modules2"));
	strv_free(&ex);
}

static void test_text_diff(void)
{
	const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", *b = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11";
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	size_t n = text_unified_diff(f, false, "a/t", "b/t", a, strlen(a), b, strlen(b));
	fclose(f);
	CHECK(n == 3);
	CHECK_STR(out, "--- a/t\n+++ b/t\n"
		       "@@ -2,9 +2,10 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n+11\n"
		       "\\ No newline at end of file\n");
	free(out);
	/* for a terminal: what would erase the line above (a cursor move, a
	 * carriage return) is shown, tabs kept; for a pipe, a patch's bytes */
	const char *c = "keep\n", *d = "keep\nevil\033[1A\033[2K\r\tok\n";
	f = open_memstream(&out, &len);
	text_unified_diff(f, true, "a/t", "b/t", c, strlen(c), d, strlen(d));
	fclose(f);
	CHECK_STR(out, "--- a/t\n+++ b/t\n@@ -1,1 +1,2 @@\n keep\n+evil\\x1b[1A\\x1b[2K\\x0d\tok\n");
	free(out);
	f = open_memstream(&out, &len);
	text_unified_diff(f, false, "a/t", "b/t", c, strlen(c), d, strlen(d));
	fclose(f);
	CHECK_STR(out, "--- a/t\n+++ b/t\n@@ -1,1 +1,2 @@\n keep\n+evil\033[1A\033[2K\r\tok\n");
	free(out);
	CHECK(text_is_diffable("abc\n", 4));
	CHECK(!text_is_diffable("a\0c", 3));
	CHECK(!text_is_diffable("\xff\xfe", 2));
}

/* mf_entry_from_stat, which the snapshot and the review share: a file, a
 * directory and a symlink as entries, a FIFO not content; a symlink whose
 * target grew after its lstat is a race, never an entry with the later
 * target; one gone meanwhile an error naming it. */
static void test_entry_from_stat(void)
{
	int dfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd >= 0);
	write_at("efs_file", "hello", 0640);
	CHECK(mkdirat(dfd, "efs_dir", 0750) == 0);
	CHECK(symlinkat("abc", dfd, "efs_link") == 0);
	CHECK(mkfifoat(dfd, "efs_fifo", 0600) == 0);
	struct stat s;
	struct mf_entry en;
	char *target = NULL;
	struct werr e = { 0 };

	CHECK(fstatat(dfd, "efs_file", &s, AT_SYMLINK_NOFOLLOW) == 0);
	CHECK(mf_entry_from_stat(dfd, "efs_file", "efs_file", &s, "t", &en, &target, &e) == 1);
	CHECK(en.type == MF_FILE && en.size == 5 && en.mode == 0640 && !target && !en.target);
	CHECK_STR(en.path, "efs_file");
	CHECK(fstatat(dfd, "efs_dir", &s, AT_SYMLINK_NOFOLLOW) == 0);
	CHECK(mf_entry_from_stat(dfd, "efs_dir", "efs_dir", &s, "t", &en, &target, &e) == 1);
	CHECK(en.type == MF_DIR && en.mode == 0750);
	CHECK(fstatat(dfd, "efs_fifo", &s, AT_SYMLINK_NOFOLLOW) == 0);
	CHECK(mf_entry_from_stat(dfd, "efs_fifo", "efs_fifo", &s, "t", &en, &target, &e) == 0);

	CHECK(fstatat(dfd, "efs_link", &s, AT_SYMLINK_NOFOLLOW) == 0);
	CHECK(mf_entry_from_stat(dfd, "efs_link", "efs_link", &s, "t", &en, &target, &e) == 1);
	CHECK(en.type == MF_LINK && en.size == 3 && en.target == target);
	CHECK_STR(target, "abc");
	free(target);
	/* replaced by a longer target after the lstat: a race */
	CHECK(unlinkat(dfd, "efs_link", 0) == 0 && symlinkat("abcdef", dfd, "efs_link") == 0);
	CHECK(mf_entry_from_stat(dfd, "efs_link", "efs_link", &s, "t", &en, &target, &e) ==
	      MF_STAT_RACE);
	free(target);
	/* by a shorter one: it fits, and is read as it is now (the race is a
	 * target that grew past what lstat said) */
	CHECK(fstatat(dfd, "efs_link", &s, AT_SYMLINK_NOFOLLOW) == 0);
	CHECK(unlinkat(dfd, "efs_link", 0) == 0 && symlinkat("ab", dfd, "efs_link") == 0);
	int r = mf_entry_from_stat(dfd, "efs_link", "efs_link", &s, "t", &en, &target, &e);
	free(target);
	CHECK(r == 1 && en.size == 2);
	/* gone after its lstat */
	CHECK(unlinkat(dfd, "efs_link", 0) == 0);
	CHECK(mf_entry_from_stat(dfd, "efs_link", "efs_link", &s, "t", &en, &target, &e) == -1);
	CHECK(e.errnum == ENOENT && strncmp(e.msg, "t: efs_link", 11) == 0);
	free(target);
	close(dfd);
}

/* The batch read on two threads (prefetch.c), the second started by the
 * first batch of two files or more: a small regular file read and hashed;
 * a symlink, a FIFO, a directory, a file larger than the batch reads and a
 * name gone left to the look by name (never followed, never blocking on
 * the FIFO); batches after batches read right; and the check that a file
 * did not change while it was read. */
static void test_prefetch(void)
{
	char *d = at("pf");
	CHECK(mkdir(d, 0755) == 0);
	int dfd = open(d, O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	write_at("pf/small", "small\n", 0644);
	write_at("pf/big", "0123456789abcdef0", 0644);
	CHECK(symlinkat("small", dfd, "link") == 0 && mkfifoat(dfd, "fifo", 0600) == 0 &&
	      mkdirat(dfd, "dir", 0700) == 0);
	struct prefetch p;
	prefetch_init(&p, 16);
	prefetch_add(&p, "small", "small"); /* a batch of one file: no worker for it */
	prefetch_run(&p, dfd);
	CHECK(p.v[0].status == PF_READ && !p.worker);
	prefetch_clear(&p);
	const char *names[] = { "small", "big", "link", "fifo", "dir", "gone" };
	for (size_t i = 0; i < ARRAY_LEN(names); i++)
		prefetch_add(&p, names[i], names[i]);
	prefetch_run(&p, dfd);
	CHECK(p.worker == (sysconf(_SC_NPROCESSORS_ONLN) >= 2));
	char want[SHA256_HEX_LEN];
	sha256_hex("small\n", 6, want);
	CHECK(p.v[0].status == PF_READ && p.v[0].n == 6 && S_ISREG(p.v[0].s.st_mode));
	CHECK(memcmp(prefetch_data(&p, 0), "small\n", 6) == 0);
	CHECK_STR(p.v[0].hash, want);
	for (size_t i = 1; i < ARRAY_LEN(names); i++)
		CHECK(p.v[i].status == PF_BY_NAME);
	CHECK_STR(prefetch_name(&p, 5), "gone");
	prefetch_clear(&p);
	for (int i = 0; i < 3 * PF_BATCH; i++) {
		char rel[32], text[32];
		snprintf(rel, sizeof rel, "pf/f%d", i);
		snprintf(text, sizeof text, "file %d\n", i);
		write_at(rel, text, 0644);
	}
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < PF_BATCH; i++) {
			char name[32];
			snprintf(name, sizeof name, "f%d", round * PF_BATCH + i);
			prefetch_add(&p, name, name);
		}
		CHECK(prefetch_full(&p));
		prefetch_run(&p, dfd);
		for (int i = 0; i < PF_BATCH; i++) {
			char text[32];
			int len = snprintf(text, sizeof text, "file %d\n", round * PF_BATCH + i);
			sha256_hex(text, (size_t)len, want);
			CHECK(p.v[i].status == PF_READ && p.v[i].n == (size_t)len);
			CHECK(memcmp(prefetch_data(&p, (size_t)i), text, (size_t)len) == 0);
			CHECK_STR(p.v[i].hash, want);
		}
		prefetch_clear(&p);
	}
	prefetch_free(&p);
	close(dfd);
	free(d);
	struct stat s = { .st_ino = 1, .st_dev = 2, .st_mode = S_IFREG | 0644, .st_size = 5 }, b = s;
	CHECK(pf_unchanged(&s, &b, 5, false) && pf_unchanged(&s, &b, -1, false));
	CHECK(!pf_unchanged(&s, &b, 4, false));
	b.st_mtim.tv_nsec = 1;
	CHECK(!pf_unchanged(&s, &b, 5, false));
	b = s;
	b.st_ctim.tv_sec = 9;
	CHECK(!pf_unchanged(&s, &b, 5, false) && pf_unchanged(&s, &b, 5, true));
	b = s;
	b.st_ino = 3;
	CHECK(!pf_unchanged(&s, &b, 5, false));
	b = s;
	b.st_mode = S_IFIFO | 0644;
	CHECK(!pf_unchanged(&s, &b, 5, false));
}

static bool same_file(const char *a, const char *b)
{
	char *pa = at(a), *pb = at(b);
	struct stat x, y;
	bool same = stat(pa, &x) == 0 && stat(pb, &y) == 0 && x.st_ino == y.st_ino;
	free(pa);
	free(pb);
	return same;
}

/* Retention reads a workspace's own references (the index wsrefs/WSHASH/),
 * not every session's of every workspace: each reference is linked there
 * as it is written and unlinked with it; a store from before the index
 * (references in refs/ alone) is indexed whole at its first retention and
 * pruned right; a reference the index missed (a crash between the write
 * and the link) is kept, never dropped early, and indexed at the next
 * removal pass. */
static void test_refs_index(void)
{
	struct store st;
	struct werr e = { 0 };
	char *sp = at("istore");
	const char *ws = "/w/one", *other = "/w/two";
	char wsum[SHA256_HEX_LEN], osum[SHA256_HEX_LEN];
	sha256_hex(ws, strlen(ws), wsum);
	sha256_hex(other, strlen(other), osum);
	CHECK(store_open(&st, sp, true, &e) == 0);
	/* an old store: references written without the index */
	for (int i = 1; i <= 4; i++) {
		char name[64], text[200];
		snprintf(name, sizeof name, "istore/refs/o%d.start", i);
		snprintf(text, sizeof text, "%s %s %lld\n", H1, i % 2 ? wsum : osum,
			 (long long)time(NULL) - 10 + i);
		write_at(name, text, 0600);
	}
	CHECK(store_prune(&st, ws, NULL, 1, 30, &e) == 1); /* o1 and o3 are ws's: o1 goes */
	CHECK(count_in("istore/refs") == 3);
	char *o1 = at("istore/refs/o1.start"), *done = at("istore/wsrefs/complete");
	CHECK(access(o1, F_OK) < 0 && access(done, F_OK) == 0);
	char *link = xasprintf("istore/wsrefs/%s/o2.start", osum);
	CHECK(same_file("istore/refs/o2.start", link));
	free(link);
	/* written: linked into its workspace's index; removed: unlinked */
	CHECK(store_ref(&st, "n1", "start", H1, ws, &e) == 0);
	link = xasprintf("istore/wsrefs/%s/n1.start", wsum);
	CHECK(same_file("istore/refs/n1.start", link));
	CHECK(store_ref(&st, "n1", "start", H1, ws, &e) == 0); /* rewritten: the new file linked */
	CHECK(same_file("istore/refs/n1.start", link));
	CHECK(store_unref(&st, "n1", "start", &e) == 0);
	char *lp = at(link);
	CHECK(access(lp, F_OK) < 0);
	free(lp);
	free(link);
	/* another workspace's references are not read: a damaged one there
	 * changes nothing for ws, and stays */
	link = xasprintf("istore/wsrefs/%s/o4.start", osum);
	write_at("istore/refs/o4.start", "not a reference\n", 0600);
	CHECK(store_ref(&st, "n2", "start", H1, ws, &e) == 0);
	CHECK(store_prune(&st, ws, "n2", 1, 30, &e) == 1); /* o3 goes, n2 stays */
	CHECK(store_ref_exists(&st, "n2", "start") && !store_ref_exists(&st, "o3", "start"));
	CHECK(store_ref_exists(&st, "o2", "start") && store_ref_exists(&st, "o4", "start"));
	free(link);
	/* a reference the index missed: kept; indexed by the next whole pass */
	{
		char text[200];
		snprintf(text, sizeof text, "%s %s %lld\n", H1, wsum, (long long)time(NULL) - 100);
		write_at("istore/refs/m1.start", text, 0600);
	}
	CHECK(store_prune(&st, ws, "n2", 1, 30, &e) == 0);
	CHECK(store_ref_exists(&st, "m1", "start"));
	CHECK(unlink(done) == 0); /* (as a failed link leaves it) */
	CHECK(store_prune(&st, ws, "n2", 1, 30, &e) == 1);
	CHECK(!store_ref_exists(&st, "m1", "start") && access(done, F_OK) == 0);
	/* the index replaced by a symbolic link: nothing is made through it,
	 * and retention reads refs/ as before */
	{
		char *idx = at("istore/wsrefs"), *away = at("iaway");
		char *cmd = xasprintf("rm -r '%s'", idx);
		CHECK(system(cmd) == 0);
		free(cmd);
		CHECK(mkdir(away, 0700) == 0 && symlink(away, idx) == 0);
		CHECK(store_ref(&st, "n3", "start", H1, ws, &e) == 0);
		CHECK(store_prune(&st, ws, "n3", 1, 30, &e) == 1); /* n2 goes */
		CHECK(store_ref_exists(&st, "n3", "start") && !store_ref_exists(&st, "n2", "start"));
		CHECK(count_in("iaway") == 0);
		free(idx);
		free(away);
	}
	free(o1);
	free(done);
	store_close(&st);
	free(sp);
}

int main(void)
{
	tmpdir_make("warden-test-checkpoint");
	test_manifest_roundtrip();
	test_manifest_format_exact();
	test_manifest_hostile();
	test_store_refusals();
	test_store_unwritable();
	test_snapshot_restore();
	test_store_packs();
	test_restore_special();
	test_changes_old_manifest();
	test_changes_mtime();
	test_restore_mtime();
	test_refs_index();
	test_excluded();
	test_review();
	test_review_git();
	test_text_diff();
	test_entry_from_stat();
	test_prefetch();
	char *cmd = xasprintf("chmod -R u+rwX '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "chmod failed\n");
	free(cmd);
	tmpdir_remove();
	printf("%d checks\n", checks);
	return check_status();
}
