/* cfgwrite.c - git's rewrite of a protected repository config, judged
 * and made by the supervisor (cfgwrite.h). The settings git may change
 * for the sandbox are the ones the host's git neither runs nor sends
 * anywhere new: the identity, and a branch's upstream only toward a remote
 * the host's configuration already names. Every other setting must come
 * back as it was, in the same order, with the same value. */
#include "cfgwrite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/util.h"
#include "../workspace/gitsafe.h"
#include "../workspace/workspace.h"
#include "target.h"

#define CONFIG_MAX (1 << 20) /* bytes of a config or its lock */

static bool same(const struct gitsafe_setting *a, const struct gitsafe_setting *b)
{
	return strcmp(a->var, b->var) == 0 &&
	       (a->val && b->val ? strcmp(a->val, b->val) == 0 : a->val == b->val);
}

static bool has(const struct gitsafe_list *s, const struct gitsafe_setting *x)
{
	for (size_t i = 0; i < s->n; i++)
		if (same(&s->v[i], x))
			return true;
	return false;
}

/* The next setting from *i on that is not one git may change, or NULL. */
static const struct gitsafe_setting *next_unsafe(const struct gitsafe_list *s, size_t *i)
{
	for (; *i < s->n; (*i)++)
		if (!gitsafe_var(s->v[*i].var))
			return &s->v[(*i)++];
	return NULL;
}

/* Append "sep item" to the list in what, cut with "..." at its end. */
static void add_change(char what[CFGWRITE_WHAT_MAX], const char *sign, const struct gitsafe_setting *x)
{
	size_t l = strlen(what);
	if (l + 4 >= CFGWRITE_WHAT_MAX)
		return;
	int k = snprintf(what + l, CFGWRITE_WHAT_MAX - l, "%s%s%s%s%.80s", l ? ", " : "", sign,
			 x->var, x->val && !*sign ? "=" : "", x->val && !*sign ? x->val : "");
	if (k < 0 || (size_t)k >= CFGWRITE_WHAT_MAX - l)
		memcpy(what + CFGWRITE_WHAT_MAX - 4, "...", 4);
}

/* Does new change only what git may change for the sandbox? what: the
 * changes, or why not. */
static bool judge(const struct gitsafe_list *old, const struct gitsafe_list *new,
		  char what[CFGWRITE_WHAT_MAX])
{
	size_t i = 0, j = 0;
	for (;;) {
		const struct gitsafe_setting *a = next_unsafe(old, &i), *b = next_unsafe(new, &j);
		if (!a && !b)
			break;
		if (!a || !b || !same(a, b)) {
			snprintf(what, CFGWRITE_WHAT_MAX,
				 "%s %s: warden writes only user.name, user.email and branch.<name>."
				 "remote, pushRemote, merge, rebase, description",
				 (b ? b : a)->var, b ? "set" : "removed");
			return false;
		}
	}
	what[0] = '\0';
	for (j = 0; j < new->n; j++) {
		const struct gitsafe_setting *b = &new->v[j];
		if (!gitsafe_var(b->var) || has(old, b))
			continue;
		if (!gitsafe_value(b->var, b->val, new)) {
			snprintf(what, CFGWRITE_WHAT_MAX, "%s = \"%.80s\" is not a value warden writes",
				 b->var, b->val ? b->val : "(none)");
			return false;
		}
		add_change(what, "", b);
	}
	for (i = 0; i < old->n; i++)
		if (gitsafe_var(old->v[i].var) && !has(new, &old->v[i]))
			add_change(what, "-", &old->v[i]);
	if (!what[0])
		snprintf(what, CFGWRITE_WHAT_MAX, "unchanged");
	return true;
}

bool cfgwrite_judge(const char *old, size_t olen, const char *new, size_t nlen,
		    char what[CFGWRITE_WHAT_MAX])
{
	struct gitsafe_list o = { 0 }, n = { 0 };
	bool readable = gitsafe_read(old, olen, &o) == 0 && gitsafe_read(new, nlen, &n) == 0;
	bool ok = readable && judge(&o, &n, what);
	gitsafe_free(&o);
	gitsafe_free(&n);
	if (!readable)
		snprintf(what, CFGWRITE_WHAT_MAX,
			 "config.lock, or the config, is not git configuration warden reads");
	return ok;
}

static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* data written over fd's whole content, in place: its space taken first,
 * so that a full disk leaves the file as it was. */
static int write_in_place(int fd, const char *data, size_t len)
{
	if (len && fallocate(fd, 0, 0, (off_t)len) < 0 && errno != EOPNOTSUPP)
		return -1;
	for (size_t done = 0; done < len;) {
		ssize_t k = pwrite(fd, data + done, len - done, (off_t)done);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		done += (size_t)k;
	}
	return ftruncate(fd, (off_t)len);
}

/* The host's gitdir (dir, its workspace-relative path) and config, when
 * they are the ones the sandbox names by the lexical dir_in: a repository's
 * (HEAD beside config), config protected. -1: not such. */
static int open_pair(const struct ws_plan *plan, pid_t pid, const char *dir_in, const char *dir,
		     int *host_dir, int *host_cfg)
{
	_cleanup_free_ char *rel = *dir ? xasprintf("%s/config", dir) : xstrdup("config");
	struct stat in_st, host_st, head, in_cfg, host_cfg_st;
	if (!workspace_planned_as(plan, rel, WS_PROTECT))
		return -1;
	_cleanup_close_ int d = *dir ? open_beneath(plan->ws_fd, dir, O_PATH | O_DIRECTORY, 0)
				     : fcntl(plan->ws_fd, F_DUPFD_CLOEXEC, 0);
	_cleanup_close_ int in = target_open(pid, AT_FDCWD, false, dir_in, 0,
					     O_PATH | O_DIRECTORY | O_CLOEXEC, "/", NULL, 0);
	if (d < 0 || in < 0 || fstat(d, &host_st) < 0 || fstat(in, &in_st) < 0 ||
	    !same_inode(&host_st, &in_st) || fstatat(d, "HEAD", &head, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(head.st_mode) || fstatat(in, "config", &in_cfg, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	_cleanup_close_ int c = openat(d, "config", O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (c < 0 || fstat(c, &host_cfg_st) < 0 || !S_ISREG(host_cfg_st.st_mode) ||
	    !same_inode(&host_cfg_st, &in_cfg))
		return -1;
	*host_dir = d, d = -1;
	*host_cfg = c, c = -1;
	return 0;
}

/* The lock's text judged against the host's config and written over it;
 * the lock removed. */
static enum cfgwrite_result write_config(int dir, int cfg, char what[CFGWRITE_WHAT_MAX])
{
	struct stat lock_st, cfg_st, again;
	size_t nlen, olen;
	_cleanup_free_ char *lock = read_regular_at(dir, "config.lock", O_NOFOLLOW, CONFIG_MAX, &nlen,
						    &lock_st);
	/* a second link would be another file's content, one the sandbox
	 * need not be able to read */
	if (!lock || lock_st.st_nlink != 1) {
		snprintf(what, CFGWRITE_WHAT_MAX,
			 "config.lock is not a regular file of one link and at most 1 MiB");
		return CFGWRITE_REFUSED;
	}
	_cleanup_free_ char *text = fstat(cfg, &cfg_st) == 0 && cfg_st.st_size <= CONFIG_MAX
					    ? read_fd_all(cfg, (size_t)cfg_st.st_size, CONFIG_MAX, &olen)
					    : NULL;
	if (!text) {
		snprintf(what, CFGWRITE_WHAT_MAX, "the config on the host cannot be read");
		return CFGWRITE_REFUSED;
	}
	if (!cfgwrite_judge(text, olen, lock, nlen, what))
		return CFGWRITE_REFUSED;
	if ((olen != nlen || memcmp(text, lock, nlen) != 0) && write_in_place(cfg, lock, nlen) < 0) {
		snprintf(what, CFGWRITE_WHAT_MAX, "the config on the host cannot be written: %s",
			 strerror(errno));
		return CFGWRITE_REFUSED;
	}
	if (fstatat(dir, "config.lock", &again, AT_SYMLINK_NOFOLLOW) == 0 && same_inode(&again, &lock_st))
		unlinkat(dir, "config.lock", 0);
	return CFGWRITE_WRITTEN;
}

enum cfgwrite_result cfgwrite_rename(const struct ws_plan *plan, const char *ws, pid_t pid,
				     const char *src, const char *dst, unsigned long long flags,
				     char what[CFGWRITE_WHAT_MAX])
{
	what[0] = '\0';
	size_t sl = strlen(src), dl = strlen(dst);
	if (!plan || plan->ws_fd < 0 || !ws || flags || sl < 12 || dl < 7 ||
	    strcmp(src + sl - 12, "/config.lock") != 0 || strcmp(dst + dl - 7, "/config") != 0)
		return CFGWRITE_NOT_CONFIG; /* every other rename: only this, as text */
	_cleanup_free_ char *s = target_lexical_path(pid, src), *d = target_lexical_path(pid, dst);
	char *ds = d ? strrchr(d, '/') : NULL, *ss = s ? strrchr(s, '/') : NULL;
	if (!ds || !ss || strcmp(ds, "/config") != 0 || strcmp(ss, "/config.lock") != 0 ||
	    ds - d != ss - s || strncmp(s, d, (size_t)(ds - d)) != 0)
		return CFGWRITE_NOT_CONFIG;
	*ds = '\0'; /* d: the gitdir, inside */
	if (!path_is_within(d, ws) || strcmp(ws, "/") == 0)
		return CFGWRITE_NOT_CONFIG;
	const char *dir = d + strlen(ws) + (d[strlen(ws)] == '/');
	_cleanup_close_ int hdir = -1, hcfg = -1;
	if (open_pair(plan, pid, *d ? d : "/", dir, &hdir, &hcfg) < 0)
		return CFGWRITE_NOT_CONFIG;
	return write_config(hdir, hcfg, what);
}
