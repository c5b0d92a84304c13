/* gitsafe.c - the git settings that run nothing on the host (gitsafe.h),
 * and their plain values: an identity without control characters, an
 * upstream toward "." or a remote the configuration names (never a URL,
 * never an option), a merge of a refs/ name, a rebase of true, false or
 * merges, a description of text. */
#include "gitsafe.h"

#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "gitconfig.h"

#define SETTINGS_MAX 20000 /* settings of one file */

enum kind { UNSAFE, USER, BRANCH_REMOTE, BRANCH_MERGE, BRANCH_REBASE, BRANCH_DESCRIPTION };

static enum kind kind_of(const char *var)
{
	if (strcmp(var, "user.name") == 0 || strcmp(var, "user.email") == 0)
		return USER;
	const char *key = strrchr(var, '.');
	if (strncmp(var, "branch.", 7) != 0 || key == var + 6) /* [branch] itself: autoSetupMerge */
		return UNSAFE;
	key++;
	if (strcmp(key, "remote") == 0 || strcmp(key, "pushremote") == 0)
		return BRANCH_REMOTE;
	if (strcmp(key, "merge") == 0)
		return BRANCH_MERGE;
	if (strcmp(key, "rebase") == 0)
		return BRANCH_REBASE;
	return strcmp(key, "description") == 0 ? BRANCH_DESCRIPTION : UNSAFE;
}

bool gitsafe_var(const char *var)
{
	return kind_of(var) != UNSAFE;
}

bool gitsafe_plain(const char *v, bool lines)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if ((*p < 0x20 && !(lines && (*p == '\n' || *p == '\t'))) || *p == 0x7f)
			return false;
	return true;
}

/* "." (this repository), or a remote's name that all gives a URL. */
static bool names_remote(const struct gitsafe_list *all, const char *name)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
	if (strcmp(name, ".") == 0)
		return true;
	if (!*name || name[0] == '-' || name[strspn(name, ok)])
		return false;
	_cleanup_free_ char *url = xasprintf("remote.%s.url", name);
	for (size_t i = 0; i < all->n; i++)
		if (strcmp(all->v[i].var, url) == 0 && all->v[i].val)
			return true;
	return false;
}

bool gitsafe_value(const char *var, const char *val, const struct gitsafe_list *all)
{
	if (!val)
		return false;
	switch (kind_of(var)) {
	case USER:
		return strlen(val) <= 256 && gitsafe_plain(val, false);
	case BRANCH_REMOTE:
		return names_remote(all, val);
	case BRANCH_MERGE:
		return strncmp(val, "refs/", 5) == 0 && gitsafe_plain(val, false);
	case BRANCH_REBASE:
		return strcmp(val, "true") == 0 || strcmp(val, "false") == 0 ||
		       strcmp(val, "merges") == 0;
	case BRANCH_DESCRIPTION:
		return gitsafe_plain(val, true);
	default:
		return false;
	}
}

static int collect(void *ctx, char *var, const char *value)
{
	struct gitsafe_list *l = ctx;
	if (l->n >= SETTINGS_MAX)
		return -1;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 32;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = (struct gitsafe_setting){ xstrdup(var), value ? xstrdup(value) : NULL };
	return 0;
}

int gitsafe_read(const char *text, size_t len, struct gitsafe_list *l)
{
	if (memchr(text, '\0', len))
		return -1;
	return gitcfg_each(text, len, collect, l);
}

void gitsafe_free(struct gitsafe_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].var);
		free(l->v[i].val);
	}
	free(l->v);
	*l = (struct gitsafe_list){ 0 };
}
