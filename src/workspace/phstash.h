/* phstash.h - empty placeholder directories, and the socket placeholder,
 * kept between sessions.
 *
 * A protected directory name missing from the workspace (.vscode, .cursor,
 * ...) gets a placeholder for the session: an empty directory of mode 01555
 * that init binds read-only, so the agent cannot make the name. On ext4 a
 * mkdir costs about 70 µs and an rmdir about 130; a rename about 11. So the
 * placeholders wait between sessions in a directory beside the workspace
 * locks, in warden's state directory (0700, masked inside), and are renamed
 * into the workspace at start and back at the end. Moving a directory to
 * another parent takes write permission on it (its ".."): a user's wait as
 * p-INODE, mode 0700, made 01555 when taken; root's (CAP_DAC_OVERRIDE) wait
 * as r-INODE, 01555 as they are, no mode changed either way. Only when that
 * directory is on the workspace's file system; otherwise (and whenever a
 * rename fails) the caller makes and removes them as before. The socket
 * placeholders are links to one inode: the one kept there (s-socket), whose
 * allocation (the costliest call of the making) is not paid each session. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../common/util.h"

struct phstash {
	bool ok;            /* open and usable; a zeroed struct is not */
	int fd;             /* the stash directory */
	dev_t dev;          /* its file system */
	struct strv names;  /* entries not taken yet (read at the first take) */
	bool listed;
	int ws_same;        /* the workspace on its file system: 1, 0 not, -1 not known yet */
	bool root;          /* euid 0: moves a directory it may not write (CAP_DAC_OVERRIDE) */
	bool as_is_refused; /* root, yet a move of a 01555 directory was refused */
	size_t held;        /* entries there, about: bounded by PHSTASH_MAX */
};

#define PHSTASH_MAX 64
#define PLACEHOLDER_DIR_MODE 01555 /* exactly: how sessions recognise one */

/* Open (making it) DIR/placeholders; st->ok stays false when it cannot be. */
void phstash_open(struct phstash *st, const char *dir);
/* Rename a stashed directory to rel in wsfd, never over anything, and give
 * it the placeholder mode when it waited as 0700: 0, or -1 (none left,
 * another file system, rel exists: the caller makes one). */
int phstash_take(struct phstash *st, int wsfd, const char *rel);
/* Put the placeholder at rel (stat'ed as st, checked as ours by the caller)
 * back in the stash if it is empty: true when it left the workspace.
 * untouched: its ctime is the one it had once made, nothing was added
 * since: it is not read before the move (it is after, in the stash). */
bool phstash_give(struct phstash *st, int wsfd, const char *rel, const struct stat *sb,
		  bool untouched);
/* Link the socket placeholder kept in the stash (of that mode, the
 * user's; made there when there is none) to rel: 0, or -1 (another file
 * system, rel exists: the caller makes one). */
int phstash_socket(struct phstash *st, int wsfd, const char *rel, mode_t mode);
void phstash_close(struct phstash *st);
/* Sandbox init's copy: the fd closed, nothing freed (each free there
 * copies a page of the supervisor's heap). */
void phstash_forget(struct phstash *st);
