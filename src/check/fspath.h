/* fspath.h - a host path as the mount table spells it: the device of its
 * file system and the path within that file system ("MAJ:MIN:/within"),
 * which is what the ROOT field of /proc/self/mountinfo names, with the
 * path's real spelling on the host. A home on a
 * file system of its own (/home a partition) shows in ROOT as "/user",
 * never as "/home/user", so `warden check`'s mount table probe looks for
 * both spellings: the check works this one out on the host, where the
 * mount that holds the path is visible, and hands it to the runner. */
#pragma once
#include <limits.h>
#include <stdbool.h>

struct fspath {
	unsigned maj, min;
	char within[PATH_MAX]; /* absolute: "/" when path is its file system's root */
	char real[PATH_MAX];   /* the path itself, its symbolic links resolved: where a
				* mount of within shows when at its own place */
};

/* The device, root and mount point of one line of /proc/self/mountinfo,
 * root and point decoded; false when the line is not one. */
bool fspath_mount_line(const char *line, unsigned *maj, unsigned *min, char root[PATH_MAX],
		       char point[PATH_MAX]);

/* Where path (absolute; what of it does not exist yet lies where its
 * nearest existing ancestor does) lies on this host's mounts, from
 * /proc/self/mountinfo: false when that cannot be told. */
bool fspath_of(const char *path, struct fspath *out);

/* "MAJ:MIN:LEN:WITHINREAL" (LEN the length of within), malloc'ed. */
char *fspath_format(const struct fspath *f);

/* The text of fspath_format back; false when it is not that. */
bool fspath_parse(const char *s, struct fspath *out);

/* What of a mount's ROOT field lies below f.within on f's device: the
 * rest ("" or "/..."), or NULL when root is elsewhere. */
const char *fspath_below(const struct fspath *f, unsigned maj, unsigned min, const char *root);
