/* objcheck.c - the objects a session wrote into a git object store, hashed
 * from what the host's git reads of each changed file alone, and a forged
 * one moved aside, told and recorded (objcheck.h). */
#define OPENSSL_API_COMPAT 10101
#define OPENSSL_SUPPRESS_DEPRECATED
#include "objcheck.h"

#include <openssl/sha.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../audit/events.h"
#include "../common/hash.h"
#include "../common/runcmd.h"
#include "../common/walk.h"
#include "../workspace/gitconfig.h"
#include "../workspace/packidx.h"
#include "../workspace/plan.h"
#include "safegit.h"

/* How long git may take to print one file's objects: a pack `git gc` wrote
 * holds the whole repository; one that takes longer leaves its objects
 * unverified (said, and recorded). */
#define OBJCHECK_MS 120000

/* One object store (an objects/ directory) and its changed files. */
struct store {
	char *objdir;
	struct strv loose;      /* whole paths of loose objects */
	struct strv idx;        /* whole paths of pack indexes, each once */
};

struct check {
	const char *ws;         /* the workspace swept, whose files the log names
				   relative to it; NULL: whole paths */
	struct audit *log;
	const char *session;
	char *suffix;           /* "." WS_QUARANTINE_TAG SESSION, less its dot */
	char *tmp;              /* the temporary directory, made on first use */
	unsigned batches;
	int r;                  /* -1 once the log could not be written */
	struct werr *e;
};

/* ---- which store, which files --------------------------------------- */

static struct store *store_of(struct store **v, size_t *n, const char *objdir)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].objdir, objdir) == 0)
			return &(*v)[i];
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[*n] = (struct store){ .objdir = xstrdup(objdir) };
	return &(*v)[(*n)++];
}

/* Sort files into their stores: a loose object's is two levels up, a
 * pack file's index (the same name, .idx) is the one to read. */
static size_t group(const struct strv *files, struct store **v)
{
	size_t n = 0;
	for (size_t i = 0; i < files->n; i++) {
		const char *f = files->v[i];
		const char *slash = strrchr(f, '/');
		if (!slash || slash - f < 3)
			continue;
		const char *dir = slash - 1;
		while (dir > f && dir[-1] != '/')
			dir--;
		if (dir == f)
			continue;
		_cleanup_free_ char *objdir = xasprintf("%.*s", (int)(dir - 1 - f), f);
		struct store *s = store_of(v, &n, objdir);
		size_t len = strlen(f);
		if (len > 5 && strcmp(f + len - 5, ".pack") == 0) {
			_cleanup_free_ char *idx = xasprintf("%.*s.idx", (int)(len - 5), f);
			if (!strv_contains(&s->idx, idx))
				strv_push(&s->idx, idx);
		} else if (len > 4 && strcmp(f + len - 4, ".idx") == 0) {
			if (!strv_contains(&s->idx, f))
				strv_push(&s->idx, f);
		} else {
			strv_push(&s->loose, f);
		}
	}
	return n;
}

static int objformat_seen(void *ctx, char *var, const char *value)
{
	if (strcmp(var, "extensions.objectformat") == 0)
		*(size_t *)ctx = value && strcasecmp(value, "sha256") == 0 ? PACKIDX_SHA256
									   : PACKIDX_SHA1;
	return 0;
}

/* The bytes of an id in the repository whose store is objdir: its config's
 * extensions.objectFormat (SHA-1 without one, or when it cannot be read). */
static size_t store_hashsz(const char *objdir)
{
	_cleanup_free_ char *cfg = xasprintf("%s/../config", objdir);
	_cleanup_free_ char *text = NULL;
	size_t len = 0, hashsz = PACKIDX_SHA1;
	char what[READ_WHY_MAX];
	if (read_regular_file(cfg, GITCFG_REPO_MAX, &text, &len, what) == 0)
		gitcfg_each(text, len, objformat_seen, &hashsz);
	return hashsz;
}

/* ---- a repository of warden's own for each file's objects -------------- */

struct batch {
	char *dir;              /* the git directory */
	FILE *in;               /* the ids asked for, one a line */
	size_t n, hashsz;
};

static void batch_free(struct batch *b)
{
	if (b->in)
		fclose(b->in);
	free(b->dir);
	*b = (struct batch){ 0 };
}

static int write_text(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	size_t n = strlen(text);
	return fd >= 0 && write(fd, text, n) == (ssize_t)n ? 0 : -1;
}

/* A new git directory in the temporary one, of hashsz's object format,
 * whose store holds nothing yet; -1 with errno. */
static int batch_open(struct check *c, size_t hashsz, struct batch *b)
{
	*b = (struct batch){ .hashsz = hashsz };
	if (!c->tmp) {
		const char *t = getenv("TMPDIR");
		_cleanup_free_ char *tmpl = xasprintf("%s/warden-objcheck-XXXXXX",
						      t && t[0] == '/' ? t : "/tmp");
		if (!mkdtemp(tmpl))
			return -1;
		c->tmp = steal_ptr(&tmpl);
	}
	b->dir = xasprintf("%s/%u", c->tmp, c->batches++);
	_cleanup_free_ char *refs = xasprintf("%s/refs", b->dir);
	_cleanup_free_ char *objects = xasprintf("%s/objects", b->dir);
	_cleanup_free_ char *pack = xasprintf("%s/objects/pack", b->dir);
	_cleanup_free_ char *head = xasprintf("%s/HEAD", b->dir);
	_cleanup_free_ char *config = xasprintf("%s/config", b->dir);
	_cleanup_free_ char *in = xasprintf("%s/in", b->dir);
	const char *cfg = hashsz == PACKIDX_SHA256
		? "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n"
		: "[core]\n\trepositoryformatversion = 0\n";
	if (mkdir(b->dir, 0700) < 0 || mkdir(refs, 0700) < 0 || mkdir(objects, 0700) < 0 ||
	    mkdir(pack, 0700) < 0 || write_text(head, "ref: refs/heads/main\n") < 0 ||
	    write_text(config, cfg) < 0 || !(b->in = fopen(in, "wxe")))
		return -1;
	return 0;
}

/* The store's entry rel (inside objects/) made a link to target. */
static int batch_link(struct batch *b, const char *rel, const char *target)
{
	_cleanup_free_ char *at = xasprintf("%s/objects/%s", b->dir, rel);
	char *slash = strrchr(at, '/');
	*slash = '\0';
	if (mkdir(at, 0700) < 0 && errno != EEXIST)
		return -1;
	*slash = '/';
	return symlink(target, at);
}

static void batch_ask(void *ctx, const char *hex)
{
	struct batch *b = ctx;
	fprintf(b->in, "%s\n", hex);
	b->n++;
}

/* ---- git's answer, hashed --------------------------------------------- */

struct objhash {
	size_t hashsz;
	SHA_CTX s1;
	SHA256_CTX s256;
};

static void oh_init(struct objhash *h, size_t hashsz)
{
	h->hashsz = hashsz;
	if (hashsz == PACKIDX_SHA256 ? !SHA256_Init(&h->s256) : !SHA1_Init(&h->s1))
		abort();
}

static void oh_update(struct objhash *h, const void *p, size_t n)
{
	if (h->hashsz == PACKIDX_SHA256)
		SHA256_Update(&h->s256, p, n);
	else
		SHA1_Update(&h->s1, p, n);
}

static void oh_hex(struct objhash *h, char out[2 * PACKIDX_SHA256 + 1])
{
	unsigned char md[PACKIDX_SHA256];
	if (h->hashsz == PACKIDX_SHA256)
		SHA256_Final(md, &h->s256);
	else
		SHA1_Final(md, &h->s1);
	hex_encode(md, h->hashsz, out);
}

/* `git cat-file --batch`'s answer, read as it comes: for each object a
 * line "ID TYPE SIZE" (or "ID missing"), its SIZE bytes, a newline. */
struct answer {
	size_t hashsz;
	enum { AT_HEAD, AT_BODY, AT_END } at;
	char head[256];
	size_t hlen;
	char id[2 * PACKIDX_SHA256 + 2];
	unsigned long long left;  /* of the object's bytes */
	struct objhash h;
	struct strv *forged;      /* the ids whose content is not theirs */
	const char *bad;          /* the answer is not git's: why */
};

/* The line in a->head read: the object's hash begun, or nothing to read
 * for a missing one. */
static void answer_head(struct answer *a)
{
	char type[32];
	a->head[a->hlen] = '\0';
	a->hlen = 0;
	size_t idlen = strcspn(a->head, " ");
	if (idlen != 2 * a->hashsz) {
		a->bad = "git's answer has a line it should not";
		return;
	}
	if (strcmp(a->head + idlen, " missing") == 0)
		return;
	if (sscanf(a->head, "%65s %31s %llu", a->id, type, &a->left) != 3) {
		a->bad = "git's answer has a line it should not";
		return;
	}
	oh_init(&a->h, a->hashsz);
	char pre[64];
	int n = snprintf(pre, sizeof pre, "%s %llu", type, a->left);
	oh_update(&a->h, pre, (size_t)n + 1); /* with its NUL */
	a->at = a->left ? AT_BODY : AT_END;
}

/* The newline after an object: its hash compared with its id. */
static void answer_end(struct answer *a, char c)
{
	char hex[2 * PACKIDX_SHA256 + 1];
	if (c != '\n') {
		a->bad = "git's answer has no newline after an object";
		return;
	}
	oh_hex(&a->h, hex);
	if (strcmp(hex, a->id) != 0)
		strv_push(a->forged, a->id);
	a->at = AT_HEAD;
}

static void answer_feed(void *ctx, const char *buf, size_t n)
{
	struct answer *a = ctx;
	for (size_t i = 0; i < n && !a->bad;) {
		if (a->at == AT_BODY) {
			size_t take = a->left < n - i ? (size_t)a->left : n - i;
			oh_update(&a->h, buf + i, take);
			i += take;
			a->left -= take;
			if (!a->left)
				a->at = AT_END;
		} else if (a->at == AT_END) {
			answer_end(a, buf[i++]);
		} else if (buf[i] == '\n') {
			i++;
			answer_head(a);
		} else if (a->hlen == sizeof a->head - 1) {
			a->bad = "git's answer has a line too long";
		} else {
			a->head[a->hlen++] = buf[i++];
		}
	}
}

/* git cat-file --batch in b's repository, the ids of b->in asked, its
 * answer hashed as it comes (nothing of it kept: an object may be large):
 * 0 with the ids whose content is not theirs in forged, -1 with why. */
static int batch_run(struct batch *b, struct strv *forged, char *why, size_t wlen)
{
	if (fflush(b->in) != 0) {
		snprintf(why, wlen, "cannot write the ids to ask git for: %s", strerror(errno));
		return -1;
	}
	_cleanup_free_ char *in = xasprintf("%s/in", b->dir);
	_cleanup_strv_ struct strv argv = { 0 };
	_cleanup_strv_ struct strv env = { 0 };
	safegit_argv(&argv);
	strv_push(&argv, "cat-file");
	strv_push(&argv, "--batch");
	safegit_env(&env);
	strv_push_owned(&env, xasprintf("GIT_DIR=%s", b->dir));
	struct answer a = { .hashsz = b->hashsz, .forged = forged };
	const struct runcmd rc = { .argv = argv.v, .env = env.v, .dir = b->dir, .in_path = in,
				   .out_fd = -1, .out_fn = answer_feed, .out_ctx = &a,
				   .timeout_ms = OBJCHECK_MS };
	_cleanup_(runcmd_out_free) struct runcmd_out r = { 0 };
	if (runcmd(&rc, &r) < 0) {
		snprintf(why, wlen, "cannot run git: %s", strerror(errno));
		return -1;
	}
	char limit[32];
	runcmd_timeout_text(limit, sizeof limit, OBJCHECK_MS);
	if (r.end == RUNCMD_TIMED_OUT)
		snprintf(why, wlen, "git cat-file did not answer within %s", limit);
	else if (r.end != RUNCMD_EXITED || r.code != 0)
		snprintf(why, wlen, "git cat-file failed: %s", r.err_line);
	else if (a.bad || a.at != AT_HEAD || a.hlen)
		snprintf(why, wlen, "%s", a.bad ? a.bad : "git's answer ended inside an object");
	else
		return 0;
	return -1;
}

/* ---- what is found, told and recorded ---------------------------------- */

/* file as the log names it: relative to the workspace when inside it */
static const char *logged(const struct check *c, const char *file)
{
	size_t n = c->ws ? strlen(c->ws) : 0;
	return n && strncmp(file, c->ws, n) == 0 && file[n] == '/' ? file + n + 1 : file;
}

static void record(struct check *c, struct event a)
{
	if (audit_emit_event(c->log, a, c->e) < 0 || audit_sync(c->log, c->e) < 0)
		c->r = -1;
}

/* file moved aside in its directory: the new whole path, or NULL with a
 * note. */
static char *aside(struct check *c, const char *file)
{
	_cleanup_free_ char *dir = xstrdup(file);
	char *slash = strrchr(dir, '/');
	*slash = '\0';
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *to = dfd < 0 ? NULL : walk_rename_aside(dfd, slash + 1, c->suffix);
	if (!to) {
		wnote("could not move %s aside: %s", file, strerror(errno));
		return NULL;
	}
	return xasprintf("%s/%s", dir, to);
}

/* The git directory whose store is objdir. */
static char *gitdir_of(const char *objdir)
{
	char *g = xstrdup(objdir);
	char *slash = strrchr(g, '/');
	if (slash && slash != g)
		*slash = '\0';
	return g;
}

/* file's objects (and those of more files beside it) could not be read:
 * told and recorded, kept. */
static void unverified(struct check *c, const char *objdir, const char *file, size_t more,
		       const char *why)
{
	_cleanup_free_ char *gitdir = gitdir_of(objdir);
	char also[64] = "";
	if (more)
		snprintf(also, sizeof also, " (and %zu more files)", more);
	wnote("could not check the git objects in %s%s, which the sandboxed command wrote (%s); "
	      "`git -C %s fsck` checks every object", file, also, why, gitdir);
	_cleanup_free_ char *detail = xasprintf("the git directory %s%s: %s", gitdir, also, why);
	record(c, ev_alert(&(struct ev_alert){ .rule = "git.object-unverified",
		.path = logged(c, file), .action = "kept", .detail = detail }));
}

/* file (a loose object, or a pack's index with its pack) holds forged
 * objects, the first one id and more after it: moved aside, told, recorded. */
static void forged(struct check *c, const char *objdir, const char *file, const char *id,
		   size_t more)
{
	_cleanup_free_ char *to = aside(c, file);
	size_t len = strlen(file);
	bool pack = len > 4 && strcmp(file + len - 4, ".idx") == 0;
	if (to && pack) { /* and its pack */
		_cleanup_free_ char *packfile = xasprintf("%.*s.pack", (int)(len - 4), file);
		free(aside(c, packfile));
	}
	_cleanup_free_ char *gitdir = gitdir_of(objdir);
	char also[64] = "";
	if (more)
		snprintf(also, sizeof also, " (and %zu more)", more);
	wnote("the sandboxed command forged git object %s%s in %s: %s holds other content "
	      "than that id names, which your next `git checkout` or `git reset --hard` would "
	      "have written into your files. %s%s%s. If git now says the object is missing, "
	      "restore %s with `warden undo` when the session's checkpoint holds it, or fetch "
	      "it again from a remote you trust; `git -C %s fsck` checks the rest", id, also,
	      gitdir, file, to ? "It was moved to " : "It could not be moved aside: remove it",
	      to ? to : "", to && pack ? ", its pack beside it" : "", gitdir, gitdir);
	_cleanup_free_ char *detail = xasprintf("the git directory %s: object %s%s is not the "
						"content its id names", gitdir, id, also);
	record(c, ev_alert(&(struct ev_alert){ .rule = "git.object-forged", .path = logged(c, file),
		.moved_to = to, .action = to ? "quarantined" : "kept", .detail = detail }));
}

/* ---- each store --------------------------------------------------------- */

/* Its loose objects, in one repository of warden's own. */
static void check_loose(struct check *c, const struct store *s, size_t hashsz)
{
	struct batch b;
	char why[512] = "";
	_cleanup_strv_ struct strv forged_ids = { 0 };
	_cleanup_strv_ struct strv asked = { 0 };       /* ids, and their files: */
	_cleanup_strv_ struct strv asked_files = { 0 };
	if (batch_open(c, hashsz, &b) < 0) {
		snprintf(why, sizeof why, "a temporary directory: %s", strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < s->loose.n; i++) {
		const char *f = s->loose.v[i];
		const char *rel = f + strlen(s->objdir) + 1; /* XX/NAME */
		if (strlen(rel) != 2 * hashsz + 1)
			continue; /* the other object format's: git never looks it up */
		char id[2 * PACKIDX_SHA256 + 1];
		snprintf(id, sizeof id, "%.2s%s", rel, rel + 3);
		if (batch_link(&b, rel, f) < 0) {
			snprintf(why, sizeof why, "a temporary link: %s", strerror(errno));
			goto fail;
		}
		batch_ask(&b, id);
		strv_push(&asked, id);
		strv_push(&asked_files, f);
	}
	if (b.n && batch_run(&b, &forged_ids, why, sizeof why) < 0)
		goto fail;
	for (size_t i = 0; i < forged_ids.n; i++)
		for (size_t k = 0; k < asked.n; k++)
			if (strcmp(asked.v[k], forged_ids.v[i]) == 0)
				forged(c, s->objdir, asked_files.v[k], forged_ids.v[i], 0);
	batch_free(&b);
	return;
fail:
	unverified(c, s->objdir, s->loose.v[0], s->loose.n - 1, why);
	batch_free(&b);
}

static void ask_cb(void *ctx, const char *hex)
{
	batch_ask(ctx, hex);
}

/* The ids idx lists, asked of b: -1 with why when git would not read it
 * either (then nothing is forged by it: git takes no object from it). */
static int ask_idx(struct batch *b, const char *idx, char *why, size_t wlen)
{
	_cleanup_close_ int fd = open(idx, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		snprintf(why, wlen, "cannot read it: %s", fd < 0 ? strerror(errno) : "no file");
		return -1;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		snprintf(why, wlen, "cannot read it: %s", strerror(errno));
		return -1;
	}
	const char *bad = NULL;
	long n = packidx_ids(m, (size_t)st.st_size, b->hashsz, ask_cb, b, &bad);
	munmap(m, (size_t)st.st_size);
	if (n < 0)
		snprintf(why, wlen, "an index git refuses: %s", bad);
	return n < 0 ? -1 : 0;
}

/* A pack (by its index), alone in a repository of warden's own. */
static void check_pack(struct check *c, const struct store *s, const char *idx, size_t hashsz)
{
	size_t len = strlen(idx);
	_cleanup_free_ char *pack = xasprintf("%.*s.pack", (int)(len - 4), idx);
	struct stat st;
	if (lstat(idx, &st) < 0 || lstat(pack, &st) < 0)
		return; /* git reads no pack without both */
	struct batch b;
	char why[512] = "";
	_cleanup_strv_ struct strv forged_ids = { 0 };
	if (batch_open(c, hashsz, &b) < 0) {
		snprintf(why, sizeof why, "a temporary directory: %s", strerror(errno));
		unverified(c, s->objdir, idx, 0, why);
	} else if (batch_link(&b, "pack/pack-c.idx", idx) < 0 ||
		   batch_link(&b, "pack/pack-c.pack", pack) < 0) {
		snprintf(why, sizeof why, "a temporary link: %s", strerror(errno));
		unverified(c, s->objdir, idx, 0, why);
	} else if (ask_idx(&b, idx, why, sizeof why) < 0) {
		/* git refuses it too, and reads nothing from it: recorded only */
		unverified(c, s->objdir, idx, 0, why);
	} else if (b.n && batch_run(&b, &forged_ids, why, sizeof why) < 0) {
		unverified(c, s->objdir, idx, 0, why);
	} else if (forged_ids.n) {
		forged(c, s->objdir, idx, forged_ids.v[0], forged_ids.n - 1);
	}
	batch_free(&b);
}

int objcheck_run(const struct strv *files, const char *ws, struct audit *log,
		 const char *session, struct werr *e)
{
	struct store *v = NULL;
	size_t n = group(files, &v);
	struct check c = { .ws = ws, .log = log, .session = session, .e = e,
		.suffix = xasprintf(WS_QUARANTINE_TAG "%s", session) };
	for (size_t i = 0; i < n; i++) {
		size_t hashsz = store_hashsz(v[i].objdir);
		if (v[i].loose.n)
			check_loose(&c, &v[i], hashsz);
		for (size_t k = 0; k < v[i].idx.n; k++)
			check_pack(&c, &v[i], v[i].idx.v[k], hashsz);
		free(v[i].objdir);
		strv_free(&v[i].loose);
		strv_free(&v[i].idx);
	}
	free(v);
	if (c.tmp && remove_tree_at(AT_FDCWD, c.tmp) < 0)
		wnote("could not remove %s: %s", c.tmp, strerror(errno));
	free(c.tmp);
	free(c.suffix);
	return c.r;
}
