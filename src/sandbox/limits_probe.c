/* limits_probe.c - what the host offers for a session's limits (limits.h):
 * the parsers of /proc/self/mountinfo, /proc/self/cgroup, /proc/meminfo and
 * the cgroup files' texts (pure, unit-tested), and limits_probe, which
 * finds where warden may make the session's cgroups: v2's directory and
 * each controller's hierarchy, or why none is usable. It reads; it makes
 * nothing (limits.c does). */
#include "limits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "features.h"
#include "sandbox.h"

const char *const limits_ctl_names[CTL_COUNT] = { "pids", "memory", "cpu" };

bool limits_list_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		size_t k = strcspn(p, ",");
		if (k == n && strncmp(p, name, n) == 0)
			return true;
		p += k + (p[k] == ',');
	}
	return false;
}

/* ---- pure parts ------------------------------------------------------------ */

int limits_parse_own_cgroup(const char *text, const char *controller, char *out, size_t len)
{
	for (const char *l = text; l && *l;) {
		const char *nl = strchrnul(l, '\n');
		/* "ID:CONTROLLERS:PATH" */
		const char *c1 = memchr(l, ':', (size_t)(nl - l));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(nl - c1 - 1)) : NULL;
		if (c2) {
			bool match;
			if (!controller) {
				match = c2 == c1 + 1 && c1 - l == 1 && l[0] == '0';
			} else {
				match = false;
				size_t n = strlen(controller);
				for (const char *p = c1 + 1; p < c2;) {
					const char *end = memchr(p, ',', (size_t)(c2 - p));
					if (!end)
						end = c2;
					match = match || ((size_t)(end - p) == n && strncmp(p, controller, n) == 0);
					p = end + 1;
				}
			}
			if (match) {
				size_t n = (size_t)(nl - c2 - 1);
				if (n + 1 > len)
					return -1;
				memcpy(out, c2 + 1, n);
				out[n] = '\0';
				return 1;
			}
		}
		l = *nl ? nl + 1 : nl;
	}
	return 0;
}

int limits_parse_cgroup_mount(const char *text, const char *controller, char *point, size_t plen,
			      char *root, size_t rlen)
{
	_cleanup_free_ char *copy = xstrdup(text);
	_cleanup_free_ char *fpoint = NULL, *froot = NULL;
	char *save = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		/* ID PARENT DEV ROOT POINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		char *f[6] = { 0 }, *s2 = NULL, *tok = strtok_r(l, " ", &s2);
		size_t n = 0;
		for (; tok && n < 6; tok = strtok_r(NULL, " ", &s2))
			f[n++] = tok;
		while (tok && strcmp(tok, "-") != 0)
			tok = strtok_r(NULL, " ", &s2);
		char *fstype = tok ? strtok_r(NULL, " ", &s2) : NULL;
		char *source = fstype ? strtok_r(NULL, " ", &s2) : NULL;
		char *super = source ? strtok_r(NULL, " ", &s2) : NULL;
		if (n < 6 || !super)
			continue;
		unescape_octal(f[3]);
		unescape_octal(f[4]);
		bool match = controller ? strcmp(fstype, "cgroup") == 0 && limits_list_has(super, controller)
					: strcmp(fstype, "cgroup2") == 0;
		if (match) {
			free(fpoint);
			free(froot);
			fpoint = xstrdup(f[4]);
			froot = xstrdup(f[3]);
		} else if (fpoint && strcmp(fpoint, f[4]) == 0) {
			free(fpoint); /* hidden by a later mount */
			free(froot);
			fpoint = froot = NULL;
		}
	}
	if (plen)
		point[0] = '\0';
	if (rlen)
		root[0] = '\0';
	if (!fpoint)
		return 0;
	if (strlen(fpoint) >= plen || strlen(froot) >= rlen)
		return -1;
	strcpy(point, fpoint);
	strcpy(root, froot);
	return 1;
}

bool limits_parse_memtotal(const char *meminfo, unsigned long long *bytes)
{
	for (const char *l = meminfo; l && *l;) {
		const char *nl = strchrnul(l, '\n');
		if (strncmp(l, "MemTotal:", 9) == 0) {
			char *end;
			errno = 0;
			unsigned long long kb = strtoull(l + 9, &end, 10);
			while (*end == ' ')
				end++;
			if (errno || end == l + 9 || strncmp(end, "kB", 2) != 0 || !kb ||
			    kb > (1ULL << 53))
				return false;
			*bytes = kb * 1024;
			return true;
		}
		l = *nl ? nl + 1 : nl;
	}
	return false;
}

bool limits_parse_memory_max(const char *text, unsigned long long *bytes)
{
	char *end;
	if (*text < '0' || *text > '9')
		return false; /* "max" (v2), or not a number */
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || (*end && *end != '\n') || v >= (1ULL << 60))
		return false; /* v1's "unlimited" is a page short of 2^63 */
	*bytes = v;
	return true;
}

unsigned long long limits_share(unsigned percent, unsigned long long room)
{
	unsigned long long v = room / 1024 * percent / 100 * 1024;
	v &= ~((1ULL << 20) - 1); /* whole MiB: 11770M, not 12342083174 */
	return v < (16ULL << 20) ? 16ULL << 20 : v;
}

bool limits_parse_counter(const char *text, const char *key, unsigned long long *v)
{
	size_t n = strlen(key);
	for (const char *l = text; l && *l;) {
		const char *nl = strchrnul(l, '\n');
		if (strncmp(l, key, n) == 0 && l[n] == ' ') {
			char *end;
			errno = 0;
			unsigned long long x = strtoull(l + n + 1, &end, 10);
			if (errno == 0 && end > l + n + 1 && end == nl) {
				*v = x;
				return true;
			}
		}
		l = *nl ? nl + 1 : nl;
	}
	return false;
}

/* ---- the probe -------------------------------------------------------------- */

/* The directory of warden's own cgroup in the hierarchy mounted at point
 * with root mroot (the mount shows the part of the hierarchy below mroot):
 * into out, or why not. */
static bool own_dir(const char *point, const char *mroot, const char *own, char *out, size_t len,
		    char *why, size_t wlen)
{
	size_t n = strlen(mroot);
	if (strcmp(mroot, "/") == 0)
		n = 0;
	if (strstr(own, "/..") || (n && (strncmp(own, mroot, n) != 0 || (own[n] && own[n] != '/')))) {
		snprintf_cut(why, wlen, "warden's cgroup %s is outside what is mounted at %s", own, point);
		return false;
	}
	const char *rel = own + n;
	if ((size_t)snprintf(out, len, "%s%s", point, strcmp(rel, "/") == 0 ? "" : rel) >= len) {
		snprintf_cut(why, wlen, "the path of warden's cgroup is too long");
		return false;
	}
	return true;
}

/* May warden make cgroups in dir and move its processes there? */
static bool writable(const char *dir, bool v2, char *why, size_t wlen)
{
	char path[700];
	const char *files[] = { "", "/cgroup.procs", v2 ? "/cgroup.subtree_control" : NULL };
	for (size_t i = 0; i < ARRAY_LEN(files) && files[i]; i++) {
		snprintf(path, sizeof path, "%s%s", dir, files[i]);
		if (access(path, W_OK) < 0) {
			snprintf_cut(why, wlen, "%s is not writable (%s)", path, strerror(errno));
			return false;
		}
	}
	return true;
}

/* /proc/self/mountinfo and /proc/self/cgroup, as read (NULL: unreadable). */
struct proc_texts {
	const char *mountinfo;
	const char *cgroup;
};

/* Where the hierarchy of ctl (NULL: v2) is mounted (point, 512 bytes), the
 * root of that mount (mroot) and warden's own cgroup in it (own), from
 * /proc/self; false with why (no_mount or no_own). */
static bool own_cgroup(const struct proc_texts *t, const char *ctl, char point[512],
		       char mroot[512], char own[512], const char *no_mount, const char *no_own,
		       char *why, size_t wlen)
{
	const char *mi = t->mountinfo, *cg = t->cgroup;
	if (!mi || limits_parse_cgroup_mount(mi, ctl, point, 512, mroot, 512) <= 0) {
		snprintf_cut(why, wlen, "%s", no_mount);
		return false;
	}
	if (!cg || limits_parse_own_cgroup(cg, ctl, own, 512) <= 0) {
		snprintf_cut(why, wlen, "%s", no_own);
		return false;
	}
	return true;
}

/* The cgroup v2 directory warden makes session cgroups in (limits.h), or
 * false with why. */
static bool v2_parent(const struct proc_texts *t, bool root, char *out, size_t len, char *why,
		      size_t wlen)
{
	char point[512], mroot[512], own[512];
	if (!own_cgroup(t, NULL, point, mroot, own, "no cgroup v2 hierarchy is mounted",
			"warden's own cgroup v2 is unknown (/proc/self/cgroup)", why, wlen))
		return false;
	char dir[600];
	if (!own_dir(point, mroot, own, dir, sizeof dir, why, wlen))
		return false;
	const char *rel = dir + strlen(point); /* "" at the root of the hierarchy */
	char svc[64];
	snprintf(svc, sizeof svc, "/user@%u.service", (unsigned)getuid());
	size_t n = strlen(svc);
	const char *at = rel;
	while ((at = strstr(at, svc)) && at[n] && at[n] != '/')
		at += n;
	if (!*rel || (root && !at)) {
		snprintf(out, len, "%s", point);
	} else if (at) {
		snprintf(out, len, "%.*s", (int)(at + n - dir), dir);
	} else {
		snprintf_cut(why, wlen, "warden runs in the cgroup %s, outside the one systemd delegates to "
			 "your user (%s; run warden from it: `systemd-run --user --scope warden run ...`)",
			 own, svc + 1);
		return false;
	}
	return writable(out, true, why, wlen);
}

/* The v1 hierarchy of one controller: warden's own cgroup there, when
 * writable. */
static bool v1_parent(const struct proc_texts *t, const char *ctl, char *out, size_t len,
		      char *why, size_t wlen)
{
	char point[512], mroot[512], own[512];
	if (!own_cgroup(t, ctl, point, mroot, own, "no cgroup v1 hierarchy has it",
			"warden's own cgroup of it is unknown", why, wlen))
		return false;
	return own_dir(point, mroot, own, out, len, why, wlen) && writable(out, false, why, wlen);
}

void limits_probe(struct limits_probe *p)
{
	memset(p, 0, sizeof *p);
	p->root = caps_admin();
	/* read once for the v2 hierarchy and each v1 controller */
	_cleanup_free_ char *mi = read_text_file("/proc/self/mountinfo");
	_cleanup_free_ char *cg = read_text_file("/proc/self/cgroup");
	const struct proc_texts texts = { .mountinfo = mi, .cgroup = cg };
	char v2[512], v2why[400] = "";
	bool have_v2 = v2_parent(&texts, p->root, v2, sizeof v2, v2why, sizeof v2why);
	if (have_v2)
		snprintf(p->v2, sizeof p->v2, "%s", v2);
	_cleanup_free_ char *ctls = NULL;
	if (have_v2) {
		char path[600];
		snprintf(path, sizeof path, "%s/cgroup.controllers", v2);
		ctls = read_text_file(path);
		char *nl = ctls ? strchr(ctls, '\n') : NULL;
		if (nl)
			*nl = '\0';
	}
	for (char *t = ctls; t && *t; t++)
		if (*t == ' ')
			*t = ',';
	for (int i = 0; i < CTL_COUNT; i++) {
		struct limits_cgroup *c = &p->ctl[i];
		char v1why[300] = "";
		/* a controller is in one hierarchy: v2's when it lists it */
		if (ctls) {
			if (limits_list_has(ctls, limits_ctl_names[i])) {
				c->version = 2;
				snprintf(c->parent, sizeof c->parent, "%s", v2);
				continue;
			}
		}
		if (v1_parent(&texts, limits_ctl_names[i], c->parent, sizeof c->parent, v1why, sizeof v1why)) {
			c->version = 1;
			continue;
		}
		c->parent[0] = '\0';
		if (have_v2)
			snprintf_cut(c->why, sizeof c->why, "no usable cgroup has the %s controller (cgroup v2 "
				 "%s/cgroup.controllers: \"%s\"; cgroup v1: %s)", limits_ctl_names[i], v2,
				 ctls ? ctls : "unreadable", v1why);
		else
			snprintf_cut(c->why, sizeof c->why, "no usable cgroup has the %s controller (cgroup "
				 "v2: %s; cgroup v1: %s)", limits_ctl_names[i], v2why, v1why);
	}
}

