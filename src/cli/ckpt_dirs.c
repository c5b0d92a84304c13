/* ckpt_dirs.c - where the checkpoint commands (diff, undo, apply, discard)
 * look: the session logs, the checkpoint store and the current directory,
 * found once for all of them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../audit/audit.h"
#include "../checkpoint/store.h"
#include "../common/err.h"
#include "../common/util.h"
#include "cli.h"

int ckpt_dirs_get(struct ckpt_dirs *d, struct werr *e)
{
	const char *home = user_home();
	d->logdir = audit_dir(home);
	d->storedir = store_default_path(home);
	d->cwd = getcwd(NULL, 0);
	int cwd_err = d->cwd ? 0 : errno;
	if (!d->logdir || !d->storedir) {
		ckpt_dirs_free(d);
		return werr_set(e, 0, "no log or store directory (HOME is not an absolute path)");
	}
	if (!d->cwd) {
		ckpt_dirs_free(d);
		if (cwd_err == ENOENT)
			return werr_set(e, 0, "the current directory was removed after the shell "
					"entered it (cd into the workspace again)");
		return werr_set(e, cwd_err, "the current directory: %s", strerror(cwd_err));
	}
	return 0;
}

void ckpt_dirs_free(struct ckpt_dirs *d)
{
	free(d->logdir);
	free(d->storedir);
	free(d->cwd);
	*d = (struct ckpt_dirs){ 0 };
}
