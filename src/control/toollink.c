/* toollink.c - tool calls linked to the execs and connections that follow
 * them (toollink.h): the calls (open and recent) in a small table, the
 * processes linked to them in another (pid, start time, the call, whether
 * the command names them), parents walked through /proc/PID/stat, a
 * proxied connection's client socket found with sock_diag and looked for
 * among the linked processes' descriptors. */
#include "toollink.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../common/util.h"
#include "../net/sockdiag.h"
#include "../sandbox/paths.h"

#define CALLS_MAX 256      /* calls remembered: the open ones and the latest closed */
#define PROCS_MAX 4096     /* processes linked */
#define PROCS_FIRST 64     /* the table's first size, doubled up to PROCS_MAX */
#define WALK_MAX 64        /* parents walked up from an exec */
#define SCAN_FDS_MAX 4096  /* descriptors looked at per process */

struct call {
	unsigned long seq;          /* 0: free slot */
	char id[24];
	char *tool, *what, *tool_use_id;
	pid_t anchor;
	unsigned long long anchor_start;
	bool open, bash;
};

struct proc {
	pid_t pid;                  /* 0: free slot */
	unsigned long long start;
	char id[24];                /* its call's */
	int call;                   /* the call's slot ... */
	unsigned long call_seq;     /* ... while it holds that call */
	bool carrier;               /* the call's shell: the anchor's child */
	bool parent_named;          /* a process above it (up to the carrier) is named */
	bool named;                 /* parent_named, or its own program is */
	bool alerted;
	char prog[64];              /* its program's name, for the alert */
	char path[256];             /* and its file, resolved */
	unsigned long used;
};

struct toollink {
	struct audit *log;
	int diag;
	pid_t init;
	unsigned long seq, clock;
	size_t nopen;
	struct call calls[CALLS_MAX];
	/* grown as processes are linked: a session with none allocates
	 * nothing of it (the whole 1.6 MB, one mapping made and unmapped a
	 * session, cost 0.06 ms at the end) */
	struct proc *procs;
	size_t nprocs;              /* procs[0..nprocs) in use */
	size_t cap;
};

struct toollink *toollink_new(struct audit *log, int diag, pid_t init)
{
	struct toollink *t = xcalloc(1, sizeof *t);
	t->log = log;
	t->diag = diag;
	t->init = init;
	return t;
}

static void call_clear(struct call *c)
{
	free(c->tool);
	free(c->what);
	free(c->tool_use_id);
	*c = (struct call){ 0 };
}

void toollink_free(struct toollink *t)
{
	if (!t)
		return;
	/* slots are taken first to last and never freed, so those in use are
	 * the first t->seq: the rest are never touched */
	for (size_t i = 0; i < CALLS_MAX && i < t->seq; i++)
		call_clear(&t->calls[i]);
	free(t->procs);
	free(t);
}

/* ---- processes as /proc shows them --------------------------------- */

/* The parent and start time (clock ticks since boot) of pid; false when
 * it is gone. */
static bool proc_stat(pid_t pid, pid_t *ppid, unsigned long long *start)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return false;
	/* after ')': state, ppid (4th field), ..., starttime (22nd) */
	unsigned long long field[20] = { 0 };
	char *save = NULL;
	int k = 0;
	for (char *tok = strtok_r(p + 1, " ", &save); tok && k < 20; tok = strtok_r(NULL, " ", &save))
		field[k++] = strtoull(tok, NULL, 10);
	if (k < 20)
		return false;
	if (ppid)
		*ppid = (pid_t)field[1];
	if (start)
		*start = field[19];
	return true;
}

/* Its command line, the strings separated by NULs (*len bytes, at most
 * max-1), NUL-terminated; false when unreadable. */
static bool proc_cmdline(pid_t pid, char *buf, size_t max, size_t *len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, max - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	*len = (size_t)n;
	return true;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "";
}

static bool is_shell(const char *argv0)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ash", "ksh", "busybox" };
	const char *b = base_name(argv0);
	if (*b == '-')
		b++;
	for (size_t i = 0; i < ARRAY_LEN(shells); i++)
		if (strcmp(b, shells[i]) == 0)
			return true;
	return false;
}

/* Is arg a shell's command that only runs the hook (`/.warden/warden-hook`
 * or `/.warden/warden hook`, and its options, nothing else)? */
static bool hook_command(const char *arg)
{
	arg += strspn(arg, " \t");
	size_t n = strlen(SANDBOX_HOOK_EXE);
	bool client = strncmp(arg, SANDBOX_HOOK_EXE, n) == 0 && (!arg[n] || arg[n] == ' ' || arg[n] == '\t');
	return (client || strncmp(arg, SANDBOX_SELF_EXE " hook", strlen(SANDBOX_SELF_EXE " hook")) == 0) &&
	       !strpbrk(arg, ";&|<>`$()\n");
}

/* Does the command line (NUL-separated strings) of a shell only run the
 * hook? */
static bool runs_hook(const char *cmd, size_t len)
{
	if (!is_shell(cmd))
		return false;
	for (size_t off = strlen(cmd) + 1; off < len; off += strlen(cmd + off) + 1)
		if (hook_command(cmd + off))
			return true;
	return false;
}

/* The hook's own plumbing: the hook client `/.warden/warden-hook ...`, or
 * `/.warden/warden hook ...` (the file is the link's target, /.warden/bin/
 * warden or warden-hook, when init put warden's cached copy there; the
 * link itself when it copied the binary), or a shell only running it. */
static bool hook_plumbing(const char *path, const char *resolved, char *const *argv, size_t argc)
{
	bool self = (path && strcmp(path, SANDBOX_SELF_EXE) == 0) ||
		    (resolved && (strcmp(resolved, SANDBOX_SELF_EXE) == 0 ||
				  strcmp(resolved, "/.warden/bin/warden") == 0));
	if (self && argc > 1 && strcmp(argv[1], "hook") == 0)
		return true;
	if ((path && strcmp(path, SANDBOX_HOOK_EXE) == 0) ||
	    (resolved && (strcmp(resolved, SANDBOX_HOOK_EXE) == 0 ||
			  strcmp(resolved, "/.warden/bin/warden-hook") == 0)))
		return true;
	if (argc < 2 || !is_shell(argv[0]))
		return false;
	for (size_t i = 1; i < argc; i++)
		if (hook_command(argv[i]))
			return true;
	return false;
}

/* ---- the tables ------------------------------------------------------ */

static struct proc *proc_find(struct toollink *t, pid_t pid, unsigned long long start)
{
	for (size_t i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid && t->procs[i].start == start)
			return &t->procs[i];
	return NULL;
}

static void proc_remove(struct toollink *t, size_t i)
{
	t->procs[i] = t->procs[--t->nprocs];
}

/* A slot for a new process (the table kept dense and grown on demand:
 * pointers into it do not outlive a call here): a free one, else one whose
 * process is gone, else the least recently used. */
static struct proc *proc_slot(struct toollink *t)
{
	if (t->nprocs == PROCS_MAX)
		for (size_t i = 0; i < t->nprocs;) {
			unsigned long long st;
			if (!proc_stat(t->procs[i].pid, NULL, &st) || st != t->procs[i].start)
				proc_remove(t, i);
			else
				i++;
		}
	if (t->nprocs < PROCS_MAX) {
		if (t->nprocs == t->cap) {
			t->cap = t->cap ? t->cap * 2 : PROCS_FIRST;
			t->procs = xrealloc(t->procs, t->cap * sizeof *t->procs);
		}
		return &t->procs[t->nprocs++];
	}
	struct proc *lru = &t->procs[0];
	for (size_t i = 1; i < t->nprocs; i++)
		if (t->procs[i].used < lru->used)
			lru = &t->procs[i];
	return lru;
}

static struct call *call_of(struct toollink *t, const struct proc *p)
{
	struct call *c = &t->calls[p->call];
	return c->seq == p->call_seq ? c : NULL;
}

/* The open calls whose anchor is pid (started at start); the one the
 * exec's arguments name by its command, else the latest. */
static struct call *open_call_at(struct toollink *t, pid_t pid, unsigned long long start,
				 char *const *argv, size_t argc)
{
	struct call *best = NULL, *named = NULL;
	for (size_t i = 0; i < CALLS_MAX; i++) {
		struct call *c = &t->calls[i];
		if (!c->seq || !c->open || c->anchor != pid || c->anchor_start != start)
			continue;
		if (!best || c->seq > best->seq)
			best = c;
		for (size_t k = 1; c->what[0] && k < argc && !named; k++)
			if (strstr(argv[k], c->what))
				named = c;
	}
	return named ? named : best;
}

/* Is w a word of hay (not inside a longer name)? */
static bool wordch(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' || c == '+';
}

static bool word_in(const char *hay, const char *w)
{
	size_t n = strlen(w);
	if (!n)
		return false;
	for (const char *p = strstr(hay, w); p; p = strstr(p + 1, w))
		if ((p == hay || !wordch(p[-1])) && !wordch(p[n]))
			return true;
	return false;
}

static bool program_named(const struct call *c, const char *path, const char *resolved,
			  char *const *argv, size_t argc)
{
	return word_in(c->what, base_name(path)) || (argc && word_in(c->what, base_name(argv[0]))) ||
	       (resolved && word_in(c->what, base_name(resolved)));
}

static void mismatch(struct toollink *t, struct proc *p, const struct call *c, const char *path,
		     const char *did)
{
	if (p->alerted)
		return;
	p->alerted = true;
	char action[600];
	snprintf(action, sizeof action, "%s ran under tool call %s (%s: %.200s), whose command does not "
		 "name it, and %s", p->prog, c->id, c->tool, c->what, did);
	audit_emit_event(t->log, ev_alert(&(struct ev_alert){ .rule = "tool.intent-mismatch",
		.path = path, .action = action, .tool = c->id, .reported = true }), NULL);
}

/* ---- calls ------------------------------------------------------------ */

/* The agent's process that made the call: the hook's parent, past a shell
 * that only runs the hook. 0 when there is none. */
static pid_t anchor_of(struct toollink *t, pid_t hook, unsigned long long *start)
{
	pid_t p = hook;
	for (int i = 0; i < 3; i++) {
		pid_t pp;
		if (!proc_stat(p, &pp, NULL) || pp <= 1 || pp == t->init)
			return 0;
		char cmd[4096];
		size_t len;
		if (!proc_cmdline(pp, cmd, sizeof cmd, &len) || !runs_hook(cmd, len))
			return proc_stat(pp, NULL, start) ? pp : 0;
		p = pp;
	}
	return 0;
}

void toollink_open(struct toollink *t, const char *id, const char *tool, const char *what,
		   pid_t host_pid, const char *tool_use_id)
{
	unsigned long long start = 0;
	pid_t anchor = host_pid > 0 ? anchor_of(t, host_pid, &start) : 0;
	if (!anchor)
		return; /* nothing to link with */
	/* a free slot, else the oldest closed call, else the oldest */
	struct call *slot = NULL, *old_closed = NULL, *oldest = NULL;
	for (size_t i = 0; i < CALLS_MAX && !slot; i++) {
		struct call *c = &t->calls[i];
		if (!c->seq)
			slot = c;
		else if (!c->open && (!old_closed || c->seq < old_closed->seq))
			old_closed = c;
		else if (!oldest || c->seq < oldest->seq)
			oldest = c;
	}
	if (!slot)
		slot = old_closed ? old_closed : oldest;
	if (slot->seq && slot->open)
		t->nopen--;
	call_clear(slot);
	slot->seq = ++t->seq;
	snprintf(slot->id, sizeof slot->id, "%s", id);
	slot->tool = xstrdup(tool);
	slot->what = xstrdup(what);
	slot->tool_use_id = tool_use_id ? xstrdup(tool_use_id) : NULL;
	slot->anchor = anchor;
	slot->anchor_start = start;
	slot->open = true;
	slot->bash = strcmp(tool, "Bash") == 0;
	t->nopen++;
}

const char *toollink_close(struct toollink *t, pid_t host_pid, const char *tool_use_id,
			   const char *tool, const char *what)
{
	struct call *found = NULL;
	for (size_t i = 0; tool_use_id && i < CALLS_MAX && !found; i++) {
		struct call *c = &t->calls[i];
		if (c->seq && c->open && c->tool_use_id && strcmp(c->tool_use_id, tool_use_id) == 0)
			found = c;
	}
	if (!found) {
		unsigned long long start = 0;
		pid_t anchor = host_pid > 0 ? anchor_of(t, host_pid, &start) : 0;
		for (size_t i = 0; anchor && i < CALLS_MAX; i++) {
			struct call *c = &t->calls[i];
			if (c->seq && c->open && c->anchor == anchor && c->anchor_start == start &&
			    strcmp(c->tool, tool) == 0 && strcmp(c->what, what) == 0 &&
			    (!found || c->seq > found->seq))
				found = c;
		}
	}
	if (!found)
		return NULL;
	found->open = false;
	t->nopen--;
	return found->id;
}

/* ---- execs ------------------------------------------------------------ */

const char *toollink_exec(struct toollink *t, pid_t pid, pid_t ppid, const char *path,
			  const char *resolved, char *const *argv, size_t argc, const char *deny)
{
	if (!t || (!t->nopen && !t->nprocs) || pid <= 0)
		return NULL;
	if (hook_plumbing(path, resolved, argv, argc))
		return NULL;
	unsigned long long start;
	if (!proc_stat(pid, NULL, &start))
		return NULL;
	struct proc *p = proc_find(t, pid, start);
	struct call *c = NULL;
	bool parent_named = false, carrier = false;
	if (p) {
		/* a linked process execs again: judged by its new program (the
		 * call's shell replaced by another program is no longer its
		 * carrier) */
		c = call_of(t, p);
		parent_named = p->parent_named;
	} else {
		pid_t cur = ppid;
		for (int depth = 0; depth < WALK_MAX && cur > 1 && cur != t->init; depth++) {
			pid_t next;
			unsigned long long cs;
			if (!proc_stat(cur, &next, &cs))
				break;
			struct proc *above = proc_find(t, cur, cs);
			if (above) {
				above->used = ++t->clock;
				struct proc linked = { .pid = pid, .start = start, .call = above->call,
						       .call_seq = above->call_seq };
				snprintf(linked.id, sizeof linked.id, "%s", above->id);
				parent_named = above->named;
				p = proc_slot(t); /* above may move */
				*p = linked;
				c = call_of(t, p);
				break;
			}
			if (t->nopen && (c = open_call_at(t, cur, cs, argv, argc))) {
				carrier = depth == 0;
				p = proc_slot(t);
				*p = (struct proc){ .pid = pid, .start = start,
						    .call = (int)(c - t->calls), .call_seq = c->seq };
				snprintf(p->id, sizeof p->id, "%s", c->id);
				break;
			}
			cur = next;
		}
		if (!p)
			return NULL;
	}
	p->used = ++t->clock;
	p->carrier = carrier;
	p->parent_named = parent_named;
	snprintf(p->prog, sizeof p->prog, "%s", base_name(argc ? argv[0] : path));
	snprintf(p->path, sizeof p->path, "%s", resolved ? resolved : path ? path : "");
	p->named = parent_named || (c && program_named(c, path, resolved, argv, argc));
	if (deny && c && c->bash && !p->named && !p->carrier) {
		char did[300];
		snprintf(did, sizeof did, "its exec was refused (%.250s)", deny);
		mismatch(t, p, c, resolved ? resolved : path, did);
	}
	return p->id;
}

/* ---- connections ------------------------------------------------------ */

/* Does process pid hold the socket whose link reads want? -1: gone. */
static int holds(pid_t pid, const char *want)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int dfd = dirfd(d), found = 0, seen = 0;
	struct dirent *de;
	while (!found && seen < SCAN_FDS_MAX && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		seen++;
		char link[64];
		ssize_t n = readlinkat(dfd, de->d_name, link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = strcmp(link, want) == 0;
	}
	closedir(d);
	return found;
}

const char *toollink_conn(struct toollink *t, int fd)
{
	if (!t || !t->nprocs || t->diag < 0)
		return NULL;
	unsigned long ino = sockdiag_peer_inode(t->diag, fd);
	if (!ino)
		return NULL;
	char want[48];
	snprintf(want, sizeof want, "socket:[%lu]", ino);
	for (size_t i = 0; i < t->nprocs;) {
		struct proc *p = &t->procs[i];
		unsigned long long st;
		int h = proc_stat(p->pid, NULL, &st) && st == p->start ? holds(p->pid, want) : -1;
		if (h < 0) {
			proc_remove(t, i); /* gone */
			continue;
		}
		i++;
		if (!h)
			continue;
		p->used = ++t->clock;
		struct call *c = call_of(t, p);
		if (c && c->bash && !p->named && !p->carrier)
			mismatch(t, p, c, p->path, "connected through warden's proxy");
		return p->id;
	}
	return NULL;
}
