/* decide.c - the exec rules' decision on one pending exec (execs_int.h):
 * `exec deny` by hash, the hashes deny rules need, `exec default deny`
 * (allowed by hash or by an immutable file's directory), `exec strict`,
 * noexec mounts; whether the file named can still change before the
 * kernel opens it; and which `exec ask` rule asks a human (also one that
 * could match only in what warden did not read of an argv). Reads the
 * pending exec only: the pipeline (execs.c) acts on the answer. */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "execpath.h"
#include "execs_int.h"
#include "program.h"
#include "../target.h"

static bool allowed_by_dir(const struct policy_exec *rules, const struct subject *s)
{
	if (!s->immutable || !s->resolved)
		return false;
	for (size_t i = 0; i < rules->allow_dirs.n; i++)
		if (path_is_within(s->resolved, rules->allow_dirs.v[i]))
			return true;
	return false;
}

bool execs_allowed(const struct policy_exec *rules, const struct exec_verdict_rules *lists,
		   const struct subject *s)
{
	return (s->h == H_DONE && exec_verdict_in_allow(lists, s->hex)) ||
	       (s->h == H_DONE && !s->code_err && exec_verdict_code_in_allow(lists, s->code)) ||
	       allowed_by_dir(rules, s);
}

static const char *const names[NSUBJ + 1] = { "the program",
	"the script's (or ELF's) interpreter", "the program or script it was given",
	"a script named as an interpreter" };

/* Subject i of p: its three, then the chain's scripts (NSUBJ + k). */
static const struct subject *subj(const struct pexec *p, int i)
{
	return i < NSUBJ ? &p->s[i] : &p->chain[i - NSUBJ];
}

/* `exec deny`: a subject's hash, or its code hash, is denied. */
static bool denied_hash(const struct exec_verdict_rules *lists, const struct pexec *p, char *why,
			size_t len)
{
	for (int i = 0; i < NSUBJ + p->nchain; i++) {
		const struct subject *s = subj(p, i);
		const char *name = names[i < NSUBJ ? i : NSUBJ];
		if (s->h == H_DONE && exec_verdict_in_deny(lists, s->hex)) {
			snprintf(why, len, "exec deny sha256:%s (%s)", s->hex, name);
			return true;
		}
		if (s->fd >= 0 && s->h == H_DONE && !s->code_err &&
		    exec_verdict_code_in_deny(lists, s->code)) {
			snprintf(why, len, "exec deny code:%s (%s: its loaded segments are those of a "
				 "denied program)", s->code, name);
			return true;
		}
	}
	return false;
}

/* While deny rules exist: what runs as code (code: MAIN or INTERP), and the
 * loader's program, must have been hashed. */
static bool unhashed(const struct pexec *p, int code, char *why, size_t len)
{
	int need[3] = { MAIN, code != MAIN || p->elf_interp ? INTERP : -1, p->loader ? PROG : -1 };
	for (int k = 0; k < 3; k++) {
		const struct subject *s = need[k] >= 0 ? &p->s[need[k]] : NULL;
		if (s && s->fd >= 0 && s->h != H_DONE) {
			snprintf(why, len, "%s cannot be hashed (%s), and exec deny rules need its hash",
				 names[need[k]], s->why);
			return true;
		}
		if (s && s->fd < 0 && need[k] == PROG && p->program) {
			bool vg = exec_is_valgrind(p->s[code].resolved ? p->s[code].resolved : "");
			snprintf(why, len, "the program given to the loader (%.200s) cannot be found%s, "
				 "and exec deny rules need its hash", p->program,
				 strchr(p->program, '/') ? ""
				 : vg ? " (a name without a '/', which valgrind looks for in PATH: give "
					"its path, as in `valgrind ./prog` or `valgrind /usr/bin/prog`)"
				      : " (a name without a '/': the loader looks for it in the library "
					"path)");
			return true;
		}
		if (s && s->fd < 0 && need[k] == INTERP) {
			snprintf(why, len, "the script's interpreter cannot be found, and exec deny rules "
				 "need its hash");
			return true;
		}
	}
	for (int k = 0; k < p->nchain; k++)
		if (p->chain[k].h != H_DONE) {
			snprintf(why, len, "%s (%s) cannot be hashed (%s), and exec deny rules need its "
				 "hash", names[NSUBJ], p->chain[k].resolved, p->chain[k].why);
			return true;
		}
	return false;
}

/* `exec default deny`: what runs as code, and the loader's program, must
 * be allowed. */
static bool not_allowed(const struct policy_exec *rules, const struct exec_verdict_rules *lists,
			const struct pexec *p, int code, char *why, size_t len)
{
	const struct subject *s = &p->s[code];
	if (s->fd < 0 || !execs_allowed(rules, lists, s)) {
		snprintf(why, len, "exec default deny: %s is not allowed%s%s", names[code],
			 s->h == H_DONE ? " (sha256:" : "", s->h == H_DONE ? s->hex : "");
		if (s->h == H_DONE)
			snprintf(why + strlen(why), len - strlen(why), ")");
		return true;
	}
	const struct subject *ei = &p->s[INTERP];
	if (p->elf_interp && ei->fd >= 0 && !execs_allowed(rules, lists, ei)) {
		snprintf(why, len, "exec default deny: the interpreter the program names (PT_INTERP) "
			 "is not allowed");
		return true;
	}
	if (p->loader && p->program &&
	    (p->s[PROG].fd < 0 || !execs_allowed(rules, lists, &p->s[PROG]))) {
		snprintf(why, len, "exec default deny: the program given to the loader is not allowed");
		return true;
	}
	return false;
}

/* `exec strict`: the file named (or the loader's program) is one the agent
 * can write, on a noexec mount or with no name. */
static bool not_strict(const struct pexec *p, char *why, size_t len)
{
	const struct subject *m = &p->s[MAIN];
	const struct subject *target = p->loader && p->s[PROG].fd >= 0 ? &p->s[PROG] : m;
	if (target->immutable || !(target->noexec || target->st.st_nlink == 0))
		return false;
	snprintf(why, len, "exec strict: %s is a file the agent can write (%s)",
		 target == m ? "the program" : "the program given to the loader",
		 target->noexec ? "on a noexec mount" : "with no name: a memfd or a deleted file");
	return true;
}

bool execs_decide(const struct policy_exec *rules, const struct exec_verdict_rules *lists,
		  const struct pexec *p, char *why, size_t len)
{
	why[0] = '\0';
	if (denied_hash(lists, p, why, len))
		return true;
	/* What runs as machine code: the interpreter of a script, else the
	 * file; and the loader's program. */
	int code = p->interp[0] ? INTERP : MAIN;
	if (lists->ndeny && unhashed(p, code, why, len))
		return true;
	if (rules->default_deny && not_allowed(rules, lists, p, code, why, len))
		return true;
	if (rules->strict && not_strict(p, why, len))
		return true;
	if (p->s[MAIN].noexec)
		snprintf(why, len, "on a noexec mount (the kernel refuses it)");
	return false;
}

/* Will the kernel's exec open what was checked, whatever anyone does
 * meanwhile? The file and a script's interpreter immutable, each named by
 * an absolute path through read-only directories, the path's string where
 * only the exec's own thread could change it. */
bool execs_cannot_change(struct execpath *ep, int root, pid_t init, const struct pexec *p,
			 int ppidfd)
{
	const struct subject *m = &p->s[MAIN], *in = &p->s[INTERP];
	if (p->at || p->path[0] != '/' || !m->immutable || p->nchain)
		return false;
	if (p->interp[0]) {
		char ipath[HASH_HEAD_LEN];
		exec_shebang_path(p->interp, ipath);
		if (in->fd < 0 || !in->immutable ||
		    !execpath_stable(ep, root, ipath, in->st.st_dev, in->st.st_ino, in->resolved))
			return false;
	}
	/* init's planned exec: a vfork child of init, blocked in its exec,
	 * init waiting in vfork (execs_ready's planned) */
	return execpath_stable(ep, root, p->path, m->st.st_dev, m->st.st_ino, m->resolved) &&
	       (p->planned || execpath_string_private(&(struct execpath_proc){ .pid = p->tid, .ppid = p->ppid,
			.threads = p->threads, .ppidfd = ppidfd },
			init, p->path_addr, strlen(p->path) + 1));
}

/* Could argument i of p, as read, be the start of a longer one? Only in
 * an argv cut when read: its last argument read, or one of the most bytes
 * warden reads (target.h). */
static bool maybe_cut(const struct pexec *p, size_t i)
{
	return p->truncated &&
	       (i + 1 == p->argv.n || strlen(p->argv.v[i]) >= TARGET_ARG_MAX_LEN - 1);
}

/* Does word w match argument i of p? 1 yes, 0 no, -1 perhaps: it is cut,
 * and w could match it whole (a word without '*' matches nothing longer
 * than itself). */
static int word_matches(const struct pexec *p, size_t i, const char *w)
{
	if (!maybe_cut(p, i))
		return fnmatch(w, p->argv.v[i], 0) == 0;
	return strchr(w, '*') || fnmatch(w, p->argv.v[i], 0) == 0 ? -1 : 0;
}

/* Does `exec ask argv` pattern pat (words joined by one space) match p's
 * argv? The first word against the program's name (argv[0]'s, or the
 * file's), each next one against the next argument; a last "*" matches any
 * rest, none included. 1 yes, 0 no, -1 perhaps: the argv was cut when
 * read, and the match could lie in what warden did not read (an argument's
 * end, the arguments after the last one read). */
static int argv_matches(const struct pexec *p, const char *pat)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", pat);
	size_t i = 0;
	int r = 1;
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save), i++) {
		if (i == 0) {
			const char *a0 = p->argv.n ? p->argv.v[0] : "", *b0 = strrchr(a0, '/');
			const char *res = p->s[MAIN].resolved ? p->s[MAIN].resolved : "";
			const char *br = strrchr(res, '/');
			if (fnmatch(w, br ? br + 1 : res, 0) == 0 || fnmatch(w, b0 ? b0 + 1 : a0, 0) == 0)
				continue;
			if (!p->argv.n || !maybe_cut(p, 0))
				return 0;
			r = -1; /* argv[0] cut: its name unknown */
			continue;
		}
		if (strcmp(w, "*") == 0 && !strtok_r(NULL, " ", &save))
			return r;
		if (i >= p->argv.n)
			return p->truncated ? -1 : 0; /* past the last one read */
		int m = word_matches(p, i, w);
		if (!m)
			return 0;
		r = m < 0 ? -1 : r;
	}
	return i == p->argv.n ? (p->truncated ? -1 : r) : 0;
}

bool execs_needs_ask(const struct policy_exec *rules, const struct pexec *p, char *rule,
		     size_t len)
{
	const struct strv *hashes = &rules->ask, *pats = &rules->ask_argv;
	for (int i = 0; i < NSUBJ + p->nchain; i++)
		for (size_t k = 0; subj(p, i)->h == H_DONE && k < hashes->n; k++)
			if (strcmp(hashes->v[k], subj(p, i)->hex) == 0) {
				snprintf(rule, len, "exec ask sha256:%s", subj(p, i)->hex);
				return true;
			}
	for (size_t k = 0; k < pats->n; k++) {
		int m = argv_matches(p, pats->v[k]);
		if (m)
			snprintf(rule, len, "exec ask argv %s%s", pats->v[k],
				 m < 0 ? " (perhaps: the argv is longer than warden reads, and the rule "
					 "could match what it did not read)" : "");
		if (m)
			return true;
	}
	return false;
}
