/* test_policy_exec_verdict.c - unit tests of the exec rules' verdict on one
 * file (src/policy/exec_verdict.c), what the kernel enforces under `exec
 * kernel`: a denied hash refused always, an unhashable file refused while
 * deny rules exist, `exec default deny` refusing as code what is not
 * allowed by hash or by an immutable file in an allowed directory; code
 * hashes (code:HEX) denied and allowed. */
#include <stdio.h>
#include <string.h>

#include "src/policy/exec_verdict.h"
#include "check.h"

#define A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define C "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"

static enum exec_verdict of(const struct policy_exec *x, const char *hex, bool immutable,
			    const char *resolved, char *why, size_t len)
{
	struct exec_verdict_rules r;
	exec_verdict_init(&r, x);
	enum exec_verdict v = exec_verdict_of(&r, hex, "larger than the hash limit", immutable, resolved,
					      why, len);
	exec_verdict_free(&r);
	return v;
}

int main(void)
{
	char why[300];
	struct policy_exec x;

	/* no rules: everything runs, hashed or not */
	memset(&x, 0, sizeof x);
	CHECK(of(&x, A, false, "/ws/a", why, sizeof why) == EXEC_VERDICT_ALLOW);
	CHECK_STR(why, "");
	CHECK(of(&x, NULL, false, "/ws/a", why, sizeof why) == EXEC_VERDICT_ALLOW);

	/* deny rules: the hash listed is refused always, others run, and what
	 * has no hash is refused */
	memset(&x, 0, sizeof x);
	strv_push(&x.deny, C);
	strv_push(&x.deny, A);
	CHECK(of(&x, A, true, "/usr/bin/a", why, sizeof why) == EXEC_VERDICT_DENY);
	CHECK_STR(why, "exec deny sha256:" A);
	CHECK(of(&x, C, false, NULL, why, sizeof why) == EXEC_VERDICT_DENY);
	CHECK(of(&x, B, false, "/ws/b", why, sizeof why) == EXEC_VERDICT_ALLOW);
	CHECK(of(&x, NULL, false, "/ws/big", why, sizeof why) == EXEC_VERDICT_DENY);
	CHECK_STR(why, "the file cannot be hashed (larger than the hash limit), and exec deny rules "
		       "need its hash");
	strv_free(&x.deny);

	/* default deny: allowed by hash, or immutable in an allowed
	 * directory; else refused as code */
	memset(&x, 0, sizeof x);
	x.default_deny = true;
	strv_push(&x.allow, B);
	strv_push(&x.allow_dirs, "/usr");
	CHECK(of(&x, B, false, "/ws/b", why, sizeof why) == EXEC_VERDICT_ALLOW);
	CHECK(of(&x, A, true, "/usr/lib/libc.so.6", why, sizeof why) == EXEC_VERDICT_ALLOW);
	CHECK(of(&x, A, false, "/usr/lib/libc.so.6", why, sizeof why) == EXEC_VERDICT_DENY_CODE);
	CHECK(of(&x, A, true, "/usrx/a", why, sizeof why) == EXEC_VERDICT_DENY_CODE);
	CHECK(of(&x, A, true, NULL, why, sizeof why) == EXEC_VERDICT_DENY_CODE);
	CHECK(of(&x, A, false, "/ws/a", why, sizeof why) == EXEC_VERDICT_DENY_CODE);
	CHECK_STR(why, "exec default deny: the file is not allowed as code (sha256:" A ")");
	/* no deny rules: a file with no hash is judged by its directory */
	CHECK(of(&x, NULL, true, "/usr/bin/big", why, sizeof why) == EXEC_VERDICT_ALLOW);
	CHECK(of(&x, NULL, false, "/ws/big", why, sizeof why) == EXEC_VERDICT_DENY_CODE);
	CHECK_STR(why, "exec default deny: the file is not allowed as code");
	/* deny wins over allow */
	strv_push(&x.deny, B);
	CHECK(of(&x, B, true, "/usr/bin/b", why, sizeof why) == EXEC_VERDICT_DENY);
	strv_free(&x.deny);
	strv_free(&x.allow);
	strv_free(&x.allow_dirs);

	/* code hashes (`code:HEX`): a file whose code hash is denied is
	 * refused whatever its file hash; one allowed runs under default deny;
	 * a file hash equal to a listed code hash is no match */
	memset(&x, 0, sizeof x);
	strv_push(&x.deny, "code:" C);
	struct exec_verdict_rules r;
	exec_verdict_init(&r, &x);
	CHECK(exec_verdict_code_in_deny(&r, C));
	CHECK(!exec_verdict_in_deny(&r, C));
	CHECK(exec_verdict_of_code(&r, A, C, NULL, false, "/ws/a", why, sizeof why) == EXEC_VERDICT_DENY);
	CHECK_STR(why, "exec deny code:" C);
	CHECK(exec_verdict_of_code(&r, C, A, NULL, false, "/ws/a", why, sizeof why) == EXEC_VERDICT_ALLOW);
	CHECK(exec_verdict_of_code(&r, A, NULL, NULL, false, "/ws/a", why, sizeof why) == EXEC_VERDICT_ALLOW);
	exec_verdict_free(&r);
	strv_free(&x.deny);
	x.default_deny = true;
	strv_push(&x.allow, "code:" B);
	exec_verdict_init(&r, &x);
	CHECK(exec_verdict_of_code(&r, A, B, NULL, false, "/ws/a", why, sizeof why) == EXEC_VERDICT_ALLOW);
	CHECK(exec_verdict_of_code(&r, B, A, NULL, false, "/ws/a", why, sizeof why) == EXEC_VERDICT_DENY_CODE);
	exec_verdict_free(&r);
	strv_free(&x.allow);
	return check_status_counted("policy-exec-verdict");
}
