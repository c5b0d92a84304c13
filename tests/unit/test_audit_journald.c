/* test_audit_journald.c - unit tests of the journal's copy of the audit
 * stream (src/export/journald.c): field names mapped to journald's charset,
 * the plain and the binary-safe form of a field, an event flattened into an
 * entry (nested objects, arrays, escaped strings as raw bytes, null left
 * out, names that would pass for warden's own), PRIORITY and MESSAGE; then
 * sending to a socket of the test's own standing in for journald: the line
 * hashes of the chain, an entry too large for a datagram in a sealed memfd,
 * a full queue and the bounded wait at the end, journald gone and back, the
 * probe's refusals. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "src/audit/audit.h"
#include "src/audit/emit.h"
#include "src/audit/escape.h"
#include "src/export/journald.h"
#include "src/common/util.h"
#include "check.h"
#include "files.h"

/* ---- an entry parsed back ------------------------------------------------ */

#define FIELDS_MAX 1100

struct entry {
	int n;
	char *name[FIELDS_MAX];
	char *val[FIELDS_MAX];
	size_t len[FIELDS_MAX];
	bool binary[FIELDS_MAX]; /* sent in the binary-safe form */
	bool bad;                /* not well-formed */
};

static void entry_free(struct entry *en)
{
	for (int i = 0; i < en->n; i++) {
		free(en->name[i]);
		free(en->val[i]);
	}
	en->n = 0;
}

/* The native protocol read back as journald reads it. */
static void parse(struct entry *en, const char *p, size_t n)
{
	*en = (struct entry){ 0 };
	const char *end = p + n;
	while (p < end && en->n < FIELDS_MAX) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			en->bad = true;
			return;
		}
		const char *eq = memchr(p, '=', (size_t)(nl - p));
		int i = en->n++;
		if (eq) {
			en->name[i] = xasprintf("%.*s", (int)(eq - p), p);
			en->len[i] = (size_t)(nl - eq - 1);
			en->val[i] = xmalloc(en->len[i] + 1);
			memcpy(en->val[i], eq + 1, en->len[i]);
			en->val[i][en->len[i]] = '\0';
			p = nl + 1;
			continue;
		}
		en->name[i] = xasprintf("%.*s", (int)(nl - p), p);
		en->binary[i] = true;
		p = nl + 1;
		if (end - p < 8) {
			en->bad = true;
			return;
		}
		uint64_t l = 0;
		for (int b = 0; b < 8; b++)
			l |= (uint64_t)(unsigned char)p[b] << (8 * b);
		p += 8;
		if ((uint64_t)(end - p) < l + 1 || p[l] != '\n') {
			en->bad = true;
			return;
		}
		en->len[i] = (size_t)l;
		en->val[i] = xmalloc(l + 1);
		memcpy(en->val[i], p, l);
		en->val[i][l] = '\0';
		p += l + 1;
	}
}

/* The field's index, -1 when absent; *count: how many times it is there. */
static int field(const struct entry *en, const char *name, int *count)
{
	int at = -1, c = 0;
	for (int i = 0; i < en->n; i++)
		if (strcmp(en->name[i], name) == 0) {
			if (at < 0)
				at = i;
			c++;
		}
	if (count)
		*count = c;
	return at;
}

static const char *get(const struct entry *en, const char *name)
{
	int i = field(en, name, NULL);
	return i < 0 ? NULL : en->val[i];
}

/* Every name is one journald takes: A-Z, 0-9, '_', not starting with '_'
 * or a digit, at most 64 bytes. */
static bool names_valid(const struct entry *en)
{
	for (int i = 0; i < en->n; i++) {
		const char *s = en->name[i];
		size_t l = strlen(s);
		if (!l || l > JOURNALD_NAME_MAX || s[0] == '_' || (s[0] >= '0' && s[0] <= '9') ||
		    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != l)
			return false;
	}
	return true;
}

/* ---- encoding -------------------------------------------------------------- */

static void test_names(void)
{
	char out[JOURNALD_NAME_MAX + 1];
	journald_field_name("WARDEN_", "host_pid", out);
	CHECK_STR(out, "WARDEN_HOST_PID");
	journald_field_name("WARDEN_", "kernel_sysctls_user.max_user_namespaces", out);
	CHECK_STR(out, "WARDEN_KERNEL_SYSCTLS_USER_MAX_USER_NAMESPACES");
	journald_field_name("WARDEN_", "a-b c/\xc3\xa9=\n", out);
	CHECK_STR(out, "WARDEN_A_B_C_____");
	journald_field_name("WARDEN_", "", out);
	CHECK_STR(out, "WARDEN_");
	/* 64 bytes fit as they are */
	char key[200];
	memset(key, 'x', 57);
	key[57] = '\0';
	journald_field_name("WARDEN_", key, out);
	CHECK(strlen(out) == 64 && strspn(out + 7, "X") == 57);
	/* longer: cut, with a hash of the whole name, so that two long names
	 * differing at their end stay two */
	memset(key, 'x', 150);
	key[150] = '\0';
	char out2[JOURNALD_NAME_MAX + 1];
	journald_field_name("WARDEN_", key, out);
	key[149] = 'y';
	journald_field_name("WARDEN_", key, out2);
	CHECK(strlen(out) == 64 && strlen(out2) == 64);
	CHECK(strncmp(out, out2, 55) == 0 && out[55] == '_' && strcmp(out, out2) != 0);
	CHECK(strspn(out + 56, "0123456789abcdef") == 8);
}

static void test_put_field(void)
{
	struct bytebuf b = { 0 };
	journald_put_field(&b, "A", "x=y z\t\x01", 7);
	journald_put_field(&b, "B", "", 0);
	journald_put_field(&b, "C", "1\n2", 3);
	static const char want[] = "A=x=y z\t\x01\nB=\nC\n\x03\0\0\0\0\0\0\0" "1\n2\n";
	CHECK(b.len - b.off == sizeof want - 1);
	CHECK(memcmp(b.p + b.off, want, sizeof want - 1) == 0);
	/* a value with a NUL and a newline: its length says where it ends */
	b.off = b.len = 0;
	journald_put_field(&b, "D", "a\0\nb", 4);
	struct entry en;
	parse(&en, b.p + b.off, b.len - b.off);
	CHECK(!en.bad && en.n == 1 && en.binary[0] && en.len[0] == 4 &&
	      memcmp(en.val[0], "a\0\nb", 4) == 0);
	entry_free(&en);
	bytebuf_free(&b);
}

static struct event stamped(struct event ev, unsigned long seq)
{
	ev.session = "20261126T000000Z-00000000";
	ev.ts = "2026-11-26T00:00:00.000001Z";
	ev.seq = seq;
	return ev;
}

static void test_encode(void)
{
	/* an exec of a path that is not UTF-8 and holds a newline, with an
	 * argv that is not UTF-8 either (escaped in the log, escape.h) */
	char *argv[] = { "prog", "a\xff", NULL };
	bool any = false;
	json_t *jargv = json_bytes_array(argv, 2, &any);
	CHECK(any);
	struct event ev = stamped(ev_exec(&(struct ev_exec){ .pid = 3, .ppid = 2, .host_pid = 99,
		.cwd = "/w", .path = "./x\ny\xfe", .argv = jargv, .argv_escaped = any,
		.resolved = NULL, .sha256 = "ab", .interpreter = "", .deny = "not allowed" }), 7);
	struct bytebuf b = { 0 };
	journald_encode(&b, &ev, "p0", "h1");
	struct entry en;
	parse(&en, b.p + b.off, b.len - b.off);
	CHECK(!en.bad && names_valid(&en));
	CHECK_STR(get(&en, "SYSLOG_IDENTIFIER"), "warden");
	CHECK_STR(get(&en, "SYSLOG_FACILITY"), "10");
	CHECK_STR(get(&en, "PRIORITY"), "4");
	CHECK_STR(get(&en, "WARDEN_SESSION"), "20261126T000000Z-00000000");
	CHECK_STR(get(&en, "WARDEN_SEQ"), "7");
	CHECK_STR(get(&en, "WARDEN_TS"), "2026-11-26T00:00:00.000001Z");
	CHECK_STR(get(&en, "WARDEN_EVENT"), "exec");
	CHECK_STR(get(&en, "WARDEN_PREV"), "p0");
	CHECK_STR(get(&en, "WARDEN_LINE_SHA256"), "h1");
	CHECK_STR(get(&en, "WARDEN_PID"), "3");
	CHECK_STR(get(&en, "WARDEN_HOST_PID"), "99");
	CHECK_STR(get(&en, "WARDEN_DECISION"), "deny");
	CHECK_STR(get(&en, "WARDEN_REASON"), "not allowed");
	/* the path's raw bytes, newline and all, in the binary-safe form */
	int i = field(&en, "WARDEN_PATH", NULL);
	CHECK(i >= 0 && en.binary[i] && en.len[i] == 6 && memcmp(en.val[i], "./x\ny\xfe", 6) == 0);
	/* an array as its JSON text, still escaped, and said so */
	CHECK_STR(get(&en, "WARDEN_ARGV"), "[\"prog\",\"a\\\\xFF\"]");
	CHECK_STR(get(&en, "WARDEN_ESCAPED"), "[\"argv\"]");
	/* null left out */
	CHECK(field(&en, "WARDEN_RESOLVED", NULL) < 0);
	const char *msg = get(&en, "MESSAGE");
	CHECK(msg && strncmp(msg, "exec path=./x?y", 15) == 0);
	CHECK(msg && strstr(msg, " pid=3 decision=deny reason=\"not allowed\""));
	CHECK(msg && !strchr(msg, '\n'));
	entry_free(&en);
	event_discard(&ev);

	/* nested objects flattened, arrays as JSON, true/false, a real as the
	 * log writes it, {} kept, null left out, names that would pass for
	 * warden's own fields given a '_' */
	json_t *f = json_pack("{s:{s:{s:i, s:s}, s:b}, s:[i,i], s:n, s:f, s:{}, s:s, s:{s:s}, s:s}",
		"kernel", "sysctls", "user.max", 5, "other", "x\ny", "seccomp", 1,
		"list", 1, 2, "gone", "score", 1.5, "empty", "Session", "spoof",
		"line", "sha256", "spoof", "moved-to", "/a b");
	ev = stamped((struct event){ .kind = "custom", .fields = f }, 8);
	b.off = b.len = 0;
	journald_encode(&b, &ev, NULL, NULL);
	parse(&en, b.p + b.off, b.len - b.off);
	CHECK(!en.bad && names_valid(&en));
	CHECK_STR(get(&en, "WARDEN_KERNEL_SYSCTLS_USER_MAX"), "5");
	i = field(&en, "WARDEN_KERNEL_SYSCTLS_OTHER", NULL);
	CHECK(i >= 0 && en.binary[i] && strcmp(en.val[i], "x\ny") == 0);
	CHECK_STR(get(&en, "WARDEN_KERNEL_SECCOMP"), "true");
	CHECK_STR(get(&en, "WARDEN_LIST"), "[1,2]");
	CHECK(field(&en, "WARDEN_GONE", NULL) < 0);
	CHECK_STR(get(&en, "WARDEN_SCORE"), "1.5");
	CHECK_STR(get(&en, "WARDEN_EMPTY"), "{}");
	CHECK_STR(get(&en, "WARDEN_MOVED_TO"), "/a b");
	int c;
	CHECK(field(&en, "WARDEN_SESSION", &c) >= 0 && c == 1);
	CHECK_STR(get(&en, "WARDEN_SESSION"), "20261126T000000Z-00000000");
	CHECK_STR(get(&en, "WARDEN_SESSION_"), "spoof");
	CHECK(field(&en, "WARDEN_LINE_SHA256", NULL) < 0); /* hash NULL: left out */
	CHECK_STR(get(&en, "WARDEN_LINE_SHA256_"), "spoof");
	CHECK(field(&en, "WARDEN_PREV", NULL) < 0);
	CHECK(field(&en, "WARDEN_ESCAPED", NULL) < 0);
	/* an unknown kind's MESSAGE: its first scalar fields */
	CHECK_STR(get(&en, "MESSAGE"), "custom score=1.5 Session=spoof moved-to=\"/a b\"");
	CHECK_STR(get(&en, "PRIORITY"), "6");
	entry_free(&en);
	event_discard(&ev);

	/* too many fields: the first JOURNALD_FIELDS_MAX, and how many were not */
	f = json_object();
	for (int k = 0; k < JOURNALD_FIELDS_MAX + 10; k++) {
		char key[16];
		snprintf(key, sizeof key, "k%d", k);
		json_object_set_new(f, key, json_integer(k));
	}
	ev = stamped((struct event){ .kind = "wide", .fields = f }, 9);
	b.off = b.len = 0;
	journald_encode(&b, &ev, "p", "h");
	parse(&en, b.p + b.off, b.len - b.off);
	CHECK(!en.bad && names_valid(&en));
	CHECK_STR(get(&en, "WARDEN_FIELDS_LEFT_OUT"), "10");
	CHECK(field(&en, "WARDEN_K0", NULL) >= 0);
	entry_free(&en);
	event_discard(&ev);

	/* deep nesting: past JOURNALD_DEPTH_MAX, JSON text */
	f = json_pack("{s:{s:{s:{s:{s:{s:{s:{s:{s:{s:i}}}}}}}}}}", "a", "b", "c", "d", "e", "f",
		      "g", "h", "i", "j", 1);
	ev = stamped((struct event){ .kind = "deep", .fields = f }, 10);
	b.off = b.len = 0;
	journald_encode(&b, &ev, "p", "h");
	parse(&en, b.p + b.off, b.len - b.off);
	CHECK_STR(get(&en, "WARDEN_A_B_C_D_E_F_G_H_I"), "{\"j\":1}");
	entry_free(&en);
	event_discard(&ev);
	bytebuf_free(&b);
}

static int prio(const char *kind, json_t *fields)
{
	struct event ev = { .kind = kind, .fields = fields };
	int p = journald_priority(&ev);
	json_decref(fields);
	return p;
}

static void test_priority(void)
{
	CHECK(prio("alert", json_pack("{s:s, s:s}", "rule", "r", "severity", "critical")) == 2);
	CHECK(prio("alert", json_pack("{s:s, s:s}", "rule", "r", "severity", "high")) == 3);
	CHECK(prio("alert", json_pack("{s:s, s:s}", "rule", "r", "severity", "low")) == 4);
	CHECK(prio("alert", json_pack("{s:s}", "rule", "r")) == 4);
	CHECK(prio("net", json_pack("{s:s}", "decision", "deny")) == 4);
	CHECK(prio("net", json_pack("{s:s}", "decision", "allow")) == 6);
	CHECK(prio("syscall", json_pack("{s:s}", "decision", "ignore")) == 5);
	CHECK(prio("exec", NULL) == 6);
	CHECK(prio("kill", NULL) == 4);
	CHECK(prio("log.failed", NULL) == 3);
	CHECK(prio("session.end", json_pack("{s:i, s:s}", "exit", 125, "error", "x")) == 3);
	CHECK(prio("session.end", json_pack("{s:i}", "exit", 1)) == 6);
	CHECK(prio("session.start", NULL) == 6);
}

/* ---- sending ---------------------------------------------------------------- */

static int receiver(const char *path)
{
	unlink(path);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		perror("receiver");
		exit(2);
	}
	return fd;
}

/* One datagram as journald takes it: its payload, or an empty one with a
 * sealed memfd (*memfd set). -1: nothing there. */
static ssize_t receive(int fd, char **out, bool *memfd)
{
	static char buf[1 << 20];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} c;
	struct iovec iov = { buf, sizeof buf };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.b,
			     .msg_controllen = sizeof c.b };
	ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	*memfd = false;
	if (n < 0)
		return -1;
	struct cmsghdr *ch = CMSG_FIRSTHDR(&mh);
	if (ch && ch->cmsg_type == SCM_RIGHTS) {
		int mfd;
		memcpy(&mfd, CMSG_DATA(ch), sizeof mfd);
		*memfd = true;
		int seals = fcntl(mfd, F_GET_SEALS);
		CHECK(n == 0);
		CHECK(seals >= 0 && (seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)) ==
					    (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE));
		struct stat st;
		CHECK(fstat(mfd, &st) == 0);
		*out = xmalloc((size_t)st.st_size + 1);
		CHECK(pread(mfd, *out, (size_t)st.st_size, 0) == st.st_size);
		close(mfd);
		return st.st_size;
	}
	*out = xmalloc((size_t)n + 1);
	memcpy(*out, buf, (size_t)n);
	return n;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sha256_hex_test(const char *buf, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (!EVP_Digest(buf, len, md, &n, EVP_sha256(), NULL) || n != 32)
		abort();
	for (unsigned i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* stderr into a file while f runs; what was written there (malloc'd). */
static char *stderr_of(void (*f)(void *), void *arg)
{
	char *path = xasprintf("%s/stderr", tmpdir);
	fflush(stderr);
	int saved = dup(2);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	dup2(fd, 2);
	close(fd);
	f(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	size_t len;
	char *text = slurp(path, &len);
	free(path);
	return text;
}

struct emit_many {
	struct audit *a;
	int n;
};

static void emit_many(void *arg)
{
	struct emit_many *m = arg;
	for (int i = 0; i < m->n; i++)
		audit_emit_event(m->a, ev_syscall(&(struct ev_syscall){ .pid = i, .name = "mount" }), NULL);
}

static void free_journald(void *arg)
{
	journald_free(arg);
}

static void test_send(void)
{
	char *sock = xasprintf("%s/journal.sock", tmpdir);
	struct werr e;
	struct journald *j;

	/* nothing there, not a socket, nobody listening: refused, saying so */
	CHECK(journald_open(&j, sock, &e) < 0 && !j && strstr(e.msg, "no journal socket at"));
	spit(sock, "x", 1);
	CHECK(journald_probe(sock, &e) < 0 && strstr(e.msg, "is not a socket"));
	int r = receiver(sock);
	close(r); /* the file stays, nobody behind it */
	CHECK(journald_probe(sock, &e) < 0 && strstr(e.msg, "nothing listens") &&
	      e.errnum == ECONNREFUSED);

	r = receiver(sock);
	CHECK(journald_probe(sock, &e) == 0);
	CHECK(journald_open(&j, sock, &e) == 0 && j);
	if (!j)
		exit(1);
	struct audit *a;
	char *dir = xasprintf("%s/log", tmpdir);
	CHECK(audit_open(&a, dir, "jd-1", &e) == 0);
	if (!a)
		exit(1);
	journald_attach(j, a);
	char *args[] = { "sh", NULL };
	CHECK(audit_emit_event(a, ev_session_start(&(struct ev_session_start){
		.version = "0", .argv = args, .workspace = "/w", .policy_digest = "d", .uid = 1,
		.kernel = json_object() }), &e) == 0);
	/* too large for a datagram: in a memfd */
	char *big = xmalloc(1 << 19);
	memset(big, 'b', (1 << 19) - 1);
	big[(1 << 19) - 1] = '\0';
	CHECK(audit_emit(a, "big", json_pack("{s:s}", "blob", big), &e) == 0);

	/* the entries, tied to their lines by the hashes */
	size_t len;
	char *log = slurp(audit_path(a), &len);
	char *line2 = log ? strchr(log, '\n') + 1 : NULL;
	char h1[65], h2[65];
	sha256_hex_test(log, (size_t)(line2 - log) - 1, h1); /* without its newline */
	sha256_hex_test(line2, strlen(line2) - 1, h2);
	char *p;
	bool memfd;
	struct entry en;
	ssize_t n = receive(r, &p, &memfd);
	CHECK(n > 0 && !memfd);
	parse(&en, p, n > 0 ? (size_t)n : 0);
	CHECK(!en.bad && names_valid(&en));
	CHECK_STR(get(&en, "WARDEN_EVENT"), "session.start");
	CHECK_STR(get(&en, "WARDEN_SEQ"), "1");
	CHECK_STR(get(&en, "WARDEN_PREV"), AUDIT_PREV_FIRST);
	CHECK_STR(get(&en, "WARDEN_LINE_SHA256"), h1);
	CHECK_STR(get(&en, "WARDEN_WORKSPACE"), "/w");
	CHECK_STR(get(&en, "WARDEN_ARGV"), "[\"sh\"]");
	entry_free(&en);
	free(p);
	n = receive(r, &p, &memfd);
	CHECK(n > (1 << 19) && memfd);
	parse(&en, p, n > 0 ? (size_t)n : 0);
	CHECK_STR(get(&en, "WARDEN_EVENT"), "big");
	CHECK_STR(get(&en, "WARDEN_PREV"), h1);
	CHECK_STR(get(&en, "WARDEN_LINE_SHA256"), h2);
	CHECK_STR(get(&en, "WARDEN_BLOB"), big);
	entry_free(&en);
	free(p);
	free(log);
	free(big);

	/* journald slow: what its queue cannot take waits in ours, in order;
	 * past that, the newest are lost, said once */
	struct emit_many m = { a, 2000 };
	char *err = stderr_of(emit_many, &m);
	unsigned long lost = journald_dropped(j);
	CHECK(lost > 0 && lost < 2000);
	CHECK(err && strstr(err, "warden: journald: the entry of event ") &&
	      strstr(err, "journald's queue stayed full") && strstr(err, "session.end"));
	CHECK(err && strchr(err, '\n') == err + strlen(err) - 1); /* one line */
	free(err);
	/* the end waits for journald once, a bounded time */
	double t0 = now_s();
	journald_flush(j, 100);
	double t1 = now_s();
	journald_flush(j, 5000);
	double t2 = now_s();
	CHECK(t1 - t0 >= 0.09 && t1 - t0 < 2);
	CHECK(t2 - t1 < 1);
	CHECK(journald_dropped(j) == lost);
	unsigned long want = 3, got = 0;
	bool order = true;
	for (int idle = 0; idle < 3;) {
		n = receive(r, &p, &memfd);
		if (n < 0) {
			journald_flush(j, 0);
			idle++;
			continue;
		}
		idle = 0;
		parse(&en, p, (size_t)n);
		const char *seq = get(&en, "WARDEN_SEQ");
		order = order && seq && strtoul(seq, NULL, 10) == want;
		want++;
		got++;
		entry_free(&en);
		free(p);
	}
	CHECK(order);
	CHECK(got + lost == 2000);
	json_t *st = journald_stats(j);
	CHECK(json_integer_value(json_object_get(st, "sent")) == (json_int_t)(2 + got));
	CHECK(json_integer_value(json_object_get(st, "dropped")) == (json_int_t)lost);
	json_decref(st);

	/* journald gone: lost, no second note; back (a new socket): sent */
	close(r);
	unlink(sock);
	m.n = 1;
	err = stderr_of(emit_many, &m);
	CHECK(journald_dropped(j) == lost + 1);
	CHECK(err && !*err);
	free(err);
	r = receiver(sock);
	emit_many(&m);
	CHECK(journald_dropped(j) == lost + 1);
	n = receive(r, &p, &memfd);
	CHECK(n > 0);
	if (n > 0) {
		parse(&en, p, (size_t)n);
		CHECK_STR(get(&en, "WARDEN_EVENT"), "syscall");
		CHECK(get(&en, "WARDEN_SEQ") && strtoul(get(&en, "WARDEN_SEQ"), NULL, 10) == 2000 + 4);
		entry_free(&en);
		free(p);
	}
	audit_close(a);
	err = stderr_of(free_journald, j);
	CHECK(err && !*err);
	free(err);
	close(r);
	free(dir);
	free(sock);
}

int main(void)
{
	tmpdir_make("warden-test-journald");
	test_names();
	test_put_field();
	test_encode();
	test_priority();
	test_send();
	tmpdir_remove();
	return check_status();
}
