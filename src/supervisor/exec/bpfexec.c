/* bpfexec.c - the exec rules enforced in the kernel by BPF LSM (bpfexec.h):
 * loading and checking the program, the thread that answers its requests
 * and works out the verdicts of the files the loop hands it before they
 * are mapped (bpfexec_premap), and the refusals handed to the loop as
 * events. The files its records name are found by kfile.c; whether one is
 * immutable, by immutable.c. */
#include "bpfexec.h"

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if WARDEN_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "../../audit/events.h"
#include "../../bpf/exec_lsm.h"
#include "../../common/clock.h"
#include "../../common/elfhash.h"
#include "../../common/util.h"
#include "../../policy/exec_rules.h"
#include "../../policy/exec_verdict.h"
#include "exec_lsm.skel.h"
#include "immutable.h"
#include "kfile.h"
#include "../answer.h"
#include "../../sandbox/features.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* the kernel's own, not in userspace's errno.h */
#endif

#define WAIT_MS 50            /* how long a task waits in the kernel for a verdict */
#define WAIT_MS_MAX 5000      /* the longest WARDEN_EXEC_KERNEL_WAIT_MS may make it */
#define HASH_MAX_MS 2000      /* the longest a request's hash may take */
#define KNOWN 1024            /* verdicts remembered with their reasons */
#define QUEUED_MAX 4096       /* refusals waiting for the loop; past it, counted only */

/* A verdict given, with what the event of a refusal says. */
struct known {
	struct exec_lsm_key k;
	uint64_t ctime;
	bool used, deny;
	enum exec_lsm_verdict verdict; /* as told the kernel; 0: none */
	char hex[SHA256_HEX_LEN];     /* "" none */
	char why[240];
};

/* A file about to be mapped executable, handed by the loop to the thread
 * for its verdict (bpfexec_premap); or, fd -1, a seccomp notification the
 * thread answers once the files before it have theirs. */
struct premap {
	struct premap *next;
	int fd;                       /* O_PATH; -1: an answer */
	pid_t pid;
	uint64_t id;
};

/* A refusal on its way from the thread to the loop. */
struct refusal {
	struct refusal *next;
	struct exec_lsm_rec rec;
	char hex[SHA256_HEX_LEN];
	char why[300];
};

struct bpfexec {
	struct exec_lsm *skel;
	struct ring_buffer *rb;
	const struct policy_exec *x;
	struct exec_verdict_rules rules;
	int vmap;                     /* the verdicts map */
	int stopfd, notefd;           /* eventfds: the thread's stop, refusals queued */
	int workfd;                   /* eventfd: premaps queued */
	int listener;                 /* the seccomp listener (a copy), for the answers */
	struct audit *log;            /* where the refusals the loop sees go (bpfexec_watch) */
	volatile int stop;
	pthread_t thread;
	bool started;
	char cgroup[600];
	struct exec_lsm_key check[2]; /* the start's check files: their refusals dropped */
	uint64_t check_ms;            /* its round trip through this thread */
	unsigned wait_ms;             /* the kernel's wait for a verdict */
	pthread_mutex_t mu;           /* known, the queue, the counts */
	struct known known[KNOWN];
	size_t next_known;
	struct refusal *head, **tail;
	struct premap *work, **work_tail;
	unsigned long requests, allowed, denied, refused, timeouts, learned, dropped;
	unsigned long premapped, premap_known, premap_worked; /* files; known ahead; hashed */
	size_t queued;
	uint64_t answer_ns_total, answer_ns_max; /* request sent to verdict written */
};

/* ---- the rules ---- */

/* exec_verdict.h's verdict as the program knows it */
static enum exec_lsm_verdict decide(const struct bpfexec *b, const char *hex, const char *code,
				    const char *nohash, bool immutable, const char *resolved,
				    char *why, size_t len)
{
	switch (exec_verdict_of_code(&b->rules, hex, code, nohash, immutable, resolved, why, len)) {
	case EXEC_VERDICT_DENY:
		return EXEC_LSM_DENY;
	case EXEC_VERDICT_DENY_CODE:
		return EXEC_LSM_DENY_CODE;
	default:
		return EXEC_LSM_ALLOW;
	}
}

/* ---- verdicts ---- */

/* verdict: as told the kernel (0: none: then deny says whether a refusal
 * follows, and why says why) */
static void remember(struct bpfexec *b, const struct exec_lsm_key *k, uint64_t ctime,
		     enum exec_lsm_verdict verdict, bool deny, const char *hex, const char *why)
{
	pthread_mutex_lock(&b->mu);
	struct known *slot = NULL;
	for (size_t i = 0; i < KNOWN && !slot; i++)
		if (b->known[i].used && b->known[i].k.dev == k->dev && b->known[i].k.ino == k->ino)
			slot = &b->known[i];
	if (!slot) {
		slot = &b->known[b->next_known];
		b->next_known = (b->next_known + 1) % KNOWN;
	}
	*slot = (struct known){ .k = *k, .ctime = ctime, .used = true, .deny = deny,
				.verdict = verdict };
	snprintf(slot->hex, sizeof slot->hex, "%s", hex ? hex : "");
	snprintf(slot->why, sizeof slot->why, "%s", why);
	pthread_mutex_unlock(&b->mu);
}

static void tell_kernel(struct bpfexec *b, const struct exec_lsm_key *k, uint64_t ctime,
			enum exec_lsm_verdict verdict)
{
	struct exec_lsm_val v = { .ctime = ctime, .verdict = verdict };
	(void)bpf_map_update_elem(b->vmap, k, &v, BPF_ANY);
}

/* The verdict on the file k open at fd (O_PATH, fstat's st), path its
 * name as the task sees it ("" unknown): hashed, decided, told the kernel.
 * What cannot be hashed in time gets no verdict (a wait in the kernel ends
 * in a refusal); a file too large to hash gets its verdict. sent: when
 * the kernel asked (0: it did not), for the stats. */
static void judge(struct bpfexec *b, const struct exec_lsm_key *k, uint64_t ctime, int fd,
		  const struct stat *st, const char *path, uint64_t sent)
{
	char self[64], hex[SHA256_HEX_LEN], code[SHA256_HEX_LEN] = "", nohash[120] = "", why[300];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	_cleanup_close_ int rfd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat rst;
	bool hashed = false;
	if (rfd < 0 || fstat(rfd, &rst) < 0 || !kfile_same(rfd, &rst, k, ctime)) {
		snprintf(nohash, sizeof nohash, "it could not be opened: %s", strerror(errno));
	} else {
		unsigned ms = b->x->hash_timeout_ms && b->x->hash_timeout_ms < HASH_MAX_MS
				      ? b->x->hash_timeout_ms : HASH_MAX_MS;
		struct timespec deadline = mono_after_ms(ms);
		unsigned long long max = b->x->hash_max_size ? b->x->hash_max_size
								 : POLICY_EXEC_HASH_MAX_SIZE;
		const char *cwhy;
		if (sha256_fd_bounded(rfd, max, &deadline, &b->stop, hex) == 0)
			hashed = true;
		if (hashed && elfhash_fd(rfd, (uint64_t)rst.st_size, max, &deadline, &b->stop, code,
					 &cwhy) < 0)
			code[0] = '\0'; /* no ELF, or segments that cannot be hashed */
		else if (errno == EFBIG)
			snprintf(nohash, sizeof nohash, "larger than the hash limit");
		else {
			/* a transient failure (time, a read): no verdict kept */
			snprintf(why, sizeof why, "the file could not be hashed in time (%s)",
				 strerror(errno));
			remember(b, k, ctime, 0, true, NULL, why);
			return;
		}
	}
	if (!hashed && !nohash[0])
		return;
	/* the path the kernel gave is the task's view, where allow_dirs apply */
	enum exec_lsm_verdict v = decide(b, hashed ? hex : NULL, code[0] ? code : NULL, nohash,
					 exec_file_immutable(fd, st, path, NULL, 0, NULL),
					 path, why, sizeof why);
	bool deny = v != EXEC_LSM_ALLOW;
	remember(b, k, ctime, v, deny, hashed ? hex : NULL, why);
	tell_kernel(b, k, ctime, v);
	if (!sent)
		return;
	uint64_t took = mono_ns() - sent;
	pthread_mutex_lock(&b->mu);
	if (deny)
		b->denied++;
	else
		b->allowed++;
	b->answer_ns_total += took;
	if (took > b->answer_ns_max)
		b->answer_ns_max = took;
	pthread_mutex_unlock(&b->mu);
}

/* A request: find, hash, decide, answer. What cannot be found is answered
 * NONE (refused at once, asked again at the next try). */
static void serve_request(struct bpfexec *b, const struct exec_lsm_rec *rec)
{
	struct exec_lsm_key k = { .dev = rec->dev, .ino = rec->ino };
	struct stat st;
	_cleanup_close_ int fd = kfile_find(rec, &st);
	if (fd < 0) {
		remember(b, &k, rec->ctime, 0, true, NULL,
			 "the file could not be found as the process sees it");
		/* the task need not wait out the kernel's wait for nothing */
		tell_kernel(b, &k, rec->ctime, EXEC_LSM_NONE);
		return;
	}
	judge(b, &k, rec->ctime, fd, &st, rec->path, rec->ts);
}

/* A premap's file: its verdict worked out, as for a request. */
static void serve_premap(struct bpfexec *b, const struct premap *m)
{
	struct stat st;
	if (fstat(m->fd, &st) < 0)
		return;
	struct exec_lsm_key k = { .dev = kfile_dev(st.st_dev), .ino = st.st_ino };
	char path[PATH_MAX];
	kfile_task_path(m->pid, m->fd, &st, path, sizeof path);
	judge(b, &k, kfile_ctime(&st), m->fd, &st, path, 0);
	pthread_mutex_lock(&b->mu);
	b->premap_worked++;
	pthread_mutex_unlock(&b->mu);
}

/* A seccomp notification let go on (it may have died meanwhile: ENOENT). */
static void answer(struct bpfexec *b, uint64_t id)
{
	notify_answer(b->listener, id, 0, true, 0);
}

static void queue_premap(struct bpfexec *b, int fd, pid_t pid, uint64_t id)
{
	struct premap *m = xcalloc(1, sizeof *m);
	*m = (struct premap){ .fd = fd, .pid = pid, .id = id };
	pthread_mutex_lock(&b->mu);
	*b->work_tail = m;
	b->work_tail = &m->next;
	pthread_mutex_unlock(&b->mu);
	uint64_t one = 1;
	(void)!write(b->workfd, &one, sizeof one);
}

/* The premaps queued, in order; between two, the kernel's requests (a
 * task waits in the kernel for each). */
static void serve_premaps(struct bpfexec *b)
{
	uint64_t n;
	(void)!read(b->workfd, &n, sizeof n);
	pthread_mutex_lock(&b->mu);
	struct premap *list = b->work;
	b->work = NULL;
	b->work_tail = &b->work;
	pthread_mutex_unlock(&b->mu);
	for (struct premap *m = list, *next; m; m = next) {
		next = m->next;
		if (!b->stop && m->fd >= 0)
			serve_premap(b, m);
		else if (!b->stop)
			answer(b, m->id);
		if (m->fd >= 0)
			close(m->fd);
		free(m);
		ring_buffer__consume(b->rb);
	}
}

static void queue_refusal(struct bpfexec *b, const struct exec_lsm_rec *rec)
{
	pthread_mutex_lock(&b->mu);
	bool full = b->queued >= QUEUED_MAX;
	if (full) {
		b->refused++;
		b->dropped++;
	}
	pthread_mutex_unlock(&b->mu);
	if (full)
		return;
	struct refusal *r = xcalloc(1, sizeof *r);
	r->rec = *rec;
	r->rec.path[sizeof r->rec.path - 1] = '\0';
	pthread_mutex_lock(&b->mu);
	for (size_t i = 0; i < KNOWN; i++) {
		const struct known *kn = &b->known[i];
		if (kn->used && kn->k.dev == rec->dev && kn->k.ino == rec->ino && kn->ctime == rec->ctime) {
			snprintf(r->hex, sizeof r->hex, "%s", kn->hex);
			snprintf(r->why, sizeof r->why, "%s", kn->why);
			break;
		}
	}
	if (rec->reason == EXEC_LSM_TIMEOUT)
		snprintf(r->why + strlen(r->why), sizeof r->why - strlen(r->why), "%sno verdict within %u ms",
			 r->why[0] ? "; " : "", b->wait_ms);
	else if (rec->reason == EXEC_LSM_NOROOM)
		snprintf(r->why, sizeof r->why, "the request could not be sent (the ring buffer is full)");
	else if (rec->reason == EXEC_LSM_BUSY)
		snprintf(r->why, sizeof r->why, "as many processes were waiting for a verdict as may (one "
			 "per spare CPU); the next try finds it");
	b->refused++;
	if (rec->reason != EXEC_LSM_RULE)
		b->timeouts++;
	*b->tail = r;
	b->tail = &r->next;
	b->queued++;
	pthread_mutex_unlock(&b->mu);
	uint64_t one = 1;
	(void)!write(b->notefd, &one, sizeof one);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct bpfexec *b = ctx;
	if (size < sizeof(struct exec_lsm_rec))
		return 0;
	const struct exec_lsm_rec *rec = data;
	for (int i = 0; i < 2 && rec->kind == EXEC_LSM_REFUSED; i++)
		if (rec->dev == b->check[i].dev && rec->ino == b->check[i].ino)
			return 0;
	if (rec->kind == EXEC_LSM_REQUEST) {
		pthread_mutex_lock(&b->mu);
		b->requests++;
		pthread_mutex_unlock(&b->mu);
		serve_request(b, rec);
	} else if (rec->kind == EXEC_LSM_REFUSED) {
		queue_refusal(b, rec);
	}
	return 0;
}

static void *serve(void *arg)
{
	struct bpfexec *b = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	struct pollfd p[3] = { { .fd = ring_buffer__epoll_fd(b->rb), .events = POLLIN },
			       { .fd = b->stopfd, .events = POLLIN },
			       { .fd = b->workfd, .events = POLLIN } };
	while (!b->stop) {
		if (poll(p, 3, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		ring_buffer__consume(b->rb);
		if (p[2].revents)
			serve_premaps(b);
	}
	return NULL;
}

/* ---- loading and the check ---- */

__attribute__((format(printf, 2, 0)))
static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("WARDEN_BPF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* The cgroup v2 mount that holds dir, and dir's level in the hierarchy
 * (the mount's own root counted). -1 when dir is on none. */
static int cgroup_level(const char *dir)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -1;
	char line[4096];
	int level = -1;
	size_t best = 0;
	while (fgets(line, sizeof line, f)) {
		char root[1024], point[1024];
		const char *dash = strstr(line, " - cgroup2 ");
		if (!dash || sscanf(line, "%*s %*s %*s %1023s %1023s", root, point) != 2)
			continue;
		unescape_octal(root); /* (\040 a space, as the kernel writes it) */
		unescape_octal(point);
		size_t n = strlen(point);
		if (!path_is_within(dir, point) || n < best)
			continue;
		best = n;
		level = 0;
		for (const char *c = root; *c; c++)
			level += *c == '/' && c[1] && c[1] != '/';
		for (const char *c = dir + (strcmp(point, "/") ? n : 0); *c; c++)
			level += *c == '/' && c[1] && c[1] != '/';
	}
	fclose(f);
	return level;
}

/* A memfd holding one byte (a `ret`), its key into *k. */
static int check_file(struct exec_lsm_key *k, uint64_t *ctime)
{
	int fd = (int)syscall(SYS_memfd_create, "warden-bpf-check", MFD_CLOEXEC);
	struct stat st;
	if (fd < 0 || write(fd, "\xc3", 1) != 1 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*k = (struct exec_lsm_key){ .dev = kfile_dev(st.st_dev), .ino = st.st_ino };
	*ctime = kfile_ctime(&st);
	return fd;
}

/* The check at the start, by a process of the session's cgroup: a file
 * denied beforehand must be refused with EPERM (else the program is
 * attached but the kernel does not run it: BPF is not among its active
 * LSMs), and a file the kernel knows nothing of must get its verdict from
 * this module's thread within the kernel's wait (else tasks would wait in
 * vain: a lone CPU the waiting task does not give up, say). */
static int self_check(struct bpfexec *b, const char *cgroup, bool *unavailable, struct werr *e)
{
	uint64_t ct[2];
	_cleanup_close_ int denied = check_file(&b->check[0], &ct[0]);
	_cleanup_close_ int unknown = check_file(&b->check[1], &ct[1]);
	if (denied < 0 || unknown < 0)
		return werr_errno(e, "in-kernel exec enforcement: the check's files");
	tell_kernel(b, &b->check[0], ct[0], EXEC_LSM_DENY);
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return werr_errno(e, "in-kernel exec enforcement: the check's pipe");
	uint64_t t0 = mono_ns();
	pid_t pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return werr_fork(e, errno, "in-kernel exec enforcement: the check's process");
	}
	if (pid == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		if (mmap(NULL, 1, PROT_READ | PROT_EXEC, MAP_PRIVATE, denied, 0) != MAP_FAILED)
			_exit(1);
		if (errno != EPERM)
			_exit(2);
		if (mmap(NULL, 1, PROT_READ | PROT_EXEC, MAP_PRIVATE, unknown, 0) != MAP_FAILED ||
		    errno == EPERM)
			_exit(0);
		_exit(errno == EACCES ? 5 : 6);
	}
	close(go[0]);
	char procs[700], num[32];
	snprintf(procs, sizeof procs, "%s/cgroup.procs", cgroup);
	int len = snprintf(num, sizeof num, "%d", (int)pid);
	int pf = open(procs, O_WRONLY | O_CLOEXEC);
	bool moved = pf >= 0 && write(pf, num, (size_t)len) == len;
	int saved = errno;
	if (pf >= 0)
		close(pf);
	if (moved)
		(void)!write(go[1], "g", 1);
	close(go[1]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	b->check_ms = (mono_ns() - t0) / 1000000u;
	for (int i = 0; i < 2; i++)
		(void)bpf_map_delete_elem(b->vmap, &b->check[i]);
	if (!moved)
		return werr_set(e, saved, "in-kernel exec enforcement: moving its check into %s", procs);
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 4;
	switch (code) {
	case 0:
		return 0;
	case 1:
		*unavailable = true;
		return werr_set(e, 0, "BPF LSM is not active: the program is attached but the kernel does "
				"not run it (the kernel's lsm= list lacks bpf)");
	case 5:
		return werr_set(e, 0, "in-kernel exec enforcement: a task waiting in the kernel for a "
				"verdict got none in %u ms (one CPU, and a kernel without preemption? a "
				"machine too slow, an emulator: WARDEN_EXEC_KERNEL_WAIT_MS)", b->wait_ms);
	default:
		return werr_set(e, 0, "in-kernel exec enforcement: its check failed (%s)",
				code == 2 ? "a denied file was refused, but not with EPERM"
				: code == 6 ? "a file unknown to the kernel was refused, but not by a verdict"
				: "the check did not run");
	}
}

/* A kernel that refuses BPF LSM programs refuses them until it reboots:
 * said once per boot in REFUSED_CACHE ("BOOT_ID ERRNO"), so that each root
 * session need not try again (a try costs a tenth of a second: the
 * kernel's types read for CO-RE). */
#define REFUSED_DIR "/run/warden"
#define REFUSED_CACHE REFUSED_DIR "/exec-kernel-refused"

/* The errno this boot's kernel refused the program with; 0: not known. */
static int refused_before(void)
{
	char id[64], line[128];
	if (!kernel_boot_id(id, sizeof id))
		return 0;
	_cleanup_close_ int fd = open(REFUSED_CACHE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	ssize_t n = fd < 0 || fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022) ? -1
		    : read(fd, line, sizeof line - 1);
	if (n <= 0)
		return 0;
	line[n] = '\0';
	size_t idlen = strlen(id);
	if (strncmp(line, id, idlen) != 0 || line[idlen] != ' ')
		return 0;
	int err = atoi(line + idlen + 1);
	return err > 0 ? err : 0;
}

static void remember_refused(int err)
{
	char id[64], line[128], tmp[64];
	if (!kernel_boot_id(id, sizeof id) || (mkdir(REFUSED_DIR, 0700) < 0 && errno != EEXIST))
		return;
	struct stat st;
	if (lstat(REFUSED_DIR, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return;
	snprintf(tmp, sizeof tmp, "%s.%d", REFUSED_CACHE, (int)getpid());
	int len = snprintf(line, sizeof line, "%s %d\n", id, err);
	_cleanup_close_ int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)len) != len || rename(tmp, REFUSED_CACHE) < 0)
		unlink(tmp);
}

/* The kernel's wait: WAIT_MS, or WARDEN_EXEC_KERNEL_WAIT_MS (1 to
 * WAIT_MS_MAX) for a machine where warden answers slower than that (an
 * emulator: tests/vm/bpf-lsm.sh). Longer only delays a refusal. */
static unsigned wait_ms(void)
{
	const char *v = getenv("WARDEN_EXEC_KERNEL_WAIT_MS");
	char *end;
	unsigned long ms = v && *v ? strtoul(v, &end, 10) : 0;
	return v && *v && !*end && ms >= 1 && ms <= WAIT_MS_MAX ? (unsigned)ms : WAIT_MS;
}

struct bpfexec *bpfexec_new(const struct policy *p, const char *cgroup, bool *unavailable,
			    struct werr *e)
{
	*unavailable = true;
	if (!caps_admin())
		return werr_set(e, 0, "in-kernel exec enforcement needs root (BPF LSM programs are "
				"loaded by root)"), NULL;
	if (!cgroup)
		return werr_set(e, 0, "in-kernel exec enforcement needs a cgroup v2 for the session (it "
				"finds the session's processes by it), and there is none (no cgroup2 "
				"mount, or it could not be made)"), NULL;
	int level = cgroup_level(cgroup);
	struct stat cst;
	if (level < 0 || stat(cgroup, &cst) < 0)
		return werr_set(e, errno, "in-kernel exec enforcement: %s is not a cgroup v2 directory",
				cgroup), NULL;
	int refused = refused_before();
	if (refused)
		return werr_set(e, refused, "this kernel refuses BPF LSM programs (loading warden's, "
				"tried before since it booted)"), NULL;
	*unavailable = false;
	libbpf_set_print(quiet_print);
	struct bpfexec *b = xcalloc(1, sizeof *b);
	b->stopfd = b->notefd = b->workfd = b->listener = b->vmap = -1;
	b->tail = &b->head;
	b->work_tail = &b->work;
	pthread_mutex_init(&b->mu, NULL);
	b->x = &p->exec;
	snprintf(b->cgroup, sizeof b->cgroup, "%s", cgroup);
	exec_verdict_init(&b->rules, &p->exec);
	b->skel = exec_lsm__open();
	if (!b->skel) {
		werr_errno(e, "in-kernel exec enforcement: opening the BPF program");
		goto fail;
	}
	b->skel->rodata->session_level = (__u32)level;
	b->wait_ms = wait_ms();
	b->skel->rodata->wait_ns = b->wait_ms * 1000000ull;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	b->skel->rodata->max_waiters = cpus > 2 ? (__u32)cpus - 1 : 1;
	int err = exec_lsm__load(b->skel);
	if (err) {
		*unavailable = err == -EPERM || err == -EACCES || err == -EOPNOTSUPP || err == -ENOTSUPP;
		if (*unavailable)
			remember_refused(-err);
		werr_set(e, -err, *unavailable ? "this kernel refuses BPF LSM programs (loading warden's)"
			 : "in-kernel exec enforcement: loading its BPF LSM program");
		goto fail;
	}
	err = exec_lsm__attach(b->skel);
	if (err) {
		*unavailable = err == -EPERM || err == -EACCES || err == -EOPNOTSUPP || err == -ENOTSUPP;
		werr_set(e, -err, *unavailable ? "this kernel refuses BPF LSM programs (attaching warden's)"
			 : "in-kernel exec enforcement: attaching its BPF LSM program");
		goto fail;
	}
	b->vmap = bpf_map__fd(b->skel->maps.verdicts);
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.records), on_record, b, NULL);
	b->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	b->notefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	b->workfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!b->rb || b->stopfd < 0 || b->notefd < 0 || b->workfd < 0) {
		werr_errno(e, "in-kernel exec enforcement: its ring buffer");
		goto fail;
	}
	__u64 id = cst.st_ino; /* a cgroup v2 directory's inode is the cgroup's id */
	__u32 on = 1;
	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.sessions), &id, &on, BPF_ANY) < 0) {
		werr_errno(e, "in-kernel exec enforcement: registering the session's cgroup");
		goto fail;
	}
	if (pthread_create(&b->thread, NULL, serve, b) != 0) {
		werr_set(e, errno, "in-kernel exec enforcement: its thread");
		goto fail;
	}
	b->started = true;
	if (self_check(b, cgroup, unavailable, e) < 0)
		goto fail;
	return b;
fail:
	bpfexec_free(b);
	return NULL;
}

void bpfexec_free(struct bpfexec *b)
{
	if (!b)
		return;
	if (b->started) {
		b->stop = 1;
		uint64_t one = 1;
		(void)!write(b->stopfd, &one, sizeof one);
		pthread_join(b->thread, NULL);
	}
	ring_buffer__free(b->rb);
	exec_lsm__destroy(b->skel);
	if (b->stopfd >= 0)
		close(b->stopfd);
	if (b->notefd >= 0)
		close(b->notefd);
	if (b->workfd >= 0)
		close(b->workfd);
	if (b->listener >= 0)
		close(b->listener);
	for (struct refusal *r = b->head, *n; r; r = n) {
		n = r->next;
		free(r);
	}
	for (struct premap *m = b->work, *n; m; m = n) {
		n = m->next;
		if (m->fd >= 0)
			close(m->fd);
		free(m);
	}
	exec_verdict_free(&b->rules);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

void bpfexec_learn(struct bpfexec *b, const struct stat *st, const char *hex, const char *code,
		   bool immutable, const char *resolved)
{
	if (!b || !hex || !S_ISREG(st->st_mode))
		return;
	char why[300];
	enum exec_lsm_verdict v = decide(b, hex, code, NULL, immutable, resolved, why, sizeof why);
	struct exec_lsm_key k = { .dev = kfile_dev(st->st_dev), .ino = st->st_ino };
	remember(b, &k, kfile_ctime(st), v, v != EXEC_LSM_ALLOW, hex, why);
	tell_kernel(b, &k, kfile_ctime(st), v);
	pthread_mutex_lock(&b->mu);
	b->learned++;
	pthread_mutex_unlock(&b->mu);
}

static void on_refusals(struct loop *l, const struct source *src, uint32_t events)
{
	struct bpfexec *b = src->ctx;
	bpfexec_on_refusals(b, b->log);
}

int bpfexec_watch(struct loop *l, struct bpfexec *b, struct audit *log, struct werr *e)
{
	b->log = log;
	return loop_add(l, "the kernel's exec refusals", b->notefd, on_refusals, b, e);
}

int bpfexec_set_listener(struct bpfexec *b, int listener)
{
	if (b->listener < 0)
		b->listener = fcntl(listener, F_DUPFD_CLOEXEC, 3);
	return b->listener < 0 ? -1 : 0;
}

bool bpfexec_premap(struct bpfexec *b, pid_t pid, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || b->listener < 0) {
		close(fd); /* the kernel decides (and asks, or refuses) */
		return true;
	}
	struct exec_lsm_key k = { .dev = kfile_dev(st.st_dev), .ino = st.st_ino };
	uint64_t ctime = kfile_ctime(&st);
	enum exec_lsm_verdict v = 0;
	pthread_mutex_lock(&b->mu);
	b->premapped++;
	for (size_t i = 0; i < KNOWN && !v; i++) {
		const struct known *kn = &b->known[i];
		if (kn->used && kn->verdict && kn->k.dev == k.dev && kn->k.ino == k.ino &&
		    kn->ctime == ctime)
			v = kn->verdict;
	}
	b->premap_known += v != 0;
	pthread_mutex_unlock(&b->mu);
	if (v) {
		/* again: the kernel's map forgets the least used */
		tell_kernel(b, &k, ctime, v);
		close(fd);
		return true;
	}
	queue_premap(b, fd, pid, 0);
	return false;
}

void bpfexec_answer_after(struct bpfexec *b, uint64_t id)
{
	queue_premap(b, -1, 0, id);
}

bool bpfexec_holds(const struct bpfexec *b, pid_t pid)
{
	char path[700], line[32];
	snprintf(path, sizeof path, "%s/cgroup.procs", b->cgroup);
	FILE *f = fopen(path, "re");
	bool in = false;
	while (f && !in && fgets(line, sizeof line, f))
		in = strtol(line, NULL, 10) == (long)pid;
	if (f)
		fclose(f);
	return in;
}

/* The task's pid in its own pid namespace (the last of NSpid); -1. */
static long inner_pid(unsigned pid)
{
	char p[64], line[256];
	snprintf(p, sizeof p, "/proc/%u/status", pid);
	FILE *f = fopen(p, "re");
	long inner = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *last = strrchr(line, '\t');
			inner = last ? strtol(last + 1, NULL, 10) : -1;
			break;
		}
	if (f)
		fclose(f);
	return inner;
}

void bpfexec_on_refusals(struct bpfexec *b, struct audit *log)
{
	static const char *const hooks[] = { "", "bprm_check_security", "mmap_file", "file_mprotect" };
	static const char *const calls[] = { "", "execve", "mmap", "mprotect" };
	uint64_t n;
	(void)!read(b->notefd, &n, sizeof n);
	pthread_mutex_lock(&b->mu);
	struct refusal *list = b->head;
	b->head = NULL;
	b->tail = &b->head;
	b->queued = 0;
	pthread_mutex_unlock(&b->mu);
	for (struct refusal *r = list, *next; r; r = next) {
		next = r->next;
		unsigned h = r->rec.hook < ARRAY_LEN(hooks) ? r->rec.hook : 0;
		const char *path = r->rec.path[0] ? r->rec.path : NULL;
		audit_emit_event(log, ev_exec(&(struct ev_exec){
			.pid = inner_pid(r->rec.pid), .ppid = -1, .host_pid = r->rec.pid, .cwd = NULL,
			.path = path ? path : "", .argv = NULL, .resolved = path,
			.sha256 = r->hex[0] ? r->hex : NULL,
			.hash_missing = r->hex[0] ? NULL : "not hashed", .interpreter = "",
			.deny = r->why[0] ? r->why : "refused", .syscall = calls[h], .kernel_hook = hooks[h] }),
			NULL);
		if (r->rec.reason == EXEC_LSM_RULE)
			audit_emit_event(log, ev_alert(&(struct ev_alert){ .rule = "exec.denied",
				.path = path ? path : "", .action = r->why[0] ? r->why : "refused" }), NULL);
		free(r);
	}
}

json_t *bpfexec_stats(const struct bpfexec *b)
{
	struct bpfexec *m = (struct bpfexec *)b;
	pthread_mutex_lock(&m->mu);
	json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:I, s:I}",
		"by", "bpf-lsm",
		"check_ms", (json_int_t)b->check_ms, "refusals_not_logged", (json_int_t)b->dropped,
		"requests", (json_int_t)b->requests, "allowed", (json_int_t)b->allowed,
		"denied", (json_int_t)b->denied, "learned", (json_int_t)b->learned,
		"refused", (json_int_t)b->refused, "timeouts", (json_int_t)b->timeouts,
		"answer_ms_mean", b->allowed + b->denied
			? (double)b->answer_ns_total / 1e6 / (double)(b->allowed + b->denied) : 0.0,
		"answer_ms_max", (double)b->answer_ns_max / 1e6,
		"premapped", (json_int_t)b->premapped, "premap_known", (json_int_t)b->premap_known,
		"premap_hashed", (json_int_t)b->premap_worked);
	pthread_mutex_unlock(&m->mu);
	return j;
}

#else /* !WARDEN_BPF */

struct bpfexec {
	int unused;
};

struct bpfexec *bpfexec_new(const struct policy *p, const char *cgroup, bool *unavailable,
			    struct werr *e)
{
	*unavailable = true;
	return werr_set(e, 0, "in-kernel exec enforcement was not built: %s", WARDEN_BPF_MISSING), NULL;
}

void bpfexec_free(struct bpfexec *b)
{
}

bool bpfexec_holds(const struct bpfexec *b, pid_t pid)
{
	return false;
}

void bpfexec_learn(struct bpfexec *b, const struct stat *st, const char *hex, const char *code,
		   bool immutable, const char *resolved)
{
}

int bpfexec_watch(struct loop *l, struct bpfexec *b, struct audit *log, struct werr *e)
{
	return 0; /* never made: nothing to watch */
}

int bpfexec_set_listener(struct bpfexec *b, int listener)
{
	return -1;
}

bool bpfexec_premap(struct bpfexec *b, pid_t pid, int fd)
{
	close(fd);
	return true;
}

void bpfexec_answer_after(struct bpfexec *b, uint64_t id)
{
}

void bpfexec_on_refusals(struct bpfexec *b, struct audit *log)
{
}

json_t *bpfexec_stats(const struct bpfexec *b)
{
	return json_object();
}

#endif
