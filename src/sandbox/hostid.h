/* hostid.h - as root, a host identity of the session's own: the agent's
 * uid/gid 1000 inside maps to an unused host uid/gid from a pool (never to
 * root), held for the session by a lock that the kernel releases when
 * warden ends however it ends; and the host paths the sandbox shows
 * (workspace, profile paths, agent state) handed to init as detached mount
 * trees made on the host side, idmapped so that what the agent creates there
 * belongs to each path's owner, as it does when an unprivileged user runs
 * warden.
 *
 * The pool: uids (and the same gids) FIRST..LAST from /etc/warden/host-ids
 * ("FIRST-LAST", one line), else 2080374784-2080440319 (0x7C000000 and the
 * 65,535 after it: above the ranges systemd and the usual /etc/subuid
 * allocations use). A uid that has a passwd or group entry, or lies in a
 * range of /etc/subuid or /etc/subgid, is skipped. The lock of uid N is a
 * flock on /run/warden/ids/N, held by the supervisor from before the
 * sandbox exists until it is gone; a session takes the lowest free one.
 * The name service's "no entry" for N stands for HOSTID_ASK_EVERY_S
 * seconds (the time it was asked is the lock file's mtime), unless
 * /etc/passwd, /etc/group or /etc/nsswitch.conf changed since: asking it
 * loads its modules (libnss_systemd and what it needs) and looks through
 * their directories, most of the CPU an identity costs a session.
 *
 * Unprivileged runs are unchanged: the invoking user is mapped, and the
 * kernel offers no idmapped mounts without root. */
#pragma once
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "../common/err.h"

#define HOSTID_DEFAULT_FIRST 2080374784u
#define HOSTID_DEFAULT_LAST (HOSTID_DEFAULT_FIRST + 65535u)
#define HOSTID_CONFIG "/etc/warden/host-ids"
#define HOSTID_LOCK_DIR "/run/warden/ids"
#define HOSTID_ASK_EVERY_S 300

struct sandbox_spec;

struct hostid {
	bool active;           /* root: the session has one */
	uid_t uid;             /* on the host */
	gid_t gid;
	int lock_fd;           /* the pool's lock, or -1 */
	/* detached mount trees for init (O_CLOEXEC; init inherits them across
	 * clone and moves them into place), -1 where none */
	int ws_tree;           /* the workspace, idmapped to its owner */
	int review_tree;       /* --review: the session's review directory
				* (upper/ and work/, made the workspace
				* owner's), idmapped like the workspace */
	int *path_trees;       /* per policy path */
	size_t npaths;
	int *home_trees;       /* per agent state bind */
	size_t nhome;
	int etc_tree;          /* the cached /etc (idmapped to its owner) */
	int self_tree;         /* the cached copy of warden's binary (idmapped) */
	int ca_fd;             /* the session's trust store, opened for reading */
};

#define HOSTID_NONE ((struct hostid){ .lock_fd = -1, .ws_tree = -1, .review_tree = -1, \
				      .etc_tree = -1, .self_tree = -1, .ca_fd = -1 })

/* Does this session get one? Root of the host: euid 0 in the initial user
 * namespace (root of a user namespace of its own, `unshare -U -r`, holds
 * no privilege over the host's mounts and ids: it runs as a user does). */
bool hostid_wanted(void);

/* The pool's range: from HOSTID_CONFIG when it exists (an unreadable or
 * malformed one is an error), else the default. */
int hostid_range(uid_t *first, uid_t *last, struct werr *e);

/* Take the lowest free identity of the pool (root only). */
int hostid_acquire(struct hostid *h, struct werr *e);

/* Make init's trees from the spec (supervisor side, before the clone). */
int hostid_trees(struct hostid *h, const struct sandbox_spec *s, struct werr *e);

/* The caller's pipes among warden's fds 0-2 (not those a pty takes the
 * place of, bits of pty_fds), when root made them: owned by the session's
 * identity, with the owner's rights of the ends the command holds (a read
 * end 0400, a write end 0200), so that the command can name what it holds
 * (/dev/stdout, /dev/fd/1, /proc/self/fd/0: a new open of the pipe, which
 * the kernel checks against the pipe's owner and mode) as it can when a
 * user runs warden, and no more: never the other end of a pipe it holds
 * one end of. Root itself is not held back by either. Best effort. */
void hostid_stdio(const struct hostid *h, unsigned pty_fds);

/* Close the trees (after the clone: init has its copies). */
void hostid_close_trees(struct hostid *h);

/* Close everything and give the identity back to the pool. */
void hostid_release(struct hostid *h);

/* {"uid": N, "gid": N} for session.start, or NULL when not active. */
json_t *hostid_to_json(const struct hostid *h);

/* --- pure parts, unit tested ---------------------------------------------- */

/* "FIRST-LAST" (spaces and a final newline allowed): 0 and the range, or
 * -1 with why (FIRST below 65536, LAST below FIRST or above 2^31-2, more
 * than 2^20 ids, not two numbers). */
int hostid_parse_range(const char *text, uid_t *first, uid_t *last, char *why, size_t wlen);

/* May the name service's "no entry" for an id, asked at `asked`, stand
 * at `now`: asked less than HOSTID_ASK_EVERY_S seconds before now (not
 * after it: a clock set back), and after `changed`, the newest change of
 * the name service's own files? */
bool hostid_answer_stands(struct timespec asked, struct timespec changed, struct timespec now);

/* Does id lie in a range of /etc/subuid-format text ("name:start:count"
 * lines)? */
bool hostid_in_sub_ranges(const char *text, uid_t id);
