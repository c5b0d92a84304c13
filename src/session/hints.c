/* hints.c - the programs warden knows it cannot serve inside, matched by
 * name on the session's exec events, and the refused writes it knows the
 * reason of (Claude Code's worktrees; a write into a tool's install tree,
 * the trees taken from session.start), matched on the file events; the
 * line said for each at the end (see hints.h). Only a hint: the walls do
 * not depend on it (the engines' sockets are not there, nested namespaces
 * are refused, no GPU device is made, .claude is read-only), and a renamed
 * copy is simply not hinted at. */
#include "hints.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "../common/glob.h"
#include "../common/shown.h"
#include "../common/util.h"

static const struct hint {
	const char *name;
	const char *line;
} table[] = {
	{ "docker", "warden offers no container engine inside (no host sockets such as "
		    "/var/run/docker.sock, no nested namespaces): run the container outside "
		    "warden; reach it from inside with --allow-net 127.0.0.1:PORT, or a server "
		    "inside from the host with --publish PORT" },
	{ "podman", NULL },
	{ "nerdctl", NULL },
	{ "buildah", NULL },
	{ "ctr", NULL },
	{ "nvidia-smi", "no GPU is inside the sandbox (warden makes no /dev/nvidia* or /dev/dri "
			"device): run GPU work outside warden" },
	{ "rocm-smi", NULL },
};

_Static_assert(ARRAY_LEN(table) <= 30, "one bit per hint, and the worktree's and git's");

#define WORKTREE_BIT (1u << 31)
#define GIT_REFS_BIT (1u << 30)
#define GIT_REFS_LINE "git could not change the repository's shared refs (.git/packed-refs, " \
	"tags, other branches): in a task only its branch (warden/NAME) and its worktree are " \
	"writable. A rebase that said \"Unable to create '.../packed-refs.lock'\" still " \
	"rebased; make tags and move other branches on the host once the task is done"
#define WORKTREE_LINE "Claude Code's worktree (.claude/worktrees) was refused: .claude is " \
	"protected in the workspace. With claude's profile .claude/worktrees is writable when " \
	".claude is there at start (mkdir .claude on the host); or run `warden run --task NAME " \
	"-- claude` for a worktree of its own"

/* A refused write at WS/.claude/worktrees or below it (Claude Code's
 * --worktree, its EnterWorktree tool). */
static bool worktree_refused(const json_t *f)
{
	const char *d = json_string_value(json_object_get(f, "decision"));
	const char *path = json_string_value(json_object_get(f, "path"));
	static const char dir[] = "/.claude/worktrees";
	const char *at = path ? strstr(path, dir) : NULL;
	return d && strcmp(d, "deny") == 0 && at &&
	       (at[sizeof dir - 1] == '\0' || at[sizeof dir - 1] == '/');
}

#define SSH_NO_AGENT_LINE "ssh ran inside without your keys: warden passes your SSH " \
	"agent's keys in only with --ssh-agent (or `ssh-agent on` in a profile); the key " \
	"files of ~/.ssh never are"
#define SSH_NO_HOST_AGENT_LINE "ssh ran inside without your keys: the key files of " \
	"~/.ssh never go in, and warden passes an SSH agent's keys with --ssh-agent, but no " \
	"agent runs here (SSH_AUTH_SOCK is not set): start one and give it your key " \
	"(eval \"$(ssh-agent)\"; ssh-add), then run with --ssh-agent"
#define SSH_DECOY_LINE "ssh opened a decoy key in the sandbox's ~/.ssh: those keys are " \
	"warden's tripwires, and opening one is taken for theft. ssh reads them when told to " \
	"leave warden's configuration aside (-F FILE, -i KEY, IdentityFile): with " \
	"--ssh-agent, run ssh without those, and your agent's keys are offered instead"

#define NPMRC_LINE "the workspace's .npmrc is masked (it may hold tokens), so npm inside " \
	"did not see its registry and used the public one: with the token in a variable " \
	"(//HOST/:_authToken=${NPM_TOKEN}, and --secret NPM_TOKEN@HOST), `unmask .npmrc` in a " \
	"profile lets npm read it"

/* ws/.npmrc, masked by one of the patterns, names a registry
 * (`registry=`, `@scope:registry=`). */
static bool npmrc_registry(const char *ws, const struct strv *mask)
{
	bool masked = false;
	for (size_t i = 0; mask && i < mask->n && !masked; i++)
		masked = glob_match(mask->v[i], ".npmrc");
	if (!masked || !ws)
		return false;
	_cleanup_free_ char *path = xasprintf("%s/.npmrc", ws);
	size_t len = 0;
	/* the workspace's: never through a symlink (only a yes or no is taken) */
	_cleanup_free_ char *text = read_regular_at(AT_FDCWD, path, O_NOFOLLOW, 1u << 16, &len, NULL);
	for (const char *l = text; l && *l;) {
		l += strspn(l, " \t");
		const char *reg = strstr(l, "registry");
		const char *nl = strchr(l, '\n');
		if (reg && (!nl || reg < nl) && (reg == l || (*l == '@' && reg[-1] == ':')) &&
		    reg[strspn(reg + 8, " \t") + 8] == '=')
			return true;
		l = nl ? nl + 1 : NULL;
	}
	return false;
}

/* An alert's canary.opened of a key in the sandbox's ~/.ssh. */
static bool ssh_decoy(const json_t *f)
{
	const char *rule = json_string_value(json_object_get(f, "rule"));
	const char *path = json_string_value(json_object_get(f, "path"));
	return rule && path && strcmp(rule, "canary.opened") == 0 && strstr(path, "/.ssh/");
}

/* A refused write into a git directory's shared refs: the packed refs'
 * lock, or a ref under refs/ (a task's common directory is read-only but
 * for its branch). */
static bool git_refs_refused(const json_t *f)
{
	const char *d = json_string_value(json_object_get(f, "decision"));
	const char *path = json_string_value(json_object_get(f, "path"));
	const char *git = path ? strstr(path, "/.git/") : NULL;
	return d && strcmp(d, "deny") == 0 && git &&
	       (strcmp(git + 6, "packed-refs.lock") == 0 || strncmp(git + 6, "refs/", 5) == 0);
}

#define TREES_MAX 32 /* a bit each in trees_written */

#define TREE_LINE "a write into %s was refused: it is exposed read-only, as the %s"
#define TREES_LINE "a program changed in a tool's install tree would run on the host, " \
	"outside warden: install into the workspace instead (npm install and npx, python3 -m " \
	"venv .venv, pip install --target DIR, cargo install --root DIR), or on the host"

/* session.start's exposed trees, kept with why. */
static void trees_of(struct hints *h, const json_t *start)
{
	const json_t *ex = json_object_get(start, "exposed"), *t;
	size_t i;
	json_array_foreach(ex, i, t) {
		const char *path = json_string_value(json_object_get(t, "path"));
		const char *why = json_string_value(json_object_get(t, "why"));
		if (path && why && h->trees.n < TREES_MAX) {
			strv_push(&h->trees, path);
			strv_push(&h->trees_why, why);
		}
	}
}

/* A write the walls refused for a read-only mount into one of the trees. */
static void tree_written(struct hints *h, const json_t *f)
{
	const char *d = json_string_value(json_object_get(f, "decision"));
	const char *why = json_string_value(json_object_get(f, "reason"));
	const char *path = json_string_value(json_object_get(f, "path"));
	if (!d || strcmp(d, "deny") != 0 || !why || strncmp(why, "read-only mount", 15) != 0 ||
	    !path)
		return;
	for (size_t i = 0; i < h->trees.n; i++)
		if (path_is_within(path, h->trees.v[i]))
			h->trees_written |= 1u << i;
}

/* The line for entry i: its own, or the one before it that has one. */
static const char *line_of(size_t i)
{
	while (!table[i].line)
		i--;
	return table[i].line;
}

static int on_event(void *ctx, const struct event *ev, struct werr *e)
{
	(void)e;
	struct hints *h = ctx;
	if (ev->fields && strcmp(ev->kind, "file") == 0 && worktree_refused(ev->fields))
		h->seen |= WORKTREE_BIT;
	if (ev->fields && strcmp(ev->kind, "file") == 0 && git_refs_refused(ev->fields))
		h->seen |= GIT_REFS_BIT;
	if (ev->fields && strcmp(ev->kind, "file") == 0)
		tree_written(h, ev->fields);
	if (ev->fields && strcmp(ev->kind, "session.start") == 0)
		trees_of(h, ev->fields);
	if (ev->fields && strcmp(ev->kind, "alert") == 0 && ssh_decoy(ev->fields))
		h->ssh_decoy = true;
	if (strcmp(ev->kind, "exec") != 0 || !ev->fields)
		return 0;
	const char *path = json_string_value(json_object_get(ev->fields, "path"));
	if (!path)
		return 0;
	const char *base = path_base(path);
	if (strcmp(base, "ssh") == 0)
		h->ssh_ran = true;
	if (!strcmp(base, "npm") || !strcmp(base, "npx") || !strcmp(base, "pnpm") ||
	    !strcmp(base, "yarn"))
		h->npm_ran = true;
	for (size_t i = 0; i < ARRAY_LEN(table); i++)
		if (strcmp(base, table[i].name) == 0)
			h->seen |= 1u << i;
	return 0;
}

void hints_attach(struct hints *h, struct audit *a, bool ssh_agent, const char *ws,
		  const struct strv *mask)
{
	h->ssh_agent = ssh_agent;
	h->npmrc_masked = npmrc_registry(ws, mask);
	const char *sock = getenv("SSH_AUTH_SOCK");
	h->host_agent = sock && *sock;
	audit_subscribe(a, on_event, h);
}

void hints_print(const struct hints *h, FILE *f)
{
	for (size_t i = 0; i < ARRAY_LEN(table); i++)
		if (h->seen & (1u << i))
			fprintf(f, "warden: %s ran inside: %s\n", table[i].name, line_of(i));
	if (h->seen & WORKTREE_BIT)
		fprintf(f, "warden: %s\n", WORKTREE_LINE);
	if (h->seen & GIT_REFS_BIT)
		fprintf(f, "warden: %s\n", GIT_REFS_LINE);
	if (h->ssh_ran && h->ssh_decoy)
		fprintf(f, "warden: %s\n", SSH_DECOY_LINE);
	else if (h->ssh_ran && !h->ssh_agent)
		fprintf(f, "warden: %s\n", h->host_agent ? SSH_NO_AGENT_LINE : SSH_NO_HOST_AGENT_LINE);
	if (h->npm_ran && h->npmrc_masked)
		fprintf(f, "warden: %s\n", NPMRC_LINE);
	for (size_t i = 0; i < h->trees.n; i++)
		if (h->trees_written & (1u << i)) {
			/* host paths, and a version named in the workspace: shown */
			_cleanup_free_ char *path = text_shown(h->trees.v[i]);
			_cleanup_free_ char *why = text_shown(h->trees_why.v[i]);
			fprintf(f, "warden: " TREE_LINE "\n", path, why);
		}
	if (h->trees_written)
		fprintf(f, "warden: %s\n", TREES_LINE);
}

void hints_free(struct hints *h)
{
	strv_free(&h->trees);
	strv_free(&h->trees_why);
}
