/* diff_cmd.c - `warden diff [SESSION]`: what changed in the workspace since
 * the session's checkpoint (its log's chain and the manifest's hash
 * verified first): added, removed, modified, mode, type and mtime changes,
 * and a unified diff of each text file. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../checkpoint/changes.h"
#include "../checkpoint/checkpoint.h"
#include "../checkpoint/leftover.h"
#include "../checkpoint/snapshot.h"
#include "../checkpoint/store.h"
#include "../common/shown.h"
#include "../common/sbuf.h"
#include "../common/util.h"
#include "../common/walk.h"
#include "../workspace/wsrules.h"
#include "cli.h"
#include "cmdtab.h"

#define TEXT_MAX (1u << 20)

static const char diff_usage[] =
	"usage: warden diff [SESSION] [--list]\n"
	"\n"
	"What changed in the workspace since SESSION's checkpoint (taken before it\n"
	"started): the paths added, removed, modified, with a changed mode, type or\n"
	"mtime (a file's or symlink's; not a directory's), then a unified diff of each\n"
	"text file (up to 1 MiB). SESSION is an id or a unique prefix (warden log list);\n"
	"without it, the newest session with a checkpoint in the current directory's\n"
	"workspace. --list: the paths only.\n"
	"For a session run with --review: what it would change (warden apply writes it).\n"
	"Exit status: 0 nothing changed, 1 changes, 2 bad usage, 125 an error.\n";

/* The workspace's side: at most TEXT_MAX bytes of a regular file (opened
 * without blocking or following a symlink); NULL when larger or not one. */
static char *slurp(int fd, size_t *len)
{
	struct stat s;
	if (fd < 0 || fstat(fd, &s) < 0 || !S_ISREG(s.st_mode) || s.st_size > TEXT_MAX)
		return NULL;
	return read_fd_all(fd, (size_t)s.st_size, TEXT_MAX, len);
}

/* One side of a changed file: from the store (read and checked against
 * its hash; -1 with e when it cannot be) or the workspace (rootfd). NULL
 * text: not shown (larger than 1 MiB, or the workspace's unreadable). */
static int side_text(const struct store *st, int rootfd, const struct mf_entry *en, bool stored,
		     char **text, size_t *len, struct werr *e)
{
	*text = NULL;
	*len = 0;
	if (!en) {
		*text = xstrdup("");
		return 0;
	}
	if (en->size > TEXT_MAX)
		return 0;
	if (!stored) {
		_cleanup_close_ int fd = open_beneath(rootfd, en->path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
		*text = slurp(fd, len);
		return 0;
	}
	*text = store_blob_read(st, en->hash, en->size, e);
	if (!*text)
		return -1;
	*len = (size_t)en->size;
	return 0;
}

/* A side's label as a patch reads it (piped): "PREFIX/PATH" as it is (a
 * tab after it when it holds a space), or, when the path holds a control
 * character, a byte past ASCII, a quote or a backslash, quoted as git
 * quotes it ("a/back\\slash", octal \ooo for a byte), which GNU patch and
 * git apply read back to the same bytes. */
static char *patch_label(const char *prefix, const char *path)
{
	bool plain = true;
	for (const unsigned char *p = (const unsigned char *)path; *p && plain; p++)
		plain = *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\';
	if (plain) /* a tab after a name with a space, as git ends it: patch reads to it */
		return xasprintf("%s/%s%s", prefix, path, strchr(path, ' ') ? "\t" : "");
	struct sbuf b = { 0 };
	sb_printf(&b, "\"%s/", prefix);
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		const char *esc = *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\n' ? "\\n"
				: *p == '\t' ? "\\t" : NULL;
		if (esc) {
			sb_puts(&b, esc);
		} else if (*p < 0x20 || *p >= 0x7f) {
			sb_putc(&b, '\\');
			sb_put_num(&b, false, *p, 8, 3);
		} else {
			sb_putc(&b, (char)*p);
		}
	}
	sb_putc(&b, '"');
	return sb_take(&b);
}

/* A side's label: on a terminal, the path shown (shown.h); piped, as a
 * patch reads it; /dev/null for a side that is not there. */
static char *side_label(const char *prefix, const struct mf_entry *en, bool tty)
{
	if (!en)
		return xstrdup("/dev/null");
	if (!tty)
		return patch_label(prefix, en->path);
	_cleanup_free_ char *shown = path_shown(en->path);
	return xasprintf("%s/%s", prefix, shown);
}

/* rootfd < 0: the new side is in the store too (a --review session's).
 * -1 with e when a stored side cannot be read (the diff goes on). */
static int show_text_diff(const struct store *st, int rootfd, const struct change *c,
			  struct werr *e)
{
	const struct mf_entry *a = c->a && c->a->type == MF_FILE ? c->a : NULL;
	const struct mf_entry *b = c->b && c->b->type == MF_FILE ? c->b : NULL;
	if (!a && !b)
		return 0;
	const char *path = b ? b->path : a->path;
	_cleanup_free_ char *shown = path_shown(path);
	bool tty = isatty(STDOUT_FILENO);
	_cleanup_free_ char *la = side_label("a", a, tty);
	_cleanup_free_ char *lb = side_label("b", b, tty);
	size_t na = 0, nb = 0;
	_cleanup_free_ char *ta = NULL, *tb = NULL;
	if (side_text(st, rootfd, a, true, &ta, &na, e) < 0 ||
	    side_text(st, rootfd, b, rootfd < 0, &tb, &nb, e) < 0) {
		printf("--- %s\n+++ %s\n(not shown: its stored content cannot be read)\n", la, lb);
		return werr_wrap(e, "%s", shown);
	}
	if (!ta || !tb) {
		printf("--- %s\n+++ %s\n(larger than 1 MiB or unreadable: not shown)\n", la, lb);
		return 0;
	}
	if (!text_is_diffable(ta, na) || !text_is_diffable(tb, nb)) {
		printf("Binary files %s and %s differ\n", la, lb);
		return 0;
	}
	/* what the session wrote, on a terminal: shown, not acting on it */
	text_unified_diff(stdout, tty, la, lb, ta, na, tb, nb);
	return 0;
}

/* The text diffs of the changed files, after the list; each stored
 * content that cannot be read is said on stderr, -1 at the end. */
static int show_text_diffs(const struct store *st, int wsfd, bool review, const struct changes *ch,
			   struct werr *e)
{
	mode_t restore = (mode_t)-1;
	int rootfd = review ? -1 : snapshot_open_root(wsfd, &restore, e);
	if (!review && rootfd < 0)
		return -1;
	int r = 0;
	for (size_t i = 0; i < ch->n; i++)
		if (ch->v[i].kind != CH_MODE && ch->v[i].kind != CH_MTIME &&
		    ((ch->v[i].a && ch->v[i].a->type == MF_FILE) ||
		     (ch->v[i].b && ch->v[i].b->type == MF_FILE))) {
			fputc('\n', stdout);
			struct werr e1 = { 0 };
			if (show_text_diff(st, rootfd, &ch->v[i], &e1) < 0) {
				fflush(stdout);
				werr_print(&e1);
				r = werr_set(e, 0, "diff: the checkpoint store is damaged (the paths above); "
					     "`warden undo` of this session would refuse them too");
			}
		}
	snapshot_close_root(rootfd, restore);
	return r;
}

struct diff {
	struct ckpt_dirs d;
	struct ckpt_record rec;
	struct store st;
	struct manifest m;       /* the checkpoint */
	struct snap_result now;  /* the tree now, or what a --review session left */
	int wsfd;
};

/* The placeholders of a session running in the workspace now (empty
 * directories of exactly PLACEHOLDER_DIR_MODE, sockets of exactly
 * PLACEHOLDER_SOCK_MODE, that the checkpoint does not hold): warden's,
 * gone when the last session there ends, not changes of the workspace.
 * Taken out of now. (A socket the agent made of that mode is not shown
 * either; `warden undo` removes it all the same.) */
static void drop_placeholders(struct manifest *now, const struct manifest *start, int wsfd)
{
	size_t k = 0;
	for (size_t i = 0; i < now->n; i++) {
		struct mf_entry *m = &now->v[i];
		bool dir = m->type == MF_DIR && m->mode == PLACEHOLDER_DIR_MODE;
		bool sock = m->type == MF_SOCK && m->mode == PLACEHOLDER_SOCK_MODE;
		if ((dir || sock) && !manifest_find(start, m->path) &&
		    (sock || walk_dir_empty(wsfd, m->path))) {
			free(m->path);
			free(m->target);
			continue;
		}
		now->v[k++] = *m;
	}
	now->n = k;
}

/* The two sides read: the session's checkpoint, and the workspace now (or
 * what a --review session would change). */
static int diff_load(struct diff *x, const char *arg, struct werr *e)
{
	struct ckpt_record *rec = &x->rec;
	if (ckpt_dirs_get(&x->d, e) < 0 || ckpt_find(x->d.logdir, arg, x->d.cwd, false, rec, e) < 0)
		return -1;
	if (store_open(&x->st, x->d.storedir, false, e) < 0 ||
	    store_get_manifest(&x->st, rec->start, &x->m, e) < 0)
		return -1;
	x->wsfd = open(rec->workspace, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (x->wsfd < 0)
		return werr_errno(e, "the workspace %s", rec->workspace);
	if (!rec->review) {
		struct snap_opts o = { .st = &x->st, .ws = rec->workspace, .exclude = &x->m.exclude };
		if (snapshot_take_dir(x->wsfd, &o, &x->now, e) < 0)
			return -1;
		drop_placeholders(&x->now.m, &x->m, x->wsfd);
		return 0;
	}
	/* a killed --review session: its review directory recorded now */
	if (review_recover(&x->st, x->d.logdir, rec, e) < 0)
		return -1;
	if (!rec->end[0])
		return werr_set(e, 0, "session %s (--review) recorded no changes%s%s", rec->session,
				rec->end_error ? ": " : "", rec->end_error ? rec->end_error : "");
	return store_get_manifest(&x->st, rec->end, &x->now.m, e);
}

/* 0 nothing changed, 1 changes (shown), -1 with e: a stored content
 * could not be read. */
static int diff_show(struct diff *x, bool list, struct werr *e)
{
	struct changes ch;
	changes_compute(&x->m, &x->now.m, &ch);
	_cleanup_free_ char *wshown = path_shown(x->rec.workspace);
	/* a --review session's changes: waiting, or written by an apply */
	_cleanup_free_ char *by = NULL, *applied = NULL;
	struct werr e2 = { 0 };
	if (x->rec.review && ckpt_applied_by(x->d.logdir, x->rec.session, &by, &e2) == 0 && by)
		applied = xasprintf("(--review), applied by session %s", by);
	const char *since = applied ? applied : x->rec.review ? "to apply (--review)"
			  : "since its checkpoint";
	int rc = 1;
	if (!ch.n && !ch.root_mode) {
		printf("session %s: nothing changed in %s %s\n", x->rec.session, wshown, since);
		rc = 0;
	} else {
		printf("session %s: %zu change%s in %s %s\n", x->rec.session, ch.n + ch.root_mode,
		       ch.n + ch.root_mode == 1 ? "" : "s", wshown, since);
		changes_print(stdout, &ch, &x->m, &x->now.m);
		if (!list && show_text_diffs(&x->st, x->wsfd, x->rec.review, &ch, e) < 0)
			rc = -1;
	}
	changes_free(&ch);
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	bool list = false;
	int c;
	while ((c = cli_getopt(argc, argv, "diff")) != -1) {
		if (c == 'l') {
			list = true;
		} else if (c == 'h') {
			fputs(diff_usage, stdout);
			return 0;
		} else {
			fputs(diff_usage, stderr);
			return 2;
		}
	}
	if (argc - optind > 1) {
		fputs(diff_usage, stderr);
		return 2;
	}
	const char *arg = optind < argc ? argv[optind] : NULL;
	struct werr e = { 0 };
	struct diff x = { .st = { .fd = -1 }, .wsfd = -1 };
	int rc;
	if (diff_load(&x, arg, &e) < 0) {
		werr_print(&e);
		rc = EXIT_WARDEN;
	} else {
		rc = diff_show(&x, list, &e);
		if (rc < 0) {
			fflush(stdout);
			werr_print(&e);
			rc = EXIT_WARDEN;
		}
	}
	fflush(stdout);
	closep(&x.wsfd);
	snap_result_free(&x.now);
	manifest_free(&x.m);
	store_close(&x.st);
	ckpt_record_free(&x.rec);
	ckpt_dirs_free(&x.d);
	return rc;
}
