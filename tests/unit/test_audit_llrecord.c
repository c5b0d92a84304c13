/* test_audit_llrecord.c - unit tests of the kernel's Landlock audit records
 * as text (src/audit/llrecord.c): the header, quoted and hex-encoded
 * strings (a path with a space, a name with a quote), hostile input (no
 * header, a record past the kernel's bound, an unclosed quote, bad hex, an
 * odd length, more fields than kept, numbers that overflow), the records of
 * one serial gathered, and the file, net and signal events made of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/audit/llrecord.h"
#include "check.h"

static struct llrec *parse(int type, const char *text)
{
	struct llrec *r = malloc(sizeof *r);
	if (llrec_parse(type, text, strlen(text), r) < 0) {
		free(r);
		return NULL;
	}
	return r;
}

static void test_header(void)
{
	struct llrec *r = parse(KAUDIT_LANDLOCK_ACCESS,
		"audit(1729738800.221:34): domain=1a6fdc679 blockers=fs.write_file path=\"/etc/passwd\" "
		"dev=\"vda2\" ino=143821");
	CHECK(r);
	if (!r)
		return;
	CHECK(r->sec == 1729738800ULL && r->msec == 221 && r->serial == 34);
	CHECK_STR(llrec_get(r, "blockers", NULL), "fs.write_file");
	CHECK_STR(llrec_get(r, "path", NULL), "/etc/passwd");
	CHECK_STR(llrec_get(r, "dev", NULL), "vda2");
	unsigned long long v;
	CHECK(llrec_num(r, "domain", 16, &v) && v == 0x1a6fdc679ULL);
	CHECK(llrec_num(r, "ino", 10, &v) && v == 143821);
	CHECK(!llrec_num(r, "path", 10, &v));
	CHECK(!llrec_get(r, "nothere", NULL));
	free(r);

	/* not records */
	CHECK(!parse(1423, ""));
	CHECK(!parse(1423, "audit(1.2:3) domain=1"));
	CHECK(!parse(1423, "audit(1.2:): domain=1"));
	CHECK(!parse(1423, "audit(x.2:3): domain=1"));
	CHECK(!parse(1423, "audit(1.2000:3): a=1"));
	CHECK(!parse(1423, "audit(99999999999999999999999.2:3): a=1"));
	CHECK(!parse(1423, "type=1423 msg=audit(1.2:3): a=1"));
	/* a record with nothing after its header, and trailing NUL and newline */
	struct llrec x;
	CHECK(llrec_parse(1320, "audit(1.002:7): \n\0", 18, &x) == 0 && x.n == 0 && x.serial == 7);
}

static void test_strings(void)
{
	/* "/tmp/a b" and a comm with a quote: hex, as the kernel writes them */
	struct llrec *r = parse(KAUDIT_LANDLOCK_ACCESS,
		"audit(1.000:9): domain=5 blockers=fs.make_reg path=2F746D702F612062 dev=\"vda\" ino=1 "
		"comm=61226263 exe=(null) key=(null)");
	CHECK(r);
	if (!r)
		return;
	CHECK_STR(llrec_get(r, "path", NULL), "/tmp/a b");
	CHECK_STR(llrec_get(r, "comm", NULL), "a\"bc");
	CHECK_STR(llrec_get(r, "exe", NULL), "(null)");
	free(r);
	/* lower-case hex too; a NUL inside (an abstract socket) keeps its length */
	r = parse(KAUDIT_LANDLOCK_ACCESS, "audit(1.000:9): domain=5 blockers=scope.abstract_unix_socket "
		  "path=00616263");
	size_t len = 0;
	const char *p = r ? llrec_get(r, "path", &len) : NULL;
	CHECK(p && len == 4 && p[0] == '\0' && memcmp(p + 1, "abc", 3) == 0);
	free(r);
	/* bad hex, odd length: that field left out, the others kept */
	r = parse(KAUDIT_LANDLOCK_ACCESS, "audit(1.000:9): path=2G41 comm=414 domain=7 ocomm=\"ok\"");
	CHECK(r && !llrec_get(r, "path", NULL) && !llrec_get(r, "comm", NULL));
	CHECK(r && llrec_get(r, "ocomm", NULL) && strcmp(llrec_get(r, "ocomm", NULL), "ok") == 0);
	free(r);
	/* an unclosed quote: what comes after it is not read as fields */
	r = parse(KAUDIT_LANDLOCK_ACCESS, "audit(1.000:9): domain=7 path=\"/etc/x domain=8 blockers=fs.x");
	unsigned long long v;
	CHECK(r && llrec_num(r, "domain", 16, &v) && v == 7 && !llrec_get(r, "blockers", NULL));
	free(r);
	/* keys without values, stray '=' and blanks */
	r = parse(KAUDIT_SYSCALL, "audit(1.000:9):   word =x pid=12  ppid= a0=ffffff9c ");
	CHECK(r && llrec_num(r, "pid", 10, &v) && v == 12);
	CHECK(r && !llrec_num(r, "ppid", 10, &v));
	CHECK(r && llrec_num(r, "a0", 16, &v) && v == 0xffffff9cULL);
	free(r);
	/* numbers that do not fit */
	r = parse(KAUDIT_SYSCALL, "audit(1.000:9): pid=99999999999999999999999 exit=-13");
	long long sv;
	CHECK(r && !llrec_num(r, "pid", 10, &v));
	CHECK(r && llrec_snum(r, "exit", &sv) && sv == -13);
	free(r);
}

static void test_hostile_sizes(void)
{
	/* past the kernel's bound: refused */
	size_t big = LLREC_TEXT_MAX + 10;
	char *t = malloc(big + 1);
	memset(t, 'a', big);
	memcpy(t, "audit(1.000:1): path=", 21);
	t[big] = '\0';
	struct llrec *r = malloc(sizeof *r);
	CHECK(llrec_parse(1423, t, big, r) < 0);
	/* at the bound: one long hex path decoded, a long quoted one kept */
	size_t n = LLREC_TEXT_MAX;
	memset(t, '4', n);
	memcpy(t, "audit(1.000:1): path=", 21);
	if ((n - 21) % 2)
		t[--n] = '\0';
	CHECK(llrec_parse(1423, t, n, r) == 0);
	size_t len = 0;
	const char *p = llrec_get(r, "path", &len);
	CHECK(p && len == (n - 21) / 2 && p[0] == 'D');
	/* many fields: the first LLREC_MAX_FIELDS kept, no overflow */
	char *o = t;
	o += sprintf(o, "audit(1.000:1):");
	for (int i = 0; i < 400 && o - t < LLREC_TEXT_MAX - 20; i++)
		o += sprintf(o, " k%d=%d", i, i);
	CHECK(llrec_parse(1423, t, (size_t)(o - t), r) == 0 && r->n == LLREC_MAX_FIELDS);
	unsigned long long v;
	CHECK(llrec_num(r, "k0", 10, &v) && v == 0 && !llrec_get(r, "k300", NULL));
	/* NUL bytes inside the text */
	CHECK(llrec_parse(1423, "audit(1.000:1): a=\0b c=1", 24, r) == 0);
	free(r);
	free(t);
}

static struct llev gather(const char *const *recs, const int *types, size_t n)
{
	struct llev ev = { 0 };
	for (size_t i = 0; i < n; i++) {
		struct llrec *r = parse(types[i], recs[i]);
		if (!r)
			continue;
		ev.serial = r->serial;
		llev_add(&ev, r);
	}
	return ev;
}

static void test_file_event(void)
{
	const char *recs[] = {
		"audit(1795672443.725:5): domain=106ef9432 blockers=fs.make_reg path=\"/proc/2\" dev=\"proc\" ino=19",
		"audit(1795672443.725:5): domain=106ef9432 blockers=fs.make_reg,fs.write_file path=\"/proc/2/comm\" dev=\"proc\" ino=733",
		"audit(1795672443.725:5): domain=106ef9432 status=allocated mode=enforcing pid=7258 uid=0 exe=\"/usr/bin/warden\" comm=\"warden-init\"",
		"audit(1795672443.725:5): arch=c000003e syscall=257 success=no exit=-13 a0=ffffff9c a1=55687aa7db88 a2=241 a3=1b6 items=0 ppid=7256 pid=7260 auid=4294967295 uid=0 comm=\"sh\" exe=\"/usr/bin/dash\" key=(null)",
		"audit(1795672443.725:5): proctitle=7368",
		"audit(1795672443.725:5): ",
	};
	const int types[] = { 1423, 1423, 1424, 1300, 1327, 1320 };
	struct llev ev = gather(recs, types, 6);
	CHECK(ev.naccess == 2 && ev.domain && ev.syscall && ev.complete);
	uint64_t d;
	CHECK(llev_domain(&ev, &d) && d == 0x106ef9432ULL);
	CHECK(llev_pid(&ev) == 7260 && llev_creator(&ev) == 7258);
	CHECK(llev_kind(&ev) == LLEV_FILE);
	struct event e = llev_event(&ev, 2, "openat", -1);
	CHECK_STR(e.kind, "file");
	char *s = json_dumps(e.fields, JSON_COMPACT);
	CHECK_STR(s, "{\"pid\":2,\"host_pid\":7260,\"syscall\":\"openat\",\"op\":\"open\","
		  "\"path\":\"/proc/2/comm\",\"objects\":[{\"path\":\"/proc/2\",\"access\":\"fs.make_reg\"},"
		  "{\"path\":\"/proc/2/comm\",\"access\":\"fs.make_reg,fs.write_file\"}],\"dev\":\"proc\","
		  "\"ino\":733,\"comm\":\"sh\",\"access\":[\"fs.make_reg\",\"fs.write_file\",\"write\"],"
		  "\"decision\":\"deny\",\"by\":\"landlock\",\"reason\":\"landlock\",\"domain\":\"106ef9432\"}");
	free(s);
	event_discard(&e);
	/* no syscall name: the number; no SYSCALL record: host_pid -1 */
	free(ev.syscall);
	ev.syscall = NULL;
	e = llev_event(&ev, -1, NULL, -1);
	CHECK(json_integer_value(json_object_get(e.fields, "host_pid")) == -1);
	CHECK(json_is_null(json_object_get(e.fields, "syscall")));
	event_discard(&e);
	llev_clear(&ev);
	CHECK(ev.naccess == 0 && !ev.domain);
}

static void test_not_utf8_path(void)
{
	const char *recs[] = { "audit(1.000:5): domain=1 blockers=fs.write_file path=2F746D702FFF" };
	const int types[] = { 1423 };
	struct llev ev = gather(recs, types, 1);
	struct event e = llev_event(&ev, 3, "openat", -1);
	CHECK_STR(json_string_value(json_object_get(e.fields, "path")), "/tmp/\\xFF");
	CHECK(json_is_array(json_object_get(e.fields, "escaped")));
	event_discard(&e);
	llev_clear(&ev);
}

static void test_signal_and_net(void)
{
	const char *recs[] = {
		"audit(1729738800.268:30): domain=1a6fdc66f blockers=scope.signal opid=1 ocomm=\"systemd\"",
		"audit(1729738800.268:30): arch=c000003e syscall=62 success=no exit=-1 a0=1 a1=12 ppid=272 pid=286 comm=\"kill\"",
	};
	const int types[] = { 1423, 1300 };
	struct llev ev = gather(recs, types, 2);
	CHECK(llev_kind(&ev) == LLEV_SIGNAL);
	CHECK(llev_signal_number(&ev, "kill") == 18);
	CHECK(llev_signal_number(&ev, "tgkill") == -1);
	struct event e = llev_event(&ev, 5, "kill", 1);
	CHECK_STR(e.kind, "signal");
	CHECK(json_integer_value(json_object_get(e.fields, "to_pid")) == 1);
	CHECK(json_integer_value(json_object_get(e.fields, "to_host_pid")) == 1);
	CHECK_STR(json_string_value(json_object_get(e.fields, "to_comm")), "systemd");
	CHECK_STR(json_string_value(json_object_get(e.fields, "signal")), "SIGCONT");
	event_discard(&e);
	llev_clear(&ev);

	const char *n1[] = { "audit(1.000:31): domain=2 blockers=net.connect_tcp daddr=10.0.0.1 dest=443" };
	const int t1[] = { 1423 };
	ev = gather(n1, t1, 1);
	e = llev_event(&ev, 5, "connect", -1);
	CHECK_STR(e.kind, "net");
	CHECK_STR(json_string_value(json_object_get(e.fields, "method")), "connect");
	CHECK_STR(json_string_value(json_object_get(e.fields, "address")), "10.0.0.1");
	CHECK(json_integer_value(json_object_get(e.fields, "port")) == 443);
	event_discard(&e);
	llev_clear(&ev);

	const char *n2[] = { "audit(1.000:32): domain=2 blockers=scope.abstract_unix_socket path=00782D79" };
	ev = gather(n2, t1, 1);
	e = llev_event(&ev, 5, "connect", -1);
	CHECK_STR(json_string_value(json_object_get(e.fields, "method")), "unix");
	CHECK_STR(json_string_value(json_object_get(e.fields, "path")), "@x-y");
	event_discard(&e);
	llev_clear(&ev);

	/* unknown blockers: no event kind */
	const char *n3[] = { "audit(1.000:33): domain=2 blockers=ptrace" };
	ev = gather(n3, t1, 1);
	CHECK(llev_kind(&ev) == LLEV_NONE);
	e = llev_event(&ev, 5, NULL, -1);
	CHECK(e.fields == NULL);
	llev_clear(&ev);
}

static void test_gather_limits(void)
{
	/* more ACCESS records than kept, a second SYSCALL, a deallocated
	 * DOMAIN: freed, not kept */
	struct llev ev = { 0 };
	for (int i = 0; i < LLEV_MAX_ACCESS + 3; i++)
		llev_add(&ev, parse(1423, "audit(1.000:5): domain=1 blockers=fs.read_file path=\"/x\""));
	llev_add(&ev, parse(1300, "audit(1.000:5): pid=3"));
	llev_add(&ev, parse(1300, "audit(1.000:5): pid=4"));
	llev_add(&ev, parse(1424, "audit(1.000:5): domain=1 status=deallocated denials=3"));
	CHECK(ev.naccess == LLEV_MAX_ACCESS && llev_pid(&ev) == 3 && !ev.domain);
	/* a pid of 0 or past pid_t: none */
	free(ev.syscall);
	ev.syscall = parse(1300, "audit(1.000:5): pid=0");
	CHECK(llev_pid(&ev) == -1);
	llev_clear(&ev);
}

int main(void)
{
	test_header();
	test_strings();
	test_hostile_sizes();
	test_file_event();
	test_not_utf8_path();
	test_signal_and_net();
	test_gather_limits();
	return check_status_counted("audit-llrecord");
}
