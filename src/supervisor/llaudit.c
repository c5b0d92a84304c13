/* llaudit.c - Landlock's denials on the record (llaudit.h): the audit
 * netlink socket joined to the read-only multicast group, the records of one
 * serial gathered until its EOE, each event attributed to the session or
 * not, and the session's turned into events under a rate limit.
 *
 * Attribution. A denial record names the Landlock domain that refused; the
 * first logged denial of a domain comes with a DOMAIN record naming the
 * process that created it. The session's own domain is the one sandbox init
 * created (its host pid); a domain the agent stacked on it was created by a
 * process in the session's pid namespace. Each domain's verdict is
 * remembered (until the kernel says it is freed), so later denials of it
 * are matched even when its creator is gone. A domain whose creator is
 * gone, or never seen allocated, is judged by the process that was refused
 * (the SYSCALL record's pid: in the session's pid namespace or not), or,
 * when that one exited too, by its parent then (ppid). A process is judged
 * by /proc/PID/ns/pid, so only while it lives: the records are read as
 * they come, a few microseconds after the syscall. Records come from the kernel only (a
 * sender other than port 0 is ignored); the sandbox cannot forge one. */
#include "llaudit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../audit/llrecord.h"
#include "../sandbox/features.h"
#include "../common/clock.h"
#include "../common/util.h"

#define PENDING_MAX 32
#define PENDING_AGE_MS 200.0
#define DOMAINS_MAX 256
#define EXECS_MAX 4096
/* The rate limit: a hostile agent can be refused a million times a second. */
#define RATE_PER_S 50.0
#define BURST 200.0
#define SESSION_CAP 10000
/* At the end: the records still on their way from kauditd, read until the
 * end marker comes back (llaudit_end), or until none came for END_QUIET_MS
 * when it does not (an audit rule may leave user messages out). */
#define END_QUIET_MS 30
#define END_MAX_MS 300

struct domain_verdict {
	uint64_t id;
	bool ours;
};

struct llaudit {
	int fd;
	pid_t init_pid;
	dev_t ns_dev;
	ino_t ns_ino;
	int ns_level;            /* the index of the session's pid namespace in NSpid */
	struct audit *log;
	struct llev pending[PENDING_MAX];
	double pending_t[PENDING_MAX];
	struct domain_verdict dom[DOMAINS_MAX];
	/* the processes of the session seen executing (its exec events): host
	 * pid to pid inside, for those gone before their records are read */
	struct {
		long host, inside;
	} execs[EXECS_MAX];
	size_t nexecs, exec_next;
	size_t ndom, dom_next;
	double tokens, last_ms;
	unsigned long emitted;
	unsigned long dropped[4]; /* by enum llev_kind */
	unsigned long overruns;   /* the socket's buffer overflowed (ENOBUFS) */
	unsigned long lost_at_start; /* the kernel's own count of lost records, at the probe */
	char marker[48];          /* the end marker's text, once sent; "" none */
	bool marker_seen;
};

static int on_stream(void *ctx, const struct event *ev, struct werr *e);

struct llaudit *llaudit_open(pid_t init_pid, const struct stat *pidns,
			     struct llaudit_probed *probed, struct audit *log, char *why, size_t len)
{
	_cleanup_close_ int fd = steal_fd(&probed->fd);
	if (fd < 0) {
		snprintf(why, len, "the audit multicast group: not joined");
		return NULL;
	}
	if (!pidns) {
		snprintf(why, len, "the sandbox's pid namespace: unknown (its /proc/PID/ns/pid "
			 "could not be read)");
		return NULL;
	}
	int level = features_nspid_count(init_pid);
	if (level < 2) {
		snprintf(why, len, "the sandbox's pid namespace: no NSpid for its init");
		return NULL;
	}
	struct llaudit *la = xcalloc(1, sizeof *la); /* (large: not built on the stack) */
	la->fd = steal_fd(&fd);
	la->init_pid = init_pid;
	la->ns_dev = pidns->st_dev;
	la->ns_ino = pidns->st_ino;
	la->ns_level = level - 1;
	la->log = log;
	la->tokens = BURST;
	la->last_ms = mono_ms();
	la->lost_at_start = probed->lost;
	audit_subscribe(log, on_stream, la);
	return la;
}

static void on_ready(struct loop *l, const struct source *src, uint32_t events)
{
	llaudit_dispatch(src->ctx);
}

int llaudit_watch(struct loop *l, struct llaudit *la, struct werr *e)
{
	return loop_add(l, "Landlock's records", la->fd, on_ready, la, e);
}

/* ---- attribution ----------------------------------------------------------- */

/* The pid inside of a host pid the session was seen executing as, newest
 * first, or -1. */
static long exec_seen(const struct llaudit *la, long pid)
{
	for (size_t k = 0; k < la->nexecs; k++) {
		size_t i = (la->exec_next + EXECS_MAX - 1 - k) % EXECS_MAX;
		if (la->execs[i].host == pid)
			return la->execs[i].inside;
	}
	return -1;
}

/* The stream's exec events (a subscriber: audit.h). */
static int on_stream(void *ctx, const struct event *ev, struct werr *e)
{
	struct llaudit *la = ctx;
	if (strcmp(ev->kind, "exec") != 0 || !ev->fields)
		return 0;
	json_int_t host = json_integer_value(json_object_get(ev->fields, "host_pid"));
	json_int_t inside = json_integer_value(json_object_get(ev->fields, "pid"));
	if (host <= 0 || inside <= 0)
		return 0;
	la->execs[la->exec_next].host = (long)host;
	la->execs[la->exec_next].inside = (long)inside;
	la->exec_next = (la->exec_next + 1) % EXECS_MAX;
	if (la->nexecs < EXECS_MAX)
		la->nexecs++;
	return 0;
}

/* 1 when pid is in the session's pid namespace, 0 when it is elsewhere,
 * -1 when it is gone (or unreadable) and was not seen executing in the
 * session. */
static int in_session(const struct llaudit *la, long pid)
{
	if (pid <= 0)
		return -1;
	if (pid == la->init_pid)
		return 1;
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%ld/ns/pid", pid);
	if (stat(path, &st) < 0)
		return exec_seen(la, pid) > 0 ? 1 : -1;
	return st.st_dev == la->ns_dev && st.st_ino == la->ns_ino;
}

/* The pid of a host pid as the sandbox sees it, or -1: NSpid's entry for
 * the session's namespace, when the process is as deep as the session's
 * processes (its ns link is gone once it exits; its status stays until it
 * is reaped). Only for a process of an event already judged the session's. */
static long pid_inside(const struct llaudit *la, long pid)
{
	if (pid <= 0)
		return -1;
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/status", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return exec_seen(la, pid);
	char line[256];
	long v = -1;
	int n = 0;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "NSpid:", 6) == 0) {
			for (char *t = strtok(line + 6, " \t\n"); t; t = strtok(NULL, " \t\n"), n++)
				if (n == la->ns_level)
					v = strtol(t, NULL, 10);
			break;
		}
	fclose(f);
	if (n == la->ns_level + 1 && v > 0)
		return v;
	return exec_seen(la, pid);
}

static struct domain_verdict *domain_find(struct llaudit *la, uint64_t id)
{
	for (size_t i = 0; i < la->ndom; i++)
		if (la->dom[i].id == id)
			return &la->dom[i];
	return NULL;
}

static void domain_remember(struct llaudit *la, uint64_t id, bool ours)
{
	struct domain_verdict *d = domain_find(la, id);
	if (d) {
		d->ours = ours;
		return;
	}
	if (la->ndom < DOMAINS_MAX) {
		la->dom[la->ndom++] = (struct domain_verdict){ id, ours };
		return;
	}
	/* full: overwrite round robin, never the session's own domains */
	for (size_t k = 0; k < DOMAINS_MAX; k++) {
		size_t i = (la->dom_next + k) % DOMAINS_MAX;
		if (!la->dom[i].ours || ours) {
			la->dom[i] = (struct domain_verdict){ id, ours };
			la->dom_next = (i + 1) % DOMAINS_MAX;
			return;
		}
	}
}

static void domain_forget(struct llaudit *la, uint64_t id)
{
	for (size_t i = 0; i < la->ndom; i++)
		if (la->dom[i].id == id) {
			la->dom[i] = la->dom[--la->ndom];
			return;
		}
}

/* Is ev the session's? */
static bool ours(struct llaudit *la, const struct llev *ev)
{
	uint64_t id;
	if (!llev_domain(ev, &id))
		return false;
	const struct domain_verdict *d = domain_find(la, id);
	if (d)
		return d->ours;
	long creator = llev_creator(ev);
	if (creator > 0) {
		int in = in_session(la, creator);
		if (in >= 0) {
			domain_remember(la, id, in == 1);
			return in == 1;
		}
	}
	/* the creator unknown or gone: the process refused, or, when it is
	 * gone too (it exited right after), its parent at the time: a child
	 * of a process in the session is in the session (a process cannot
	 * leave its pid namespace, an orphan is reparented within it) */
	int in = in_session(la, llev_pid(ev));
	if (in < 0 && ev->syscall) {
		unsigned long long ppid;
		if (llrec_num(ev->syscall, "ppid", 10, &ppid) && ppid > 1 && ppid < 0x7fffffff &&
		    in_session(la, (long)ppid) == 1)
			in = 1;
	}
	if (in == 1)
		domain_remember(la, id, true);
	return in == 1;
}

/* ---- events ------------------------------------------------------------------ */

static bool rate_ok(struct llaudit *la)
{
	double t = mono_ms();
	la->tokens += (t - la->last_ms) / 1e3 * RATE_PER_S;
	if (la->tokens > BURST)
		la->tokens = BURST;
	la->last_ms = t;
	if (la->emitted >= SESSION_CAP || la->tokens < 1.0)
		return false;
	la->tokens -= 1.0;
	return true;
}

/* The syscall's name by the SYSCALL record's arch and number (malloc'd),
 * or NULL. */
static char *syscall_name(const struct llev *ev)
{
	unsigned long long arch, nr;
	if (!ev->syscall || !llrec_num(ev->syscall, "arch", 16, &arch) ||
	    !llrec_num(ev->syscall, "syscall", 10, &nr) || nr > 0xffff)
		return NULL;
	return seccomp_syscall_resolve_num_arch((uint32_t)arch, (int)nr);
}

static void finish(struct llaudit *la, struct llev *ev)
{
	enum llev_kind k = llev_kind(ev);
	if (k != LLEV_NONE && ours(la, ev)) {
		if (!rate_ok(la)) {
			la->dropped[k]++;
		} else {
			_cleanup_free_ char *name = syscall_name(ev);
			long target = -1;
			unsigned long long opid;
			if (k == LLEV_SIGNAL && llrec_num(ev->access[0], "opid", 10, &opid) && opid < 0x7fffffff)
				target = pid_inside(la, (long)opid);
			struct event e = llev_event(ev, pid_inside(la, llev_pid(ev)), name, target);
			if (e.fields && audit_emit_event(la->log, e, NULL) == 0)
				la->emitted++;
		}
	}
	llev_clear(ev);
}

static struct llev *pending_find(struct llaudit *la, unsigned long serial, bool make)
{
	size_t free_i = PENDING_MAX, oldest = PENDING_MAX;
	for (size_t i = 0; i < PENDING_MAX; i++) {
		struct llev *ev = &la->pending[i];
		if (ev->serial == serial && ev->serial)
			return ev;
		if (!ev->serial && free_i == PENDING_MAX)
			free_i = i;
		if (ev->serial && (oldest == PENDING_MAX || la->pending_t[i] < la->pending_t[oldest]))
			oldest = i;
	}
	if (!make)
		return NULL;
	if (free_i == PENDING_MAX) {
		finish(la, &la->pending[oldest]);
		free_i = oldest;
	}
	la->pending[free_i].serial = serial;
	la->pending_t[free_i] = mono_ms();
	return &la->pending[free_i];
}

/* Events whose EOE never came (a process without an audit context), once
 * old enough; all of them with all. */
static void flush_pending(struct llaudit *la, bool all)
{
	double t = mono_ms();
	for (size_t i = 0; i < PENDING_MAX; i++)
		if (la->pending[i].serial && (all || t - la->pending_t[i] > PENDING_AGE_MS))
			finish(la, &la->pending[i]);
}

/* The serial of a record's header, cheaply (most records on the group are
 * the host's and concern no one here). */
static bool serial_of(const char *text, size_t len, unsigned long *serial)
{
	const char *end = text + len, *p = memchr(text, ':', len < 40 ? len : 40);
	if (!p || len < 7 || memcmp(text, "audit(", 6) != 0)
		return false;
	unsigned long v = 0;
	const char *s = ++p;
	while (p < end && *p >= '0' && *p <= '9' && p - s < 12)
		v = v * 10 + (unsigned long)(*p++ - '0');
	if (p == s || p == end || *p != ')')
		return false;
	*serial = v;
	return true;
}

static void on_record(struct llaudit *la, int type, const char *text, size_t len)
{
	if (type == AUDIT_USER && la->marker[0] && memmem(text, len, la->marker, strlen(la->marker)))
		la->marker_seen = true;
	unsigned long serial;
	if (!serial_of(text, len, &serial) || !serial)
		return;
	if (type != KAUDIT_LANDLOCK_ACCESS && type != KAUDIT_LANDLOCK_DOMAIN) {
		if (type != KAUDIT_SYSCALL && type != KAUDIT_EOE)
			return;
		struct llev *ev = pending_find(la, serial, false);
		if (!ev)
			return;
		if (type == KAUDIT_EOE) {
			finish(la, ev);
			return;
		}
	}
	struct llrec *r = xmalloc(sizeof *r);
	if (llrec_parse(type, text, len, r) < 0) {
		free(r);
		return;
	}
	if (type == KAUDIT_LANDLOCK_DOMAIN) {
		const char *status = llrec_get(r, "status", NULL);
		unsigned long long id;
		if (status && strcmp(status, "deallocated") == 0) {
			/* the id is never used again */
			if (llrec_num(r, "domain", 16, &id))
				domain_forget(la, id);
			free(r);
			return;
		}
	}
	struct llev *ev = pending_find(la, serial, true);
	ev->sec = r->sec;
	ev->msec = r->msec;
	llev_add(ev, r);
}

void llaudit_dispatch(struct llaudit *la)
{
	union {
		char b[LLREC_TEXT_MAX + 512];
		struct nlmsghdr align;
	} u;
	for (int budget = 0; budget < 4096; budget++) {
		struct sockaddr_nl from;
		socklen_t fl = sizeof from;
		ssize_t n = recvfrom(la->fd, u.b, sizeof u.b, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (n < 0) {
			if (errno == ENOBUFS) {
				la->overruns++;
				continue;
			}
			break; /* EAGAIN: all read */
		}
		if (from.nl_pid != 0)
			continue; /* not the kernel */
		/* one record a message; its length is not padded to NLMSG_ALIGNTO */
		int len = (int)n;
/* NLMSG_OK compares the header's __u32 length with the int its users pass:
		 * clang's -Wsign-compare sees that inside the macro, gcc does not. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
		for (struct nlmsghdr *h = &u.align; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len))
			on_record(la, h->nlmsg_type, NLMSG_DATA(h), h->nlmsg_len - NLMSG_HDRLEN);
#pragma GCC diagnostic pop
	}
	flush_pending(la, false);
}

/* The end marker: a user message (AUDIT_USER, which needs
 * CAP_AUDIT_WRITE) through the kernel's audit queue. Every process of the
 * sandbox is gone, so each of their records is in that queue already, and
 * kauditd sends the group what it holds in order: once the marker is read
 * back, nothing of the session is still on its way. The host's audit log
 * gets the line too. true when sent. */
static bool send_marker(struct llaudit *la)
{
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0)
		return false;
	unsigned int nonce = 0;
	if (getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != (ssize_t)sizeof nonce)
		nonce = (unsigned int)mono_ns() ^ (unsigned int)getpid();
	snprintf(la->marker, sizeof la->marker, "warden-landlock-end-%d-%08x", (int)la->init_pid,
		 nonce);
	struct {
		struct nlmsghdr h;
		char text[sizeof la->marker];
	} req = { .h = { .nlmsg_type = AUDIT_USER, .nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = 1 } };
	size_t n = strlen(la->marker);
	memcpy(req.text, la->marker, n + 1); /* the kernel makes the last byte a NUL */
	req.h.nlmsg_len = (uint32_t)NLMSG_LENGTH(n + 1);
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&k, sizeof k) < 0) {
		la->marker[0] = '\0';
		return false;
	}
	return true;
}

void llaudit_end(struct llaudit *la)
{
	if (!la)
		return;
	send_marker(la);
	double start = mono_ms();
	while (!la->marker_seen) {
		double left = END_MAX_MS - (mono_ms() - start);
		if (left <= 0)
			break;
		struct pollfd p = { .fd = la->fd, .events = POLLIN };
		if (poll(&p, 1, left < END_QUIET_MS ? (int)left : END_QUIET_MS) <= 0)
			break;
		llaudit_dispatch(la);
	}
	flush_pending(la, true);
	unsigned long dropped = la->dropped[LLEV_FILE] + la->dropped[LLEV_NET] +
				la->dropped[LLEV_SIGNAL];
	unsigned long lost = 0;
	struct audit_status st;
	if (features_audit_status(&st) == 0 && st.lost > la->lost_at_start)
		lost = st.lost - la->lost_at_start;
	if (!dropped && !la->overruns && !lost)
		return;
	audit_emit_event(la->log, ev_landlock_suppressed(&(struct ev_landlock_suppressed){
		.file = la->dropped[LLEV_FILE], .net = la->dropped[LLEV_NET],
		.signal = la->dropped[LLEV_SIGNAL], .overruns = la->overruns, .kernel_lost = lost }),
		NULL);
}

void llaudit_free(struct llaudit *la)
{
	if (!la)
		return;
	for (size_t i = 0; i < PENDING_MAX; i++)
		llev_clear(&la->pending[i]);
	audit_unsubscribe(la->log, on_stream, la);
	close(la->fd);
	free(la);
}
