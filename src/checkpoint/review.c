/* review.c - the changes a --review session left in its overlay's upper
 * directory, as the manifest of the tree it would have left (review.h). */
#include "review.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../audit/escape.h"
#include "../audit/events.h"
#include "../common/walk.h"
#include "reviewdrop.h"
#include "snapshot.h"

struct rctx {
	struct store *st;
	struct manifest up;          /* what the upper directory holds */
	struct strv gone;            /* whiteouts, and what a special file hides */
	struct strv opaque;          /* directories that hide the lower one */
	struct review_special *special; /* the FIFOs, sockets and devices left */
	size_t nspecial, cap;
	size_t too_deep;             /* paths longer than a manifest holds, left out */
};

static bool opaque_dir(int dirfd, const char *name)
{
	char path[80 + 4096], v[4];
	if (snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dirfd, name) >= (int)sizeof path)
		return false;
	ssize_t n = lgetxattr(path, "user.overlay.opaque", v, sizeof v);
	if (n < 0)
		n = lgetxattr(path, "trusted.overlay.opaque", v, sizeof v);
	return n == 1 && v[0] == 'y';
}

static int on_upper(void *ctx, const struct walk_entry *we, struct werr *e)
{
	struct rctx *c = ctx;
	if (strlen(we->rel) > MF_MAX_PATH) { /* as snapshot.c's walk: said after */
		c->too_deep++;
		return WALK_SKIP;
	}
	struct stat s;
	if (fstatat(we->dirfd, we->name, &s, AT_SYMLINK_NOFOLLOW) < 0)
		return werr_errno(e, "review: %s", we->rel);
	if (S_ISCHR(s.st_mode) && s.st_rdev == makedev(0, 0)) {
		strv_push(&c->gone, we->rel);
		return WALK_SKIP;
	}
	struct mf_entry en;
	_cleanup_free_ char *target = NULL;
	int r = mf_entry_from_stat(we->dirfd, we->name, we->rel, &s, "review", &en, &target, e);
	if (r == MF_STAT_RACE)
		return werr_set(e, EAGAIN, "review: the symlink %s changed while it was read", we->rel);
	if (r < 0)
		return -1;
	if (r == 0) {
		/* a socket, FIFO or device: not content, so nothing at its path
		 * in the result, as a live session's checkpoint records nothing
		 * there; what it hides of the lower layer is gone as well */
		strv_push(&c->gone, we->rel);
		if (c->nspecial == c->cap)
			c->special = xrealloc(c->special,
					      (c->cap = c->cap ? 2 * c->cap : 4) * sizeof *c->special);
		c->special[c->nspecial++] = (struct review_special){ .path = xstrdup(we->rel),
			.kind = S_ISFIFO(s.st_mode) ? "FIFO" : S_ISSOCK(s.st_mode) ? "socket" : "device" };
		return WALK_SKIP;
	}
	if (en.type == MF_DIR && opaque_dir(we->dirfd, we->name))
		strv_push(&c->opaque, we->rel);
	if (en.type == MF_FILE) {
		_cleanup_close_ int fd = openat(we->dirfd, we->name,
						 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 || sha256_fd(fd, en.hash) < 0)
			return werr_errno(e, "review: reading %s", we->rel);
		if (store_put_blob(c->st, fd, en.hash, e) < 0)
			return werr_wrap(e, "review: %s", we->rel);
	}
	manifest_add(&c->up, &en);
	return en.type == MF_DIR ? WALK_DESCEND : WALK_SKIP;
}

static int cmp_s(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sort_strv(struct strv *v)
{
	if (v->n > 1)
		qsort(v->v, v->n, sizeof *v->v, cmp_s);
}

static int cmp_special(const void *a, const void *b)
{
	return strcmp(((const struct review_special *)a)->path,
		      ((const struct review_special *)b)->path);
}

static void specials_free(struct review_special *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

/* The tree the session left: the start's entries but what the upper
 * directory removes, hides or replaces, and the upper's (all, sorted). */
static void merge(const struct manifest *start, struct rctx *c, struct manifest *all)
{
	manifest_sort(&c->up);
	sort_strv(&c->gone);
	sort_strv(&c->opaque);
	/* the paths below an upper entry that is not a directory */
	struct strv nondir = { 0 };
	for (size_t i = 0; i < c->up.n; i++)
		if (c->up.v[i].type != MF_DIR)
			strv_push(&nondir, c->up.v[i].path);
	sort_strv(&nondir);
	for (size_t i = 0; i < start->exclude.n; i++)
		strv_push(&all->exclude, start->exclude.v[i]);
	for (size_t i = 0; i < start->n; i++) {
		const struct mf_entry *en = &start->v[i];
		if (review_self_or_above(c->gone.v, c->gone.n, en->path, true) ||
		    review_self_or_above(c->opaque.v, c->opaque.n, en->path, false) ||
		    review_self_or_above(nondir.v, nondir.n, en->path, false) ||
		    manifest_find(&c->up, en->path))
			continue;
		manifest_add(all, en);
	}
	for (size_t i = 0; i < c->up.n; i++)
		manifest_add(all, &c->up.v[i]);
	manifest_sort(all);
	strv_free(&nondir);
}

/* What the sweep would not let through (reviewdrop.h), and setuid/setgid
 * bits on what was written, cleared: r->m is all without what is left
 * out, and with what the start had where a change is left out. */
static void leave_out(const struct manifest *start, struct manifest *all,
		      const struct strv *protected, struct review_result *r)
{
	review_drops_judge(start, all, protected, &r->drops);
	/* the tops left out: nothing of the session's below them; the
	 * start's, where it had something, as it was */
	struct strv tops = { 0 }, kept = { 0 };
	for (size_t i = 0; i < r->drops.n; i++) {
		const struct review_drop *d = &r->drops.v[i];
		if (d->mode_only)
			continue;
		strv_push(&tops, d->path);
		if (d->changed)
			strv_push(&kept, d->path);
		strv_push(&r->dropped, d->path);
	}
	r->m = (struct manifest){ .root_mode = all->root_mode };
	for (size_t i = 0; i < all->exclude.n; i++)
		strv_push(&r->m.exclude, all->exclude.v[i]);
	for (size_t i = 0; i < all->n; i++) {
		struct mf_entry *en = &all->v[i];
		if (review_self_or_above(tops.v, tops.n, en->path, true))
			continue;
		const struct mf_entry *was = manifest_find(start, en->path);
		if (en->type == MF_FILE && (en->mode & 06000) &&
		    (!was || !mf_same_content(was, en))) {
			en->mode &= ~(mode_t)06000;
			strv_push(&r->cleared, en->path);
		}
		manifest_add(&r->m, en);
	}
	for (size_t i = 0; kept.n && i < start->n; i++)
		if (review_self_or_above(kept.v, kept.n, start->v[i].path, true))
			manifest_add(&r->m, &start->v[i]);
	manifest_sort(&r->m);
	strv_free(&tops);
	strv_free(&kept);
}

int review_collect(struct store *st, const struct manifest *start, int upperfd,
		   const struct strv *protected, struct review_result *r, struct werr *e)
{
	*r = (struct review_result){ 0 };
	struct rctx c = { .st = st };
	struct stat rs;
	if (fstat(upperfd, &rs) < 0)
		return werr_errno(e, "review: the upper directory");
	struct walk_ops ops = { .entry = on_upper };
	int ret = walk_tree(upperfd, &ops, &c, e);
	if (ret < 0)
		goto out;
	if (c.too_deep)
		wnote("review: %zu path%s nested deeper than %d characters not recorded: `warden "
		      "apply` makes the directories above them, not them", c.too_deep,
		      c.too_deep == 1 ? "" : "s", MF_MAX_PATH);
	struct manifest all = { .root_mode = rs.st_mode & 07777 };
	merge(start, &c, &all);
	leave_out(start, &all, protected, r);
	manifest_free(&all);
	if (c.nspecial > 1)
		qsort(c.special, c.nspecial, sizeof *c.special, cmp_special);
	for (size_t i = 0; i < c.nspecial; i++)
		c.special[i].replaced = manifest_find(start, c.special[i].path) != NULL;
	r->special = steal_ptr(&c.special);
	r->nspecial = c.nspecial;
	c.nspecial = 0;
	size_t len;
	char *text = manifest_format(&r->m, &len);
	ret = store_put_manifest(st, text, len, r->hash, e);
	free(text);
out:
	manifest_free(&c.up);
	strv_free(&c.gone);
	strv_free(&c.opaque);
	specials_free(c.special, c.nspecial);
	return ret;
}

/* The checkpoint field of session.end for r (review.h), its paths kept
 * losslessly. */
static json_t *review_field(const struct review_result *r)
{
	json_t *f = json_pack("{s:s, s:b, s:I}", "manifest", r->hash, "review", true, "entries",
			      (json_int_t)r->m.n);
	json_t *esc = NULL;
	_cleanup_free_ char **special = xcalloc(r->nspecial + 1, sizeof *special);
	for (size_t i = 0; i < r->nspecial; i++)
		special[i] = r->special[i].path;
	json_set_bytes_array(f, "dropped", r->dropped.v, r->dropped.n, &esc);
	json_set_bytes_array(f, "cleared", r->cleared.v, r->cleared.n, &esc);
	json_set_bytes_array(f, "special", special, r->nspecial, &esc);
	if (esc)
		json_object_set_new(f, "escaped", esc);
	return f;
}

/* Each thing r leaves out, said on stderr and (with log) recorded as an
 * alert, as the live sweep records what it moves aside (swept.c). */
static void said_left_out(const struct review_result *r, struct audit *log)
{
	struct werr e = { 0 };
	int ret = 0;
	for (size_t i = 0; i < r->drops.n; i++) {
		const struct review_drop *d = &r->drops.v[i];
		if (d->mode_only)
			wnote("review: the mode of %s was changed in the session; `warden apply` "
			      "leaves it as it was", d->path);
		else if (d->changed)
			wnote("review: %s was changed in the session; `warden apply` leaves it as it "
			      "was at the start (%s)", d->path, d->why);
		else
			wnote("review: %s was created in the session; it is left out of what `warden "
			      "apply` writes (%s)", d->path, d->why);
		if (log && ret == 0)
			ret = audit_emit_event(log, ev_alert(&(struct ev_alert){ .rule = d->rule,
				.path = d->path, .action = "left-out", .detail = d->why }), &e);
	}
	if (log && r->drops.n && (ret < 0 || audit_sync(log, &e) < 0))
		werr_print(&e);
}

int review_record(struct store *st, const char *start_hash, const char *dir,
		  const struct strv *protected, const char *session, const char *ws,
		  struct audit *log, char out[SHA256_HEX_LEN], json_t **field, struct werr *e)
{
	_cleanup_free_ char *upper = xasprintf("%s/upper", dir);
	_cleanup_close_ int ufd = open(upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ufd < 0)
		return werr_errno(e, "review: %s", upper);
	struct manifest start;
	if (store_get_manifest(st, start_hash, &start, e) < 0)
		return -1;
	struct review_result r = { 0 };
	int ret = review_collect(st, &start, ufd, protected, &r, e);
	manifest_free(&start);
	if (ret == 0)
		ret = store_ref(st, session, "end", r.hash, ws, e);
	if (ret < 0) {
		review_result_free(&r);
		return -1;
	}
	said_left_out(&r, log);
	for (size_t i = 0; i < r.cleared.n; i++)
		wnote("review: %s got the setuid or setgid bit in the session; `warden apply` writes "
		      "it without", r.cleared.v[i]);
	for (size_t i = 0; i < r.nspecial; i++)
		wnote("review: the session left a %s at %s; `warden apply` does not write it (a FIFO, "
		      "socket or device is not content)%s", r.special[i].kind, r.special[i].path,
		      r.special[i].replaced ? ", and removes what the workspace had there, as the "
					      "session did" : "");
	if (field)
		*field = review_field(&r);
	memcpy(out, r.hash, SHA256_HEX_LEN);
	review_result_free(&r);
	closep(&ufd);
	/* recorded: the directory goes (a failure only noted: the changes
	 * are safe in the store) */
	const char *sl = strrchr(dir, '/');
	_cleanup_free_ char *pdir = sl ? xasprintf("%.*s", (int)(sl - dir), dir) : xstrdup(".");
	_cleanup_close_ int gfd = open(pdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (gfd < 0 || remove_tree_at(gfd, sl ? sl + 1 : dir) < 0)
		wnote("review: could not remove %s: %s", dir, strerror(errno));
	return 0;
}

void review_result_free(struct review_result *r)
{
	manifest_free(&r->m);
	strv_free(&r->dropped);
	review_drops_free(&r->drops);
	strv_free(&r->cleared);
	specials_free(r->special, r->nspecial);
	r->special = NULL;
	r->nspecial = 0;
}
