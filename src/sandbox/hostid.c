/* hostid.c - the session's own host identity when warden runs as root: a
 * uid/gid taken from a pool under a lock, and the detached, idmapped mount
 * trees through which init shows host paths to it (hostid.h). */
#include "hostid.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mountapi.h"
#include "sandbox.h"
#include "features.h"

/* ---- pure parts ------------------------------------------------------------ */

int hostid_parse_range(const char *text, uid_t *first, uid_t *last, char *why, size_t wlen)
{
	unsigned long long a, b;
	int n = 0;
	if (sscanf(text, " %llu - %llu %n", &a, &b, &n) != 2 || text[n] != '\0') {
		snprintf(why, wlen, "expected \"FIRST-LAST\" (two numbers)");
		return -1;
	}
	if (a < 65536) {
		snprintf(why, wlen, "%llu is below 65536, where the host's own users are", a);
		return -1;
	}
	if (b < a || b > 2147483646ULL) {
		snprintf(why, wlen, "the last id must lie between the first and 2147483646");
		return -1;
	}
	if (b - a >= 1u << 20) {
		snprintf(why, wlen, "more than %u ids", 1u << 20);
		return -1;
	}
	*first = (uid_t)a;
	*last = (uid_t)b;
	return 0;
}

bool hostid_in_sub_ranges(const char *text, uid_t id)
{
	for (const char *l = text; l && *l;) {
		const char *nl = strchrnul(l, '\n');
		const char *c1 = memchr(l, ':', (size_t)(nl - l));
		unsigned long long start, count;
		int n = 0;
		if (c1 && sscanf(c1 + 1, "%llu:%llu%n", &start, &count, &n) == 2 &&
		    c1 + 1 + n <= nl && id >= start && id - start < count)
			return true;
		l = *nl ? nl + 1 : nl;
	}
	return false;
}

/* a is later than b */
static bool ts_after(struct timespec a, struct timespec b)
{
	return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

bool hostid_answer_stands(struct timespec asked, struct timespec changed, struct timespec now)
{
	if (ts_after(asked, now) || !ts_after(asked, changed))
		return false;
	return now.tv_sec - asked.tv_sec < HOSTID_ASK_EVERY_S;
}

/* ---- the pool ---------------------------------------------------------------- */

/* The initial user namespace's inode number (PROC_USER_INIT_INO). */
#define INIT_USERNS_INO 0xEFFFFFFDu

bool hostid_wanted(void)
{
	struct stat st;
	return caps_admin() && stat("/proc/self/ns/user", &st) == 0 && st.st_ino == INIT_USERNS_INO;
}

int hostid_range(uid_t *first, uid_t *last, struct werr *e)
{
	*first = HOSTID_DEFAULT_FIRST;
	*last = HOSTID_DEFAULT_LAST;
	_cleanup_close_ int fd = open(HOSTID_CONFIG, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		return 0;
	char buf[128] = "";
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return werr_errno(e, "host identities: %s", HOSTID_CONFIG);
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return werr_set(e, EPERM, "host identities: %s must be a regular file owned by root "
				"and writable by root only", HOSTID_CONFIG);
	ssize_t n = read(fd, buf, sizeof buf - 1);
	if (n < 0)
		return werr_errno(e, "host identities: reading %s", HOSTID_CONFIG);
	buf[n] = '\0';
	char why[160];
	if (hostid_parse_range(buf, first, last, why, sizeof why) < 0)
		return werr_set(e, EINVAL, "host identities: %s: %s", HOSTID_CONFIG, why);
	return 0;
}

/* Does the name service know id as a user, or as a group? Through the
 * reentrant calls: the session may look it up on a thread of its own
 * while its main thread asks the name service too. An answer that does
 * not fit a buffer of 1 MiB counts as known. */
static bool name_known(uid_t id, bool group)
{
	size_t len = 4096;
	for (;;) {
		_cleanup_free_ char *buf = xmalloc(len);
		int r;
		if (group) {
			struct group g, *res = NULL;
			r = getgrgid_r((gid_t)id, &g, buf, len, &res);
			if (r == 0)
				return res != NULL;
		} else {
			struct passwd pw, *res = NULL;
			r = getpwuid_r(id, &pw, buf, len, &res);
			if (r == 0)
				return res != NULL;
		}
		if (r != ERANGE)
			return false; /* as getpwuid and getgrgid tell it: no entry */
		if (len >= 1u << 20)
			return true;
		len *= 4;
	}
}

/* Is id in a subordinate range of the host's (/etc/subuid, /etc/subgid)? */
static bool sub_taken(uid_t id, const char *subuid, const char *subgid)
{
	return (subuid && hostid_in_sub_ranges(subuid, id)) ||
	       (subgid && hostid_in_sub_ranges(subgid, id));
}

/* The name service's own files: a change to one has it asked again. */
static const char *const nss_files[] = { "/etc/passwd", "/etc/group", "/etc/nsswitch.conf" };

static void newest(struct timespec *acc, struct timespec t)
{
	if (ts_after(t, *acc))
		*acc = t;
}

/* The newest change (content or status, of the file or of a symlink in
 * its place) of nss_files, into changed; false when one could not be
 * looked at, and every id is asked then. One that does not exist has not
 * changed. */
static bool nss_changed(struct timespec *changed)
{
	*changed = (struct timespec){ 0 };
	for (size_t i = 0; i < ARRAY_LEN(nss_files); i++) {
		struct stat st;
		if (lstat(nss_files[i], &st) < 0) {
			if (errno == ENOENT)
				continue;
			return false;
		}
		newest(changed, st.st_mtim);
		newest(changed, st.st_ctim);
		if (S_ISLNK(st.st_mode)) {
			if (stat(nss_files[i], &st) < 0)
				return false;
			newest(changed, st.st_mtim);
			newest(changed, st.st_ctim);
		}
	}
	return true;
}

/* Does the answer the lock file fd keeps (its mtime: when the name service
 * last said its id was free) stand? Never without changed. */
static bool answer_stands(int fd, const struct timespec *changed)
{
	struct stat st;
	struct timespec now;
	return changed && fstat(fd, &st) == 0 && clock_gettime(CLOCK_REALTIME, &now) == 0 &&
	       hostid_answer_stands(st.st_mtim, *changed, now);
}

/* The id locked for this session: the lock fd, -1 when the id is not to
 * be had (held by a running session, or the host's), -2 with e set.
 * An existing lock file is tried before the name service (two lookups,
 * each a look through its modules' directories): with sessions running,
 * their ids are passed over without them; a free one is kept locked
 * through the lookups (dropped if the id turns out taken) instead of
 * being opened and locked a second time. Only a lock file that exists is
 * tried so (never created here), so the pool's directory still holds
 * files for the ids sessions took only; an id without one is looked up
 * first, then its file made and locked. The name service is not asked
 * while the lock file's answer stands (answer_stands, changed: the newest
 * change of its files, NULL when unknown); once asked, the time it was
 * becomes the file's mtime. */
static int try_id(int dir, uid_t id, const char *subuid, const char *subgid,
		  const struct timespec *changed, struct werr *e)
{
	char name[16];
	snprintf(name, sizeof name, "%u", (unsigned)id);
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			return -1;
		closep(&fd); /* tried again below, where its error is said */
	}
	if (sub_taken(id, subuid, subgid))
		return -1;
	if (fd >= 0 && answer_stands(fd, changed))
		return steal_fd(&fd);
	struct timespec asked;
	clock_gettime(CLOCK_REALTIME, &asked);
	if (name_known(id, false) || name_known(id, true))
		return -1;
	if (fd < 0) {
		fd = openat(dir, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return werr_errno(e, "host identities: %s/%s", HOSTID_LOCK_DIR, name), -2;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (errno != EWOULDBLOCK)
				return werr_errno(e, "host identities: locking %s/%s", HOSTID_LOCK_DIR,
						  name), -2;
			return -1;
		}
	}
	/* a failure leaves the older time: the next session asks again */
	(void)futimens(fd, (const struct timespec[2]){ { .tv_nsec = UTIME_OMIT }, asked });
	return steal_fd(&fd);
}

int hostid_acquire(struct hostid *h, struct werr *e)
{
	uid_t first, last;
	if (hostid_range(&first, &last, e) < 0)
		return -1;
	if (mkdir_p(HOSTID_LOCK_DIR, 0700, NULL) < 0)
		return werr_errno(e, "host identities: making %s", HOSTID_LOCK_DIR);
	_cleanup_close_ int dir = open(HOSTID_LOCK_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (dir < 0 || fstat(dir, &st) < 0)
		return werr_errno(e, "host identities: opening %s", HOSTID_LOCK_DIR);
	if (st.st_uid != 0 || (st.st_mode & 022))
		return werr_set(e, EPERM, "host identities: %s must be owned by root and writable "
				"by root only", HOSTID_LOCK_DIR);
	_cleanup_free_ char *subuid = read_text_file("/etc/subuid");
	_cleanup_free_ char *subgid = read_text_file("/etc/subgid");
	struct timespec changed;
	bool known = nss_changed(&changed);
	for (uid_t id = first;; id++) {
		int fd = try_id(dir, id, subuid, subgid, known ? &changed : NULL, e);
		if (fd == -2)
			return -1;
		if (fd >= 0) {
			h->active = true;
			h->uid = id;
			h->gid = (gid_t)id;
			h->lock_fd = fd;
			return 0;
		}
		if (id == last)
			break;
	}
	return werr_set(e, EAGAIN, "host identities: all of %u-%u are in use (sessions running, "
			"or given to users); widen the range in %s", (unsigned)first, (unsigned)last,
			HOSTID_CONFIG);
}

/* ---- the trees -------------------------------------------------------------- */

/* A user namespace whose maps say owner -> the session's ids: an idmapped
 * mount through it shows the owner's files as the agent's, and stores the
 * agent's new files as the owner's. */
/* The holder of an idmap namespace: it only has to exist while the maps
 * are written and the namespace opened. */
static int hold(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

static int idmap_userns(const struct hostid *h, uid_t ouid, gid_t ogid, struct werr *e)
{
	/* Born in its own user namespace, so the maps can be written at once;
	 * sharing warden's memory (CLONE_VM) on a stack of its own, it costs
	 * no copy of the address space to make or to end. */
	_Alignas(16) char stack[16384];
	pid_t pid = clone(hold, stack + sizeof stack, CLONE_VM | CLONE_NEWUSER | SIGCHLD, NULL);
	if (pid < 0)
		return werr_errno(e, "host identities: a user namespace for an idmapped mount");
	int fd = -1;
	char path[64], map[64];
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)ouid, (unsigned)h->uid);
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
	int r = write_file(path, map);
	if (r == 0) {
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)ogid, (unsigned)h->gid);
		snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
		r = write_file(path, map);
	}
	if (r == 0) {
		snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	int err = errno;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	if (fd < 0)
		return werr_set(e, err, "host identities: the idmap namespace for owner %u: %s",
				(unsigned)ouid, strerror(err));
	return fd;
}

/* One idmap namespace per owner met (a session seldom meets more than
 * two). */
struct owners {
	uid_t uid[8];
	gid_t gid[8];
	int fd[8];
	size_t n;
};

static void owners_close(struct owners *o)
{
	for (size_t i = 0; i < o->n; i++)
		close(o->fd[i]);
	o->n = 0;
}

static int owner_ns(struct owners *o, const struct hostid *h, uid_t uid, gid_t gid, struct werr *e)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->uid[i] == uid && o->gid[i] == gid)
			return o->fd[i];
	if (o->n == ARRAY_LEN(o->fd))
		return werr_set(e, E2BIG, "host identities: paths of more than %zu owners",
				ARRAY_LEN(o->fd));
	int fd = idmap_userns(h, uid, gid, e);
	if (fd < 0)
		return -1;
	o->uid[o->n] = uid;
	o->gid[o->n] = gid;
	o->fd[o->n++] = fd;
	return fd;
}

/* The kind of file system of the mount t, into buf, for the message of
 * one that takes no idmapped mount (network and FUSE file systems, ramfs). */
static const char *fs_kind(int t, char *buf, size_t len)
{
	static const struct {
		unsigned long magic;
		const char *name;
	} kinds[] = {
		{ FUSE_SUPER_MAGIC, "FUSE" }, { NFS_SUPER_MAGIC, "NFS" }, { 0xfe534d42UL, "SMB" },
		{ 0xff534d42UL, "CIFS" }, { V9FS_MAGIC, "9p" }, { CEPH_SUPER_MAGIC, "CephFS" },
		{ RAMFS_MAGIC, "ramfs" }, { TMPFS_MAGIC, "tmpfs, before Linux 6.3" },
	};
	struct statfs sf;
	if (fstatfs(t, &sf) < 0)
		return "unknown";
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if ((unsigned long)sf.f_type == kinds[i].magic)
			return kinds[i].name;
	snprintf(buf, len, "f_type 0x%lx", (unsigned long)sf.f_type);
	return buf;
}

/* A detached copy of the mount tree at path with attrs set, idmapped to
 * the path's owner when idmap; -1 with e set, or -2 (errno ENOENT) when
 * path does not exist. */
static int tree(struct owners *o, const struct hostid *h, const char *path, uint64_t attrs,
		bool idmap, struct werr *e)
{
	_cleanup_close_ int t = (int)syscall(SYS_open_tree, AT_FDCWD, path,
		W_OPEN_TREE_CLONE | O_CLOEXEC | W_AT_RECURSIVE);
	if (t < 0 && errno == ENOENT)
		return -2;
	if (t < 0 && errno == EPERM)
		return werr_errno(e, "host identities: cloning the mounts at %s (root without "
				  "CAP_SYS_ADMIN, as in a container? run warden as a user there)", path);
	if (t < 0)
		return werr_errno(e, "host identities: cloning the mounts at %s", path);
	struct w_mount_attr a = { .attr_set = attrs };
	if (idmap) {
		struct stat st;
		if (fstat(t, &st) < 0)
			return werr_errno(e, "host identities: %s", path);
		int ns = owner_ns(o, h, st.st_uid, st.st_gid, e);
		if (ns < 0)
			return -1;
		a.attr_set |= W_MOUNT_ATTR_IDMAP;
		a.userns_fd = (uint64_t)ns;
	}
	if (a.attr_set && syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH | W_AT_RECURSIVE, &a,
				  sizeof a) < 0) {
		char kind[32];
		if (idmap && errno == EINVAL)
			return werr_set(e, 0, "host identities: %s is on a file system that takes no "
					"idmapped mount (%s): as root, warden shows each path to the "
					"session's own uid through one. Run warden as a user, not root (on "
					"files of that user's), or keep it on a local file system (ext4, "
					"xfs, btrfs)", path, fs_kind(t, kind, sizeof kind));
		return werr_errno(e, "host identities: %s %s", idmap ? "idmapping the mount of" :
				  "setting the attributes of the mount of", path);
	}
	return steal_fd(&t);
}

int hostid_trees(struct hostid *h, const struct sandbox_spec *s, struct werr *e)
{
	struct owners o = { .n = 0 };
	int r = -1;
	const struct policy *p = s->policy;
	h->path_trees = xcalloc(p->npaths ? p->npaths : 1, sizeof *h->path_trees);
	h->npaths = p->npaths;
	for (size_t i = 0; i < h->npaths; i++)
		h->path_trees[i] = -1;
	h->home_trees = xcalloc(s->nhome_binds ? s->nhome_binds : 1, sizeof *h->home_trees);
	h->nhome = s->nhome_binds;
	for (size_t i = 0; i < h->nhome; i++)
		h->home_trees[i] = -1;

	uint64_t ws_attrs = (s->workspace_ro ? MOUNT_RO_ATTRS : MOUNT_RW_ATTRS) |
			    (s->exec.strict ? W_MOUNT_ATTR_NOEXEC : 0);
	if ((h->ws_tree = tree(&o, h, s->workspace, ws_attrs, true, e)) < 0) {
		if (h->ws_tree == -2)
			werr_set(e, ENOENT, "host identities: the workspace %s is gone", s->workspace);
		h->ws_tree = -1;
		goto out;
	}
	/* --review: the overlay's upper and work directories, one tree (the
	 * kernel wants both on one mount), idmapped like the workspace, so
	 * what the agent writes there is stored as the workspace owner's */
	if (s->review_upper) {
		_cleanup_free_ char *dir = xstrdup(s->review_upper);
		*strrchr(dir, '/') = '\0';
		if ((h->review_tree = tree(&o, h, dir, MOUNT_RW_ATTRS, true, e)) < 0) {
			if (h->review_tree == -2)
				werr_set(e, ENOENT, "host identities: the review directory %s is gone",
					 dir);
			h->review_tree = -1;
			goto out;
		}
	}
	for (size_t i = 0; i < h->npaths; i++) {
		const struct policy_path *pp = &p->paths[i];
		if (strcmp(pp->path, s->workspace) == 0)
			continue;
		int t = tree(&o, h, pp->source ? pp->source : pp->path, pp->mode == POLICY_RW ? MOUNT_SCRATCH_ATTRS :
			     MOUNT_RO_ATTRS, true, e);
		if (t == -1)
			goto out;
		h->path_trees[i] = t; /* -2: missing, simply not there */
	}
	for (size_t i = 0; i < h->nhome; i++) {
		int t = tree(&o, h, s->home_binds[i].src, MOUNT_SCRATCH_ATTRS, true, e);
		if (t < 0) {
			if (t == -2)
				werr_set(e, ENOENT, "host identities: agent state %s is gone",
					 s->home_binds[i].src);
			goto out;
		}
		h->home_trees[i] = t;
	}
	/* the caches idmapped too: they are the invoking user's, made under
	 * whatever umask it had, and init (the agent now) reads them as it */
	if (s->etc_cache && (h->etc_tree = tree(&o, h, s->etc_cache, 0, true, e)) == -1)
		goto out;
	if (s->self_cache && (h->self_tree = tree(&o, h, s->self_cache, 0, true, e)) == -1)
		goto out;
	if (s->ca_bundle && (h->ca_fd = open(s->ca_bundle, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		werr_errno(e, "host identities: the session's trust store %s", s->ca_bundle);
		goto out;
	}
	r = 0;
out:
	owners_close(&o);
	return r;
}

void hostid_close_trees(struct hostid *h)
{
	closep(&h->ws_tree);
	closep(&h->review_tree);
	for (size_t i = 0; h->path_trees && i < h->npaths; i++)
		closep(&h->path_trees[i]);
	for (size_t i = 0; h->home_trees && i < h->nhome; i++)
		closep(&h->home_trees[i]);
	closep(&h->etc_tree);
	closep(&h->self_tree);
	closep(&h->ca_fd);
}

void hostid_release(struct hostid *h)
{
	hostid_close_trees(h);
	free(h->path_trees);
	free(h->home_trees);
	h->path_trees = h->home_trees = NULL;
	closep(&h->lock_fd);
	h->active = false;
}

void hostid_stdio(const struct hostid *h, unsigned pty_fds)
{
	struct stat st[3];
	mode_t mode[3] = { 0 };
	for (int fd = 0; fd < 3; fd++) {
		struct statfs fs;
		int fl = fcntl(fd, F_GETFL);
		if ((pty_fds & (1u << fd)) || fl < 0 || fstat(fd, &st[fd]) < 0 ||
		    !S_ISFIFO(st[fd].st_mode) || fstatfs(fd, &fs) < 0 || fs.f_type != PIPEFS_MAGIC ||
		    st[fd].st_uid != geteuid())
			continue;
		int acc = fl & O_ACCMODE;
		mode[fd] = (acc == O_RDONLY ? S_IRUSR : acc == O_WRONLY ? S_IWUSR : S_IRUSR | S_IWUSR);
		/* one pipe on two of them (2>&1): the rights of both */
		for (int o = 0; o < fd; o++)
			if (mode[o] && st[o].st_ino == st[fd].st_ino && st[o].st_dev == st[fd].st_dev)
				mode[fd] |= mode[o], mode[o] = 0;
	}
	for (int fd = 0; fd < 3; fd++)
		if (mode[fd] && fchown(fd, h->uid, (gid_t)-1) == 0)
			(void)fchmod(fd, mode[fd]);
}

json_t *hostid_to_json(const struct hostid *h)
{
	if (!h->active)
		return NULL;
	return json_pack("{s:I,s:I}", "uid", (json_int_t)h->uid, "gid", (json_int_t)h->gid);
}
