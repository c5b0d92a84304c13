/* test_session_summary.c - unit tests of the end-of-session summary of
 * refusals (src/session/summary.c): each refused destination once with the
 * flag that would allow it, repeats counted, allowed traffic left out, a
 * limit the sandbox reached with what happened, a bound on what it keeps
 * however many distinct refusals an agent makes, and a path the sandbox
 * named with escape sequences shown without them; a program exec control
 * refused (one it could not resolve by the path tried), and a question
 * about a destination answered no; requests the proxy would not parse,
 * HTTP and SOCKS5, one line per reason; a unix socket of the host named
 * as a socket, not as a request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/audit/audit.h"
#include "src/session/summary.h"
#include "check.h"
#include "files.h"

static void refuse_port(struct audit *a, const char *host, unsigned port, bool allowed)
{
	struct werr e = { 0 };
	struct event ev = ev_net_proxy(&(struct ev_net_proxy){
		.method = "CONNECT", .host = host, .port = port, .address = "",
		.allowed = allowed, .status = allowed ? 200 : 403,
		.rule = allowed ? host : "",
		.reason = allowed ? "" : "no rule allows this destination" });
	CHECK(audit_emit_event(a, ev, &e) == 0);
}

static void refuse(struct audit *a, const char *host, bool allowed)
{
	refuse_port(a, host, 443, allowed);
}

/* What summary_print writes, as a string (malloc'd). */
static char *printed(const struct summary *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	summary_print(s, NULL, f);
	fclose(f);
	return buf;
}

static struct audit *open_log(const char *session)
{
	struct audit *a = NULL;
	struct werr e = { 0 };
	if (audit_open(&a, tmpdir, session, &e) < 0) {
		fprintf(stderr, "audit_open: %s\n", e.msg);
		exit(2);
	}
	return a;
}

static void test_listed_once(void)
{
	struct audit *a = open_log("20261124T000000Z-00000001");
	struct summary s = { 0 };
	summary_attach(&s, a);
	refuse(a, "api.example.com", false);
	refuse(a, "api.example.com", false);
	refuse(a, "allowed.example.com", true);
	refuse_port(a, "127.0.0.1", 4000, false);
	_cleanup_free_ char *out = printed(&s);
	CHECK(strstr(out, "api.example.com:443 (2 times)") != NULL);
	/* the host's loopback is allowed one port at a time */
	CHECK(strstr(out, "--allow-net 127.0.0.1:4000") != NULL);
	CHECK(strstr(out, "--allow-net api.example.com") != NULL);
	CHECK(strstr(out, "allowed.example.com") == NULL);
	summary_free(&s);
	audit_close(a);
}

static void test_nothing_refused(void)
{
	struct audit *a = open_log("20261124T000000Z-00000002");
	struct summary s = { 0 };
	summary_attach(&s, a);
	refuse(a, "allowed.example.com", true);
	_cleanup_free_ char *out = printed(&s);
	CHECK_STR(out, "");
	summary_free(&s);
	audit_close(a);
}

static void test_limit(void)
{
	struct audit *a = open_log("20261124T000000Z-00000004");
	struct summary s = { 0 };
	summary_attach(&s, a);
	struct werr e = { 0 };
	for (int i = 0; i < 2; i++)
		CHECK(audit_emit_event(a, ev_limit(&(struct ev_limit){ .kind = "tmp", .limit = "8M",
			.detail = "/tmp is full" }), &e) == 0);
	_cleanup_free_ char *out = printed(&s);
	CHECK(strstr(out, "limit tmp 8M (2 times): /tmp is full") != NULL);
	summary_free(&s);
	audit_close(a);
}

/* A write a read-only workspace refused: named once with its reason (the
 * hint naming --output); a file operation recorded and let through is not
 * listed. */
static void test_readonly_write(void)
{
	struct audit *a = open_log("20261124T000000Z-00000005");
	struct summary s = { 0 };
	summary_attach(&s, a);
	struct werr e = { 0 };
	const char *why = "the workspace is read-only (EROFS); write to an --output directory";
	for (int i = 0; i < 2; i++)
		CHECK(audit_emit_event(a, ev_file(&(struct ev_file){ .pid = 2, .op = "open",
			.syscall = "openat", .npaths = 1, .paths = { "/ws/a.txt" }, .decision = "deny",
			.reason = why }), &e) == 0);
	CHECK(audit_emit_event(a, ev_file(&(struct ev_file){ .pid = 2, .op = "open",
		.syscall = "openat", .npaths = 1, .paths = { "/ws/out/b.txt" } }), &e) == 0);
	_cleanup_free_ char *out = printed(&s);
	CHECK(strstr(out, "open /ws/a.txt (2 times): the workspace is read-only") != NULL);
	CHECK(strstr(out, "--output") != NULL);
	CHECK(strstr(out, "b.txt") == NULL);
	summary_free(&s);
	audit_close(a);
}

/* A path the sandbox chose, with an OSC 52 (set the clipboard) and a
 * screen clear in it: printed escaped, no ESC or BEL reaches the terminal. */
static void test_escapes_shown(void)
{
	struct audit *a = open_log("20261124T000000Z-00000006");
	struct summary s = { 0 };
	summary_attach(&s, a);
	struct werr e = { 0 };
	CHECK(audit_emit_event(a, ev_file(&(struct ev_file){ .pid = 2, .op = "open",
		.syscall = "openat", .npaths = 1, .paths = { "/usr/x\033]52;c;aGk=\007\033[2J" },
		.decision = "deny", .reason = "read-only mount" }), &e) == 0);
	_cleanup_free_ char *out = printed(&s);
	CHECK(strstr(out, "open /usr/x\\x1b]52;c;aGk=\\x07\\x1b[2J: read-only mount") != NULL);
	CHECK(strchr(out, '\033') == NULL && strchr(out, '\007') == NULL);
	summary_free(&s);
	audit_close(a);
}

/* A program exec control refused: named by its own path with the rule,
 * once for a shell's PATH search (one process trying /usr/bin/id, then
 * /bin/id), counted again when another process tries it; an allowed
 * program is not listed. */
static void exec_try(struct audit *a, long host_pid, const char *path, const char *deny)
{
	struct werr e = { 0 };
	CHECK(audit_emit_event(a, ev_exec(&(struct ev_exec){ .pid = 3, .ppid = 2,
		.host_pid = host_pid, .cwd = "/ws", .path = path, .argv = json_pack("[s]", "id"),
		.resolved = deny ? "/usr/bin/id" : "/usr/bin/true", .sha256 = "ab", .interpreter = "",
		.deny = deny }),
		&e) == 0);
}

static void test_exec_refused(void)
{
	struct audit *a = open_log("20261124T000000Z-00000007");
	struct summary s = { 0 };
	summary_attach(&s, a);
	exec_try(a, 100, "/usr/bin/id", "exec deny /usr/bin/id");
	exec_try(a, 100, "/bin/id", "exec deny /usr/bin/id");
	exec_try(a, 101, "/usr/bin/true", NULL);
	_cleanup_free_ char *once = printed(&s);
	CHECK(strstr(once, "  exec /usr/bin/id: exec deny /usr/bin/id\n") != NULL);
	CHECK(strstr(once, "true") == NULL);
	exec_try(a, 102, "/usr/bin/id", "exec deny /usr/bin/id");
	_cleanup_free_ char *twice = printed(&s);
	CHECK(strstr(twice, "  exec /usr/bin/id (2 times): exec deny /usr/bin/id\n") != NULL);
	/* not resolved (another process's root): the path tried, not "?" */
	struct werr e = { 0 };
	CHECK(audit_emit_event(a, ev_exec(&(struct ev_exec){ .pid = 4, .ppid = 2, .host_pid = 103,
		.cwd = "/ws", .path = "/proc/1/root/usr/bin/true", .argv = json_pack("[s]", "true"),
		.resolved = NULL, .interpreter = "",
		.deny = "warden could not resolve it: Invalid cross-device link" }), &e) == 0);
	_cleanup_free_ char *other = printed(&s);
	CHECK(strstr(other, "  exec /proc/1/root/usr/bin/true: warden could not resolve it: "
			    "Invalid cross-device link\n") != NULL);
	CHECK(strstr(other, "exec ?") == NULL);
	summary_free(&s);
	audit_close(a);
}

/* A destination an ask rule held, and the answer no (or no answer): listed
 * with the rule and the answer; one allowed after its question is not. */
static void test_net_asked(void)
{
	struct audit *a = open_log("20261124T000000Z-00000008");
	struct summary s = { 0 };
	summary_attach(&s, a);
	struct werr e = { 0 };
	const char *answers[] = { "denied by timeout: no answer within 3 s", "allowed by approve" };
	for (size_t i = 0; i < 2; i++)
		CHECK(audit_emit_event(a, ev_net_proxy(&(struct ev_net_proxy){
			.method = "GET", .host = i ? "ok.example" : "api.example", .port = 80,
			.address = "", .allowed = i == 1, .status = i ? 200 : 403,
			.rule = i ? "ok.example" : "api.example", .reason = answers[i] }), &e) == 0);
	_cleanup_free_ char *out = printed(&s);
	CHECK(strstr(out, "  api.example:80: asked by rule api.example, and denied by timeout: "
			  "no answer within 3 s\n") != NULL);
	CHECK(strstr(out, "ok.example") == NULL);
	summary_free(&s);
	audit_close(a);
}

/* What the proxy refused beyond its rules (a TLS name other than the
 * tunnel's) is listed with its reason; what it could not carry (502: the
 * destination did not answer) and a client that hung up are not
 * refusals. */
static void test_proxy_other(void)
{
	struct audit *a = open_log("20261124T000000Z-00000009");
	struct summary s = { 0 };
	summary_attach(&s, a);
	struct werr e = { 0 };
	CHECK(audit_emit_event(a, ev_net_proxy(&(struct ev_net_proxy){
		.method = "CONNECT", .host = "127.0.0.1", .port = 8443, .address = "",
		.status = 200, .rule = "127.0.0.1:8443",
		.reason = "TLS asks for evil.example (SNI), not 127.0.0.1" }), &e) == 0);
	CHECK(audit_emit_event(a, ev_net_proxy(&(struct ev_net_proxy){
		.method = "CONNECT", .host = "down.example", .port = 443, .address = "",
		.status = 502, .rule = "down.example", .reason = "cannot connect to the destination" }),
		&e) == 0);
	/* a client that hung up in its handshake: no refusal (status 0) */
	CHECK(audit_emit_event(a, ev_net_proxy(&(struct ev_net_proxy){
		.method = "?", .host = "", .port = 0, .address = "", .status = 0, .rule = "",
		.reason = "client closed during the handshake" }), &e) == 0);
	_cleanup_free_ char *out = printed(&s);
	CHECK(strstr(out, "  127.0.0.1:8443: TLS asks for evil.example (SNI)") != NULL);
	CHECK(strstr(out, "down.example") == NULL);
	CHECK(strstr(out, "client closed") == NULL);
	summary_free(&s);
	audit_close(a);
}

/* Requests the proxy would not parse have no host: each reason is a line
 * of its own (not six folded under the first one's), a repeat counted; a
 * 505 (HTTP/2's preface) is the proxy's refusal too, and so is a SOCKS5
 * request it would not parse (no status); a SOCKS5 client that hung up in
 * its handshake is not a refusal. */
static void unparsed(struct audit *a, const char *via, int status, const char *reason)
{
	struct werr e = { 0 };
	CHECK(audit_emit_event(a, ev_net_proxy(&(struct ev_net_proxy){
		.method = strcmp(via, "socks5") == 0 ? "socks5" : "?", .host = "", .port = 0,
		.address = "", .socks = strcmp(via, "socks5") == 0, .status = status, .rule = "",
		.reason = reason }), &e) == 0);
}

static void test_unparsed_each_reason(void)
{
	struct audit *a = open_log("20261124T000000Z-0000000a");
	struct summary s = { 0 };
	summary_attach(&s, a);
	static const char *const why[] = { "duplicate Content-Length",
		"Transfer-Encoding with Content-Length", "obsolete line folding",
		"userinfo in URL", "Host header disagrees with URL (a.example:80, Host b.example:80)" };
	for (size_t i = 0; i < ARRAY_LEN(why); i++)
		unparsed(a, "http", 400, why[i]);
	unparsed(a, "http", 400, why[0]);
	unparsed(a, "http", 505, "HTTP version not supported");
	unparsed(a, "socks5", 0, "bad domain name: space or control byte");
	unparsed(a, "socks5", 0, "client closed during the handshake");
	unparsed(a, "socks5", 0, "timed out (handshake)");
	_cleanup_free_ char *out = printed(&s);
	CHECK(strstr(out, "  a request to warden's proxy (2 times): duplicate Content-Length\n") != NULL);
	for (size_t i = 1; i < ARRAY_LEN(why); i++) {
		_cleanup_free_ char *line = xasprintf("  a request to warden's proxy: %s\n", why[i]);
		CHECK(strstr(out, line) != NULL);
	}
	CHECK(strstr(out, "  a request to warden's proxy: HTTP version not supported\n") != NULL);
	CHECK(strstr(out, "  a SOCKS5 request to warden's proxy: bad domain name: space or control "
			  "byte\n") != NULL);
	CHECK(strstr(out, "client closed") == NULL && strstr(out, "timed out") == NULL);
	CHECK(s.n == ARRAY_LEN(why) + 2);
	summary_free(&s);
	audit_close(a);
}

/* A connect to a unix socket of the host: its path is the socket's, named
 * as opened inside (as given when not resolved), with the event's reason;
 * not a request refused by method/path rules at "?:0". */
static void test_unix_socket(void)
{
	struct audit *a = open_log("20261124T000000Z-0000000b");
	struct summary s = { 0 };
	summary_attach(&s, a);
	struct werr e = { 0 };
	for (int i = 0; i < 2; i++)
		CHECK(audit_emit_event(a, ev_net_unix(&(struct ev_net_unix){ .pid = 2,
			.host_pid = 99, .path = "x.sock", .resolved = "/ws/x.sock" }), &e) == 0);
	CHECK(audit_emit_event(a, ev_net_unix(&(struct ev_net_unix){ .pid = 2, .host_pid = 99,
		.path = "/run/y.sock", .resolved = NULL }), &e) == 0);
	_cleanup_free_ char *out = printed(&s);
	CHECK(strstr(out, "  unix socket /ws/x.sock (2 times): a unix socket of the host\n") != NULL);
	CHECK(strstr(out, "  unix socket /run/y.sock: a unix socket of the host\n") != NULL);
	CHECK(strstr(out, "?:0") == NULL && strstr(out, "method/path") == NULL);
	summary_free(&s);
	audit_close(a);
}

/* A request refused by method/path rules: one line for the destination,
 * the first reason as an example, however many paths were refused. */
static void test_path_rules_folded(void)
{
	struct audit *a = open_log("20261124T000000Z-0000000c");
	struct summary s = { 0 };
	summary_attach(&s, a);
	struct werr e = { 0 };
	static const char *const paths[] = { "/a", "/b" };
	for (size_t i = 0; i < ARRAY_LEN(paths); i++) {
		_cleanup_free_ char *why = xasprintf("GET %s: no request rule allows it", paths[i]);
		CHECK(audit_emit_event(a, ev_net_proxy(&(struct ev_net_proxy){
			.method = "GET", .host = "api.example", .port = 443, .address = "",
			.status = 403, .rule = "", .reason = why, .path = paths[i] }), &e) == 0);
	}
	_cleanup_free_ char *out = printed(&s);
	CHECK(strstr(out, "  api.example:443 (2 times): requests refused by the profile's "
			  "method/path rules, such as: GET /a: no request rule allows it\n") != NULL);
	summary_free(&s);
	audit_close(a);
}

/* An agent making refusals without end: kept distinct ones stop at
 * SUMMARY_KEEP, the rest are counted, the print stays SUMMARY_LINES long. */
static void test_bounded(void)
{
	struct audit *a = open_log("20261124T000000Z-00000003");
	struct summary s = { 0 };
	summary_attach(&s, a);
	for (int i = 0; i < SUMMARY_KEEP + 36; i++) {
		char host[64];
		snprintf(host, sizeof host, "h%d.example.com", i);
		refuse(a, host, false);
	}
	CHECK(s.n == SUMMARY_KEEP);
	CHECK(s.unlisted == 36);
	_cleanup_free_ char *out = printed(&s);
	size_t lines = 0;
	for (const char *p = out; *p; p++)
		lines += *p == '\n';
	CHECK(lines == 1 + SUMMARY_LINES + 1);
	char more[64];
	snprintf(more, sizeof more, "and %d more refusals", SUMMARY_KEEP + 36 - SUMMARY_LINES);
	CHECK(strstr(out, more) != NULL);
	summary_free(&s);
	audit_close(a);
}

int main(void)
{
	tmpdir_make("warden-test-summary");
	test_listed_once();
	test_nothing_refused();
	test_limit();
	test_readonly_write();
	test_bounded();
	test_escapes_shown();
	test_exec_refused();
	test_net_asked();
	test_proxy_other();
	test_unparsed_each_reason();
	test_unix_socket();
	test_path_rules_folded();
	tmpdir_remove();
	return check_status_counted("session_summary");
}
