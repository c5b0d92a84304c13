/* diff_cmd.c - `warden diff [SESSION]`: what changed in the workspace since
 * the session's checkpoint (its log's chain and the manifest's hash
 * verified first): added, removed, modified, mode and type changes, and a
 * unified diff of each text file. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../checkpoint/changes.h"
#include "../checkpoint/checkpoint.h"
#include "../checkpoint/leftover.h"
#include "../checkpoint/snapshot.h"
#include "../checkpoint/store.h"
#include "../common/util.h"
#include "cli.h"
#include "cmdtab.h"

#define TEXT_MAX (1u << 20)

static const char diff_usage[] =
	"usage: warden diff [SESSION] [--list]\n"
	"\n"
	"What changed in the workspace since SESSION's checkpoint (taken before it\n"
	"started): the paths added, removed, modified, with a changed mode or type, then\n"
	"a unified diff of each text file (up to 1 MiB). SESSION is an id or a unique\n"
	"prefix (warden log list); without it, the newest session with a checkpoint in\n"
	"the current directory's workspace. --list: the paths only.\n"
	"For a session run with --review: what it would change (warden apply writes it).\n"
	"Exit status: 0 nothing changed, 1 changes, 125 an error.\n";

/* At most TEXT_MAX bytes of fd; NULL when larger or unreadable. */
static char *slurp(int fd, size_t *len)
{
	if (fd < 0)
		return NULL;
	char *buf = xmalloc(TEXT_MAX + 1);
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, TEXT_MAX + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || (r == 0 && false)) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > TEXT_MAX) {
			free(buf);
			return NULL;
		}
	}
	*len = n;
	return buf;
}

/* rootfd < 0: the new side is in the store too (a --review session's) */
static void show_text_diff(const struct store *st, int rootfd, const struct change *c)
{
	const struct mf_entry *a = c->a && c->a->type == MF_FILE ? c->a : NULL;
	const struct mf_entry *b = c->b && c->b->type == MF_FILE ? c->b : NULL;
	if (!a && !b)
		return;
	const char *path = b ? b->path : a->path;
	_cleanup_free_ char *shown = path_shown(path);
	size_t na = 0, nb = 0;
	_cleanup_close_ int fa = a ? store_open_blob(st, a->hash) : -1;
	_cleanup_close_ int fb = !b ? -1 : rootfd < 0 ? store_open_blob(st, b->hash) :
				 open_beneath(rootfd, path, O_RDONLY | O_NONBLOCK, 0);
	_cleanup_free_ char *ta = a ? slurp(fa, &na) : xstrdup("");
	_cleanup_free_ char *tb = b ? slurp(fb, &nb) : xstrdup("");
	_cleanup_free_ char *la = a ? xasprintf("a/%s", shown) : xstrdup("/dev/null");
	_cleanup_free_ char *lb = b ? xasprintf("b/%s", shown) : xstrdup("/dev/null");
	if (!ta || !tb) {
		printf("--- %s\n+++ %s\n(larger than 1 MiB or unreadable: not shown)\n", la, lb);
		return;
	}
	if (!text_is_diffable(ta, na) || !text_is_diffable(tb, nb)) {
		printf("Binary files %s and %s differ\n", la, lb);
		return;
	}
	text_unified_diff(stdout, la, lb, ta, na, tb, nb);
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
	const char *home = user_home();
	_cleanup_free_ char *logdir = audit_dir(home);
	_cleanup_free_ char *storedir = store_default_path(home);
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (!logdir || !storedir || !cwd) {
		werr_set(&e, 0, "no log or store directory (HOME is not an absolute path)");
		werr_print(&e);
		return EXIT_WARDEN;
	}
	struct ckpt_record rec;
	struct store st = { .fd = -1 };
	struct manifest m = { 0 };
	struct snap_result now = { 0 };
	_cleanup_close_ int wsfd = -1;
	_cleanup_free_ char *wshown = NULL;
	int rc = EXIT_WARDEN;
	if (ckpt_find(logdir, arg, cwd, false, &rec, &e) < 0)
		goto out_print;
	if (store_open(&st, storedir, false, &e) < 0 || store_get_manifest(&st, rec.start, &m, &e) < 0)
		goto out_print;
	wsfd = open(rec.workspace, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (wsfd < 0) {
		werr_errno(&e, "the workspace %s", rec.workspace);
		goto out_print;
	}
	struct snap_opts o = { .st = &st, .ws = rec.workspace, .exclude = &m.exclude };
	if (rec.review) {
		/* a killed --review session: its review directory recorded now */
		if (review_recover(&st, logdir, &rec, &e) < 0)
			goto out_print;
		if (!rec.end[0]) {
			werr_set(&e, 0, "session %s (--review) recorded no changes%s%s", rec.session,
				 rec.end_error ? ": " : "", rec.end_error ? rec.end_error : "");
			goto out_print;
		}
		if (store_get_manifest(&st, rec.end, &now.m, &e) < 0)
			goto out_print;
	} else if (snapshot_take_dir(wsfd, &o, &now, &e) < 0) {
		goto out_print;
	}
	struct changes ch;
	changes_compute(&m, &now.m, &ch);
	wshown = path_shown(rec.workspace);
	const char *since = rec.review ? "to apply (--review)" : "since its checkpoint";
	if (!ch.n && !ch.root_mode) {
		printf("session %s: nothing changed in %s %s\n", rec.session, wshown, since);
		rc = 0;
	} else {
		printf("session %s: %zu change%s in %s %s\n", rec.session, ch.n + ch.root_mode,
		       ch.n + ch.root_mode == 1 ? "" : "s", wshown, since);
		changes_print(stdout, &ch, &m, &now.m);
		if (!list) {
			mode_t restore = (mode_t)-1;
			int rootfd = rec.review ? -1 : snapshot_open_root(wsfd, &restore, &e);
			for (size_t i = 0; (rootfd >= 0 || rec.review) && i < ch.n; i++)
				if (ch.v[i].kind != CH_MODE &&
				    ((ch.v[i].a && ch.v[i].a->type == MF_FILE) ||
				     (ch.v[i].b && ch.v[i].b->type == MF_FILE))) {
					fputc('\n', stdout);
					show_text_diff(&st, rootfd, &ch.v[i]);
				}
			snapshot_close_root(rootfd, restore);
		}
		rc = 1;
	}
	changes_free(&ch);
	goto out;
out_print:
	werr_print(&e);
out:
	fflush(stdout);
	snap_result_free(&now);
	manifest_free(&m);
	store_close(&st);
	ckpt_record_free(&rec);
	return rc;
}
