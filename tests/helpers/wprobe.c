/* wprobe.c - the integration tests' probe: each subcommand tries one thing
 * from inside (or outside) a sandbox and prints one line, "ALLOWED ..." (exit
 * 0) or "DENIED <ERRNO-NAME> <strerror>" (exit 1); usage errors exit 2.
 * Plain C, no dependencies, so it runs from a copy in any workspace. */
/* An independent oracle on purpose, not a copy of src/check/probes*.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

static int allowed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int allowed(const char *fmt, ...)
{
	va_list ap;

	fputs("ALLOWED", stdout);
	if (fmt && *fmt) {
		fputc(' ', stdout);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	fputc('\n', stdout);
	return 0;
}

static int denied_errno(int err)
{
	const char *name = strerrorname_np(err);

	printf("DENIED %s %s\n", name ? name : "E?", strerror(err));
	return 1;
}

static int denied(void) { return denied_errno(errno); }

/* Result of a raw syscall-style call: < 0 means errno is set. */
static int result(long r, const char *what)
{
	if (r < 0)
		return denied();
	return allowed("%s returned %ld", what, r);
}

static int usage(const char *msg)
{
	fprintf(stderr, "wprobe: %s\n", msg);
	return 2;
}

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

static int do_setid(const char *how, const char *bits, const char *path)
{
	mode_t mode = (mode_t)strtoul(bits, NULL, 8);
	long r;
	int fd;
	if (!strcmp(how, "chmod")) {
		r = chmod(path, mode);
	} else if (!strcmp(how, "fchmod")) {
		if ((fd = open(path, O_RDONLY | O_CREAT, 0644)) < 0)
			return denied();
		r = fchmod(fd, mode);
	} else if (!strcmp(how, "fchmodat")) {
		r = fchmodat(AT_FDCWD, path, mode, 0);
	} else if (!strcmp(how, "fchmodat2")) {
		r = syscall(SYS_fchmodat2, AT_FDCWD, path, mode, 0);
	} else if (!strcmp(how, "open")) {
		r = syscall(SYS_open, path, O_WRONLY | O_CREAT, mode);
	} else if (!strcmp(how, "openat")) {
		r = openat(AT_FDCWD, path, O_WRONLY | O_CREAT, mode);
	} else if (!strcmp(how, "creat")) {
		r = creat(path, mode);
	} else if (!strcmp(how, "mknod")) {
		r = mknodat(AT_FDCWD, path, S_IFREG | mode, 0);
	} else if (!strcmp(how, "tmpfile")) {
		r = open(".", O_TMPFILE | O_WRONLY, mode);
		if (r >= 0) {
			char proc[64];
			snprintf(proc, sizeof proc, "/proc/self/fd/%ld", r);
			if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) < 0)
				return denied();
		}
	} else {
		return usage("setid chmod|fchmod|fchmodat|fchmodat2|open|openat|creat|mknod|tmpfile BITS PATH");
	}
	if (r < 0)
		return denied();
	struct stat st;
	if (stat(path, &st) < 0)
		return denied();
	if (st.st_mode & (S_ISUID | S_ISGID))
		return allowed("%s left %s with mode %04o", how, path, (unsigned)(st.st_mode & 07777));
	return allowed("%s: %s has no set-id bit (mode %04o)", how, path, (unsigned)(st.st_mode & 07777));
}


static int parse_int(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return (errno || end == s || *end) ? -1 : 0;
}

/* A child that just waits to be killed. */
static volatile unsigned long child_secret = 0x5eC2e7UL;

static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (int i = 0; i < 300; i++)
			pause();
		_exit(0);
	}
	return pid;
}

/* forks MAX: fork sleeping children until a fork fails or MAX are
 * running; print how many, then DENIED (the fork's errno) or ALLOWED. The
 * children are left running: whoever started this must still end. */
static int do_forks(long max)
{
	long n = 0;
	int err = 0;
	while (n < max) {
		pid_t pid = fork();
		if (pid < 0) {
			err = errno;
			break;
		}
		if (pid == 0) {
			for (;;)
				pause();
		}
		n++;
	}
	printf("forked %ld\n", n);
	return err ? denied_errno(err) : allowed("forked %ld", n);
}

static void on_cont(int sig)
{
	(void)sig;
}

static void *count_forever(void *arg)
{
	(void)arg;
	for (long c = 1;; c++) {
		if (c % 100 == 0) {
			FILE *f = fopen("counter.new", "w");
			if (f && fprintf(f, "%ld\n", c) > 0 && fclose(f) == 0)
				rename("counter.new", "counter");
		}
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	return NULL;
}

/* SIGCONT to every process it can, without end. */
static void *sigcont_forever(void *arg)
{
	(void)arg;
	for (;;)
		kill(-1, SIGCONT);
	return NULL;
}

/* sigcont LOOPERS [timer|thread|threads N]: what would undo a freeze by
 * signals: LOOPERS processes sending SIGCONT to every process they can,
 * without end (kill(-1)), and a counter, which writes its count to
 * ./counter every 100 steps of a millisecond; with "timer", the counter
 * also has a POSIX timer send it SIGCONT every 5 ms (a handler installed,
 * or the kernel would drop the timer's signal); "thread": the same, the
 * count kept by a second thread and the first one ended (the process's
 * state in /proc is then a zombie's); "threads N": each looper sends with
 * N threads (a process stops only once all of its threads have). Never
 * returns: whoever started this must end it. */
static int do_sigcont(long loopers, int timer, int thread, long threads)
{
	for (long i = 0; i < loopers; i++)
		if (fork() == 0) {
			pthread_t th;
			for (long t = 1; t < threads; t++)
				pthread_create(&th, NULL, sigcont_forever, NULL);
			sigcont_forever(NULL);
		}
	if (fork() == 0) {
		if (timer) {
			signal(SIGCONT, on_cont);
			struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGCONT };
			timer_t t;
			struct itimerspec its = { .it_value = { 0, 5000000 }, .it_interval = { 0, 5000000 } };
			if (timer_create(CLOCK_MONOTONIC, &sev, &t) < 0 || timer_settime(t, 0, &its, NULL) < 0)
				_exit(1);
		}
		pthread_t th;
		if (thread && pthread_create(&th, NULL, count_forever, NULL) == 0)
			pthread_exit(NULL);
		count_forever(NULL);
	}
	for (;;)
		pause();
}

/* hop CHAINS: CHAINS loops that each fork and have the parent exit at
 * once ("pid hopping": no process of a loop outlives its one fork), the
 * first process waiting meanwhile, a subreaper that ignores SIGCHLD so
 * that each exited generation is gone at once (and the session goes on);
 * every 200 forks a loop writes "CHAIN COUNT" to ./hop (through a rename,
 * whole). Never returns: whoever started this must end it. */
static int do_hop(long chains)
{
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGCHLD, SIG_IGN);
	long chain = 0;
	for (; chain < chains; chain++) {
		pid_t pid = fork();
		if (pid < 0)
			return denied();
		if (pid == 0)
			break;
	}
	if (chain == chains)
		for (;;)
			pause();
	char tmp[64];
	snprintf(tmp, sizeof tmp, "hop.%ld", chain);
	for (unsigned long n = 1;; n++) {
		pid_t pid = fork();
		if (pid > 0)
			_exit(0);
		if (pid < 0)
			continue; /* the previous generation not gone yet */
		if (n % 200)
			continue;
		FILE *f = fopen(tmp, "w");
		if (f) {
			fprintf(f, "%ld %lu\n", chain, n);
			fclose(f);
			rename(tmp, "hop");
		}
	}
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int do_read(const char *path)
{
	char buf[4096];
	long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return denied();
	while ((n = read(fd, buf, sizeof buf)) > 0)
		total += n;
	if (n < 0) {
		int err = errno;
		close(fd);
		return denied_errno(err);
	}
	close(fd);
	return allowed("read %ld bytes", total);
}

static int do_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return denied();
	if (write(fd, "x", 1) != 1) {
		int err = errno;
		close(fd);
		return denied_errno(err);
	}
	if (close(fd) < 0)
		return denied();
	return allowed("wrote 1 byte");
}

static int do_ls(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		return denied();
	fputs("ALLOWED", stdout);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		printf(" %s", de->d_name);
		n++;
	}
	printf("%s\n", n ? "" : " (empty)");
	closedir(d);
	return 0;
}

static int do_ptrace(pid_t pid, int own_child)
{
	int rc;

	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0) {
		rc = denied();
	} else {
		waitpid(pid, NULL, __WALL);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		rc = allowed("attached to %d", (int)pid);
	}
	if (own_child)
		reap(pid);
	return rc;
}

static int do_pvm(void)
{
	unsigned long got = 0;
	struct iovec local = { &got, sizeof got };
	struct iovec remote = { (void *)&child_secret, sizeof got };
	pid_t pid = spawn_sleeper();
	ssize_t n;
	int rc;

	if (pid < 0)
		return denied();
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		rc = denied();
	else
		rc = allowed("read %zd bytes from child %d: %#lx", n, (int)pid, got);
	reap(pid);
	return rc;
}

static const struct {
	const char *name;
	int flag;
} ns_flags[] = {
	{ "user", CLONE_NEWUSER }, { "mount", CLONE_NEWNS }, { "net", CLONE_NEWNET },
	{ "pid", CLONE_NEWPID },   { "ipc", CLONE_NEWIPC },  { "uts", CLONE_NEWUTS },
	{ "cgroup", CLONE_NEWCGROUP },
};

static int do_unshare(const char *name)
{
	for (size_t i = 0; i < sizeof ns_flags / sizeof ns_flags[0]; i++)
		if (!strcmp(name, ns_flags[i].name)) {
			if (unshare(ns_flags[i].flag) < 0)
				return denied();
			return allowed("unshare %s", name);
		}
	return usage("unshare: FLAGNAME is one of user mount net pid ipc uts cgroup");
}

/* Parent side of a fork-like raw clone: wait for the child, report. */
static int clone_result(long r, const char *what)
{
	if (r < 0)
		return denied();
	if (r == 0)
		_exit(0);
	waitpid((pid_t)r, NULL, __WALL);
	return allowed("%s created child %ld", what, r);
}

static int do_clone_ns(void)
{
	long r = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), 0UL, NULL, NULL, 0UL);

	return clone_result(r, "clone(CLONE_NEWUSER)");
}

static int do_clone3(void)
{
	struct clone_args args;
	long r;

	memset(&args, 0, sizeof args);
	args.flags = CLONE_NEWUSER;
	args.exit_signal = SIGCHLD;
	r = syscall(SYS_clone3, &args, sizeof args);
	return clone_result(r, "clone3(CLONE_NEWUSER)");
}

static int do_setns(void)
{
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return denied();
	if (setns(fd, CLONE_NEWNET) < 0)
		return denied();
	return allowed("setns net");
}

static int do_mount(const char *dir)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return denied();
	if (mount("wprobe", dir, "tmpfs", 0, "size=64k") < 0)
		return denied();
	umount2(dir, MNT_DETACH);
	return allowed("mounted tmpfs on %s", dir);
}

/* open_by_handle_at(2) of directory dir's own handle: whether this
 * process may open files of dir's file system by handle. */
static int do_handle(const char *dir)
{
	char b[sizeof(struct file_handle) + MAX_HANDLE_SZ] __attribute__((aligned(8)));
	struct file_handle *fh = (struct file_handle *)(void *)b;
	int mnt, d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	fh->handle_bytes = MAX_HANDLE_SZ;
	if (d < 0 || name_to_handle_at(d, "", fh, &mnt, AT_EMPTY_PATH) < 0)
		return denied();
	return result(open_by_handle_at(d, fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open_by_handle_at");
}

static int do_bpf(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof attr);
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	return result(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr), "bpf(BPF_MAP_CREATE)");
}

static int do_perf(void)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return result(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0UL), "perf_event_open");
}

static int do_io_uring(void)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof p);
	return result(syscall(SYS_io_uring_setup, 4U, &p), "io_uring_setup");
}

/* int $0x80 from 64-bit code: the i386 syscall table, call nr there
 * (getpid is 20), its arguments 0. */
static int do_i386(long nr)
{
#if defined(__x86_64__)
	long ret = nr;

	__asm__ volatile("xor %%ebx, %%ebx\n\txor %%ecx, %%ecx\n\txor %%edx, %%edx\n\tint $0x80"
			 : "+a"(ret)
			 :
			 : "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory", "cc");
	if (ret < 0 && ret > -4096)
		return denied_errno((int)-ret);
	return allowed("i386 call %ld returned %ld", nr, ret);
#else
	return usage("i386: only on x86_64");
#endif
}

static int do_tiocsti(unsigned long high)
{
	char c = 'x';

	if (syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | high, &c) < 0)
		return denied();
	return allowed("TIOCSTI%s injected a byte", high ? " (high bits set)" : "");
}

static int do_tioclinux(void)
{
	char sub = 6; /* TIOCL_GETSHIFTSTATE: harmless read */

	if (ioctl(0, TIOCLINUX, &sub) < 0)
		return denied();
	return allowed("TIOCLINUX");
}

static int do_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int self, fds[1024], n = 0;

	if (!d)
		return denied();
	self = dirfd(d);
	while ((de = readdir(d)) && n < 1024) {
		long fd;
		if (parse_int(de->d_name, &fd) < 0 || fd == self)
			continue;
		fds[n++] = (int)fd;
	}
	closedir(d);
	/* insertion sort: readdir order is not numeric order */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
			int t = fds[j];
			fds[j] = fds[j - 1];
			fds[j - 1] = t;
		}
	fputs("ALLOWED", stdout);
	for (int i = 0; i < n; i++)
		printf(" %d", fds[i]);
	fputc('\n', stdout);
	return 0;
}

static int resolve(const char *host, const char *port, int type, struct addrinfo **res)
{
	struct addrinfo hints;
	int r;

	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = type;
	hints.ai_flags = AI_NUMERICSERV;
	r = getaddrinfo(host, port, &hints, res);
	if (r != 0) {
		printf("DENIED EAI %s\n", gai_strerror(r));
		return -1;
	}
	return 0;
}

static int do_connect(const char *host, const char *port)
{
	struct addrinfo *ai;
	struct pollfd pfd;
	int fd, err = 0;
	socklen_t len = sizeof err;

	if (resolve(host, port, SOCK_STREAM, &ai) < 0)
		return 1;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return denied();
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS)
			return denied();
		pfd.fd = fd;
		pfd.events = POLLOUT;
		int r = poll(&pfd, 1, 2000);
		if (r < 0)
			return denied();
		if (r == 0)
			return denied_errno(ETIMEDOUT);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			return denied();
		if (err)
			return denied_errno(err);
	}
	freeaddrinfo(ai);
	close(fd);
	return allowed("connected to %s port %s", host, port);
}

static int do_udp(const char *host, const char *port)
{
	struct addrinfo *ai;
	int fd;

	if (resolve(host, port, SOCK_DGRAM, &ai) < 0)
		return 1;
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return denied();
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0)
		return denied();
	if (send(fd, "x", 1, 0) != 1)
		return denied();
	freeaddrinfo(ai);
	close(fd);
	return allowed("sent 1 byte to %s port %s", host, port);
}

/* Non-blocking connects, each socket closed at once, to 10.0.0.1 and the
 * DESTS-1 addresses after it in turn, port 80, for SECONDS: a probe for a
 * way out at full speed (the sandbox refuses every one). Prints how many. */
static int do_connect_flood(const char *secs, const char *dests)
{
	time_t end = time(NULL) + atoi(secs);
	long k = dests ? atol(dests) : 1000, n = 0;
	if (k < 1)
		return usage("connect-flood: DESTS must be at least 1");
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(80) };
	while (time(NULL) < end) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return denied();
		a.sin_addr.s_addr = htonl(0x0a000001u + (uint32_t)(n % k));
		(void)connect(fd, (struct sockaddr *)&a, sizeof a);
		close(fd);
		n++;
	}
	return allowed("%ld connects", n);
}

/* The same through warden's proxy (HTTP_PROXY, http://ADDRESS:PORT/):
 * CONNECT h0.example.invalid:443, h1..., DESTS of them in turn, each
 * answered (refused) and closed, for SECONDS. Prints how many. */
static int do_proxy_flood(const char *secs, const char *dests)
{
	const char *px = getenv("HTTP_PROXY");
	unsigned a, b, c, d, port;
	if (!px || sscanf(px, "http://%u.%u.%u.%u:%u", &a, &b, &c, &d, &port) != 5)
		return usage("proxy-flood: HTTP_PROXY is not http://A.B.C.D:PORT");
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(a << 24 | b << 16 | c << 8 | d) };
	time_t end = time(NULL) + atoi(secs);
	long k = dests ? atol(dests) : 1000, n = 0;
	if (k < 1)
		return usage("proxy-flood: DESTS must be at least 1");
	while (time(NULL) < end) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
			return denied();
		char req[160], ans[256];
		int len = snprintf(req, sizeof req, "CONNECT h%ld.example.invalid:443 HTTP/1.1\r\n"
				   "Host: h%ld.example.invalid:443\r\n\r\n", n % k, n % k);
		if (write(fd, req, (size_t)len) != len || read(fd, ans, sizeof ans) < 0)
			return denied();
		close(fd);
		n++;
	}
	return allowed("%ld connects", n);
}

/* Outside helper: print "LISTENING HOST PORT" (port 0 picks one), then accept
 * one connection ("ACCEPTED", exit 0) or give up after SECONDS ("TIMEOUT",
 * exit 1). */
/* A datagram with an address, the way seccomp cannot see it: sendmsg (or
 * sendmmsg) from an unconnected unix datagram socket to PATH. */
static int do_sendmsg(const char *how, const char *path)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof un.sun_path)
		return usage("sendmsg: path too long");
	strcpy(un.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return denied();
	char data[] = "WPROBE-DATAGRAM";
	struct iovec iov = { .iov_base = data, .iov_len = sizeof data - 1 };
	struct msghdr mh = { .msg_name = &un, .msg_namelen = sizeof un, .msg_iov = &iov, .msg_iovlen = 1 };
	if (!strcmp(how, "sendmmsg")) {
		struct mmsghdr mm = { .msg_hdr = mh };
		int n = sendmmsg(fd, &mm, 1, 0);
		if (n < 1)
			return n < 0 ? denied() : denied_errno(EIO);
		return allowed("sendmmsg sent %u bytes", mm.msg_len);
	}
	ssize_t n = sendmsg(fd, &mh, 0);
	return n < 0 ? denied() : allowed("sendmsg sent %zd bytes", n);
}

static int do_listen(const char *host, const char *port, const char *secs)
{
	struct addrinfo *ai;
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	struct pollfd pfd;
	char hbuf[NI_MAXHOST], pbuf[NI_MAXSERV];
	long seconds;
	int fd, one = 1;

	if (parse_int(secs, &seconds) < 0 || seconds < 0)
		return usage("listen: SECONDS must be a number");
	if (resolve(host, port, SOCK_STREAM, &ai) < 0)
		return 1;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return denied();
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 8) < 0)
		return denied();
	freeaddrinfo(ai);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, len, hbuf, sizeof hbuf, pbuf, sizeof pbuf,
			NI_NUMERICHOST | NI_NUMERICSERV) != 0)
		return denied();
	printf("LISTENING %s %s\n", hbuf, pbuf);
	fflush(stdout);
	pfd.fd = fd;
	pfd.events = POLLIN;
	int r = poll(&pfd, 1, (int)(seconds * 1000));
	if (r <= 0) {
		puts("TIMEOUT");
		return 1;
	}
	int c = accept(fd, NULL, NULL);
	if (c < 0)
		return denied();
	puts("ACCEPTED");
	close(c);
	close(fd);
	return 0;
}

static int do_caps(void)
{
	static const char *keys[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
				      "CapAmb:", "NoNewPrivs:", "Seccomp:" };
	FILE *f = fopen("/proc/self/status", "re");
	char line[512];
	int any = 0;

	if (!f)
		return denied();
	while (fgets(line, sizeof line, f)) {
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
			size_t kl = strlen(keys[i]);
			if (strncmp(line, keys[i], kl))
				continue;
			fputs(line, stdout);
			if (!strncmp(keys[i], "Cap", 3) && strtoull(line + kl, NULL, 16) != 0)
				any = 1;
		}
	}
	fclose(f);
	if (any)
		return allowed("some capability set is non-zero");
	return denied_errno(EPERM);
}

static int parse_signal(const char *s)
{
	long n;

	if (parse_int(s, &n) == 0)
		return (int)n;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (int i = 1; i < NSIG; i++) {
		const char *abbrev = sigabbrev_np(i);
		if (abbrev && !strcmp(abbrev, s))
			return i;
	}
	return -1;
}

static int do_kill(const char *pid_s, const char *sig_s)
{
	long pid;
	int sig = parse_signal(sig_s);

	if (parse_int(pid_s, &pid) < 0 || sig < 0)
		return usage("kill PID SIG");
	if (kill((pid_t)pid, sig) < 0)
		return denied();
	return allowed("sent signal %d to %ld", sig, pid);
}

static int do_ids(void)
{
	gid_t groups[256];
	int n = getgroups(256, groups);

	printf("ALLOWED uid=%u euid=%u gid=%u egid=%u groups=", (unsigned)getuid(),
	       (unsigned)geteuid(), (unsigned)getgid(), (unsigned)getegid());
	for (int i = 0; i < n; i++)
		printf("%s%u", i ? "," : "", (unsigned)groups[i]);
	fputc('\n', stdout);
	return 0;
}

/* Outside helper for fail-closed tests: exec CMD with a seccomp filter under
 * which one kernel feature looks missing (its syscalls fail with ENOSYS).
 * "overlay": mount(2) with exactly MS_RDONLY | MS_NOSUID | MS_NODEV, the
 * flags of warden's overlay on /etc and of no other mount it makes, fails
 * with ENODEV, as where overlayfs is not allowed in a user namespace.
 * "netns": unshare(2) with CLONE_NEWNET fails with EPERM, as under a
 * container engine's default seccomp profile (clone(2) with it still goes
 * through: warden's probe of the kernel's namespaces passes).
 * "setns-user": setns(2) into a user namespace fails with EPERM: the
 * helpers warden starts in the sandbox's namespaces cannot enter them.
 * "clone3": clone3(2) fails with ENOSYS, as under Docker's and
 * containerd's default profiles (and inside a warden session).
 * "fanotify": fanotify_init(2) fails with EPERM, as under Podman's
 * default profile without CAP_SYS_ADMIN. */
static int do_deny(const char *what, char **cmd)
{
	struct sock_filter f[16];
	unsigned n = 0, k;
	long nrs[3];
	unsigned nnr = 0;
	int prctl_too = 0, overlay = 0, netns = 0, setns_user = 0, fanotify = 0;

	if (!strcmp(what, "clone3")) {
		nrs[nnr++] = SYS_clone3;
	} else if (!strcmp(what, "fanotify")) {
		fanotify = 1;
	} else if (!strcmp(what, "overlay")) {
		overlay = 1;
	} else if (!strcmp(what, "netns")) {
		netns = 1;
	} else if (!strcmp(what, "setns-user")) {
		setns_user = 1;
	} else if (!strcmp(what, "landlock")) {
		nrs[nnr++] = SYS_landlock_create_ruleset;
		nrs[nnr++] = SYS_landlock_add_rule;
		nrs[nnr++] = SYS_landlock_restrict_self;
	} else if (!strcmp(what, "seccomp")) {
		nrs[nnr++] = SYS_seccomp;
		prctl_too = 1;
	} else {
		return usage("deny: FEATURE is landlock, seccomp, overlay, netns, setns-user, clone3 "
			     "or fanotify");
	}
#if defined(__x86_64__)
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
#endif
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (k = 0; k < nnr; k++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[k], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	}
	if (overlay) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mount, 0, 3);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3]));
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MS_RDONLY | MS_NOSUID | MS_NODEV, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENODEV);
	}
	if (netns) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 4);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
		f[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, CLONE_NEWNET);
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CLONE_NEWNET, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	}
	if (setns_user) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setns, 0, 3);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]));
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CLONE_NEWUSER, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	}
	if (fanotify) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fanotify_init, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	}
	if (prctl_too) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_SECCOMP, 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
		perror("wprobe deny: seccomp");
		return 2;
	}
	execvp(cmd[0], cmd);
	perror("wprobe deny: exec");
	return 127;
}

/* A small strict JSON validator for the harness (which has no jq/python):
 * `json` checks that stdin is exactly one JSON value, `jsonl` that every
 * non-empty line is one JSON object. */
struct jp {
	const char *s;
	int depth;
};

static void jws(struct jp *p)
{
	while (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')
		p->s++;
}

static int jvalue(struct jp *p);

static int jstring(struct jp *p)
{
	if (*p->s != '"')
		return -1;
	p->s++;
	while (*p->s != '"') {
		unsigned char c = (unsigned char)*p->s;
		if (c < 0x20)
			return -1;
		if (c == '\\') {
			p->s++;
			if (*p->s == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p->s[i]))
						return -1;
				p->s += 4;
			} else if (!strchr("\"\\/bfnrt", *p->s) || !*p->s) {
				return -1;
			}
		}
		p->s++;
	}
	p->s++;
	return 0;
}

static int jnumber(struct jp *p)
{
	const char *s = p->s;

	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (isdigit((unsigned char)*s))
		while (isdigit((unsigned char)*s))
			s++;
	else
		return -1;
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return -1;
		while (isdigit((unsigned char)*s))
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!isdigit((unsigned char)*s))
			return -1;
		while (isdigit((unsigned char)*s))
			s++;
	}
	p->s = s;
	return 0;
}

static int jcontainer(struct jp *p, char close, int object)
{
	if (++p->depth > 200)
		return -1;
	p->s++;
	jws(p);
	if (*p->s == close) {
		p->s++;
		p->depth--;
		return 0;
	}
	for (;;) {
		jws(p);
		if (object) {
			if (jstring(p) < 0)
				return -1;
			jws(p);
			if (*p->s++ != ':')
				return -1;
			jws(p);
		}
		if (jvalue(p) < 0)
			return -1;
		jws(p);
		if (*p->s == ',') {
			p->s++;
			continue;
		}
		if (*p->s++ != close)
			return -1;
		p->depth--;
		return 0;
	}
}

static int jvalue(struct jp *p)
{
	jws(p);
	switch (*p->s) {
	case '{': return jcontainer(p, '}', 1);
	case '[': return jcontainer(p, ']', 0);
	case '"': return jstring(p);
	case 't': return strncmp(p->s, "true", 4) ? -1 : (p->s += 4, 0);
	case 'f': return strncmp(p->s, "false", 5) ? -1 : (p->s += 5, 0);
	case 'n': return strncmp(p->s, "null", 4) ? -1 : (p->s += 4, 0);
	default: return jnumber(p);
	}
}

static int json_ok(const char *text, int want_object)
{
	struct jp p = { text, 0 };

	jws(&p);
	if (want_object && *p.s != '{')
		return 0;
	if (jvalue(&p) < 0)
		return 0;
	jws(&p);
	return *p.s == '\0';
}

static char *slurp_stdin(size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;

	while (buf && (r = read(0, buf + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap) {
			char *nb = realloc(buf, 2 * cap + 1);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

static int do_json(int lines)
{
	size_t len, lineno = 0;
	char *text = slurp_stdin(&len), *line, *save = NULL;

	if (!text)
		return denied();
	if (strlen(text) != len) {
		puts("INVALID NUL byte in input");
		return 1;
	}
	if (!lines) {
		int ok = json_ok(text, 0);
		free(text);
		puts(ok ? "VALID" : "INVALID");
		return !ok;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (!json_ok(line, 1)) {
			printf("INVALID line %zu\n", lineno);
			free(text);
			return 1;
		}
	}
	free(text);
	printf("VALID %zu lines\n", lineno);
	return lineno ? 0 : 1;
}

/* exec-flip GOOD BAD N [vfork]: N times, a process execs the path in a
 * buffer that a second thread rewrites from GOOD to BAD and back all the
 * while (the race of a path changed between a check and the exec); with
 * vfork, the thread runs in the parent and a vfork child execs. The
 * program run gets "flip.I" as its argument. */
static char flip_path[4096];
static const char *flip_paths[2];
static volatile int flip_stop;

static void *flipper(void *arg)
{
	(void)arg;
	for (unsigned i = 0; !flip_stop; i++)
		strcpy(flip_path, flip_paths[i & 1]);
	return NULL;
}

static int do_exec_flip(const char *good, const char *bad, const char *n_text, int use_vfork)
{
	if (strlen(good) >= sizeof flip_path || strlen(bad) >= sizeof flip_path)
		return usage("exec-flip: paths too long");
	flip_paths[0] = good;
	flip_paths[1] = bad;
	int n = atoi(n_text);
	for (int i = 0; i < n; i++) {
		char arg[32];
		snprintf(arg, sizeof arg, "flip.%d", i);
		strcpy(flip_path, good);
		flip_stop = 0;
		pid_t c;
		if (use_vfork) {
			pthread_t t;
			if (pthread_create(&t, NULL, flipper, NULL) != 0)
				return denied();
			c = vfork();
			if (c == 0) {
				char *av[] = { flip_path, arg, NULL };
				execv(flip_path, av);
				_exit(127);
			}
			flip_stop = 1;
			pthread_join(t, NULL);
		} else {
			c = fork();
			if (c == 0) {
				pthread_t t;
				if (pthread_create(&t, NULL, flipper, NULL) != 0)
					_exit(126);
				char *av[] = { flip_path, arg, NULL };
				execv(flip_path, av);
				_exit(127);
			}
		}
		if (c < 0)
			return denied();
		waitpid(c, NULL, 0);
	}
	return allowed("exec-flip: %d execs", n);
}

/* exec-argflip PROG GOOD BAD N [DELAY_MS]: N times, a process execs PROG
 * with one argument, a buffer a second thread rewrites from GOOD to BAD:
 * back and forth all the while, or (DELAY_MS) once, that long after the
 * exec began (while it waits for a human's answer). The race of the
 * arguments changed between warden's look and the kernel's copy. */
static char flip_arg[4096];
static long flip_delay_ms;

static void *argflipper(void *arg)
{
	(void)arg;
	if (flip_delay_ms) {
		usleep((useconds_t)(flip_delay_ms * 1000));
		strcpy(flip_arg, flip_paths[1]);
		return NULL;
	}
	for (unsigned i = 0; !flip_stop; i++)
		strcpy(flip_arg, flip_paths[i & 1]);
	return NULL;
}

static int do_exec_argflip(const char *prog, const char *good, const char *bad, const char *n_text,
			   const char *delay)
{
	if (strlen(good) >= sizeof flip_arg || strlen(bad) >= sizeof flip_arg)
		return usage("exec-argflip: arguments too long");
	flip_paths[0] = good;
	flip_paths[1] = bad;
	flip_delay_ms = delay ? atol(delay) : 0;
	int n = atoi(n_text), ran = 0;
	for (int i = 0; i < n; i++) {
		strcpy(flip_arg, good);
		pid_t c = fork();
		if (c == 0) {
			pthread_t t;
			if (pthread_create(&t, NULL, argflipper, NULL) != 0)
				_exit(126);
			char *av[] = { (char *)prog, flip_arg, NULL };
			execv(prog, av);
			_exit(127);
		}
		if (c < 0)
			return denied();
		int st;
		waitpid(c, &st, 0);
		ran += WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	return allowed("exec-argflip: %d execs, %d exited 0", n, ran);
}

/* clone-vm: a process that shares its memory with its parent while both
 * run (CLONE_VM without CLONE_THREAD or CLONE_VFORK). */
static int clone_vm_child(void *arg)
{
	(void)arg;
	_exit(0);
}

static int do_clone_vm(void)
{
	static char stack[65536] __attribute__((aligned(16)));
	pid_t c = clone(clone_vm_child, stack + sizeof stack, CLONE_VM | SIGCHLD, NULL);
	if (c < 0)
		return denied();
	waitpid(c, NULL, 0);
	return allowed("clone(CLONE_VM) made %d", (int)c);
}

/* swap A B TARGET SECONDS: a hard link of A, then of B, renamed over
 * TARGET back to back (each rename atomic: TARGET always names one of the
 * two), for SECONDS; the race of a file swapped between a check and an
 * exec. */
static int do_swap(const char *a, const char *b, const char *target, const char *secs)
{
	char ta[4096], tb[4096];
	snprintf(ta, sizeof ta, "%s.swap-a", target);
	snprintf(tb, sizeof tb, "%s.swap-b", target);
	time_t end = time(NULL) + atoi(secs);
	unsigned long n = 0;
	while (time(NULL) < end) {
		unlink(ta);
		unlink(tb);
		if (link(a, ta) < 0 || rename(ta, target) < 0 || link(b, tb) < 0 || rename(tb, target) < 0)
			return denied();
		n += 2;
	}
	return allowed("swapped %lu times", n);
}

/* A hand-written loader's first step: the file at path (or a memfd
 * holding its bytes) mapped executable, by mmap or by mprotect of a
 * read-only mapping. */
static int do_map_exec(const char *path, const char *how)
{
	int memfd = how && strstr(how, "memfd"), mprot = how && strstr(how, "mprotect");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return denied();
	if (memfd) {
		int m = (int)syscall(SYS_memfd_create, "wprobe", MFD_CLOEXEC);
		char buf[65536];
		ssize_t n;
		if (m < 0)
			return denied();
		while ((n = read(fd, buf, sizeof buf)) > 0)
			if (write(m, buf, (size_t)n) != n)
				return denied();
		close(fd);
		fd = m;
	}
	void *p = mmap(NULL, 4096, mprot ? PROT_READ : PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return denied();
	if (mprot && mprotect(p, 4096, PROT_READ | PROT_EXEC) < 0)
		return denied();
	return allowed("mapped executable%s%s", memfd ? " (memfd)" : "", mprot ? " (mprotect)" : "");
}

/* audit-enabled [0|1]: the kernel's audit status (AUDIT_GET), or set its
 * enabled flag (AUDIT_SET; root), printing the value it had: the Landlock
 * audit tests turn audit on for their run and back to what it was. */
/* NLMSG_OK compares the header's __u32 length with an int: clang's
 * -Wsign-compare sees that inside the macro, gcc does not. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
static int audit_req(int type, const void *payload, size_t plen, struct audit_status *out)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0)
		return -errno;
	struct {
		struct nlmsghdr h;
		char data[sizeof(struct audit_status)];
	} req;
	memset(&req, 0, sizeof req);
	req.h.nlmsg_len = NLMSG_LENGTH(plen);
	req.h.nlmsg_type = (unsigned short)type;
	req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.h.nlmsg_seq = 1;
	if (plen)
		memcpy(req.data, payload, plen);
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 2 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&k, sizeof k) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	int want = out ? 2 : 1, got = 0, ret = 0;
	while (got < want) {
		union {
			char b[8192];
			struct nlmsghdr a;
		} u;
		ssize_t n = recv(fd, u.b, sizeof u.b, 0);
		if (n < 0) {
			ret = -errno;
			break;
		}
		int left = (int)n;
		for (struct nlmsghdr *h = &u.a; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);
				if (e->error) {
					close(fd);
					return e->error;
				}
				got++;
			} else if (out && h->nlmsg_type == AUDIT_GET) {
				size_t len = h->nlmsg_len - NLMSG_HDRLEN;
				memset(out, 0, sizeof *out);
				memcpy(out, NLMSG_DATA(h), len < sizeof *out ? len : sizeof *out);
				got++;
			}
		}
	}
	close(fd);
	return ret;
}
#pragma GCC diagnostic pop

static int do_audit_enabled(const char *set)
{
	struct audit_status st;
	int r = audit_req(AUDIT_GET, NULL, 0, &st);
	if (r < 0)
		return denied_errno(-r);
	if (!set)
		return allowed("enabled=%u failure=%u auditd=%u", st.enabled, st.failure, st.pid);
	struct audit_status ns;
	memset(&ns, 0, sizeof ns);
	ns.mask = AUDIT_STATUS_ENABLED;
	ns.enabled = (unsigned)atoi(set);
	r = audit_req(AUDIT_SET, &ns, sizeof ns, NULL);
	if (r < 0)
		return denied_errno(-r);
	return allowed("was=%u", st.enabled);
}

/* Landlock by hand (the build host's headers may predate ABI 6). */
struct wp_ruleset_attr {
	uint64_t fs, net, scoped;
};

static int landlock_self(uint64_t fs, uint64_t scoped)
{
	struct wp_ruleset_attr a = { .fs = fs, .scoped = scoped };
	int rs = (int)syscall(SYS_landlock_create_ruleset, &a, sizeof a, 0);
	if (rs < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		return -1;
	close(rs);
	return 0;
}

/* landlock-write PATH: a Landlock domain of its own that grants no write,
 * then a write to PATH (a denial the kernel logs, when audit is on: one of a
 * process that is in no session). Prints its pid first. */
static int do_landlock_write(const char *path)
{
	printf("pid=%d\n", (int)getpid());
	if (landlock_self((1ULL << 1) | (1ULL << 8) /* WRITE_FILE, MAKE_REG */, 0) < 0)
		return denied();
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return denied();
	close(fd);
	return allowed("wrote %s", path);
}

/* landlock-signal: a child that stacks a Landlock domain scoping signals
 * (ABI 6) and signals its parent, outside that domain: refused. Prints the
 * child's pid. */
static int do_landlock_signal(void)
{
	int pfd[2];
	if (pipe(pfd) < 0)
		return denied();
	pid_t c = fork();
	if (c < 0)
		return denied();
	if (c == 0) {
		close(pfd[0]);
		int r = landlock_self(0, 1ULL << 1 /* SCOPE_SIGNAL */) < 0 ? -errno
			: kill(getppid(), SIGCONT) < 0 ? errno : 0;
		(void)!write(pfd[1], &r, sizeof r);
		_exit(0);
	}
	close(pfd[1]);
	int r = 0;
	if (read(pfd[0], &r, sizeof r) != sizeof r)
		r = EIO;
	waitpid(c, NULL, 0);
	printf("pid=%d\n", (int)c);
	if (r < 0)
		return usage("landlock-signal: no Landlock signal scope here");
	if (r)
		return denied_errno(r);
	return allowed("signalled %d", (int)getpid());
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	const char *a1 = argc > 2 ? argv[2] : NULL;
	const char *a2 = argc > 3 ? argv[3] : NULL;
	const char *a3 = argc > 4 ? argv[4] : NULL;
	long n;

	setvbuf(stdout, NULL, _IOLBF, 0);
#define NEED(k, u) do { if (argc < 2 + (k)) return usage(u); } while (0)
	if (!strcmp(cmd, "read")) {
		NEED(1, "read PATH");
		return do_read(a1);
	} else if (!strcmp(cmd, "write")) {
		NEED(1, "write PATH");
		return do_write(a1);
	} else if (!strcmp(cmd, "mkdir")) {
		NEED(1, "mkdir PATH");
		return mkdir(a1, 0755) < 0 ? denied() : allowed("mkdir %s", a1);
	} else if (!strcmp(cmd, "ls")) {
		NEED(1, "ls PATH");
		return do_ls(a1);
	} else if (!strcmp(cmd, "ptrace")) {
		NEED(1, "ptrace PID");
		if (parse_int(a1, &n) < 0)
			return usage("ptrace PID");
		return do_ptrace((pid_t)n, 0);
	} else if (!strcmp(cmd, "ptrace-child")) {
		pid_t pid = spawn_sleeper();
		return pid < 0 ? denied() : do_ptrace(pid, 1);
	} else if (!strcmp(cmd, "forks")) {
		NEED(1, "forks MAX");
		if (parse_int(a1, &n) < 0)
			return usage("forks MAX");
		return do_forks(n);
	} else if (!strcmp(cmd, "sigcont")) {
		long threads = 1;
		NEED(1, "sigcont LOOPERS [timer|thread|threads N]");
		if (parse_int(a1, &n) < 0 || n < 0 ||
		    (a2 && !strcmp(a2, "threads") && (!a3 || parse_int(a3, &threads) < 0 || threads < 1)))
			return usage("sigcont LOOPERS [timer|thread|threads N]");
		return do_sigcont(n, a2 && (!strcmp(a2, "timer") || !strcmp(a2, "thread")),
				  a2 && !strcmp(a2, "thread"), threads);
	} else if (!strcmp(cmd, "hop")) {
		NEED(1, "hop CHAINS");
		if (parse_int(a1, &n) < 0 || n < 1)
			return usage("hop CHAINS");
		return do_hop(n);
	} else if (!strcmp(cmd, "pvm")) {
		return do_pvm();
	} else if (!strcmp(cmd, "unshare")) {
		NEED(1, "unshare FLAGNAME");
		return do_unshare(a1);
	} else if (!strcmp(cmd, "clone-ns")) {
		return do_clone_ns();
	} else if (!strcmp(cmd, "clone3")) {
		return do_clone3();
	} else if (!strcmp(cmd, "setns")) {
		return do_setns();
	} else if (!strcmp(cmd, "mount")) {
		return do_mount(a1 ? a1 : "wprobe-mnt");
	} else if (!strcmp(cmd, "umount")) {
		NEED(1, "umount PATH");
		return umount2(a1, 0) < 0 ? denied() : allowed("unmounted %s", a1);
	} else if (!strcmp(cmd, "pivot_root")) {
		return result(syscall(SYS_pivot_root, ".", "."), "pivot_root");
	} else if (!strcmp(cmd, "chroot")) {
		return chroot(".") < 0 ? denied() : allowed("chroot .");
	} else if (!strcmp(cmd, "open_tree")) {
		return result(syscall(SYS_open_tree, AT_FDCWD, ".", OPEN_TREE_CLONE | O_CLOEXEC),
			      "open_tree");
	} else if (!strcmp(cmd, "handle")) {
		NEED(1, "handle DIR");
		return do_handle(a1);
	} else if (!strcmp(cmd, "fsopen")) {
		return result(syscall(SYS_fsopen, "tmpfs", 0U), "fsopen");
	} else if (!strcmp(cmd, "bpf")) {
		return do_bpf();
	} else if (!strcmp(cmd, "perf")) {
		return do_perf();
	} else if (!strcmp(cmd, "keyctl")) {
		return result(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0),
			      "keyctl");
	} else if (!strcmp(cmd, "add_key")) {
		return result(syscall(SYS_add_key, "user", "wprobe", "x", (size_t)1,
				      KEY_SPEC_PROCESS_KEYRING),
			      "add_key");
	} else if (!strcmp(cmd, "io_uring")) {
		return do_io_uring();
	} else if (!strcmp(cmd, "userfaultfd")) {
		return result(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY), "userfaultfd");
	} else if (!strcmp(cmd, "kexec")) {
		/* 0 segments; flag bit 0x8000 is invalid, so even a privileged
		 * caller gets EINVAL after the permission checks instead of
		 * unloading a loaded kernel image. */
		return result(syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0x8000UL), "kexec_load");
	} else if (!strcmp(cmd, "init_module")) {
		return result(syscall(SYS_init_module, NULL, 0UL, ""), "init_module");
	} else if (!strcmp(cmd, "tiocsti")) {
		return do_tiocsti(0);
	} else if (!strcmp(cmd, "tiocsti-high")) {
		return do_tiocsti(0x100000000UL);
	} else if (!strcmp(cmd, "tioclinux")) {
		return do_tioclinux();
	} else if (!strcmp(cmd, "setid")) {
		/* setid HOW BITS PATH: give PATH a set-id mode (BITS: 4755, 2755,
		 * ...) by chmod, fchmod, fchmodat, fchmodat2, or make it with one
		 * (open, openat, creat, mknod, tmpfile: an O_TMPFILE in PATH's
		 * directory, linked in as PATH) */
		NEED(3, "setid HOW BITS PATH");
		return do_setid(a1, argv[3], argv[4]);
	} else if (!strcmp(cmd, "devnode")) {
		NEED(2, "devnode c|b PATH");
		return result(mknodat(AT_FDCWD, argv[3], (a1[0] == 'b' ? S_IFBLK : S_IFCHR) | 0600,
				      makedev(1, 3)), "mknodat");
	} else if (!strcmp(cmd, "rename2")) {
		/* rename2 noreplace|exchange|whiteout FROM TO: renameat2 with
		 * that flag (whiteout leaves a 0:0 character device at FROM) */
		NEED(3, "rename2 noreplace|exchange|whiteout FROM TO");
		unsigned fl = !strcmp(a1, "noreplace") ? RENAME_NOREPLACE
			      : !strcmp(a1, "exchange") ? RENAME_EXCHANGE
			      : !strcmp(a1, "whiteout") ? RENAME_WHITEOUT : 0;
		if (!fl)
			return usage("rename2 noreplace|exchange|whiteout FROM TO");
		return result(syscall(SYS_renameat2, AT_FDCWD, argv[3], AT_FDCWD, argv[4], fl),
			      "renameat2");
	} else if (!strcmp(cmd, "openat2")) {
		struct open_how how = { .flags = O_RDONLY };
		return result(syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof how), "openat2");
	} else if (!strcmp(cmd, "x32")) {
		/* getpid through the x32 ABI's numbers (bit 30): refused by the
		 * filter before the kernel would say ENOSYS (no x32 support) */
		return result(syscall(0x40000000L | SYS_getpid), "x32 getpid");
	} else if (!strcmp(cmd, "i386")) {
		return do_i386(20);
	} else if (!strcmp(cmd, "i386-nr")) {
		/* a call whose i386 number is a native call's the supervisor
		 * lets go on (link is 9 there, mmap here) */
		NEED(1, "i386-nr N");
		if (parse_int(a1, &n) < 0)
			return usage("i386-nr N");
		return do_i386((long)n);
	} else if (!strcmp(cmd, "fd")) {
		NEED(1, "fd N");
		if (parse_int(a1, &n) < 0)
			return usage("fd N");
		int fl = fcntl((int)n, F_GETFD);
		return fl < 0 ? denied() : allowed("fd %ld is open (flags %#x)", n, fl);
	} else if (!strcmp(cmd, "fds")) {
		return do_fds();
	} else if (!strcmp(cmd, "connect")) {
		NEED(2, "connect HOST PORT");
		return do_connect(a1, a2);
	} else if (!strcmp(cmd, "socket")) {
		NEED(2, "socket FAMILY TYPE (numbers; FAMILY may carry high bits: 0x100000028)");
		/* raw: libc would pass an int, the high bits are the point */
		return result(syscall(SYS_socket, strtoul(a1, NULL, 0), strtoul(a2, NULL, 0), 0L),
			      "socket");
	} else if (!strcmp(cmd, "connect-flood")) {
		NEED(1, "connect-flood SECONDS [DESTS]");
		return do_connect_flood(a1, a2);
	} else if (!strcmp(cmd, "proxy-flood")) {
		NEED(1, "proxy-flood SECONDS [DESTS]");
		return do_proxy_flood(a1, a2);
	} else if (!strcmp(cmd, "udp")) {
		NEED(2, "udp HOST PORT");
		return do_udp(a1, a2);
	} else if (!strcmp(cmd, "sendmsg") || !strcmp(cmd, "sendmmsg")) {
		NEED(1, "sendmsg|sendmmsg PATH");
		return do_sendmsg(cmd, a1);
	} else if (!strcmp(cmd, "listen")) {
		NEED(3, "listen HOST PORT SECONDS");
		return do_listen(a1, a2, a3);
	} else if (!strcmp(cmd, "caps")) {
		return do_caps();
	} else if (!strcmp(cmd, "kill")) {
		NEED(2, "kill PID SIG");
		return do_kill(a1, a2);
	} else if (!strcmp(cmd, "ids")) {
		return do_ids();
	} else if (!strcmp(cmd, "deny")) {
		NEED(2, "deny FEATURE CMD [ARGS...]");
		return do_deny(a1, argv + 3);
	} else if (!strcmp(cmd, "exec-flip")) {
		NEED(3, "exec-flip GOOD BAD N [vfork]");
		return do_exec_flip(a1, a2, a3, argc > 5 && !strcmp(argv[5], "vfork"));
	} else if (!strcmp(cmd, "exec-argflip")) {
		NEED(4, "exec-argflip PROG GOOD BAD N [DELAY_MS]");
		return do_exec_argflip(a1, a2, a3, argv[5], argc > 6 ? argv[6] : NULL);
	} else if (!strcmp(cmd, "map-exec")) {
		NEED(1, "map-exec PATH [mmap|mprotect|memfd|memfd-mprotect]");
		return do_map_exec(a1, a2);
	} else if (!strcmp(cmd, "clone-vm")) {
		return do_clone_vm();
	} else if (!strcmp(cmd, "swap")) {
		NEED(4, "swap A B TARGET SECONDS");
		return do_swap(a1, a2, a3, argv[5]);
	} else if (!strcmp(cmd, "audit-enabled")) {
		return do_audit_enabled(a1);
	} else if (!strcmp(cmd, "landlock-write")) {
		NEED(1, "landlock-write PATH");
		return do_landlock_write(a1);
	} else if (!strcmp(cmd, "landlock-signal")) {
		return do_landlock_signal();
	} else if (!strcmp(cmd, "json")) {
		return do_json(0);
	} else if (!strcmp(cmd, "jsonl")) {
		return do_json(1);
	}
	return usage("usage: wprobe SUBCOMMAND [ARGS] (read write mkdir ls setid devnode rename2 openat2 x32 ptrace ptrace-child forks hop pvm "
		     "unshare clone-ns clone3 setns mount umount pivot_root chroot open_tree handle fsopen "
		     "bpf perf keyctl add_key io_uring userfaultfd kexec init_module tiocsti "
		     "tiocsti-high tioclinux i386 i386-nr fd fds connect connect-flood proxy-flood udp listen caps kill ids deny clone-vm exec-flip exec-argflip map-exec swap "
		     "audit-enabled landlock-write landlock-signal json jsonl)");
}
