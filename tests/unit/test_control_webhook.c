/* test_control_webhook.c - unit tests of the webhook channel
 * (src/control/webhook.c, compiled into the test): the URLs it takes and
 * refuses, the status line, the body (the question, the session, the
 * commands that answer it, a detail too large replaced); and deliveries to
 * servers of the test on loopback (threads here): a 204 is delivered, a
 * 500, a server that never answers (past a lowered deadline), one that
 * sends a head without end, one that closes at once are alerts, never a
 * hang; the channel's end does not wait for a hung server. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "files.h"
#include "src/control/webhook.h"

static void test_urls(void)
{
	struct post_url u;
	struct werr e;
	CHECK(webhook_url_parse("http://127.0.0.1:8080/hook?x=1#frag", &u, &e) == 0);
	CHECK(!u.tls && u.port == 8080 && u.host.kind == NET_HOST_IPV4);
	CHECK_STR(u.authority, "127.0.0.1:8080");
	CHECK_STR(u.target, "/hook?x=1");
	CHECK(webhook_url_parse("https://Hooks.Example.COM", &u, &e) == 0);
	CHECK(u.tls && u.port == 443);
	CHECK_STR(u.host.name, "hooks.example.com");
	CHECK_STR(u.authority, "hooks.example.com");
	CHECK_STR(u.target, "/");
	CHECK(webhook_url_parse("https://[::1]:8443?q", &u, &e) == 0);
	CHECK(u.host.kind == NET_HOST_IPV6 && u.port == 8443);
	CHECK_STR(u.authority, "[::1]:8443");
	CHECK_STR(u.target, "/?q");
	CHECK(webhook_url_parse("http://h.example:80/a", &u, &e) == 0);
	CHECK_STR(u.authority, "h.example");
	static const char *const bad[] = {
		"ftp://h/", "http://", "http:///x", "http://user:pw@h/", "http://h:0/", "http://h:65536/",
		"http://h:x/", "http://h/a b", "http://h/\r\nX: 1", "http://[::1/", "http://h..x/",
		"http://h/\xc3\xa9",
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		e = (struct werr){ 0 };
		if (webhook_url_parse(bad[i], &u, &e) == 0) {
			fprintf(stderr, "accepted: %s\n", bad[i]);
			CHECK(0);
		}
		CHECK(strncmp(e.msg, "approve webhook: ", 17) == 0);
	}
}

static void test_status(void)
{
	CHECK(post_status("HTTP/1.1 200 OK\r\n", 17) == 200);
	CHECK(post_status("HTTP/1.0 204\r\n", 14) == 204);
	CHECK(post_status("HTTP/1.1 500 Oops\n", 18) == 500);
	CHECK(post_status("HTTP/1.1 20", 11) == 0);
	CHECK(post_status("HTT", 3) == 0);
	CHECK(post_status("", 0) == 0);
	CHECK(post_status("HTTP/2 200\r\n", 12) == -1);
	CHECK(post_status("SSH-2.0-x\r\n", 11) == -1);
	CHECK(post_status("HTTP/1.1 2000 x\r\n", 17) == -1);
	CHECK(post_status("HTTP/1.1 099\r\n", 14) == -1);
	CHECK(post_status("HTTP/1.1 abc\r\n", 14) == -1);
}

static struct question question(const char *id, json_t *detail)
{
	struct question q = { .kind = APPROVAL_NET, .kind_name = "net", .subject = "example.invalid:80",
			      .summary = "connect to example.invalid:80 (HTTP)", .detail = detail,
			      .timeout_s = 60 };
	snprintf(q.id, sizeof q.id, "%s", id);
	clock_gettime(CLOCK_REALTIME, &q.asked);
	clock_gettime(CLOCK_MONOTONIC, &q.deadline);
	q.deadline.tv_sec += 60;
	return q;
}

static void test_body(void)
{
	json_t *detail = json_pack("{s:s,s:i}", "host", "example.invalid", "port", 80);
	struct question q = question("abcd1234-7", detail);
	size_t len = 0;
	char *b = webhook_body(&q, "20261125T000000Z-abcd1234", &len);
	CHECK(b && len == strlen(b));
	json_t *j = json_loads(b, 0, NULL);
	CHECK_STR(json_string_value(json_object_get(j, "event")), "approval.asked");
	CHECK_STR(json_string_value(json_object_get(j, "session")), "20261125T000000Z-abcd1234");
	json_t *qj = json_object_get(j, "question");
	CHECK_STR(json_string_value(json_object_get(qj, "id")), "abcd1234-7");
	CHECK_STR(json_string_value(json_object_get(qj, "subject")), "example.invalid:80");
	CHECK_STR(json_string_value(json_object_get(json_object_get(qj, "detail"), "host")), "example.invalid");
	json_t *ans = json_object_get(j, "answer");
	CHECK_STR(json_string_value(json_object_get(ans, "allow")), "warden approve abcd1234-7 allow");
	CHECK_STR(json_string_value(json_object_get(ans, "deny")), "warden approve abcd1234-7 deny");
	CHECK(strstr(json_string_value(json_object_get(j, "text")), "warden approve abcd1234-7 allow"));
	json_decref(j);
	free(b);
	/* a detail too large goes */
	char *big = xmalloc(100000);
	memset(big, 'a', 99999);
	big[99999] = '\0';
	json_object_set_new(detail, "big", json_string(big));
	free(big);
	b = webhook_body(&q, "s", &len);
	CHECK(b && len <= WEBHOOK_BODY_MAX);
	j = json_loads(b, 0, NULL);
	CHECK(json_is_true(json_object_get(json_object_get(json_object_get(j, "question"), "detail"),
					   "truncated")));
	json_decref(j);
	free(b);
	json_decref(detail);
}

/* ---- deliveries ---- */

enum mode { OK204, ERR500, HANG, ENDLESS, CLOSE };

struct server {
	int fd;
	enum mode mode;
	char got[8192]; /* the request head and body, as far as read */
	size_t got_len;
};

static void *serve(void *arg)
{
	struct server *s = arg;
	if (s->mode == HANG)
		return NULL; /* connections wait in the backlog */
	int c = accept(s->fd, NULL, NULL);
	if (c < 0)
		return NULL;
	if (s->mode == CLOSE) {
		close(c);
		return NULL;
	}
	/* the head, then the body (Content-Length) */
	for (;;) {
		ssize_t n = read(c, s->got + s->got_len, sizeof s->got - 1 - s->got_len);
		if (n <= 0)
			break;
		s->got_len += (size_t)n;
		s->got[s->got_len] = '\0';
		char *end = strstr(s->got, "\r\n\r\n"), *cl = strstr(s->got, "Content-Length: ");
		if (end && cl && s->got_len >= (size_t)(end + 4 - s->got) + strtoul(cl + 16, NULL, 10))
			break;
	}
	if (s->mode == OK204) {
		static const char r[] = "HTTP/1.1 204 No Content\r\n\r\n";
		(void)!write(c, r, sizeof r - 1);
	} else if (s->mode == ERR500) {
		static const char r[] = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n";
		(void)!write(c, r, sizeof r - 1);
	} else {
		char junk[4096];
		memset(junk, 'A', sizeof junk);
		(void)!write(c, "HTTP/1.1 200 ", 13);
		for (int i = 0; i < 8; i++)
			if (write(c, junk, sizeof junk) < 0)
				break;
	}
	close(c);
	return NULL;
}

static int listener(uint16_t *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof sa;
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 8) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		perror("listener");
		exit(2);
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One question through a webhook to a server of mode m, with a broker of
 * its own: the log's text after it. */
static char *deliver_to(enum mode m, struct audit *log, const char *log_path, struct server *s)
{
	struct policy pol = { 0 };
	struct approvals *a = approvals_new(log, "20261125T000000Z-abcd1234", &pol);
	uint16_t port;
	*s = (struct server){ .fd = listener(&port), .mode = m };
	pthread_t t;
	pthread_create(&t, NULL, serve, s);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/hook/tok", (unsigned)port);
	struct werr e = { 0 };
	struct webhook *w = webhook_new_within(a, url, "20261125T000000Z-abcd1234", log, 500, &e);
	CHECK(w != NULL);
	if (!w)
		return NULL;
	const struct question *q = approvals_ask(a, APPROVAL_NET, "example.invalid:80", "connect",
						 NULL, NULL, NULL);
	CHECK(q != NULL);
	/* the outcome comes back through the eventfd */
	struct pollfd p = { .fd = webhook_fd(w), .events = POLLIN };
	double t0 = now_s();
	CHECK(poll(&p, 1, 5000) == 1);
	CHECK(now_s() - t0 < 3);
	webhook_dispatch(w);
	approvals_cancel(a, q);
	pthread_join(t, NULL);
	approvals_free(a);
	webhook_free(w);
	close(s->fd);
	size_t len;
	return slurp(log_path, &len);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; p && (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_deliveries(void)
{
	tmpdir_make("warden-webhook");
	struct audit *log;
	struct werr e = { 0 };
	CHECK(audit_open(&log, tmpdir, "20261125T000000Z-abcd1234", &e) == 0);
	char *log_path = xasprintf("%s/20261125T000000Z-abcd1234.jsonl", tmpdir);
	static struct server s;

	char *text = deliver_to(OK204, log, log_path, &s);
	CHECK(text && count(text, "approval.webhook-failed") == 0);
	CHECK(strncmp(s.got, "POST /hook/tok HTTP/1.1\r\n", 25) == 0);
	CHECK(strstr(s.got, "\r\nContent-Type: application/json\r\n") != NULL);
	CHECK(strstr(s.got, "\"answer\":{\"allow\":\"warden approve abcd1234-1 allow\"") != NULL);
	free(text);

	static const struct {
		enum mode m;
		const char *why;
	} bad[] = {
		{ ERR500, "the server answered 500" },
		{ HANG, "waiting for the response: Connection timed out" },
		{ ENDLESS, "the server's answer is not HTTP/1.x" },
		{ CLOSE, "question abcd1234-1 not delivered: " },
	};
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		text = deliver_to(bad[i].m, log, log_path, &s);
		CHECK(text && count(text, "approval.webhook-failed") == i + 1);
		if (text && !strstr(text, bad[i].why)) {
			fprintf(stderr, "no '%s' in the log:\n%s\n", bad[i].why, text);
			CHECK(0);
		}
		/* the host and port, never the URL's path */
		CHECK(text && !strstr(text, "/hook/tok"));
		free(text);
	}

	/* the end does not wait for a hung server */
	uint16_t port;
	int fd = listener(&port);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/", (unsigned)port);
	struct policy pol = { 0 };
	struct approvals *a = approvals_new(log, "20261125T000000Z-abcd1234", &pol);
	struct webhook *w = webhook_new_within(a, url, "s", log, 30000, &e);
	CHECK(approvals_ask(a, APPROVAL_NET, "x:1", "x", NULL, NULL, NULL) != NULL);
	usleep(200000);
	double t0 = now_s();
	approvals_free(a);
	webhook_free(w);
	CHECK(now_s() - t0 < 1.0);
	close(fd);

	audit_close(log);
	free(log_path);
	tmpdir_remove();
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* the test's servers write to clients that left */
	test_urls();
	test_status();
	test_body();
	test_deliveries();
	printf("%d checks\n", checks);
	return check_status();
}
