/* gitconfig.h - reading a git configuration file's text the way git's own
 * parser does, for the settings that decide where the host's git finds
 * code to run: core.hooksPath, and the files it includes (include.path,
 * includeIf.<condition>.path) that can set it; and for what the
 * sandbox's ~/.gitconfig carries (src/workspace/gitident.h): the identity
 * a commit takes (user.name, user.email), the branch a new repository
 * starts on (init.defaultBranch), the remote URLs includeIf's
 * hasconfig: condition asks about, and how commits and tags are signed
 * (gpg.format, user.signingKey, commit.gpgSign, tag.gpgSign:
 * src/workspace/gitsign.h). Text only:
 * following the includes, and what is protected for them, is
 * src/workspace/gitprotect.c; which files the host's git reads is
 * gitcfg_host_files. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "../common/util.h"

/* The most of a repository's own config the sweep's judgements read
 * (a larger one is not plain: "no regular file of at most 64 KiB"). */
#define GITCFG_REPO_MAX (64 * 1024)

enum gitcfg_kind {
	GITCFG_HOOKS_PATH,   /* core.hooksPath */
	GITCFG_INCLUDE,      /* include.path */
	GITCFG_INCLUDE_IF,   /* includeIf.<condition>.path, whatever the condition */
	GITCFG_USER_NAME,    /* user.name */
	GITCFG_USER_EMAIL,   /* user.email */
	GITCFG_REMOTE_URL,   /* remote.<name>.url */
	GITCFG_INIT_BRANCH,  /* init.defaultBranch */
	GITCFG_GPG_FORMAT,   /* gpg.format */
	GITCFG_SIGNING_KEY,  /* user.signingKey */
	GITCFG_COMMIT_SIGN,  /* commit.gpgSign */
	GITCFG_TAG_SIGN,     /* tag.gpgSign */
};

/* Called for each of those settings, in the order they come, with the
 * value as git takes it (quotes, escapes and comments done; a NUL inside
 * ends it, as in git), and for includeIf the condition as written (NULL
 * for the others). A path without "=" (no value) is a line git refuses;
 * a user.name, user.email, init.defaultBranch, remote URL, gpg.format
 * or user.signingKey without one is passed over, unreported; a
 * commit.gpgSign or tag.gpgSign without one is reported as "true" (a
 * boolean: git takes it so). */
typedef void (*gitcfg_fn)(void *ctx, enum gitcfg_kind kind, const char *cond, const char *value);

/* Scan text (len bytes, need not be NUL-terminated): 0 when git would
 * read all of it, -1 at the first line git refuses ("bad config line"),
 * after reporting the settings before it (git refuses the whole
 * configuration then, and runs nothing). */
int gitcfg_scan(const char *text, size_t len, gitcfg_fn fn, void *ctx);

/* Every setting of text, in order: fn(ctx, var, value) with var
 * "section[.subsection].key" (section and key in lower case, a
 * subsection as written), value as git takes it or NULL for a key
 * without "=" (a boolean, true). fn returns -1 to stop: the scan then
 * returns -1, as it does at a line git refuses; else 0. */
typedef int (*gitcfg_each_fn)(void *ctx, char *var, const char *value);
int gitcfg_each(const char *text, size_t len, gitcfg_each_fn fn, void *ctx);

/* The host's own git configuration files, as git finds them from warden's
 * environment, in the order it reads them: with system, $GIT_CONFIG_SYSTEM
 * or /etc/gitconfig (none with $GIT_CONFIG_NOSYSTEM); then
 * $GIT_CONFIG_GLOBAL, or $XDG_CONFIG_HOME/git/config (~/.config/git/config)
 * and then ~/.gitconfig, which git reads last: its values win. */
struct strv gitcfg_host_files(bool system);
