/* execs.c - the exec pipeline of the supervisor (execs.h).
 *
 * An exec notification becomes a pending exec with up to three subjects,
 * each a file opened O_PATH as the process would resolve it (no open ever
 * blocks or acts: a FIFO, a device): the file named (MAIN), a script's
 * interpreter (INTERP, from its #! line; when that is a script too, the
 * kernel runs its interpreter in turn: the scripts between become the
 * chain, INTERP the last), and the program that really runs when the file
 * named is the dynamic loader (or valgrind) or a common interpreter given a
 * script by name (PROG: `ld.so ./x`, `python3 x.py`). Each subject's
 * SHA-256 comes from the cache when the agent cannot change the file
 * (immutable: on a read-only mount, and not a hard link of a file a
 * writable mount reaches: immutable.h, linkwalk.h), else from a hash job
 * (hashq.h); the notification waits meanwhile, unanswered, while the loop
 * goes on. Once every hash is in or its time is up, the rules decide:
 *
 *   - `exec deny`: a subject's hash is denied (deny wins);
 *   - while deny rules exist, a subject that could not be hashed is refused;
 *   - `exec default deny`: the machine code that runs (the file named, or a
 *     script's interpreter, and the loader's program) must be allowed by
 *     hash, or be immutable and lie in an `exec allow DIR`;
 *   - `exec strict`: a file named (or the loader's program) that the agent
 *     can change and that lies on a noexec mount, or has no name (a memfd,
 *     an unlinked file), is refused;
 *   - a file on a noexec mount is refused (the kernel would; said so).
 *
 * The `exec` event is written before the answer: what the log cannot take
 * does not run. A refusal is EACCES, with an `exec.denied` alert when a
 * rule refused. An allowed exec continues under exectrace.h: at the stop
 * after the exec, /proc/PID/exe must be the file checked (the same inode
 * of an immutable file, else the same hash, taken again now that the
 * kernel holds the file against writes); anything else was swapped in
 * after the check: an `exec.swapped` alert, an `exec` event for what runs,
 * and, when a rule refuses it, the process killed before its first
 * instruction.
 *
 * Here: the pipeline (subjects, hashes, events and answers, the watch);
 * the rules' decision is decide.c's, what really runs program.c's (and
 * loaderid.c's: the loader by its content), "the agent cannot change this
 * file" immutable.c's, and the pipeline's making and freeing
 * execs_setup.c's. */
#include "execs_int.h"
#include "../../policy/exec_verdict.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "../../audit/escape.h"
#include "../../common/elfhash.h"
#include "../../common/util.h"
#include "../../sandbox/initmsg.h"
#include "../../sandbox/paths.h"
#include "../../control/approval.h"
#include "bpfexec.h"
#include "execpath.h"
#include "exectrace.h"
#include "hashcache.h"
#include "hashq.h"
#include "immutable.h"
#include "nsread.h"
#include "pidcache.h"
#include "loaderid.h"
#include "program.h"
#include "../answer.h"
#include "../target.h"
#include "asktext.h"

#define TICK_MS 100 /* the deadline timer's period while hashes are awaited */
#define INLINE_HASH_MAX (1L << 20) /* immutable files up to this are hashed in the loop */
/* the command line read back at the stop after an exec: what the record can
 * hold (32 KiB of arguments) and a script's interpreters' words, with room */
#define CMDLINE_MAX (128L << 10)


/* ---- subjects ---- */

/* Subject s's hashes into the cache, with the #! line. */
static void cache_put(struct execs *x, const struct stat *st, const char *hex, const char *interp,
		      const struct subject *s)
{
	hashcache_put(&x->hc, st, hex, interp, s->code_err, s->code, s->code_why);
}

/* The code hash of what a job read into subject s. */
static void code_of_job(struct subject *s, const struct hash_job *j)
{
	s->code_err = j->code_err;
	memcpy(s->code, j->code, sizeof s->code);
	s->code_why = j->code_why;
}

static void subject_clear(struct subject *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->resolved);
	s->resolved = NULL;
	if (s->job)
		hash_job_abandon(s->job);
	s->job = NULL;
}

/* Open path for process p as it would resolve it. 0, or -1 with errno. */
static int subject_open(struct pexec *p, struct subject *s, int dirfd, bool at, const char *path,
			int at_flags)
{
	struct execs *x = p->x;
	s->fd = target_open_root(x->root, p->tid, dirfd, at, path, at_flags, O_PATH | O_CLOEXEC,
				 p->cwd, NULL, 0);
	if (s->fd < 0 || execpath_file(x->ep, x->root, s->fd, at ? NULL : path, x->wdev, x->nwdev,
				       &s->st, &s->resolved, &s->immutable, &s->noexec) == 0)
		return s->fd < 0 ? -1 : 0;
	int err = errno;
	subject_clear(s);
	errno = err;
	return -1;
}

static void nohash(struct subject *s, const char *why)
{
	s->h = H_NOHASH;
	snprintf(s->why, sizeof s->why, "%s", why);
}

/* A hash job to the workers, and the deadline timer ticking while any
 * waits. */
static void submit(struct execs *x, struct hash_job *j)
{
	hashq_submit(x->q, j);
	if (!x->ticking) {
		struct itimerspec it = { .it_interval = { .tv_nsec = TICK_MS * 1000000L },
					 .it_value = { .tv_nsec = TICK_MS * 1000000L } };
		timerfd_settime(x->timer, 0, &it, NULL);
		x->ticking = true;
	}
}

/* Subject i's #! line, read with its hash: MAIN's makes it a script;
 * INTERP's says the interpreter is a script too (descend). */
static void head_line(struct pexec *p, int i, const char *line)
{
	if (i == MAIN)
		memcpy(p->interp, line, sizeof p->interp);
	else if (i == INTERP)
		memcpy(p->iline, line, sizeof p->iline);
}

/* A small file the agent cannot change (a system program) is hashed at
 * once: about a tenth of a millisecond for 1 MiB, less than a job's hand
 * over to a worker, and nothing the sandbox controls can make it slow. */
static bool hash_inline(struct execs *x, struct pexec *p, int i)
{
	struct subject *s = &p->s[i];
	char self[64], head[HASH_HEAD_LEN], line[HASH_HEAD_LEN];
	snprintf(self, sizeof self, "/proc/self/fd/%d", s->fd);
	_cleanup_close_ int fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_ino != s->st.st_ino || st.st_size > INLINE_HASH_MAX)
		return false;
	ssize_t h = pread(fd, head, sizeof head, 0);
	if (sha256_fd_bounded(fd, INLINE_HASH_MAX, NULL, NULL, s->hex) < 0)
		return false;
	s->h = H_DONE;
	s->code_err = ENOEXEC;
	if (h >= 4 && memcmp(head, "\177ELF", 4) == 0)
		s->code_err = elfhash_fd(fd, (uint64_t)st.st_size, INLINE_HASH_MAX, NULL, NULL, s->code,
					 &s->code_why) < 0 ? errno : 0;
	exec_shebang(head, h > 0 ? (size_t)h : 0, line);
	head_line(p, i, line);
	cache_put(x, &st, s->hex, line, s);
	return true;
}

/* Start on subject i's hash: the cache, a small file's at once, or a job. */
static void want(struct pexec *p, int i)
{
	struct execs *x = p->x;
	struct subject *s = &p->s[i];
	if (s->fd < 0 || s->h != H_NONE)
		return;
	if (!S_ISREG(s->st.st_mode)) {
		nohash(s, "not a regular file");
		return;
	}
	if (s->immutable) {
		const struct hc_entry *c = hashcache_get(&x->hc, &s->st, true);
		if (c) {
			x->hits++;
			s->h = H_DONE;
			memcpy(s->hex, c->hex, sizeof s->hex);
			s->code_err = c->code_err;
			memcpy(s->code, c->code, sizeof s->code);
			s->code_why = c->code_why;
			head_line(p, i, c->interp);
			return;
		}
	}
	x->misses++;
	if (s->immutable && s->st.st_size <= INLINE_HASH_MAX && hash_inline(x, p, i))
		return;
	int fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		char why[128];
		snprintf(why, sizeof why, "warden could not inspect it: %s", strerror(errno));
		nohash(s, why);
		return;
	}
	s->job = hash_job_new(fd, x->rules->hash_max_size, x->rules->hash_timeout_ms, p);
	s->h = H_WAIT;
	submit(x, s->job);
}

/* Why a hash job gave no hash, in words. */
static void job_failed(struct subject *s, const struct hash_job *j, const struct execs *x)
{
	char why[160];
	switch (j->err) {
	case EFBIG:
		snprintf(why, sizeof why, "larger than the hash limit (%llu MiB)",
			 x->rules->hash_max_size >> 20);
		break;
	case ETIMEDOUT:
	case ECANCELED:
		snprintf(why, sizeof why, "not read within the hash time limit (%.3g s)",
			 x->rules->hash_timeout_ms / 1000.0);
		break;
	case EACCES:
	case EPERM:
		snprintf(why, sizeof why, "not readable by warden (an execute-only file)");
		break;
	case EINVAL:
		snprintf(why, sizeof why, "not a regular file");
		break;
	default:
		snprintf(why, sizeof why, "unreadable: %s", strerror(j->err));
	}
	nohash(s, why);
}

/* ---- events and answers ---- */

static bool any_rules(const struct execs *x)
{
	return x->lists.ndeny || x->rules->default_deny;
}

/* Was anything decided on p's arguments? A human's answer to a question
 * showing them, `exec ask argv` rules, or the program a loader or an
 * interpreter was given by name, under exec rules. Then the arguments it
 * runs with are compared at the stop after its exec (argv_ran). */
static bool argv_matters(const struct execs *x, const struct pexec *p)
{
	return p->asked || x->rules->ask_argv.n || (p->program && any_rules(x));
}

static void answer(struct execs *x, struct pexec *p, int err)
{
	notify_answer(x->listener, p->id, err, true, 0);
	p->answered = true;
}

void pexec_free(struct pexec *p)
{
	if (p->question)
		approvals_cancel(p->x->ap, p->question);
	for (int i = 0; i < NSUBJ; i++)
		subject_clear(&p->s[i]);
	for (int i = 0; i < p->nchain; i++)
		subject_clear(&p->chain[i]);
	if (p->vjob)
		hash_job_abandon(p->vjob);
	if (p->exe >= 0)
		close(p->exe);
	if (p->pidfd >= 0)
		close(p->pidfd);
	free(p->path);
	free(p->cwd);
	strv_free(&p->argv);
	strv_free(&p->largv);
	free(p->elf_interp);
	free(p);
}

static void unlink_pexec(struct execs *x, struct pexec *p)
{
	for (struct pexec **pp = &x->list; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			return;
		}
}

static void done(struct execs *x, struct pexec *p)
{
	unlink_pexec(x, p);
	pexec_free(p);
}

static void finish(struct execs *x, struct pexec *p);

/* A human's answer to p's question. */
static void exec_answered(void *ctx, bool allow, const char *why)
{
	struct pexec *p = ctx;
	struct execs *x = p->x;
	p->question = NULL;
	if (!allow) {
		execs_record(x, p, why);
		answer(x, p, EACCES);
		done(x, p);
		return;
	}
	p->asked = true;
	finish(x, p);
}

/* An `exec ask` rule matches: the exec waits in its notification while a
 * human is asked. The subject names this argv exactly (asktext.h); one cut
 * when read may stand for others, so a yes to it covers it alone. */
static void ask_human(struct execs *x, struct pexec *p, const char *rule)
{
	const struct subject *m = &p->s[MAIN];
	/* a script: what runs it, named (the rule may be its interpreter's) */
	const char *in = p->interp[0] ? p->s[INTERP].resolved : NULL;
	char via[PATH_MAX + 64] = "";
	if (in)
		snprintf(via, sizeof via, "; a script run by %s%s", in,
			 p->nchain ? " through other scripts" : "");
	_cleanup_free_ char *subject = exec_ask_subject(hex_or_null(m), &p->argv, p->truncated, p->cwd);
	_cleanup_free_ char *summary = exec_ask_summary(p->path, &p->argv, p->truncated, p->cwd, via);
	bool escaped = false;
	json_t *argv = json_bytes_array(p->argv.v, p->argv.n, &escaped);
	json_t *detail = json_pack("{s:s,s:s?,s:o,s:s,s:s?,s:I,s:s,s:s?}", "path", p->path, "resolved",
				   m->resolved, "argv", argv, "cwd", p->cwd, "sha256",
				   hex_or_null(m), "pid", (json_int_t)p->inner, "rule", rule,
				   "interpreter", in);
	if (detail && p->truncated)
		json_object_set_new(detail, "argv_truncated", json_true());
	const struct question *q = (p->truncated ? approvals_ask_once : approvals_ask)(
		x->ap, APPROVAL_EXEC, subject, summary, detail, exec_answered, p);
	if (q)
		p->question = q;
}

/* Every hash of p is in (or its time is up): decide, record, answer. */
static void finish(struct execs *x, struct pexec *p)
{
	char why[256];
	bool by_rule = execs_decide(x->rules, &x->lists, p, why, sizeof why);
	/* what was hashed, told to the kernel before the exec reaches it */
	for (int i = 0; x->kernel && i < NSUBJ + p->nchain; i++) {
		const struct subject *s = i < NSUBJ ? &p->s[i] : &p->chain[i - NSUBJ];
		if (s->fd >= 0 && s->h == H_DONE)
			bpfexec_learn(x->kernel, &s->st, s->hex, code_or_null(s), s->immutable,
				      s->resolved);
	}
	const char *where = p->s[MAIN].resolved ? p->s[MAIN].resolved : p->path;
	char rule[1100];
	if (!why[0] && !p->asked && execs_needs_ask(x->rules, p, rule, sizeof rule)) {
		if (x->ap) {
			ask_human(x, p, rule);
			return;
		}
		snprintf(why, sizeof why, "%.200s asks a human, and none can be asked", rule);
		by_rule = true;
	}
	if (why[0]) {
		if (by_rule)
			execs_alert(x, "exec.denied", where, why);
		execs_record(x, p, why);
		answer(x, p, EACCES);
		done(x, p);
		return;
	}
	/* Watched from here to the stop after its exec: what runs must be
	 * what was checked. Unless nothing else can: an immutable file
	 * named by a path and a string that cannot change (execpath.h). */
	if (!argv_matters(x, p) &&
	    execs_cannot_change(x->ep, x->root, x->init, p, pidcache_pidfd(x->pids, p->ppid))) {
		x->unwatched++;
		if (!execs_record(x, p, NULL)) {
			answer(x, p, EACCES);
			done(x, p);
			return;
		}
		answer(x, p, 0);
		done(x, p);
		return;
	}
	/* init's planned exec, on memory warden cannot watch: made again as a
	 * fork (execs_ready's planned); not an exec yet, so not on the record */
	if (p->planned) {
		answer(x, p, INIT_EXEC_REFORK);
		done(x, p);
		return;
	}
	if (x->tracing) {
		p->traced = tracer_attach(x->t, p->tid, p->tgid, p) == 0;
		if (!p->traced && (errno == EPERM || errno == EACCES)) {
			/* Yama's ptrace_scope 2 or 3, or an LSM: said once */
			x->tracing = false;
			wnote("this system does not let warden watch an exec through to "
			      "what it loads (ptrace: %s)%s", strerror(errno), any_rules(x)
				? "; exec rules need it, so every exec is refused"
				: "; a file swapped in between warden's check and the exec can run with the "
				  "hash of the file checked on the record");
			execs_alert(x, "exec.unwatched", where, "ptrace refused: execs are not verified");
		}
	}
	if (!x->tracing && any_rules(x)) {
		snprintf(why, sizeof why, "warden cannot watch the exec (ptrace is refused here), and "
			 "exec rules need it");
		execs_alert(x, "exec.denied", where, why);
		execs_record(x, p, why);
		answer(x, p, EACCES);
		done(x, p);
		return;
	}
	if (!execs_record(x, p, NULL)) {
		if (p->traced)
			tracer_cancel(x->t, p->tid);
		answer(x, p, EACCES);
		done(x, p);
		return;
	}
	answer(x, p, 0);
	if (!p->traced) {
		done(x, p);
		return;
	}
	tracer_armed(x->t, p->tid);
}

/* Go on with p as far as its hashes allow. */
static bool loader_phase(struct execs *x, struct pexec *p);
static bool elf_interp_phase(struct execs *x, struct pexec *p);

/* INTERP is a script too: the kernel runs the interpreter its #! line
 * names in turn (with a command line of its own: the loader's, should that
 * be the last). INTERP joins the chain and that interpreter becomes
 * INTERP. False while its hash is awaited, or when p was answered: deeper
 * than the kernel follows. */
static bool descend(struct execs *x, struct pexec *p)
{
	if (p->nchain == INTERP_CHAIN_MAX) {
		execs_record(x, p, "interpreters named in turn (#! lines naming scripts) deeper than the "
		       "kernel follows");
		answer(x, p, ELOOP);
		done(x, p);
		return false;
	}
	struct strv next = { 0 };
	if (!p->nchain)
		exec_shebang_argv(p->interp, p->path, &p->argv, &p->largv);
	exec_shebang_argv(p->iline, p->ipath, &p->largv, &next);
	strv_free(&p->largv);
	p->largv = next;
	p->chain[p->nchain++] = p->s[INTERP];
	p->s[INTERP] = (struct subject){ .fd = -1 };
	exec_shebang_path(p->iline, p->ipath);
	p->iline[0] = '\0';
	/* (not there: judged as a script's missing interpreter, decide.c) */
	if (!p->ipath[0] || subject_open(p, &p->s[INTERP], AT_FDCWD, false, p->ipath, 0) < 0)
		return true;
	want(p, INTERP);
	return p->s[INTERP].h != H_WAIT;
}

static void advance(struct execs *x, struct pexec *p)
{
	for (int i = 0; i < NSUBJ; i++)
		if (p->s[i].h == H_WAIT)
			return;
	/* A script: its interpreter, once the #! line is known, and theirs
	 * while they are scripts; then the loader by its content. */
	if (p->interp[0] && !p->interp_tried) {
		p->interp_tried = true;
		exec_shebang_path(p->interp, p->ipath);
		if (p->ipath[0] && subject_open(p, &p->s[INTERP], AT_FDCWD, false, p->ipath, 0) == 0) {
			want(p, INTERP);
			if (p->s[INTERP].h == H_WAIT)
				return;
		}
	}
	while (p->iline[0])
		if (!descend(x, p))
			return;
	if (!p->loader_tried) {
		p->loader_tried = true;
		if (loader_phase(x, p) && p->s[PROG].h == H_WAIT)
			return;
		if (elf_interp_phase(x, p) && p->s[INTERP].h == H_WAIT)
			return;
	}
	finish(x, p);
}

/* The loader by its content as the file named (a copy, renamed), or the
 * loader as a script's interpreter (`#!/lib64/ld-linux-x86-64.so.2 ./x`,
 * its command line the kernel's: program.h): the program it runs is PROG,
 * judged as `ld.so ./x`'s. True when it is. */
static bool loader_phase(struct execs *x, struct pexec *p)
{
	bool script = p->interp[0] && p->s[INTERP].fd >= 0;
	const struct subject *s = script ? &p->s[INTERP] : &p->s[MAIN];
	bool valgrind = script && exec_is_valgrind(s->resolved);
	if ((p->loader && !script) || s->h != H_DONE ||
	    (!valgrind && !exec_is_loader(s->resolved) &&
	     !loader_id_is(&x->ld, x->root, &s->st, s->hex)))
		return false;
	subject_clear(&p->s[PROG]);
	p->s[PROG].h = H_NONE;
	p->loader = true;
	if (script && !p->nchain)
		exec_shebang_argv(p->interp, p->path, &p->argv, &p->largv);
	const struct strv *argv = script ? &p->largv : &p->argv;
	p->program = valgrind ? exec_program_of(s->resolved, argv, &(bool){ 0 })
			      : exec_loader_program(argv);
	/* a name without a '/' the loader looks for in the library path:
	 * left unopened, refused while rules need it (decide.c) */
	if (p->program && strchr(p->program, '/'))
		subject_open(p, &p->s[PROG], AT_FDCWD, false, p->program, 0);
	want(p, PROG);
	return true;
}

/* An ELF file the agent could write that names an interpreter of its own
 * (PT_INTERP: the kernel maps and runs that file first): the interpreter
 * is INTERP, judged as what runs as code (decide.c). The system's loader,
 * which every dynamic program names, is passed over, and so is a file the
 * agent cannot change (its PT_INTERP cannot change either). True when
 * INTERP was opened. */
static bool elf_interp_phase(struct execs *x, struct pexec *p)
{
	struct subject *m = &p->s[MAIN];
	if (p->interp[0] || m->immutable || m->h != H_DONE || m->code_err || m->fd < 0)
		return false;
	char ip[PATH_MAX];
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += 2;
	int rfd = nsread_reopen(x->reader, m->fd, &deadline);
	int r = rfd >= 0 ? elf_interp_read(rfd, ip, sizeof ip) : -1;
	if (rfd >= 0)
		close(rfd);
	if (r <= 0 || subject_open(p, &p->s[INTERP], AT_FDCWD, false, ip, 0) < 0)
		return false; /* (malformed or missing: the kernel refuses the exec) */
	if (loader_id_same(&x->ld, x->root, &p->s[INTERP].st)) {
		subject_clear(&p->s[INTERP]);
		return false;
	}
	p->elf_interp = xstrdup(ip);
	want(p, INTERP);
	return true;
}

/* ---- a new exec ---- */

/* The exec could not be looked at: refused, said so. */
static void blind(struct execs *x, struct pexec *p, int err)
{
	char why[160];
	snprintf(why, sizeof why, "warden could not inspect it: %s", strerror(err));
	execs_record(x, p, why);
	answer(x, p, EACCES);
	pexec_free(p);
}

/* p's path, argv and cwd: init's planned exec, said rather than read
 * (execs_ready's planned), when p is the session's first notification and
 * comes from init's child of one thread; else read from its memory and
 * its /proc entry. The errno of memory warden may not read, or 0. */
static int exec_args(struct execs *x, struct pexec *p, const __u64 *a)
{
	_cleanup_free_ char *planned = steal_ptr(&x->planned);
	if (planned && !p->at && p->ppid == x->init && p->threads == 1) {
		p->planned = true;
		snprintf(p->path, PATH_MAX, "%s", planned);
		for (char *const *v = x->planned_argv; v && *v; v++)
			strv_push(&p->argv, *v);
		p->cwd = xstrdup(x->planned_cwd);
		return 0;
	}
	/* its memory read by pid: the notification checked valid after */
	int unread = 0;
	struct target_chunk chunk = { .pid = p->tid };
	errno = 0;
	if (target_read_str_chunk(-1, &chunk, p->path_addr, p->path, PATH_MAX) < 0) {
		p->path[0] = '\0';
		unread = errno == EFAULT || errno == EIO || errno == ESRCH ? 0 : errno;
	}
	target_read_argv(-1, &chunk, p->at ? a[2] : a[1], &p->argv, &p->truncated);
	char cwd[PATH_MAX];
	target_cwd(p->tid, cwd, sizeof cwd);
	p->cwd = xstrdup(cwd);
	return unread;
}

void execs_begin(struct execs *x, const struct seccomp_notif *req)
{
	const __u64 *a = req->data.args;
	struct pexec *p = xcalloc(1, sizeof *p);
	p->x = x;
	p->id = req->id;
	p->tid = (pid_t)req->pid;
	p->at = req->data.nr == SCMP_SYS(execveat);
	p->exe = -1;
	p->pidfd = -1;
	for (int i = 0; i < NSUBJ; i++)
		p->s[i].fd = -1;
	/* Every process inside has the root init built (chroot and pivot_root
	 * are refused): init's, or else opened once, from the first process
	 * that execs (init itself is not dumpable, and unprivileged its /proc
	 * entries are out of the supervisor's reach). */
	if (x->root < 0) {
		char rp[64];
		snprintf(rp, sizeof rp, "/proc/%d/root", (int)req->pid);
		x->root = open(rp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	p->path = xmalloc(PATH_MAX);
	p->path_addr = p->at ? a[1] : a[0];
	/* (its pid namespace, as root: no process inside can make another,
	 * CLONE_NEWPID, unshare and setns are refused) */
	target_facts(p->tid, &x->pidns, &p->inner, &p->ppid, &p->tgid, &p->threads, &p->pidfd);
	p->pinner = p->ppid > 0 ? pidcache_inner(x->pids, p->ppid, x->pidns) : -1;
	int unread = exec_args(x, p, a);
	/* O_PATH: opening is then never blocking nor acting (a FIFO, a
	 * device), and needs no read permission (an execute-only file) */
	int r = subject_open(p, &p->s[MAIN], (int)a[0], p->at, p->path, p->at ? (int)a[4] : 0);
	int err = r < 0 ? errno : 0;
	if (seccomp_notify_id_valid(x->listener, req->id) != 0) {
		pexec_free(p); /* the process is gone */
		return;
	}
	if (unread) {
		/* memory warden may not read: refused, never let through unseen */
		blind(x, p, unread);
		return;
	}
	if (r < 0) {
		if (err == EMFILE || err == ENFILE || err == ENOMEM) {
			blind(x, p, err);
			return;
		}
		/* Nothing there (a miss during a PATH search is not an
		 * execution), or nothing warden can reach: the exec fails with
		 * warden's answer, so nothing that appears meanwhile runs
		 * unseen. Only what is not a plain miss is recorded. */
		if (err != ENOENT && err != ENOTDIR) {
			char why[160];
			snprintf(why, sizeof why, "warden could not resolve it: %s", strerror(err));
			execs_record(x, p, why);
		}
		answer(x, p, err);
		pexec_free(p);
		return;
	}
	if (!S_ISREG(p->s[MAIN].st.st_mode)) {
		/* the kernel runs only regular files: refused here, before
		 * anything else can take its name */
		nohash(&p->s[MAIN], "not a regular file");
		execs_record(x, p, "not a regular file");
		answer(x, p, EACCES);
		pexec_free(p);
		return;
	}
	/* The loader (or valgrind) given a program, or an interpreter a
	 * script by name: that is what runs. */
	p->program = exec_program_of(p->s[MAIN].resolved, &p->argv, &p->loader);
	if (p->program && (!p->loader || strchr(p->program, '/')) &&
	    subject_open(p, &p->s[PROG], AT_FDCWD, false, p->program, 0) < 0)
		p->s[PROG].fd = -1;
	p->next = x->list;
	x->list = p;
	want(p, MAIN);
	want(p, PROG);
	advance(x, p);
}

/* ---- hashes in ---- */

static void verify_done(struct execs *x, struct pexec *p);

static void execs_on_hashes(struct loop *l, const struct source *src, uint32_t events)
{
	struct execs *x = src->ctx;
	struct hash_job *j;
	while ((j = hashq_done(x->q))) {
		struct pexec *p = j->owner;
		if (!p) {
			hash_job_free(j);
			continue;
		}
		if (j == p->vjob) {
			verify_done(x, p);
			continue;
		}
		for (int i = 0; i < NSUBJ; i++) {
			struct subject *s = &p->s[i];
			if (s->job != j)
				continue;
			s->job = NULL;
			if (j->err == 0) {
				s->h = H_DONE;
				memcpy(s->hex, j->hex, sizeof s->hex);
				code_of_job(s, j);
			} else {
				job_failed(s, j, x);
			}
			char line[HASH_HEAD_LEN];
			exec_shebang(j->head, j->headlen, line);
			head_line(p, i, line);
			/* the cache keeps what cannot change, as it was read */
			if (j->err == 0 && s->immutable && j->st.st_ino == s->st.st_ino)
				cache_put(x, &j->st, j->hex, line, s);
		}
		hash_job_free(j);
		advance(x, p);
	}
}

static void execs_on_timer(struct loop *l, const struct source *src, uint32_t events)
{
	struct execs *x = src->ctx;
	uint64_t ticks;
	(void)!read(x->timer, &ticks, sizeof ticks);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	bool waiting = false;
	for (struct pexec *p = x->list, *next; p; p = next) {
		next = p->next;
		bool late = false;
		for (int i = 0; i < NSUBJ; i++) {
			struct subject *s = &p->s[i];
			if (s->h != H_WAIT)
				continue;
			if (now.tv_sec > s->job->deadline.tv_sec ||
			    (now.tv_sec == s->job->deadline.tv_sec && now.tv_nsec >= s->job->deadline.tv_nsec)) {
				struct hash_job gone = { .err = ETIMEDOUT };
				hash_job_abandon(s->job);
				s->job = NULL;
				job_failed(s, &gone, x);
				late = true;
			} else {
				waiting = true;
			}
		}
		if (p->vjob) {
			const struct timespec *d = &p->vjob->deadline;
			if (now.tv_sec > d->tv_sec || (now.tv_sec == d->tv_sec && now.tv_nsec >= d->tv_nsec)) {
				hash_job_abandon(p->vjob);
				p->vjob = NULL;
				verify_done(x, p);
				continue;
			}
			waiting = true;
		}
		if (late)
			advance(x, p);
	}
	if (!waiting) {
		struct itimerspec off = { 0 };
		timerfd_settime(x->timer, 0, &off, NULL);
		x->ticking = false;
	}
}

/* ---- the stop after the exec ---- */

/* What ran differs from what was checked (hex: its hash, NULL: none to be
 * had; j: the job that read it, for its code hash, or NULL): record it, and
 * kill it when the rules refuse it. */
static void swapped(struct execs *x, struct pexec *p, const char *hex, const char *why_nohash,
		    const struct hash_job *j)
{
	x->swapped++;
	char resolved[PATH_MAX] = "", fdp[64];
	snprintf(fdp, sizeof fdp, "/proc/self/fd/%d", p->exe);
	ssize_t n = p->exe >= 0 ? readlink(fdp, resolved, sizeof resolved - 1) : -1;
	resolved[n > 0 ? n : 0] = '\0';
	/* What runs, judged as the file named would have been. */
	struct subject now = { .fd = -1, .resolved = resolved, .h = hex ? H_DONE : H_NOHASH };
	now.code_err = ENOEXEC;
	if (hex && j)
		code_of_job(&now, j);
	if (hex)
		snprintf(now.hex, sizeof now.hex, "%s", hex);
	else
		snprintf(now.why, sizeof now.why, "%s", why_nohash ? why_nohash : "unreadable");
	if (p->exe >= 0 && fstat(p->exe, &now.st) == 0)
		now.immutable = exec_file_immutable(p->exe, &now.st, resolved, x->wdev, x->nwdev,
						    &now.noexec);
	char why[256] = "";
	if (hex && exec_verdict_in_deny(&x->lists, hex))
		snprintf(why, sizeof why, "exec deny sha256:%s (swapped in after the check)", hex);
	else if (hex && !now.code_err && exec_verdict_code_in_deny(&x->lists, now.code))
		snprintf(why, sizeof why, "exec deny code:%s (swapped in after the check)", now.code);
	else if (!hex && x->lists.ndeny)
		snprintf(why, sizeof why, "swapped in after the check, and cannot be hashed (%s)", now.why);
	else if (x->rules->default_deny && !execs_allowed(x->rules, &x->lists, &now))
		snprintf(why, sizeof why, "exec default deny: swapped in after the check, not allowed");
	char action[PATH_MAX + 128];
	snprintf(action, sizeof action, "%s ran instead of what was checked (sha256:%s)%s",
		 resolved[0] ? resolved : "another file", hex ? hex : "none",
		 why[0] ? "; killed before its first instruction" : "");
	execs_alert(x, "exec.swapped", p->s[MAIN].resolved, action);
	if (why[0])
		execs_alert(x, "exec.denied", resolved, why);
	execs_record_swapped(x, p, resolved, &now, why[0] ? why : NULL);
	if (why[0])
		x->killed++;
	tracer_release(x->t, p->now, why[0] != '\0');
}

/* The hash of /proc/PID/exe is in (or not to be had). */
static void verify_done(struct execs *x, struct pexec *p)
{
	struct hash_job *j = p->vjob;
	p->vjob = NULL;
	const struct subject *e = &p->s[p->interp[0] && p->s[INTERP].fd >= 0 ? INTERP : MAIN];
	if (j && j->err == 0 && e->h == H_DONE && strcmp(j->hex, e->hex) == 0) {
		x->verified++;
		tracer_release(x->t, p->now, false);
	} else if (j && j->err == 0) {
		swapped(x, p, j->hex, NULL, j);
	} else {
		char why[160] = "not read in time";
		if (j) {
			struct subject tmp = { 0 };
			job_failed(&tmp, j, x);
			snprintf(why, sizeof why, "%s", tmp.why);
		}
		if (e->h != H_DONE && !any_rules(x)) {
			/* nothing to compare, nothing that needs it */
			x->verified++;
			tracer_release(x->t, p->now, false);
		} else {
			swapped(x, p, NULL, why, NULL);
		}
	}
	hash_job_free(j);
	done(x, p);
}

/* At the stop after the exec: the arguments it runs with must be those
 * read at its notification, which the record and the rules saw. A second
 * thread, or memory shared with another process, could rewrite them while
 * the exec waited for its answer (a question to a human waits seconds):
 * an alert, and the process killed before its first instruction when
 * anything was decided on them. True when it goes on. */
static bool argv_ran(struct execs *x, struct pexec *p, pid_t pid)
{
	if (!p->argv.n)
		return true;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	size_t len = 0;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *got = fd >= 0 ? read_fd_all(fd, 0, CMDLINE_MAX, &len) : NULL;
	/* a script's: the words its interpreters were given first */
	size_t skip = 0;
	if (p->interp[0]) {
		_cleanup_strv_ struct strv k = { 0 };
		if (!p->largv.n)
			exec_shebang_argv(p->interp, p->path, &p->argv, &k);
		skip = (p->largv.n ? p->largv.n : k.n) - (p->argv.n - 1);
	}
	if (got && exec_argv_same(&p->argv, p->truncated, skip, got, len))
		return true;
	bool kill_it = argv_matters(x, p);
	/* what it runs with, shown as words: printable ASCII, a space between */
	for (size_t i = 0; got && i + 1 < len; i++)
		got[i] = got[i] == '\0' ? ' ' : got[i] < 0x20 || got[i] > 0x7e ? '?' : got[i];
	char action[600];
	snprintf_cut(action, sizeof action, "the program runs with other arguments than those "
		     "checked and recorded%s (now: %.300s)",
		     kill_it ? "; killed before its first instruction" : "",
		     got ? got : "unreadable");
	execs_alert(x, "exec.argv-swapped", p->s[MAIN].resolved ? p->s[MAIN].resolved : p->path, action);
	if (!kill_it)
		return true;
	x->killed++;
	tracer_release(x->t, pid, true);
	done(x, p);
	return false;
}

static void on_trace(void *ctx, enum trace_end end, pid_t pid, int exe, void *arg)
{
	struct execs *x = arg;
	struct pexec *p = ctx;
	if (end != TRACE_EXECED) {
		done(x, p);
		return;
	}
	p->now = pid;
	p->exe = exe;
	if (!argv_ran(x, p, pid))
		return;
	/* What runs: a script's interpreter (the chain's last), else the file
	 * named. */
	const struct subject *e = &p->s[p->interp[0] && p->s[INTERP].fd >= 0 ? INTERP : MAIN];
	struct stat st;
	if (exe >= 0 && fstat(exe, &st) == 0 && st.st_dev == e->st.st_dev && st.st_ino == e->st.st_ino &&
	    e->immutable) {
		x->verified++;
		tracer_release(x->t, pid, false);
		done(x, p);
		return;
	}
	if (exe >= 0 && fstat(exe, &st) == 0 && st.st_dev == e->st.st_dev && st.st_ino == e->st.st_ino &&
	    e->h != H_DONE && !any_rules(x)) {
		/* the same file, whose hash could not be had before either, and
		 * no rule that needs it */
		x->verified++;
		tracer_release(x->t, pid, false);
		done(x, p);
		return;
	}
	/* The agent can change it (or it is another file): its hash, taken
	 * now that the kernel keeps writers off it. */
	int fd = exe >= 0 ? fcntl(exe, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd < 0) {
		/* what runs cannot be looked at (out of descriptors): with
		 * rules, it does not run; without, it is said */
		bool kill_it = any_rules(x);
		execs_alert(x, "exec.unverified", p->s[MAIN].resolved, kill_it
		      ? "what the exec loaded could not be looked at; killed before its first instruction"
		      : "what the exec loaded could not be looked at; the record names the file checked");
		x->killed += kill_it;
		tracer_release(x->t, pid, kill_it);
		done(x, p);
		return;
	}
	x->misses++;
	p->vjob = hash_job_new(fd, x->rules->hash_max_size, x->rules->hash_timeout_ms, p);
	/* the code hash of what ran instead: for the code rules only (the
	 * file checked had its own on the record) */
	p->vjob->no_code = !x->code_rules;
	submit(x, p->vjob);
}

void execs_on_sigchld(struct execs *x)
{
	if (tracer_count(x->t) || x->list)
		tracer_poll(x->t, on_trace, x);
}

/* ---- setup ---- */

int execs_watch(struct loop *l, struct execs *x, struct werr *e)
{
	if (loop_add(l, "the exec hashes", hashq_fd(x->q), execs_on_hashes, x, e) < 0)
		return -1;
	return loop_add(l, "the exec timer", x->timer, execs_on_timer, x, e);
}

