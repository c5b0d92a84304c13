/* notify.c - seccomp user notifications, read by the supervisor: every
 * execve/execveat goes to the exec pipeline (execs.h), which records,
 * decides and answers it (this file only refuses one whose memory cannot be
 * read: out of descriptors, say); a connect to an address
 * outside the sandbox's loopback becomes a refused `net` event (the network
 * namespace refuses it); every syscall the policy refuses becomes a
 * `syscall` event and is answered EPERM. Enforcement is not
 * done here: the filter already decided, this only records and answers.
 * One call is notified for two reasons: an open that creates a file with a
 * setuid or setgid mode is refused, while other opens are recorded (`audit
 * files`, notefile.c); the arguments the filter saw (values, not memory)
 * tell which.
 * With the exec rules in the kernel (bpfexec.h), a file about to be mapped
 * executable (mmap with PROT_EXEC, mprotect adding it) gets its verdict in
 * the kernel's map before the call goes on: the kernel never waits for it.
 *
 * A connect's or a bind's memory is read through /proc/PID/mem, the
 * notification id checked with SECCOMP_IOCTL_NOTIF_ID_VALID after opening
 * it and after reading; a file operation's paths by process_vm_readv, the
 * id checked after reading: a recycled pid cannot feed the log another
 * process's memory. */
#include "notify.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <linux/audit.h>
#include <linux/seccomp.h>

#ifndef X32_SYSCALL_BIT
#define X32_SYSCALL_BIT 0x40000000
#endif
#include <unistd.h>

#include "../common/clock.h"
#include "../common/hosttext.h"
#include "../common/util.h"
#include "../net/proxy.h"
#include "answer.h"
#include "notify_int.h"
#include "stop.h"
#include "target.h"
#include "unixconn.h"
#include "exec/execs.h"
#include "exec/bpfexec.h"
#include "filewhy.h"

#define UNIX_DGRAM_MAX (1L << 20) /* bytes of a datagram the supervisor sends for a process */
#define SYSCALL_EVENTS_MAX 10000 /* refusals logged per session; the rest counted */

/* The reserve filled up again: /dev/null opened once, its other places
 * copies of that descriptor (a dup walks no path). */
static void reserve_take(struct notifier *n)
{
	int from = -1;
	for (int i = 0; i < RESERVE_FDS; i++)
		if (n->reserve[i] >= 0)
			from = n->reserve[i];
	for (int i = 0; i < RESERVE_FDS; i++) {
		if (n->reserve[i] >= 0)
			continue;
		n->reserve[i] = from >= 0 ? fcntl(from, F_DUPFD_CLOEXEC, 0)
					  : open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (from < 0)
			from = n->reserve[i];
	}
}

static bool reserve_give(struct notifier *n)
{
	bool any = false;
	for (int i = 0; i < RESERVE_FDS; i++)
		if (n->reserve[i] >= 0) {
			close(n->reserve[i]);
			n->reserve[i] = -1;
			any = true;
		}
	return any;
}

/* An event whose fields could not be packed (a string that is not UTF-8)
 * is dropped, as it always was. */
void notify_later(struct notifier *n, struct event ev)
{
	if (ev.fields)
		n->event = ev;
}

int notify_supported(struct werr *e)
{
	/* libseccomp finds what the kernel supports by probing it once, in
	 * this process (0.07 ms here): should a probe have failed (a seccomp
	 * filter outside warden's that refuses them), it would refuse every
	 * receive later, and the sandbox would wait on its first exec for ever */
	int api = (int)seccomp_api_get();
	if (api < 5)
		return werr_set(e, EOPNOTSUPP, "supervisor: libseccomp cannot receive the sandbox's "
				"notifications here (its API level %d, 5 needed: the kernel's seccomp(2) "
				"refused its probes; a seccomp filter outside warden, in a container the "
				"engine's, must allow seccomp(2))", api);
	return 0;
}

struct notifier *notifier_new(const struct notifier_cfg *cfg, struct werr *e)
{
	if (notify_supported(e) < 0) /* asked before: the answer kept */
		return NULL;
	struct notifier *n = xcalloc(1, sizeof *n);
	if (seccomp_notify_alloc(&n->req, NULL) < 0) {
		free(n);
		werr_set(e, ENOMEM, "supervisor: seccomp notification buffers");
		return NULL;
	}
	n->fd = cfg->listener;
	n->pidns = -2;
	/* No synchronous wake-ups (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP): they
	 * halve a bare round trip, but the answer then wakes the process on
	 * the supervisor's CPU, whatever runs there; in a parallel build the
	 * compilers queue on one CPU while the other idles (bench/README.md,
	 * the build notebook) */
	n->diag = cfg->diag;
	n->log = cfg->log;
	n->stop = cfg->stop;
	n->execs = cfg->execs;
	n->strict = cfg->strict;
	n->kernel = cfg->kernel && bpfexec_set_listener(cfg->kernel, n->fd) == 0 ? cfg->kernel : NULL;
	n->level = cfg->audit_level;
	filebound_init(&n->bound, n->level);
	netbound_init(&n->netb);
	if (cfg->why)
		n->why = filewhy_new(cfg->why);
	n->wa = cfg->wa;
	n->made = cfg->made;
	n->pol = cfg->pol;
	n->ws = cfg->workspace ? xstrdup(cfg->workspace) : NULL;
	n->plan = cfg->plan;
	for (size_t i = 0; cfg->pol && i < cfg->pol->mask.n; i++)
		n->mask_paths |= strchr(cfg->pol->mask.v[i], '/') != NULL;
	n->ro_ws = cfg->readonly ? xstrdup(cfg->readonly) : NULL;
	n->guarded = cfg->guarded ? xstrdup(cfg->guarded) : NULL;
	notefile_init(n);
	for (int i = 0; i < RESERVE_FDS; i++)
		n->reserve[i] = -1;
	reserve_take(n);
	return n;
}

/* May the refused connection to dest be recorded one by one
 * (netbound.h)? */
static bool net_admit(struct notifier *n, const char *dest)
{
	return netbound_admit(&n->netb, n->log, dest, mono_ms());
}

void notifier_free(struct notifier *n)
{
	if (!n)
		return;
	if (n->suppressed) {
		audit_emit_event(n->log, ev_syscall_suppressed(n->suppressed), NULL);
	}
	struct ev_file sum;
	while (filebound_summary(&n->bound, true, 0, &sum))
		audit_emit_event(n->log, ev_file(&sum), NULL);
	filebound_free(&n->bound);
	netbound_end(&n->netb, n->log);
	filewhy_free(n->why);
	if (n->pidns >= 0)
		close(n->pidns);
	reserve_give(n);
	seccomp_notify_free(n->req, NULL);
	free(n->guarded);
	free(n->ro_ws);
	free(n->ws);
	free(n);
}

/* An IPv4 address (host order) the kernel connects to on the sandbox's
 * own loopback: 127/8, and the unspecified 0.0.0.0, which connect takes
 * for the loopback (glibc's getaddrinfo connects a UDP socket to it, and
 * to ::, to sort a passive lookup's answers: no packet is sent). */
static bool v4_inside(uint32_t a)
{
	return (a >> 24) == 127 || a == 0;
}

/* A connect to the sandbox's own loopback: noted, looked at once answered
 * (host_loopback_said). Not the proxy's ports. */
static void host_loopback_hint(struct notifier *n, const struct seccomp_notif *req, int family,
			       unsigned port)
{
	if (port == PROXY_HTTP_PORT || port == PROXY_SOCKS_PORT || n->loop.port)
		return;
	n->loop.family = family;
	n->loop.port = port;
	n->loop.host_pid = req->pid;
	n->loop.pid = target_inner_ns(req->pid, &n->pidns);
}

/* The connect noted, answered now: at a port where nothing listens inside
 * and a program of the host listens on its loopback, the host's was meant
 * (loophint.h). Recorded once a port as a refused way out, the reason
 * naming the flag that would reach it. */
static void host_loopback_said(struct notifier *n)
{
	struct loophint *h = &n->loop;
	unsigned port = h->port;
	h->port = 0;
	if (!port || !loophint_host_only(h, n->diag, h->family, port))
		return;
	bool v6 = h->family == AF_INET6;
	const char *addr = v6 ? "::1" : "127.0.0.1", *host = v6 ? "[::1]" : addr;
	char why[300];
	snprintf(why, sizeof why, "nothing listens at port %u inside; the host's %s:%u, where "
		 "a program listens, is not the sandbox's loopback: reach it with --allow-net "
		 "%s:%u", port, host, port, host, port);
	audit_emit_event(n->log, ev_net_connect(&(struct ev_net_connect){
		.pid = h->pid, .host_pid = h->host_pid, .address = addr, .port = port,
		.reason = why }), NULL);
}

/* A name lookup of a program's own: DNS at port 53 of the sandbox's
 * loopback (glibc's default with no /etc/resolv.conf, which the sandbox
 * has not). Nothing answers there, and the program says only "could not
 * resolve": recorded once a session, as a refused way out whose reason
 * says what does reach out (the end's summary lists it). */
static void dns_lookup(struct notifier *n, const struct seccomp_notif *req, const char *addr)
{
	if (n->dns_said)
		return;
	n->dns_said = true;
	audit_emit_event(n->log, ev_net_connect(&(struct ev_net_connect){
		.pid = target_inner_ns(req->pid, &n->pidns), .host_pid = req->pid, .address = addr,
		.port = 53, .reason = "a program looked a name up itself, and the sandbox has no "
		"resolver: names are looked up by warden's proxy for the programs that use it "
		"(HTTPS_PROXY, HTTP_PROXY: curl, pip, npm, git over https); ssh and git over ssh go "
		"through it with --allow-net HOST:22; Node 24 or later with NODE_USE_ENV_PROXY=1" }),
		NULL);
}

/* A connect from inside: only warden's proxy (a later layer) leads out, so
 * an IPv4/IPv6 destination outside the sandbox's own loopback is a refused
 * way out; record it. Loopback (v4_inside, ::1, ::, and those mapped into
 * IPv6) and unix sockets stay inside and are not network events. */
static void log_connect(struct notifier *n, const struct seccomp_notif *req, int mem)
{
	bool to = req->data.nr == SCMP_SYS(sendto);
	unsigned aa = to ? 4 : 1, la = to ? 5 : 2; /* the address's and its length's arguments */
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	size_t len = req->data.args[la] < sizeof ss ? (size_t)req->data.args[la] : sizeof ss;
	if (len < sizeof(sa_family_t) || pread(mem, &ss, len, (off_t)req->data.args[aa]) != (ssize_t)len ||
	    seccomp_notify_id_valid(n->fd, req->id) != 0)
		return;
	char host[INET6_ADDRSTRLEN] = "";
	unsigned port = 0;
	if (ss.ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
		if (v4_inside(ntohl(in->sin_addr.s_addr))) {
			if (ntohs(in->sin_port) == 53)
				dns_lookup(n, req, "127.0.0.1");
			else if (!to)
				host_loopback_hint(n, req, AF_INET, ntohs(in->sin_port));
			return;
		}
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
		port = ntohs(in->sin_port);
	} else if (ss.ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
		const struct in6_addr *a6 = &in6->sin6_addr;
		uint32_t mapped;
		memcpy(&mapped, &a6->s6_addr[12], sizeof mapped);
		if (IN6_IS_ADDR_LOOPBACK(a6) || IN6_IS_ADDR_UNSPECIFIED(a6) ||
		    (IN6_IS_ADDR_V4MAPPED(a6) && v4_inside(ntohl(mapped)))) {
			if (ntohs(in6->sin6_port) == 53)
				dns_lookup(n, req, "::1");
			else if (!to)
				host_loopback_hint(n, req, IN6_IS_ADDR_V4MAPPED(a6) ? AF_INET : AF_INET6,
						   ntohs(in6->sin6_port));
			return;
		}
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		port = ntohs(in6->sin6_port);
	} else {
		return;
	}
	char dest[HOST_TEXT_MAX + 8], ht[HOST_TEXT_MAX];
	snprintf(dest, sizeof dest, "%s:%u", host_text(host, ht), port);
	if (!net_admit(n, dest))
		return;
	long inner;
	inner = target_inner_ns(req->pid, &n->pidns);
	notify_later(n, ev_net_connect(&(struct ev_net_connect){
		.pid = inner, .host_pid = req->pid, .address = host, .port = port,
		.method = to ? "sendto" : "connect" }));
}

/* A connect to a pathname unix socket: made by the supervisor, only to a
 * socket bound inside the sandbox (unixconn.h); one the host bound is
 * refused and recorded. true when this was such a connect (*err: the
 * process's answer); false for any other address, left to log_connect. */
static bool connect_unix(struct notifier *n, const struct seccomp_notif *req, int mem, int *err,
			 long *val)
{
	bool to = req->data.nr == SCMP_SYS(sendto);
	unsigned aa = to ? 4 : 1, la = to ? 5 : 2;
	struct sockaddr_un un;
	memset(&un, 0, sizeof un);
	size_t len = req->data.args[la] < sizeof un ? (size_t)req->data.args[la] : sizeof un;
	if (len <= offsetof(struct sockaddr_un, sun_path) ||
	    pread(mem, &un, len, (off_t)req->data.args[aa]) != (ssize_t)len ||
	    un.sun_family != AF_UNIX || un.sun_path[0] == '\0' /* abstract: per namespace */)
		return false;
	char path[sizeof un.sun_path + 1];
	size_t plen = len - offsetof(struct sockaddr_un, sun_path);
	memcpy(path, un.sun_path, plen);
	path[plen] = '\0';
	struct unixconn_result r;
	if (to) {
		/* the datagram itself, read once: what the supervisor sends */
		size_t dlen = (size_t)req->data.args[2];
		if (dlen > UNIX_DGRAM_MAX) {
			*err = EMSGSIZE;
			return true;
		}
		char *data = xmalloc(dlen ? dlen : 1);
		size_t sent = 0;
		if (dlen && pread(mem, data, dlen, (off_t)req->data.args[1]) != (ssize_t)dlen) {
			r = (struct unixconn_result){ .err = EFAULT };
		} else {
			unixconn_sendto(n->diag, req->pid, (int)req->data.args[0], path, data, dlen,
					(int)req->data.args[3], &r, &sent);
		}
		free(data);
		*val = (long)sent;
	} else {
		unixconn_connect(n->diag, req->pid, (int)req->data.args[0], path, &r);
	}
	unixconn_masked(&r, n->ws);
	*err = r.err;
	if (n->guarded) {
		_cleanup_free_ char *lex = target_lexical_path(req->pid, path);
		if (lex && path_is_within(lex, n->guarded))
			notify_later(n, ev_alert(&(struct ev_alert){ .rule = "control.inside", .path = path,
							      .where = lex,
							      .action = "refused" }));
	}
	if (r.verdict == UNIXCONN_HOST && net_admit(n, path)) {
		long inner;
		inner = target_inner_ns(req->pid, &n->pidns);
		notify_later(n, ev_net_unix(&(struct ev_net_unix){
			.pid = inner, .host_pid = req->pid, .path = path, .resolved = r.resolved }));
	}
	return true;
}

static void log_refusal(struct notifier *n, const struct seccomp_notif *req, bool ignored)
{
	if (++n->syscall_events > SYSCALL_EVENTS_MAX) {
		n->suppressed++;
		return;
	}
	/* a foreign ABI (the filter's bad-architecture action notifies too):
	 * named, and the call named by that ABI's table */
	const char *abi = NULL;
	int nr = req->data.nr;
	char abibuf[16];
#ifdef __x86_64__
	if (req->data.arch == AUDIT_ARCH_X86_64 && (nr & X32_SYSCALL_BIT)) {
		abi = "x32";
		nr &= ~X32_SYSCALL_BIT;
	} else if (req->data.arch == AUDIT_ARCH_I386) {
		abi = "i386";
	} else
#endif
	if (req->data.arch != seccomp_arch_native()) {
		snprintf(abibuf, sizeof abibuf, "0x%x", (unsigned)req->data.arch);
		abi = abibuf;
	}
	char *name = seccomp_syscall_resolve_num_arch(abi && !strcmp(abi, "x32") ? SCMP_ARCH_X86_64
										 : req->data.arch, nr);
	long inner;
	inner = target_inner_ns(req->pid, &n->pidns);
	struct ev_syscall x = { .pid = inner, .host_pid = req->pid, .name = name, .nr = req->data.nr,
				.ignored = ignored, .abi = abi };
	memcpy(x.args, req->data.args, sizeof x.args);
	notify_later(n, ev_syscall(&x));
	free(name);
}

/* The event of the notification being handled, written before its answer:
 * what the log cannot take does not run (log.c stops the sandbox then).
 * true when it could not be written. */
static bool emit_pending(struct notifier *n)
{
	bool unlogged = false;
	if (n->event.kind) {
		unlogged = audit_emit_event(n->log, n->event, NULL) < 0 && audit_failed(n->log);
		n->event = (struct event){ 0 };
	}
	return unlogged;
}

/* `exec strict`: a file mapped as code. One on a noexec mount (what the
 * agent wrote) is refused here as the kernel would refuse it, and
 * recorded; anything else goes on (the kernel decides again). true when
 * refused. */
static bool mmap_refused(struct notifier *n, const struct seccomp_notif *req)
{
	char p[64], path[PATH_MAX] = "";
	snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)req->pid, (int)req->data.args[4]);
	int fd = open(p, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return false; /* no such fd: the kernel says EBADF */
	struct statvfs v;
	bool noexec = fstatvfs(fd, &v) == 0 && (v.f_flag & ST_NOEXEC);
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	ssize_t k = readlink(p, path, sizeof path - 1);
	path[k > 0 ? k : 0] = '\0';
	close(fd);
	if (!noexec || seccomp_notify_id_valid(n->fd, req->id) != 0)
		return false;
	if (++n->syscall_events > SYSCALL_EVENTS_MAX) {
		n->suppressed++;
		return true;
	}
	long inner;
	inner = target_inner_ns(req->pid, &n->pidns);
	struct ev_syscall x = { .pid = inner, .host_pid = req->pid, .name = "mmap", .nr = req->data.nr,
				.path = path, .reason = "exec strict: a file the agent can write, mapped "
				"as code (its mount is noexec)" };
	memcpy(x.args, req->data.args, sizeof x.args);
	notify_later(n, ev_syscall(&x));
	return true;
}

/* The exec rules in the kernel: the file an mmap maps executable (its fd
 * argument), or the files where an mprotect makes memory executable, get
 * their verdicts in the kernel's map before the call goes on
 * (bpfexec_premap), so that the kernel finds them there and never waits.
 * What is read of the process is checked to be its (the notification
 * still valid after) and is not trusted further: a file changed before the
 * kernel looks has a new ctime, and the kernel asks itself. true when
 * bpfexec's thread answers the call, once it has their verdicts. */
static bool kernel_first(struct notifier *n, const struct seccomp_notif *req, bool mprotect)
{
	int fds[8];
	size_t nfds = 0;
	if (mprotect) {
		nfds = target_mapped_files(req->pid, req->data.args[0], req->data.args[1], fds,
					   ARRAY_LEN(fds));
	} else {
		char p[64];
		snprintf(p, sizeof p, "/proc/%d/fd/%d", (int)req->pid, (int)req->data.args[4]);
		if ((fds[0] = open(p, O_PATH | O_CLOEXEC)) >= 0)
			nfds = 1; /* else no such fd: the kernel says EBADF */
	}
	bool valid = seccomp_notify_id_valid(n->fd, req->id) == 0;
	bool queued = false;
	for (size_t i = 0; i < nfds; i++) {
		if (valid)
			queued |= !bpfexec_premap(n->kernel, req->pid, fds[i]);
		else
			close(fds[i]);
	}
	if (queued)
		bpfexec_answer_after(n->kernel, req->id);
	return queued;
}

/* A foreign ABI's call (the filter's bad-architecture action): its number
 * names another call here (i386's link is 9, mmap here), and it is
 * refused whatever it is. */
static void handle_foreign(struct notifier *n, const struct seccomp_notif *req)
{
	log_refusal(n, req, false);
	emit_pending(n);
	notify_answer(n->fd, req->id, EPERM, false, 0);
}

/* An mmap or mprotect, notified for `exec strict` (mmap) or the rules in
 * the kernel. */
static void handle_code(struct notifier *n, const struct seccomp_notif *req, bool mprotect)
{
	bool refused = !mprotect && n->strict && mmap_refused(n, req);
	bool unlogged = emit_pending(n);
	if (!refused && !unlogged && n->kernel && kernel_first(n, req, mprotect))
		return; /* answered by bpfexec's thread */
	notify_answer(n->fd, req->id, refused || unlogged ? EPERM : 0, true, 0);
}

/* The process's memory, for a call that goes on once recorded: -1 with
 * *err when it cannot be opened (the reserve given up for it first when
 * the supervisor ran out of fds). */
static int open_mem(struct notifier *n, const struct seccomp_notif *req, int *err)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/mem", (int)req->pid);
	int mem = open(p, O_RDONLY | O_CLOEXEC);
	if (mem < 0 && (errno == EMFILE || errno == ENFILE) && reserve_give(n))
		mem = open(p, O_RDONLY | O_CLOEXEC);
	*err = mem < 0 ? errno : 0;
	return mem;
}

/* An exec the supervisor cannot look at is refused, never let through
 * unseen (the record never fails open). */
static void note_blind(struct notifier *n, const struct seccomp_notif *req, int mem_err)
{
	n->blind++;
	char why[128];
	snprintf(why, sizeof why, "warden could not inspect it: %s", strerror(mem_err));
	notify_later(n, ev_exec(&(struct ev_exec){ .pid = -1, .ppid = -1, .host_pid = req->pid,
		.execveat = req->data.nr == SCMP_SYS(execveat), .interpreter = "", .deny = why }));
}

/* What became of a call, for its answer. */
struct outcome {
	bool unlogged;  /* its event could not be written: refused */
	bool blind;     /* an exec not inspected: refused */
	bool ignore;    /* prctl(PR_SET_DUMPABLE, 0): success, not done (seccomp.c) */
	bool unchecked; /* a connect whose address could not be read: refused */
	bool emulated;  /* done by the supervisor: emu_err, else emu_val */
	int emu_err;
	long emu_val;
	bool cont;      /* recorded, goes on */
};

static void answer(struct notifier *n, const struct seccomp_notif *req, const struct outcome *o)
{
	int error = 0;
	bool go_on = false;
	if (o->unlogged || o->blind)
		error = EACCES;
	else if (o->ignore)
		; /* val 0, error 0: success */
	else if (o->unchecked)
		error = EPERM;
	else if (o->emulated)
		error = o->emu_err; /* done by the supervisor: its result, emu_val */
	else if (o->cont)
		go_on = true;
	else
		error = EPERM;
	notify_answer(n->fd, req->id, error, go_on, o->emulated ? o->emu_val : 0);
}

/* The call recorded (or its refusal), a connect to a unix socket made by
 * the supervisor instead, a bind noted; true when a file operation is
 * held for a question (writeask.c answers it). */
static bool record(struct notifier *n, const struct seccomp_notif *req, int mem, bool valid,
		   const struct file_op *fop, struct outcome *o)
{
	if (!o->cont || o->ignore || o->unchecked)
		log_refusal(n, req, o->ignore);
	else if (valid && fop) {
		enum notefile_fate f = notefile_record(n, req, fop);
		if (f == NOTEFILE_HELD)
			return true;
		o->emulated = f == NOTEFILE_DONE; /* emu_err and emu_val 0: done */
	} else if (valid && req->data.nr == SCMP_SYS(bind))
		notefile_bind(n, req, mem);
	else if (valid)
		o->emulated = connect_unix(n, req, mem, &o->emu_err, &o->emu_val) ||
			      (log_connect(n, req, mem), false);
	return false;
}

/* Handle one pending notification: log it, then answer. 0, or -1 if the
 * listener broke. */
static int notifier_handle(struct notifier *n)
{
	memset(n->req, 0, sizeof *n->req);
	int rc = seccomp_notify_receive(n->fd, n->req);
	/* the kernel's refusal is ECANCELED, its errno left by the ioctl:
	 * ENOENT when the process is gone meanwhile (nothing to do); any other
	 * failure would fail again at once, the notification still pending */
	if (rc == -ECANCELED && (errno == ENOENT || errno == EINTR))
		return 0;
	if (rc < 0) {
		n->broken = rc == -ECANCELED ? errno : -rc;
		return -1;
	}
	const struct seccomp_notif *req = n->req;
	int nr = req->data.nr;
	if (req->data.arch != seccomp_arch_native()) {
		handle_foreign(n, req);
		return 0;
	}
	bool mprotect = nr == SCMP_SYS(mprotect) || nr == SCMP_SYS(pkey_mprotect);
	if (nr == SCMP_SYS(mmap) || mprotect) {
		handle_code(n, req, mprotect);
		return 0;
	}
	bool exec = nr == SCMP_SYS(execve) || nr == SCMP_SYS(execveat);
	/* Everything notified is either recorded and let through (execs,
	 * connects, the file operations of `audit files`) or refused; which,
	 * depends on the syscall and its register arguments, and on whether its
	 * memory was readable only for a connect (below). A connect to a unix
	 * socket is made by the supervisor instead (unixconn.h). */
	bool addressed = nr == SCMP_SYS(connect) || nr == SCMP_SYS(sendto);
	bool binds = nr == SCMP_SYS(bind); /* noted (note_bind), let through */
	const struct file_op *fop = exec || addressed || binds ? NULL : notefile_op(n, req);
	struct outcome o = { .cont = exec || addressed || binds || fop,
			     .ignore = nr == SCMP_SYS(prctl) };
	if (exec && n->execs) {
		/* answered by execs, now or once its file is hashed (it reads the
		 * process's memory without a descriptor) */
		execs_begin(n->execs, req);
		reserve_take(n);
		return 0;
	}
	/* a file operation's paths are read by pid (target_args),
	 * checked valid again once read; a connect's or a bind's memory through
	 * a descriptor opened and checked first */
	int mem_err = 0;
	_cleanup_close_ int mem = o.cont && !fop ? open_mem(n, req, &mem_err) : -1;
	bool valid = (fop || mem >= 0) && seccomp_notify_id_valid(n->fd, req->id) == 0;
	o.blind = exec && mem < 0 && seccomp_notify_id_valid(n->fd, req->id) == 0;
	if (o.blind)
		note_blind(n, req, mem_err);
	o.unchecked = addressed && !valid && seccomp_notify_id_valid(n->fd, req->id) == 0;
	if (record(n, req, mem, valid, fop, &o)) {
		reserve_take(n); /* held: writeask.c answers it */
		return 0;
	}
	o.unlogged = emit_pending(n);
	answer(n, req, &o);
	host_loopback_said(n);
	reserve_take(n);
	return 0;
}

/* The listener: a notification to handle; hung up or broken (the sandbox
 * is gone), no longer watched. One that cannot be received ends the session
 * (fail closed, and no spin on a notification that stays pending): init
 * killed at once, a `kill` event naming why, the loop left with 125. */
static void on_seccomp(struct loop *l, const struct source *src, uint32_t events)
{
	struct notifier *n = src->ctx;
	if (events & (EPOLLHUP | EPOLLERR)) {
		loop_remove(l, src);
		return;
	}
	if (notifier_handle(n) == 0)
		return;
	char why[160];
	snprintf(why, sizeof why, "the seccomp listener failed (%s)", strerror(n->broken));
	wnote("%s: the sandbox was stopped", why);
	stopper_kill(n->stop, why);
	loop_remove(l, src);
	loop_quit(l, 125);
}

int notifier_watch(struct loop *l, struct notifier *n, struct werr *e)
{
	return loop_add(l, "the seccomp listener", n->fd, on_seccomp, n, e);
}

