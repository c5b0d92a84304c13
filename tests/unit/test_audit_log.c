/* test_audit_log.c - unit tests of the audit log writer: line format and key
 * order, the seq/prev hash chain (recomputed here), file and directory
 * modes, O_EXCL, refusal of a symlinked or foreign-writable directory;
 * `limit log` (a `limit` event and the owner told once, the room after it,
 * then the log's failure); the record's bound (recbound.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/audit/audit.h"
#include "src/audit/emit.h"
#include "src/audit/recbound.h"
#include "src/common/util.h"
#include "check.h"
#include "files.h"

static void sha256_hex(const char *buf, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	if (!EVP_Digest(buf, len, md, &n, EVP_sha256(), NULL) || n != 32)
		abort();
	for (unsigned i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void test_dir_and_id(void)
{
	setenv("XDG_STATE_HOME", "/xdg/state/", 1);
	char *d = audit_dir("/home/u");
	CHECK_STR(d, "/xdg/state/warden");
	free(d);
	setenv("XDG_STATE_HOME", "relative", 1); /* ignored, as the XDG spec says */
	d = audit_dir("/home/u");
	CHECK_STR(d, "/home/u/.local/state/warden");
	free(d);
	unsetenv("XDG_STATE_HOME");
	d = audit_dir("/home/u/");
	CHECK_STR(d, "/home/u/.local/state/warden");
	free(d);
	CHECK(audit_dir(NULL) == NULL);

	char id[32], id2[32];
	audit_new_session_id(id, sizeof id);
	audit_new_session_id(id2, sizeof id2);
	/* 20261121T123456Z-1a2b3c4d */
	CHECK(strlen(id) == 25);
	CHECK(strspn(id, "0123456789") == 8 && id[8] == 'T' && strspn(id + 9, "0123456789") == 6);
	CHECK(id[15] == 'Z' && id[16] == '-' && strspn(id + 17, "0123456789abcdef") == 8);
	CHECK(strcmp(id, id2) != 0);
}

static void test_chain(void)
{
	struct audit *a;
	struct werr e;
	struct stat st;
	char *dir = xasprintf("%s/state/deep/warden", tmpdir);
	CHECK(audit_open(&a, dir, "sess-1", &e) == 0);
	if (!a) {
		fprintf(stderr, "  %s\n", e.msg);
		exit(1);
	}
	char *path = xasprintf("%s/sess-1.jsonl", dir);
	CHECK_STR(audit_path(a), path);
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 07777) == 0700);
	char *parent = xasprintf("%s/state/deep", tmpdir);
	CHECK(stat(parent, &st) == 0 && (st.st_mode & 07777) == 0700);
	free(parent);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_size == 0);

	CHECK(audit_emit(a, "session.start", json_pack("{s:s, s:[s,s]}", "digest", "abc", "argv", "sh", "-c"), &e) == 0);
	CHECK(audit_emit(a, "exec", json_pack("{s:i, s:s, s:s}", "pid", 42, "path", "/bin/true", "decision", "allow"), &e) == 0);
	CHECK(audit_emit(a, "exec", NULL, &e) == 0);
	/* Refused: reserved names, non-object fields. Neither consumes a seq. */
	CHECK(audit_emit(a, "exec", json_pack("{s:i}", "seq", 7), &e) < 0);
	CHECK(audit_emit(a, "exec", json_pack("{s:s}", "prev", "x"), &e) < 0);
	CHECK(audit_emit(a, "exec", json_pack("[i]", 1), &e) < 0);
	CHECK(audit_emit(a, "", NULL, &e) < 0);
	CHECK(audit_emit(a, "session.end", json_pack("{s:i}", "status", 0), &e) == 0);

	CHECK(audit_count(a, "exec") == 2);
	CHECK(audit_count(a, "session.start") == 1);
	CHECK(audit_count(a, "net") == 0);
	json_t *counts = audit_counts(a);
	char *cs = json_dumps(counts, JSON_COMPACT | JSON_PRESERVE_ORDER);
	CHECK_STR(cs, "{\"session.start\":1,\"exec\":2,\"session.end\":1}");
	free(cs);
	json_decref(counts);
	CHECK(audit_sync(a, &e) == 0);
	audit_close(a);
	audit_close(NULL);

	size_t len;
	char *text = slurp(path, &len);
	CHECK(text && len > 0 && text[len - 1] == '\n');
	char prev[65];
	memset(prev, '0', 64);
	prev[64] = '\0';
	static const char *const events[] = { "session.start", "exec", "exec", "session.end" };
	int n = 0;
	for (char *line = text, *nl; text && (nl = strchr(line, '\n')); line = nl + 1, n++) {
		*nl = '\0';
		json_error_t je;
		json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
		CHECK(json_is_object(o));
		if (n >= 4)
			break;
		CHECK(json_integer_value(json_object_get(o, "v")) == 1);
		CHECK(json_integer_value(json_object_get(o, "seq")) == n + 1);
		CHECK_STR(json_string_value(json_object_get(o, "session")), "sess-1");
		CHECK_STR(json_string_value(json_object_get(o, "event")), events[n]);
		CHECK_STR(json_string_value(json_object_get(o, "prev")), prev);

		/* ts: 2026-11-21T12:34:56.123456Z */
		const char *ts = json_string_value(json_object_get(o, "ts"));
		CHECK(ts && strlen(ts) == 27 && ts[4] == '-' && ts[10] == 'T' && ts[19] == '.' &&
		      strspn(ts + 20, "0123456789") == 6 && ts[26] == 'Z');

		/* Key order: v ts session seq event, the fields, prev last. */
		const char *keys[16];
		size_t nk = 0;
		const char *k;
		json_t *v;
		json_object_foreach(o, k, v)
			if (nk < 16)
				keys[nk++] = k;
		CHECK(nk >= 6);
		CHECK_STR(keys[0], "v");
		CHECK_STR(keys[1], "ts");
		CHECK_STR(keys[2], "session");
		CHECK_STR(keys[3], "seq");
		CHECK_STR(keys[4], "event");
		CHECK_STR(keys[nk - 1], "prev");
		CHECK(strncmp(line, "{\"v\":1,\"ts\":\"", 13) == 0);
		if (n == 1) {
			CHECK_STR(keys[5], "pid");
			CHECK_STR(keys[6], "path");
			CHECK_STR(keys[7], "decision");
			CHECK(json_object_size(o) == 9);
		}
		if (n == 2)
			CHECK(json_object_size(o) == 6);

		sha256_hex(line, strlen(line), prev);
		json_decref(o);
	}
	CHECK(n == 4);

	/* An edited line breaks the chain: the next prev no longer matches. */
	free(text);
	text = slurp(path, &len);
	char *second = strchr(text, '\n') + 1;
	char *third = strchr(second, '\n') + 1;
	char h[65];
	h[64] = '\0';
	sha256_hex(second, (size_t)(third - 1 - second), h);
	CHECK(strstr(third, h) != NULL);
	second[strlen("{\"v\":1,\"ts\":\"")] ^= 1;
	sha256_hex(second, (size_t)(third - 1 - second), h);
	CHECK(strstr(third, h) == NULL);
	free(text);

	/* O_EXCL: the same session cannot be opened twice. */
	CHECK(audit_open(&a, dir, "sess-1", &e) < 0);
	CHECK(a == NULL && e.errnum == EEXIST && strstr(e.msg, "already exists") != NULL);

	/* Session ids are file names. */
	CHECK(audit_open(&a, dir, "../escape", &e) < 0 && e.errnum == EINVAL);
	CHECK(audit_open(&a, dir, ".hidden", &e) < 0);
	CHECK(audit_open(&a, dir, "", &e) < 0);
	CHECK(audit_open(&a, dir, "a/b", &e) < 0);

	/* A second session in the same, now existing, directory. */
	CHECK(audit_open(&a, dir, "sess-2", &e) == 0);
	audit_close(a);
	free(path);
	free(dir);
}

static void test_refusals(void)
{
	struct audit *a;
	struct werr e;

	/* The final directory a symlink: refused, even to a good directory. */
	char *real = xasprintf("%s/real", tmpdir), *link = xasprintf("%s/link", tmpdir);
	CHECK(mkdir(real, 0700) == 0);
	CHECK(symlink(real, link) == 0);
	CHECK(audit_open(&a, link, "s", &e) < 0);
	CHECK(strstr(e.msg, "symbolic link") != NULL);
	/* A symlink higher up is the user's business. */
	char *via = xasprintf("%s/link/sub", tmpdir);
	CHECK(audit_open(&a, via, "s", &e) == 0);
	audit_close(a);
	free(via);

	/* An existing directory others can write to. */
	char *open_dir = xasprintf("%s/shared", tmpdir);
	CHECK(mkdir(open_dir, 0700) == 0 && chmod(open_dir, 0777) == 0);
	CHECK(audit_open(&a, open_dir, "s", &e) < 0);
	CHECK(strstr(e.msg, "writable by group or others") != NULL);

	/* A plain file where the directory should be. */
	char *file = xasprintf("%s/file", tmpdir);
	int fd = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK(audit_open(&a, file, "s", &e) < 0);

	/* Not owned by us: "/" when we are not root, a chown'ed one when we are. */
	char *foreign = xasprintf("%s/foreign", tmpdir);
	if (geteuid() != 0) {
		CHECK(audit_open(&a, "/", "s", &e) < 0);
		CHECK(strstr(e.msg, "not by you") != NULL);
	} else {
		CHECK(mkdir(foreign, 0700) == 0 && chown(foreign, 4242, 4242) == 0);
		CHECK(audit_open(&a, foreign, "s", &e) < 0);
		CHECK(strstr(e.msg, "owned by uid 4242, not by you") != NULL);
	}
	free(foreign);
	free(real);
	free(link);
	free(open_dir);
	free(file);
}

/* A subscriber of the stream sees each event once it is in the log, in
 * order, with its seq; an event the stream refuses it never sees. */
struct seen {
	int n;
	const char *kind[8];
	unsigned long seq[8];
	long long pid[8];
	off_t size[8];      /* the log's size when it was called */
	const char *path;
};

static int record(void *ctx, const struct event *ev, struct werr *e)
{
	struct seen *s = ctx;
	struct stat st;
	if (s->n == 8)
		return 0;
	s->kind[s->n] = ev->kind;
	s->seq[s->n] = ev->seq;
	s->pid[s->n] = json_integer_value(json_object_get(ev->fields, "pid"));
	s->size[s->n] = stat(s->path, &st) == 0 ? st.st_size : -1;
	s->n++;
	return 0;
}

static void test_subscriber(void)
{
	struct audit *a;
	struct werr e;
	char *dir = xasprintf("%s/subs", tmpdir);
	CHECK(audit_open(&a, dir, "sub-1", &e) == 0);
	if (!a)
		exit(1);
	struct seen s = { .path = audit_path(a) };
	audit_subscribe(a, record, &s);
	char *args[] = { "sh", "-c", "true", NULL };
	CHECK(audit_emit_event(a, ev_session_start(&(struct ev_session_start){
		.version = "0", .argv = args, .workspace = "/w", .policy_digest = "d", .uid = 1,
		.kernel = json_object() }), &e) == 0);
	CHECK(audit_emit_event(a, ev_syscall(&(struct ev_syscall){ .pid = 7, .name = "ptrace" }), &e) == 0);
	CHECK(audit_emit(a, "exec", json_pack("{s:i}", "seq", 9), &e) < 0); /* refused */
	CHECK(audit_emit_event(a, ev_file(&(struct ev_file){ .pid = 8, .op = "open", .syscall = "open",
		.npaths = 1, .paths = { "/w/x" } }), &e) == 0);
	CHECK(audit_emit_event(a, ev_session_end(&(struct ev_session_end){ .exit = 0,
		.counts = audit_counts(a) }), &e) == 0);
	CHECK(s.n == 4);
	static const char *const kinds[] = { "session.start", "syscall", "file", "session.end" };
	for (int i = 0; i < 4 && i < s.n; i++) {
		CHECK_STR(s.kind[i], kinds[i]);
		CHECK(s.seq[i] == (unsigned long)i + 1);
		CHECK(s.size[i] > (i ? s.size[i - 1] : 0)); /* the line was written first */
	}
	CHECK(s.pid[1] == 7 && s.pid[2] == 8);
	audit_close(a);

	size_t len;
	char *path = xasprintf("%s/sub-1.jsonl", dir);
	char *text = slurp(path, &len);
	CHECK(text && (off_t)len == s.size[3]);
	CHECK(text && strstr(text, "\"seq\":3,\"event\":\"file\",\"pid\":8,\"op\":\"open\",\"syscall\":\"open\",\"path\":\"/w/x\",\"prev\":"));
	free(text);
	free(path);
	free(dir);
}

/* A subscriber removed sees nothing after; removing it twice is nothing. */
static void test_unsubscribe(void)
{
	struct audit *a;
	struct werr e;
	char *dir = xasprintf("%s/unsubs", tmpdir);
	CHECK(audit_open(&a, dir, "unsub-1", &e) == 0);
	if (!a)
		exit(1);
	struct seen s1 = { .path = audit_path(a) }, s2 = { .path = audit_path(a) };
	audit_subscribe(a, record, &s1);
	audit_subscribe(a, record, &s2);
	CHECK(audit_emit(a, "limit", json_pack("{s:s}", "kind", "tmp"), &e) == 0);
	audit_unsubscribe(a, record, &s1);
	audit_unsubscribe(a, record, &s1);
	CHECK(audit_emit(a, "limit", json_pack("{s:s}", "kind", "home"), &e) == 0);
	CHECK(s1.n == 1 && s2.n == 2);
	CHECK(s2.seq[1] == 2);
	audit_close(a);
	free(dir);
}

/* The action event's fields, in order; what is unset is left out. */
static void test_action_event(void)
{
	struct event ev = ev_action(&(struct ev_action){ .action = "freeze", .by = "control",
		.uid = 1000, .reason = "asked", .how = "signals", .processes = 3 });
	CHECK_STR(ev.kind, "action");
	char *s = json_dumps(ev.fields, JSON_COMPACT);
	CHECK_STR(s, "{\"action\":\"freeze\",\"by\":\"control\",\"uid\":1000,\"reason\":\"asked\","
		  "\"how\":\"signals\",\"processes\":3}");
	free(s);
	event_discard(&ev);
	ev = ev_action(&(struct ev_action){ .action = "kill", .by = "detector", .uid = -1,
		.how = "cgroup" });
	s = json_dumps(ev.fields, JSON_COMPACT);
	CHECK_STR(s, "{\"action\":\"kill\",\"by\":\"detector\",\"how\":\"cgroup\"}");
	free(s);
	event_discard(&ev);
}

/* The stream first, its file later (audit_new, audit_begin: the session
 * makes the file while init builds the sandbox): no file before, an event
 * before it refused and not counted, the chain starting with the first
 * event written after. */
static void test_begin_later(void)
{
	struct audit *a;
	struct werr e;
	struct stat st;
	char *dir = xasprintf("%s/later", tmpdir);
	char *path = xasprintf("%s/sess-2.jsonl", dir);
	CHECK(audit_new(&a, dir, "sess-2", &e) == 0 && a);
	CHECK_STR(audit_path(a), path);
	CHECK(stat(dir, &st) < 0 && errno == ENOENT);
	CHECK(audit_emit(a, "session.start", NULL, &e) < 0);
	CHECK(strstr(e.msg, "before the log's file was made") != NULL);
	CHECK(audit_count(a, "session.start") == 0);
	CHECK(audit_sync(a, &e) == 0);
	CHECK(audit_begin(a, &e) == 0);
	CHECK(audit_begin(a, &e) == 0); /* made already */
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_size == 0);
	CHECK(audit_emit(a, "session.start", NULL, &e) == 0);
	audit_close(a);
	size_t len;
	char *text = slurp(path, &len);
	CHECK(text && strstr(text, "\"seq\":1,") && strstr(text, "\"prev\":\"" AUDIT_PREV_FIRST "\""));
	free(text);
	/* a stream never begun closes without a file */
	CHECK(audit_new(&a, dir, "sess-3", &e) == 0);
	audit_close(a);
	free(path);
	path = xasprintf("%s/sess-3.jsonl", dir);
	CHECK(stat(path, &st) < 0 && errno == ENOENT);
	free(path);
	free(dir);
}

static void on_limit(void *ctx, const char *why)
{
	int *calls = ctx;
	(*calls)++;
	CHECK(strstr(why, "limit log 1M") && strstr(why, "limit log SIZE"));
}

/* Past `limit log`: the line that crossed it is followed by a `limit`
 * event, the owner told once; the log takes its room for the session's end
 * (LIMIT_ROOM, 256K), then fails (log.failed) and refuses every event. */
static void test_log_limit(void)
{
	struct audit *a;
	struct werr e;
	char *dir = xasprintf("%s/limit", tmpdir);
	CHECK(audit_open(&a, dir, "lim-1", &e) == 0);
	if (!a)
		exit(1);
	int calls = 0;
	audit_set_limit(a, 1 << 20, "1M");
	audit_on_limit(a, on_limit, &calls);
	char pad[900];
	memset(pad, 'x', sizeof pad - 1);
	pad[sizeof pad - 1] = '\0';
	int i = 0;
	while (!audit_limit_reached(a) && i++ < 5000)
		CHECK(audit_emit_event(a, ev_alert(&(struct ev_alert){ .rule = "r", .detail = pad }), &e) == 0);
	CHECK(calls == 1 && audit_limit_reached(a) && !audit_failed(a));
	CHECK(audit_count(a, "limit") == 1);
	/* the room: more events go in, then the log fails */
	int more = 0;
	while (audit_emit_event(a, ev_alert(&(struct ev_alert){ .rule = "r", .detail = pad }), &e) == 0 &&
	       more < 5000)
		more++;
	CHECK(more > 200 && more < 300); /* 256K of lines of some 1K */
	CHECK(audit_failed(a) && strstr(audit_failed(a), "limit log 1M"));
	CHECK(calls == 1 && audit_count(a, "limit") == 1);
	audit_close(a);
	char *path = xasprintf("%s/lim-1.jsonl", dir);
	struct stat st;
	CHECK(stat(path, &st) == 0 && st.st_size > (1 << 20) &&
	      st.st_size < (1 << 20) + 256 * 1024 + 4096);
	/* the file's tail: the limit event some 1M in, log.failed last */
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	bool limit = false, failed = false;
	while (f && getline(&line, &cap, f) > 0) {
		limit |= strstr(line, "\"event\":\"limit\",\"kind\":\"log\",\"limit\":\"1M\"") != NULL;
		failed = strstr(line, "\"event\":\"log.failed\"") != NULL;
	}
	CHECK(limit && failed);
	free(line);
	if (f)
		fclose(f);
	free(path);
	free(dir);
}

/* The record's bound: a class with a bucket lets its burst through, then
 * its rate; a class with a cap alone, its cap; the rest counted in
 * summaries every 10 s, and all at the end. */
static void test_recbound(void)
{
	struct recbound b = { 0 };
	b.c[0] = recbound_class(0, 0, 3);
	b.c[1] = recbound_class(10.0, 5.0, 100);
	int in0 = 0, in1 = 0;
	for (int i = 0; i < 10; i++) {
		in0 += recbound_admit(&b, 0, 1000.0);
		in1 += recbound_admit(&b, 1, 1000.0);
	}
	CHECK(in0 == 3 && in1 == 5);
	CHECK(recbound_admit(&b, 1, 1100.0)); /* 100 ms at 10 a second: one more */
	CHECK(!recbound_admit(&b, 1, 1100.0));
	int cls;
	unsigned long count;
	CHECK(!recbound_due(&b, false, 5000.0, &cls, &count)); /* not 10 s yet */
	CHECK(recbound_due(&b, false, 11000.0, &cls, &count) && cls == 0 && count == 7);
	CHECK(!recbound_due(&b, false, 11000.0, &cls, &count)); /* the next in 10 s */
	CHECK(recbound_due(&b, true, 11000.0, &cls, &count) && cls == 1 && count == 6);
	CHECK(!recbound_due(&b, true, 11000.0, &cls, &count));
}

int main(void)
{
	umask(022);
	tmpdir_make("warden-test-audit");
	test_dir_and_id();
	test_chain();
	test_begin_later();
	test_refusals();
	test_subscriber();
	test_unsubscribe();
	test_action_event();
	test_log_limit();
	test_recbound();

	tmpdir_remove();
	return check_status();
}
