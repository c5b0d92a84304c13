/* summary.c - the refusals of a session, said once when it ends: a
 * subscriber of the event stream keeps each refused thing once for each
 * reason (a proxy destination the rules refused or a question about it
 * denied, a request the proxy would not take, a direct connection, a unix
 * socket of the host, a program exec control refused, a syscall, a tool
 * call an agent's hook reported and warden refused, a limit the sandbox
 * reached), with the reason and, where one exists, the flag or
 * profile line that would allow it, those lines first; the user reads
 * this instead of an unrelated error from the agent. fontconfig's system
 * cache, which nothing needs, is left out. Also the connections to the
 * published ports, counted. */
#include "summary.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/hosttext.h"
#include "../common/shown.h"
#include "../common/util.h"

/* Keep key once with its reason, counting repeats: the same thing refused
 * for another reason is a line of its own, so no line claims one reason
 * for all. Only the first `same` bytes of the reasons are compared: a
 * reason that ends in an example ("such as: ") is kept with the first
 * one. An agent can make refusals without end: past SUMMARY_KEEP distinct
 * ones they are only counted, so neither memory nor the search here grows
 * with them. */
static void keep(struct summary *s, char *key, char *why, size_t same)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].key, key) == 0 && strncmp(s->v[i].why, why, same) == 0) {
			s->v[i].times++;
			free(key);
			free(why);
			return;
		}
	if (s->n == SUMMARY_KEEP) {
		s->unlisted++;
		free(key);
		free(why);
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = (struct refusal){ .key = key, .why = why, .times = 1 };
}

static void add(struct summary *s, char *key, char *why)
{
	keep(s, key, why, SIZE_MAX);
}

static const char *str(const json_t *f, const char *k)
{
	const char *v = json_string_value(json_object_get(f, k));
	return v ? v : "?";
}

/* The answer to a question an ask rule put, when it was no (askq.h's
 * words: "denied by approve", "denied by timeout: ...", "denied by ci: ...",
 * "the session ended before an answer"), or when nobody could answer. */
static bool asked(const char *reason)
{
	return strncmp(reason, "denied by ", 10) == 0 || strstr(reason, "before an answer") ||
	       strstr(reason, "nobody can answer");
}

/* A connection's end that is no refusal: the client went away or went
 * quiet (proxy.c's words), or the session ended under it. */
static bool ended(const char *reason)
{
	return strncmp(reason, "client closed", 13) == 0 ||
	       strncmp(reason, "the client closed", 17) == 0 ||
	       strncmp(reason, "client gone", 11) == 0 || strncmp(reason, "timed out", 9) == 0 ||
	       strcmp(reason, "session ended") == 0;
}

/* A refusal of the proxy's own (a 4xx: a deny rule, a name resolving to
 * a refused address, a phantom toward the wrong host, a request it would
 * not parse; a 501 or 505: a request it will not take, an unsupported
 * Transfer-Encoding or scheme, another HTTP version, HTTP/2's preface
 * among them; a SOCKS5 request it would not parse, which has no status
 * and no host; a TLS name other than the tunnel's, after the tunnel's
 * 200; a host loopback port's address denied), not a connection it could
 * not carry (502, 503, 504: the destination did not answer, a name did
 * not resolve) nor a client that went away (status 0). */
static bool refused_by_proxy(const json_t *f, const char *reason)
{
	long long st = json_integer_value(json_object_get(f, "status"));
	bool socks_unparsed = strcmp(str(f, "via"), "socks5") == 0 && !*str(f, "host") &&
			      !ended(reason);
	/* (on a host loopback port there is no status: the reasons say) */
	return (st >= 400 && st < 500) || st == 501 || st == 505 || socks_unparsed ||
	       strstr(reason, "(SNI)") ||
	       strstr(reason, "TLS ClientHello") || strstr(reason, "address is denied") ||
	       strstr(reason, " denied by rule ") || strstr(reason, " resolves to ") ||
	       strstr(reason, " to methods and paths, ") ||
	       strncmp(reason, "the phantom of secret ", 22) == 0 ||
	       strncmp(reason, "TLS on a connection warden reads as plain HTTP", 46) == 0;
}

/* A destination refused by warden's proxy. Transport failures (the client
 * hung up, a timeout, the destination down) are not refusals and are left
 * out. */
/* host:port as a line names a destination (an IPv6 literal in brackets),
 * port the event's field. */
static char *host_port(const json_t *f, const char *host)
{
	char ht[HOST_TEXT_MAX];
	return xasprintf("%s:%lld", host_text(host, ht),
			 json_integer_value(json_object_get(f, "port")));
}

static void proxy_refused(struct summary *s, const json_t *f)
{
	const char *host = str(f, "host"), *reason = str(f, "reason");
	bool v6 = strchr(host, ':') != NULL;
	char *key = host_port(f, host);
	/* a pattern without a port allows every port; the host's loopback is
	 * reached one port at a time (and an IPv6 literal needs its brackets) */
	bool with_port = v6 || strncmp(host, "127.", 4) == 0 || strcmp(host, "localhost") == 0;
	static const char by_rules[] = "requests refused by the profile's method/path rules, "
				       "such as: ";
	if (json_object_get(f, "path")) /* a request: method/path rules, or TRACE */
		keep(s, key, xasprintf("%s%s", by_rules, reason), sizeof by_rules - 1);
	else if (strncmp(reason, "no rule allows", 14) == 0)
		add(s, key, xasprintf("no rule allows it; allow it with --allow-net %s",
				      with_port ? key : host));
	else if (json_object_get(f, "rule") && asked(reason))
		add(s, key, xasprintf("asked by rule %s, and %s", str(f, "rule"), reason));
	else if (refused_by_proxy(f, reason)) {
		/* a request the proxy would not parse has no host to name */
		if (!*host || strcmp(host, "?") == 0) {
			free(key);
			key = xstrdup(strcmp(str(f, "via"), "socks5") == 0
					      ? "a SOCKS5 request to warden's proxy"
					      : "a request to warden's proxy");
		}
		add(s, key, xstrdup(reason));
	} else {
		free(key);
	}
}

/* A connect or datagram to a unix socket the host bound (ev_net_unix): its
 * path is the socket's, not a request's; named as opened inside, else as
 * the process named it. */
static void unix_refused(struct summary *s, const json_t *f)
{
	const char *sock = json_string_value(json_object_get(f, "resolved"));
	add(s, xasprintf("unix socket %s", sock ? sock : str(f, "path")), xstrdup(str(f, "reason")));
}

/* A net event refused: a direct connection or datagram out, a unix
 * socket of the host, or what warden's proxy refused. */
static void net_refused(struct summary *s, const json_t *f)
{
	const char *method = str(f, "method");
	if (strcmp(method, "connect") == 0 || strcmp(method, "sendto") == 0)
		add(s, host_port(f, str(f, "address")),
		    /* the host's loopback port tried on the sandbox's (loophint.h)
		     * says so itself */
		    strncmp(str(f, "reason"), "direct connection", 17) != 0 ? xstrdup(str(f, "reason"))
		    : xstrdup("a direct connection: only warden's proxy leads out (HTTP_PROXY, "
			      "ALL_PROXY are set inside)"));
	else if (strcmp(method, "unix") == 0)
		unix_refused(s, f);
	else
		proxy_refused(s, f);
}

/* A program exec control refused, by its own path: a shell's PATH search
 * that tries /usr/bin/id and then /bin/id in one process is one refusal. */
static void exec_refused(struct summary *s, const json_t *f)
{
	long long pid = json_integer_value(json_object_get(f, "host_pid"));
	/* not resolved (null): the path tried, as given */
	const char *prog = json_string_value(json_object_get(f, "resolved"));
	if (!prog)
		prog = str(f, "path");
	char *key = xasprintf("exec %s", prog);
	bool again = pid && pid == s->exec_pid && s->n && strcmp(s->v[s->n - 1].key, key) == 0;
	s->exec_pid = pid;
	if (again)
		free(key);
	else
		add(s, key, xstrdup(str(f, "reason")));
}

/* Bytes of a tool call's `what` shown in its line: the command or path
 * the rule judged, enough to know it again (the log has it whole). */
#define TOOL_WHAT_SHOWN 80

/* A tool call its hook asked about and warden refused (a `tool deny`
 * rule, a human's no or nobody to ask, a call too long to judge): by its
 * tool and what it would have done, as a `tool` rule names them; the
 * reason without the "warden: " the agent reads it with. */
static void tool_refused(struct summary *s, const json_t *f)
{
	const char *what = str(f, "what"), *why = str(f, "reason");
	size_t n = strlen(what), cut = n > TOOL_WHAT_SHOWN ? TOOL_WHAT_SHOWN : n;
	while (cut < n && cut > 0 && ((unsigned char)what[cut] & 0xc0) == 0x80)
		cut--; /* not inside a UTF-8 sequence */
	bool more = cut < n || json_is_true(json_object_get(f, "what_truncated"));
	if (strncmp(why, "warden: ", 8) == 0)
		why += 8;
	add(s, xasprintf("tool %s %.*s%s", str(f, "tool"), (int)cut, what, more ? "..." : ""),
	    xstrdup(why));
}

/* A request to the SSH agent inside refused (a key the policy does not
 * name, a human's no, an add or a lock): by its action and key; and an
 * MCP message refused, by its tool (or method) and server. */
static void agent_refused(struct summary *s, const char *kind, const json_t *f)
{
	const char *why = json_object_get(f, "reason") ? str(f, "reason") : "refused";
	if (strcmp(kind, "ssh") == 0) {
		const char *key = json_string_value(json_object_get(f, "key"));
		key = key ? key : "";
		add(s, xasprintf("ssh-agent %s%s%s", str(f, "action"), *key ? " " : "", key),
		    xstrdup(why));
		return;
	}
	const char *tool = json_string_value(json_object_get(f, "mcp_tool")),
		   *method = str(f, "mcp_method");
	tool = tool ? tool : "";
	_cleanup_free_ char *server = host_port(f, str(f, "host"));
	add(s, xasprintf("mcp %s%s on %s", *tool ? "tool " : "", *tool ? tool : method, server),
	    xstrdup(why));
}

/* The counts of a published port by its host port (made on its first
 * event), or NULL past the table. */
static struct inbound_count *inbound_of(struct summary *s, unsigned host)
{
	size_t i = 0;
	while (i < s->ninbound && s->inbound[i].host_port != host)
		i++;
	if (i == s->ninbound) {
		if (i == ARRAY_LEN(s->inbound))
			return NULL;
		s->inbound[s->ninbound++] = (struct inbound_count){ .host_port = host };
	}
	return &s->inbound[i];
}

/* A connection to a published port, counted by its host port. */
static void inbound(struct summary *s, const json_t *f)
{
	struct inbound_count *c =
		inbound_of(s, (unsigned)json_integer_value(json_object_get(f, "host_port")));
	if (!c)
		return;
	c->port = (unsigned)json_integer_value(json_object_get(f, "port"));
	c->conns++;
	if (json_object_get(f, "error"))
		c->failed++;
}

/* A published port past its cap (publish.h): connections refused. */
static void inbound_capped(struct summary *s, const json_t *f)
{
	struct inbound_count *c =
		inbound_of(s, (unsigned)json_integer_value(json_object_get(f, "port")));
	if (c)
		snprintf(c->capped, sizeof c->capped, "%s", str(f, "action"));
}

/* An event of the published ports (a connection's, the cap's alert)
 * counted: true. */
static bool published(struct summary *s, const char *kind, const json_t *f)
{
	if (strcmp(kind, "net") == 0 && strcmp(str(f, "direction"), "inbound") == 0)
		inbound(s, f);
	else if (strcmp(kind, "alert") == 0 && strcmp(str(f, "rule"), "publish.connection-cap") == 0)
		inbound_capped(s, f);
	else
		return false;
	return true;
}

/* A path in /proc or /sys: a runtime probing the kernel's files (node's
 * tracing marker, a tuning knob) is refused by their read-only mounts, and
 * no profile line would change that: in the log, not in the summary. */
static bool pseudo_fs(const char *path)
{
	return strncmp(path, "/proc/", 6) == 0 || strncmp(path, "/sys/", 5) == 0;
}

/* fontconfig's system cache: a program that draws text (a browser, a
 * plotting library) tries to write it on every start, is refused by the
 * read-only /var, and uses ~/.cache/fontconfig instead. Nothing to act on:
 * in the log, not in the summary. */
static bool font_cache(const char *op, const char *path)
{
	return path_is_within(path, "/var/cache/fontconfig") ||
	       (strcmp(op, "mkdir") == 0 && strcmp(path, "/var/cache") == 0);
}

/* An allowed connection through the proxy whose destination could not be
 * reached: its server down (a dev server, a mock API not started), or its
 * name unknown. The agent's tools often retry in silence for minutes. */
static void unreached(struct summary *s, const json_t *f)
{
	const char *reason = str(f, "reason");
	if (strcmp(str(f, "decision"), "allow") != 0 ||
	    (strcmp(reason, "cannot connect to the destination") != 0 &&
	     !strstr(reason, " does not resolve (")))
		return;
	_cleanup_free_ char *key = host_port(f, str(f, "host"));
	for (size_t i = 0; i < s->nunreached; i++)
		if (strcmp(s->unreached[i].key, key) == 0) {
			s->unreached[i].times++;
			return;
		}
	if (s->nunreached == ARRAY_LEN(s->unreached)) {
		s->unreached_more++;
		return;
	}
	struct unreached *u = &s->unreached[s->nunreached++];
	snprintf(u->key, sizeof u->key, "%s", key);
	snprintf(u->why, sizeof u->why, "%s", reason);
	u->times = 1;
}

/* A summary of net or file events past the record's bound (recbound.h):
 * its refusals counted among those not listed. true when it was one. */
static bool summarised(struct summary *s, const char *kind, const json_t *f)
{
	if ((strcmp(kind, "net") != 0 || strcmp(str(f, "method"), "summary") != 0) &&
	    (strcmp(kind, "file") != 0 || strcmp(str(f, "op"), "summary") != 0))
		return false;
	if (strcmp(str(f, "decision"), "deny") == 0)
		s->unlisted += (unsigned long)json_integer_value(json_object_get(f, "count"));
	return true;
}

/* A refusal of Landlock's (its audit record): by the path, the address or
 * the process signalled, with the rights refused. */
static void landlock_refused(struct summary *s, const char *kind, const json_t *f)
{
	const char *what = json_object_get(f, "path") ? str(f, "path")
			 : json_object_get(f, "address") ? str(f, "address") : NULL;
	json_t *acc = json_object_get(f, "access"), *x;
	char rights[256] = "";
	size_t i, o = 0;
	json_array_foreach(acc, i, x) {
		int w = snprintf(rights + o, sizeof rights - o, "%s%s", i ? "," : "",
				 json_string_value(x) ? json_string_value(x) : "?");
		if (w < 0 || (size_t)w >= sizeof rights - o)
			break;
		o += (size_t)w;
	}
	if (what)
		add(s, xasprintf("%s %s", kind, what), xasprintf("refused by Landlock (%s)", rights));
	else
		add(s, xasprintf("%s to pid %lld", kind, json_integer_value(json_object_get(f, "to_pid"))),
		    xasprintf("refused by Landlock (%s)", rights));
}

static int on_event(void *ctx, const struct event *ev, struct werr *e)
{
	(void)e;
	struct summary *s = ctx;
	const json_t *f = ev->fields;
	if (f && published(s, ev->kind, f))
		return 0;
	if (f && strcmp(ev->kind, "net") == 0)
		unreached(s, f);
	if (strcmp(ev->kind, "syscall.suppressed") == 0 ||
	    strcmp(ev->kind, "landlock.suppressed") == 0) {
		s->unlisted += (unsigned long)json_integer_value(json_object_get(f, "suppressed"));
		return 0;
	}
	if (f && summarised(s, ev->kind, f))
		return 0;
	if (f && strcmp(ev->kind, "limit") == 0) {
		/* the log's own: the session's error at its end says it whole */
		if (strcmp(str(f, "kind"), "log") == 0)
			return 0;
		add(s, xasprintf("limit %s %s", str(f, "kind"), str(f, "limit")),
		    xstrdup(str(f, "detail")));
		return 0;
	}
	if (!f || strcmp(str(f, "decision"), "deny") != 0)
		return 0;
	/* the kernel's refusals, from its audit records (src/supervisor/llaudit.h) */
	if (strcmp(str(f, "by"), "landlock") == 0) {
		landlock_refused(s, ev->kind, f);
		return 0;
	}
	if (strcmp(ev->kind, "net") == 0)
		net_refused(s, f);
	else if (strcmp(ev->kind, "file") == 0 && !pseudo_fs(str(f, "path")) &&
		 !font_cache(str(f, "op"), str(f, "path")))
		/* a write the walls refused (predicted by filewhy.c), or one
		 * `write ask` refused */
		add(s, xasprintf("%s %s", str(f, "op"), str(f, "path")),
		    xstrdup(json_object_get(f, "reason") ? str(f, "reason") : "refused"));
	else if (strcmp(ev->kind, "exec") == 0)
		exec_refused(s, f);
	else if (strcmp(ev->kind, "syscall") == 0)
		add(s, xasprintf("syscall %s", str(f, "name")),
		    xstrdup("refused by the sandbox (EPERM); no option allows it"));
	else if (strcmp(ev->kind, "tool") == 0)
		tool_refused(s, f);
	else if (strcmp(ev->kind, "ssh") == 0 || strcmp(ev->kind, "mcp") == 0)
		agent_refused(s, ev->kind, f);
	return 0;
}

void summary_attach(struct summary *s, struct audit *a)
{
	audit_subscribe(a, on_event, s);
}

/* How soon a line is listed: 2, a program of the host the command meant
 * to reach on its loopback ("reach it with --allow-net 127.0.0.1:PORT");
 * 1, another line that names the flag that would allow it ("allow it with
 * --allow-net HOST", which a program's background requests have too); 0,
 * the refusals nothing allows. So the line the user can act on is not lost
 * past the last one. */
static int fix_rank(const struct refusal *r)
{
	return strstr(r->why, "reach it with --") ? 2 : strstr(r->why, " --") ? 1 : 0;
}

void summary_print(const struct summary *s, const char *log, FILE *f)
{
	for (size_t i = 0; i < s->ninbound; i++) {
		const struct inbound_count *c = &s->inbound[i];
		fprintf(f, "warden: published port %u", c->host_port);
		if (c->port)
			fprintf(f, " (port %u inside)", c->port);
		fprintf(f, ": %lu connection%s from the host", c->conns, c->conns == 1 ? "" : "s");
		if (c->failed)
			fprintf(f, ", %lu reached nothing inside", c->failed);
		if (c->capped[0])
			fprintf(f, "; %s (alert publish.connection-cap)", c->capped);
		fputc('\n', f);
	}
	for (size_t i = 0; i < s->nunreached; i++) {
		const struct unreached *u = &s->unreached[i];
		_cleanup_free_ char *key = text_shown(u->key), *why = text_shown(u->why);
		fprintf(f, "warden: %s, allowed, could not be reached (%s%s%lu time%s): is its server "
			"running?\n", key, why, "; ", u->times, u->times == 1 ? "" : "s");
	}
	if (s->unreached_more)
		fprintf(f, "warden: and %lu more allowed connections that reached nothing\n",
			s->unreached_more);
	if (!s->n && !s->unlisted)
		return;
	fprintf(f, "warden: refused during this session:\n");
	size_t shown = 0;
	for (int rank = 2; rank >= 0; rank--) /* the lines that carry a fix first */
		for (size_t i = 0; i < s->n && shown < SUMMARY_LINES; i++) {
			const struct refusal *r = &s->v[i];
			if (fix_rank(r) != rank)
				continue;
			/* paths, hosts and reasons the sandbox chose: shown, never
			 * acting on the terminal (shown.h) */
			_cleanup_free_ char *key = text_shown(r->key), *why = text_shown(r->why);
			if (r->times > 1)
				fprintf(f, "  %s (%lu times): %s\n", key, r->times, why);
			else
				fprintf(f, "  %s: %s\n", key, why);
			shown++;
		}
	unsigned long rest = (s->n > SUMMARY_LINES ? s->n - SUMMARY_LINES : 0) + s->unlisted;
	if (rest)
		fprintf(f, "  and %lu more refusals\n", rest);
	if (log)
		fprintf(f, "  (details: %s; --quiet leaves this out)\n", log);
}

void summary_free(struct summary *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].why);
	}
	free(s->v);
	*s = (struct summary){ 0 };
}
