/* test_control_socket.c - the control socket (src/control/control.c) of a
 * session that asks nothing, and its client side (client.c): status with
 * the session's command, workspace and the extension's fields (which cannot
 * override status's own); freeze, resume and kill handed to the kill switch
 * with the client's uid and the reason, its errors passed back; list and
 * answer without questions; a session found by its id or a unique prefix,
 * an unknown or ambiguous one refused, a stale socket removed. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "files.h"
#include "src/audit/audit.h"
#include "src/common/util.h"
#include "src/control/client.h"
#include "src/control/control.h"

struct kswitch {
	bool frozen;
	long uid;
	char reason[64];
	int kills;
};

static int k_freeze(void *ctx, long uid, const char *reason, struct werr *e)
{
	struct kswitch *k = ctx;
	if (k->frozen)
		return werr_set(e, 0, "the sandbox is frozen already");
	k->frozen = true;
	k->uid = uid;
	snprintf(k->reason, sizeof k->reason, "%s", reason ? reason : "");
	return 0;
}

static int k_resume(void *ctx, long uid, struct werr *e)
{
	struct kswitch *k = ctx;
	if (!k->frozen)
		return werr_set(e, 0, "the sandbox is not frozen");
	k->frozen = false;
	return 0;
}

static int k_kill(void *ctx, long uid, const char *reason, struct werr *e)
{
	struct kswitch *k = ctx;
	k->kills++;
	return 0;
}

static bool k_frozen(void *ctx)
{
	return ((struct kswitch *)ctx)->frozen;
}

static json_t *extra(void *ctx)
{
	return json_pack("{s:i,s:i,s:s}", "risk", 42, "alerts", 3, "session", "not-this");
}

/* Send req on fd, serve the control socket until the reply comes. */
static json_t *ask(struct control *c, int fd, json_t *req)
{
	CHECK(control_client_send(fd, req) == 0);
	static char buf[65536];
	size_t have = 0;
	for (int i = 0; i < 200; i++) {
		control_dispatch(c);
		json_t *r = control_client_read(fd, buf, sizeof buf, &have, 5);
		if (r)
			return r;
	}
	return NULL;
}

static int connect_to(struct control *c, const char *dir, const char *name)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	int fd = control_client_connect(path);
	CHECK(fd >= 0);
	control_dispatch(c); /* accepted */
	return fd;
}

int main(void)
{
	tmpdir_make("warden-control");
	struct audit *log = NULL;
	struct werr e = { 0 };
	CHECK(audit_open(&log, tmpdir, "20261126T000000Z-aaaa1111", &e) == 0);
	char *dir = xasprintf("%s/control", tmpdir);
	char *argv[] = { "sh", "-c", "echo hi", NULL };
	struct control *c = control_new(&(struct control_cfg){ .dir = dir,
		.session = "20261126T000000Z-aaaa1111", .log = log, .argv = argv,
		.workspace = "/w/s" }, &e);
	CHECK(c != NULL);
	if (!c)
		return check_status();
	int fd = connect_to(c, dir, "20261126T000000Z-aaaa1111.sock");

	/* status, no kill switch yet */
	json_t *r = ask(c, fd, json_pack("{s:s}", "op", "status"));
	CHECK(json_is_true(json_object_get(r, "ok")));
	CHECK_STR(json_string_value(json_object_get(r, "session")), "20261126T000000Z-aaaa1111");
	CHECK_STR(json_string_value(json_array_get(json_object_get(r, "command"), 2)), "echo hi");
	CHECK_STR(json_string_value(json_object_get(r, "workspace")), "/w/s");
	CHECK(json_integer_value(json_object_get(r, "pid")) == getpid());
	CHECK(json_is_false(json_object_get(r, "frozen")));
	CHECK(json_string_length(json_object_get(r, "started")) == 20);
	CHECK(json_object_get(r, "risk") == NULL);
	json_decref(r);
	r = ask(c, fd, json_pack("{s:s}", "op", "freeze"));
	CHECK(json_is_false(json_object_get(r, "ok")));
	json_decref(r);

	/* no questions */
	r = ask(c, fd, json_pack("{s:s}", "op", "list"));
	CHECK(json_is_true(json_object_get(r, "ok")) && json_array_size(json_object_get(r, "questions")) == 0);
	json_decref(r);
	r = ask(c, fd, json_pack("{s:s,s:s,s:s}", "op", "answer", "id", "x-1", "decision", "allow"));
	CHECK(json_is_false(json_object_get(r, "ok")));
	CHECK(strstr(json_string_value(json_object_get(r, "error")) ?: "", "asks no questions"));
	json_decref(r);

	close(fd);

	/* the kill switch and the extension, given to the session's socket
	 * as it is made (the same session's, made again) */
	struct kswitch k = { 0 };
	control_free(c);
	c = control_new(&(struct control_cfg){ .dir = dir,
		.session = "20261126T000000Z-aaaa1111", .log = log, .argv = argv,
		.workspace = "/w/s", .actions = &(struct control_actions){ .freeze = k_freeze,
		.resume = k_resume, .kill = k_kill, .frozen = k_frozen, .ctx = &k },
		.status_fn = extra }, &e);
	CHECK(c != NULL);
	if (!c)
		return check_status();
	fd = connect_to(c, dir, "20261126T000000Z-aaaa1111.sock");
	r = ask(c, fd, json_pack("{s:s,s:s}", "op", "freeze", "reason", "why not"));
	CHECK(json_is_true(json_object_get(r, "ok")));
	json_decref(r);
	CHECK(k.frozen && k.uid == (long)geteuid());
	CHECK_STR(k.reason, "why not");
	r = ask(c, fd, json_pack("{s:s}", "op", "freeze"));
	CHECK(json_is_false(json_object_get(r, "ok")));
	CHECK_STR(json_string_value(json_object_get(r, "error")), "the sandbox is frozen already");
	json_decref(r);
	r = ask(c, fd, json_pack("{s:s}", "op", "status"));
	CHECK(json_is_true(json_object_get(r, "frozen")));
	CHECK(json_integer_value(json_object_get(r, "risk")) == 42);
	CHECK(json_integer_value(json_object_get(r, "alerts")) == 3);
	CHECK_STR(json_string_value(json_object_get(r, "session")), "20261126T000000Z-aaaa1111");
	json_decref(r);
	r = ask(c, fd, json_pack("{s:s}", "op", "resume"));
	CHECK(json_is_true(json_object_get(r, "ok")) && !k.frozen);
	json_decref(r);
	r = ask(c, fd, json_pack("{s:s}", "op", "kill"));
	CHECK(json_is_true(json_object_get(r, "ok")) && k.kills == 1);
	json_decref(r);
	r = ask(c, fd, json_pack("{s:s}", "op", "nope"));
	CHECK(json_is_false(json_object_get(r, "ok")));
	json_decref(r);
	close(fd);

	/* a session by its id or a prefix; a second one, and a stale socket */
	struct control *c2 = control_new(&(struct control_cfg){ .dir = dir,
		.session = "20261126T000000Z-bbbb2222", .log = log }, &e);
	CHECK(c2 != NULL);
	char *stale = xasprintf("%s/20261126T000000Z-cccc3333.sock", dir);
	int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", stale);
	CHECK(bind(sfd, (struct sockaddr *)&sa, sizeof sa) == 0);
	close(sfd); /* bound, nobody listening: refused */
	char id[CONTROL_NAME_MAX];
	pid_t stopped = 0;
	struct strv dirs = { 0 };
	strv_push(&dirs, dir);
	fd = control_client_find(&dirs, "20261126T000000Z-a", id, sizeof id, &stopped, &e);
	CHECK(fd >= 0);
	CHECK_STR(id, "20261126T000000Z-aaaa1111");
	if (fd >= 0)
		close(fd);
	fd = control_client_find(&dirs, "20261126T000000Z-bbbb2222", id, sizeof id, &stopped, &e);
	CHECK(fd >= 0);
	CHECK_STR(id, "20261126T000000Z-bbbb2222");
	if (fd >= 0)
		close(fd);
	CHECK(control_client_find(&dirs, "2026", id, sizeof id, &stopped, &e) < 0);
	CHECK(strstr(e.msg, "several running sessions"));
	CHECK(control_client_find(&dirs, "20261126T000000Z-c", id, sizeof id, &stopped, &e) < 0);
	CHECK(strstr(e.msg, "no running session"));
	CHECK(access(stale, F_OK) < 0 && errno == ENOENT); /* removed */
	CHECK(control_client_find(&dirs, "", id, sizeof id, &stopped, &e) < 0);
	strv_free(&dirs);
	control_free(c2);
	control_free(c);
	audit_close(log);
	free(stale);
	free(dir);
	tmpdir_remove();
	return check_status();
}
