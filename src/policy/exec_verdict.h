/* exec_verdict.h - the verdict of the exec rules on one file, whatever runs
 * it: what the kernel enforces (src/supervisor/exec/bpfexec.h) for an exec and
 * for a file mapped executable. The same rules as execs.h applies to a
 * program: `exec deny` refuses a hash always; while deny rules exist, a
 * file that cannot be hashed is refused; `exec default deny` refuses, as
 * machine code, what `exec allow` does not allow (by hash, or an immutable
 * file in an allowed directory). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

enum exec_verdict {
	EXEC_VERDICT_ALLOW,
	EXEC_VERDICT_DENY,      /* refused always */
	EXEC_VERDICT_DENY_CODE, /* refused as machine code (a #! script by name goes on) */
};

/* The rules' lists, sorted for lookups. */
struct exec_verdict_rules {
	const struct policy_exec *x;
	char **deny, **allow;
	size_t ndeny, nallow;
};
void exec_verdict_init(struct exec_verdict_rules *r, const struct policy_exec *x);
void exec_verdict_free(struct exec_verdict_rules *r);

/* Is hex (lower-case) among the `exec deny` (`exec allow`) hashes? */
bool exec_verdict_in_deny(const struct exec_verdict_rules *r, const char *hex);
bool exec_verdict_in_allow(const struct exec_verdict_rules *r, const char *hex);
/* Is the code hash hex (src/common/elfhash.h; lower-case) among the `exec
 * deny` (`exec allow`) code hashes (`code:HEX` entries)? */
bool exec_verdict_code_in_deny(const struct exec_verdict_rules *r, const char *hex);
bool exec_verdict_code_in_allow(const struct exec_verdict_rules *r, const char *hex);

/* The verdict on a file: hex its SHA-256 (lower-case), or NULL with
 * nohash saying why it has none; immutable: the agent cannot change it;
 * resolved: its path inside the sandbox (NULL: unknown). A refusal says
 * why into why. */
enum exec_verdict exec_verdict_of(const struct exec_verdict_rules *r, const char *hex,
				  const char *nohash, bool immutable, const char *resolved,
				  char *why, size_t len);
/* The same with the file's code hash (NULL: none, not an ELF file): a
 * denied code hash refuses it, an allowed one allows it. */
enum exec_verdict exec_verdict_of_code(const struct exec_verdict_rules *r, const char *hex,
				       const char *code, const char *nohash, bool immutable,
				       const char *resolved, char *why, size_t len);
