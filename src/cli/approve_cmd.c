/* approve_cmd.c - `warden approve`: the open questions of every running
 * session of this user (their control sockets, src/control/control.h,
 * reached through client.h), answering one by id, or following them as
 * they come. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/shown.h"
#include "../common/util.h"
#include "../control/client.h"
#include "../control/control.h"
#include "cli.h"
#include "cmdtab.h"

static const char approve_usage[] =
	"usage: warden approve [--json]\n"
	"       warden approve ID allow|deny [--session | --pattern GLOB] [--ttl SECONDS] [--reason TEXT]\n"
	"       warden approve --follow\n"
	"\n"
	"Without arguments: the questions warden's sessions wait on (ID, what, how long left).\n"
	"ID allow|deny answers one: only this time (the default), for the rest of its session\n"
	"(--session: the same destination, program and arguments, path or tool call), or for\n"
	"everything of its kind whose subject matches GLOB (--pattern); --ttl limits the last two.\n"
	"--follow prints each question as it is asked and as it ends. Questions time out as\n"
	"denials (`approve timeout` in the profile, 60 s by default).\n";

/* A field of the session's answer for the terminal: the summary names
 * what the sandbox asked for, in its own bytes (shown.h). */
static char *field_shown(json_t *o, const char *key)
{
	return text_shown(json_string_value(json_object_get(o, key)));
}

static void print_ended(json_t *j)
{
	_cleanup_free_ char *id = field_shown(j, "id"), *decision = field_shown(j, "decision"),
			    *by = field_shown(j, "by");
	printf("%-14s ended: %s by %s\n", id, decision, by);
}

static void print_question(json_t *q, const char *session)
{
	_cleanup_free_ char *id = field_shown(q, "id"), *kind = field_shown(q, "kind"),
			    *summary = field_shown(q, "summary");
	printf("%-14s %-5s %4llds  %s\n", id, kind,
	       (long long)json_integer_value(json_object_get(q, "remaining_s")), summary);
	(void)session;
}

/* One session's open questions (its reply r) onto the array all, each
 * with its session. */
static void gather(json_t *r, void *all)
{
	json_t *qs = json_object_get(r, "questions");
	size_t k;
	json_t *q;
	json_array_foreach(qs, k, q) {
		json_object_set(q, "session", json_object_get(r, "session"));
		json_array_append(all, q);
	}
}

static int list(bool as_json)
{
	_cleanup_strv_ struct strv dirs = { 0 };
	control_client_dirs(&dirs);
	json_t *all = json_array();
	control_client_each(&dirs, "list", gather, all);
	if (as_json) {
		char *s = json_dumps(all, JSON_INDENT(2));
		printf("%s\n", s ? s : "[]");
		free(s);
	} else if (json_array_size(all) == 0) {
		printf("no open questions\n");
	} else {
		printf("%-14s %-5s %5s  %s\n", "ID", "KIND", "LEFT", "QUESTION");
		size_t k;
		json_t *q;
		json_array_foreach(all, k, q)
			print_question(q, json_string_value(json_object_get(q, "session")));
	}
	json_decref(all);
	return 0;
}

/* The session whose socket serves question id ("PREFIX-N": the session's
 * id ends with "-PREFIX"). */
static int connect_for(const struct strv *dirs, const char *id)
{
	const char *dash = strrchr(id, '-');
	if (!dash || dash == id)
		return -1;
	char suffix[64];
	snprintf(suffix, sizeof suffix, "-%.*s.sock", (int)(dash - id), id);
	_cleanup_strv_ struct strv paths = { 0 };
	control_client_sockets(dirs, &paths, CONTROL_SOCKETS_MAX);
	for (size_t i = 0; i < paths.n; i++) {
		const char *name = control_client_name(paths.v[i]);
		size_t l = strlen(name), sl = strlen(suffix);
		if (l > sl && strcmp(name + l - sl, suffix) == 0)
			return control_client_connect(paths.v[i]);
	}
	return -1;
}

static int answer(const char *id, const char *decision, const char *scope, const char *pattern,
		  long ttl, const char *reason)
{
	_cleanup_strv_ struct strv dirs = { 0 };
	control_client_dirs(&dirs);
	int fd = connect_for(&dirs, id);
	if (fd < 0) {
		fprintf(stderr, "warden approve: no running session has question %s\n", id);
		return 1;
	}
	json_t *req = json_pack("{s:s,s:s,s:s,s:s}", "op", "answer", "id", id, "decision", decision,
				"scope", scope);
	if (pattern)
		json_object_set_new(req, "pattern", json_string(pattern));
	if (ttl >= 0)
		json_object_set_new(req, "ttl", json_integer(ttl));
	if (reason)
		json_object_set_new(req, "reason", json_string(reason));
	json_t *r = control_client_request(fd, req);
	close(fd);
	if (!r || !json_is_true(json_object_get(r, "ok"))) {
		const char *err = json_string_value(json_object_get(r, "error"));
		fprintf(stderr, "warden approve: %s\n", err ? err : "no answer from the session");
		json_decref(r);
		return 1;
	}
	json_decref(r);
	printf("%s: %s\n", id, decision);
	return 0;
}

/* A session followed: its socket, and what came of a line so far. */
struct sess {
	char name[CONTROL_NAME_MAX];
	int fd;
	char buf[65536];
	size_t have;
};

/* The sessions of this user not followed yet connected and asked to
 * follow, added to ss (up to CONTROL_SOCKETS_MAX); the directories looked
 * at again each time (one made since is seen). */
static void follow_new(struct sess **ss, size_t *nss)
{
	_cleanup_strv_ struct strv dirs = { 0 }, paths = { 0 };
	control_client_dirs(&dirs);
	control_client_sockets(&dirs, &paths, CONTROL_SOCKETS_MAX);
	for (size_t i = 0; i < paths.n && *nss < CONTROL_SOCKETS_MAX; i++) {
		const char *name = control_client_name(paths.v[i]);
		bool known = false;
		for (size_t k = 0; k < *nss && !known; k++)
			known = strcmp(ss[k]->name, name) == 0 && ss[k]->fd >= 0;
		if (known)
			continue;
		int fd = control_client_connect(paths.v[i]);
		if (fd < 0)
			continue;
		if (control_client_send(fd, json_pack("{s:s}", "op", "follow")) < 0) {
			close(fd);
			continue;
		}
		struct sess *s = xmalloc(sizeof *s);
		snprintf(s->name, sizeof s->name, "%s", name);
		s->fd = fd;
		s->have = 0;
		ss[(*nss)++] = s;
	}
}

/* The lines session s sent, printed: questions asked and ended. */
static void follow_print(struct sess *s)
{
	json_t *j;
	while ((j = control_client_read(s->fd, s->buf, sizeof s->buf, &s->have, 0))) {
		const char *ev = json_string_value(json_object_get(j, "event"));
		json_t *qs = json_object_get(j, "questions");
		size_t i;
		json_t *q;
		if (qs)
			json_array_foreach(qs, i, q)
				print_question(q, s->name);
		else if (ev && strcmp(ev, "asked") == 0)
			print_question(json_object_get(j, "question"), s->name);
		else if (ev && strcmp(ev, "ended") == 0)
			print_ended(j);
		json_decref(j);
	}
}

/* Every session's questions as they come, new sessions found once a
 * second, until interrupted. */
static int follow(void)
{
	struct sess *ss[CONTROL_SOCKETS_MAX];
	size_t nss = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		follow_new(ss, &nss);
		struct pollfd p[CONTROL_SOCKETS_MAX];
		for (size_t k = 0; k < nss; k++)
			p[k] = (struct pollfd){ .fd = ss[k]->fd, .events = POLLIN };
		if (poll(p, nss, 1000) < 0 && errno != EINTR)
			break;
		for (size_t k = 0; k < nss; k++) {
			if (ss[k]->fd < 0 || !(p[k].revents & (POLLIN | POLLHUP)))
				continue;
			follow_print(ss[k]);
			if (p[k].revents & POLLHUP)
				closep(&ss[k]->fd);
		}
		/* drop the ended sessions */
		size_t w = 0;
		for (size_t k = 0; k < nss; k++) {
			if (ss[k]->fd >= 0)
				ss[w++] = ss[k];
			else
				free(ss[k]);
		}
		nss = w;
	}
	for (size_t k = 0; k < nss; k++) {
		closep(&ss[k]->fd);
		free(ss[k]);
	}
	return EXIT_WARDEN;
}

int cmd_approve(int argc, char **argv)
{
	bool as_json = false, do_follow = false, per_session = false;
	const char *pattern = NULL, *reason = NULL;
	long ttl = -1;
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "approve")) != -1) {
		switch (c) {
		case 'j': as_json = true; break;
		case 'f': do_follow = true; break;
		case 's': per_session = true; break;
		case 'p': pattern = optarg; break;
		case 'r': reason = optarg; break;
		case 't': {
			char *end;
			errno = 0;
			ttl = strtol(optarg, &end, 10);
			if (errno || *end || ttl < 0 || ttl > 30L * 86400) {
				fprintf(stderr, "warden approve: --ttl takes seconds (0 to 2592000)\n");
				return 2;
			}
			break;
		}
		case 'h': fputs(approve_usage, stdout); return 0;
		default: fputs(approve_usage, stderr); return 2;
		}
	}
	int rest = argc - optind;
	if (do_follow && rest == 0)
		return follow();
	if (rest == 0 && !per_session && !pattern && ttl < 0)
		return list(as_json);
	/* what is wrong, said before the usage */
	const char *why = rest != 2 ? "an answer is ID allow|deny"
		: !argv[optind][0] ? "an empty question ID (a command substitution that printed "
				     "nothing?): `warden approve` lists the questions"
		: strcmp(argv[optind + 1], "allow") != 0 && strcmp(argv[optind + 1], "deny") != 0
		? "the answer is allow or deny"
		: per_session && pattern ? "--session and --pattern exclude each other"
		: ttl >= 0 && !per_session && !pattern ? "--ttl is for an answer that lasts: with "
							  "--session or --pattern"
		: NULL;
	if (why) {
		fprintf(stderr, "warden approve: %s\n", why);
		fputs(approve_usage, stderr);
		return 2;
	}
	return answer(argv[optind], argv[optind + 1], pattern ? "pattern" : per_session ? "session" : "once",
		      pattern, ttl, reason);
}
