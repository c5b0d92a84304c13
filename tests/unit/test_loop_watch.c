/* test_loop_watch.c - the session's modules add their own fds to the
 * event loop (X_watch, src/common/loop.h) and a source the loop cannot
 * take is an error naming it (fail closed: services_watch stops the
 * session with it): the questions' timer, the control socket and the
 * workspace watch against loops too small for all of them. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "files.h"
#include "src/audit/audit.h"
#include "src/common/loop.h"
#include "src/control/approval.h"
#include "src/control/control.h"
#include "src/policy/policy.h"
#include "src/workspace/wswatch.h"

#define SESSION "20261129T000000Z-bbbb2222"

int main(void)
{
	tmpdir_make("warden-loopwatch");
	struct audit *log = NULL;
	struct werr e = { 0 };
	CHECK(audit_open(&log, tmpdir, SESSION, &e) == 0);
	struct policy p = { 0 };
	struct approvals *ap = approvals_new(log, SESSION, &p);
	CHECK(ap != NULL);
	char *dir = xasprintf("%s/control", tmpdir);
	char *argv[] = { "true", NULL };
	struct control *c = control_new(&(struct control_cfg){ .dir = dir, .session = SESSION,
		.approvals = ap, .log = log, .argv = argv, .workspace = tmpdir }, &e);
	CHECK(c != NULL);
	int wsfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(wsfd >= 0);
	struct wswatch *ww = wswatch_new(wsfd, &e);
	CHECK(ww != NULL);
	if (!ap || !c || !ww)
		return check_status_counted("loop-watch");

	/* room for one source: the first module's fits, the second's is an
	 * error that names it */
	struct loop *l = loop_new(1, &e);
	CHECK(l != NULL);
	CHECK(approvals_watch(l, ap, &e) == 0);
	e = (struct werr){ 0 };
	CHECK(control_watch(l, c, &e) == -1);
	CHECK(strstr(e.msg, "the control socket") != NULL);
	CHECK(strstr(e.msg, "full") != NULL);
	loop_free(l);

	/* room for two: the workspace watch, registered third, is the one
	 * named */
	l = loop_new(2, &e);
	CHECK(control_watch(l, c, &e) == 0);
	CHECK(approvals_watch(l, ap, &e) == 0);
	e = (struct werr){ 0 };
	CHECK(wswatch_watch(l, ww, &e) == -1);
	CHECK(strstr(e.msg, "the workspace watch") != NULL);
	loop_free(l);

	/* an empty loop of one takes each of them */
	l = loop_new(1, &e);
	CHECK(wswatch_watch(l, ww, &e) == 0);
	loop_free(l);

	wswatch_free(ww);
	close(wsfd);
	control_free(c);
	approvals_free(ap);
	audit_close(log);
	free(dir);
	tmpdir_remove();
	return check_status_counted("loop-watch");
}
