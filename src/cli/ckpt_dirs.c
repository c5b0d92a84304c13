/* ckpt_dirs.c - where the checkpoint commands (diff, undo, apply, discard)
 * look: the session logs, the checkpoint store and the current directory,
 * found once for all of them. */
#include <stdlib.h>
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
	if (!d->logdir || !d->storedir || !d->cwd) {
		ckpt_dirs_free(d);
		return werr_set(e, 0, "no log or store directory (HOME is not an absolute path)");
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
